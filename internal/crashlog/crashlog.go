package crashlog

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/safefs"
)

// DefaultMaxSize is how large a crash.log grows before it is rotated to
// <file>.1, replacing the previous .1. A line is 60 to 300 bytes, so the
// log keeps the last several thousand crashes, far more than anyone reads,
// and an instance that crashes every second for months takes at most
// 2 MiB of /var/log (the journal, with its own limits, has the events
// too).
const DefaultMaxSize = 1 << 20

// Logs appends to per-instance crash logs under Dir.
type Logs struct {
	Dir     string
	MaxSize int64 // rotate beyond this many bytes; 0 means DefaultMaxSize
	// Sub is a directory between the project's and the log: "logs" in
	// user scope (~/.bm2/<project>/logs/<instance>.crash.log, the seed's
	// path), "" in system scope.
	Sub string
}

// Crash is one crash.log line.
type Crash struct {
	Time     time.Time
	Reason   reason.Reason // first-class: reuseport_missing, exited, killed, …
	ExitCode *int          // the exit status, when the process exited
	Signal   string        // the signal that killed it, e.g. SIGKILL
	Detail   string
}

// Path is the crash log of one instance, e.g. /var/log/bm2/api/api-0.crash.log
// (system scope) or ~/.bm2/api/logs/api-0.crash.log (user scope).
func (c Logs) Path(project, instance string) string {
	return filepath.Join(c.Dir, project, c.Sub, instance+".crash.log")
}

// Line renders a crash as one line:
// "2026-11-30T04:00:00.123Z reason=exited code=1 detail=\"…\"".
func (cr Crash) Line() string {
	var b strings.Builder
	b.WriteString(cr.Time.UTC().Format("2006-01-02T15:04:05.000Z"))
	b.WriteString(" reason=" + string(cr.Reason))
	if cr.ExitCode != nil {
		b.WriteString(" code=" + strconv.Itoa(*cr.ExitCode))
	}
	if cr.Signal != "" {
		b.WriteString(" signal=" + cr.Signal)
	}
	if cr.Detail != "" {
		b.WriteString(" detail=" + strconv.Quote(cr.Detail))
	}
	return b.String()
}

// Who may read crash logs: in system scope root and the project's own
// group (the app's account: a crash log says how the app died, which is
// no other app's business), in user scope the user alone. The app needs
// no write access: root's hooks write them.
const (
	LogMode     os.FileMode = 0o640 // system scope: root:<project's group>
	LogDirMode  os.FileMode = 0o750 // <dir>/<project>
	UserLogMode os.FileMode = 0o600 // user scope: the user's own
	UserDirMode os.FileMode = 0o700
)

// NoGroup leaves a crash log's group as it is (root's, for a new one).
const NoGroup = -1

// Dynamic users and groups (DynamicUser=) come from this range and go
// back to it when their unit stops: such a GID may belong to another
// project tomorrow, so no log is given to it.
const (
	dynamicMin = 61184
	dynamicMax = 65519
)

// LogGroup is the group a crash log may be given: gid, unless it is not
// one (math.MaxUint32, systemd's "unknown"), root's, or a dynamic
// user's group (NoGroup).
func LogGroup(gid uint32) int {
	if gid == 0 || gid >= dynamicMin && gid <= dynamicMax || gid > 1<<31 {
		return NoGroup
	}
	return int(gid)
}

// Append adds one line to the instance's crash log, creating the file and
// its directory as needed, keeping the group they have (see AppendGroup).
func (c Logs) Append(project, instance string, cr Crash) error {
	return c.AppendGroup(project, instance, cr, NoGroup)
}

// AppendGroup adds one line to the instance's crash log, creating the file
// and its directory as needed. A single write(2) with O_APPEND keeps
// concurrent writers from interleaving within a line. A line that would
// take the file beyond MaxSize first rotates it: rename(2) to <file>.1
// (atomic, replacing the previous generation), then a new file. Writers
// hold an flock(2) on the file while they check its size and write, so
// that two of them never rotate the same file twice or write into a
// generation just moved away. No symbolic link is followed: not the log,
// not its directory, and the rename moves a link itself, never its target.
//
// Run as root, the project's directory is made 0750 and the log 0640,
// both root's and, when gid is a group (LogGroup), that group's: root and
// the project's account read them, no other app. Run as a user (user
// scope), they are 0700 and 0600.
func (c Logs) AppendGroup(project, instance string, cr Crash, gid int) error {
	p := c.Path(project, instance)
	dir := filepath.Dir(p)
	root := os.Geteuid() == 0
	dirMode, fileMode := LogDirMode, LogMode
	if !root {
		dirMode, fileMode, gid = UserDirMode, UserLogMode, NoGroup
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return fmt.Errorf("crash log: %w", err)
	}
	if err := os.Mkdir(dir, dirMode); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("crash log: %w", err)
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("crash log: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("crash log directory %s is not a directory (a symbolic link?): remove it", dir)
	}
	if err := restrict(dir, st, dirMode, gid); err != nil {
		return fmt.Errorf("crash log directory %s: %w", dir, err)
	}
	line := []byte(cr.Line() + "\n")
	limit := c.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	for range 10 {
		f, err := openLog(p, fileMode)
		if err != nil {
			return err
		}
		err = restrictFile(f, fileMode, gid)
		done := false
		if err == nil {
			done, err = appendLocked(f, p, line, limit, fileMode)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("crash log %s: %w", p, err)
		}
		if done {
			return nil
		}
		// Another writer rotated the file between our open and our lock.
	}
	return fmt.Errorf("crash log %s: rotated under us again and again; check what else writes %s", p, dir)
}

// restrict gives a directory (not a link: st is its Lstat) mode and, when
// gid is a group, that group, with root as its owner.
func restrict(dir string, st fs.FileInfo, mode os.FileMode, gid int) error {
	sys, _ := st.Sys().(*syscall.Stat_t)
	if gid != NoGroup && sys != nil && (sys.Uid != 0 || int(sys.Gid) != gid) {
		if err := os.Lchown(dir, 0, gid); err != nil {
			return err
		}
	}
	if st.Mode().Perm() != mode {
		// A directory cannot be opened without following it, but Lstat
		// said it is one, and only root writes its parent.
		return os.Chmod(dir, mode)
	}
	return nil
}

// restrictFile is restrict for an open crash log.
func restrictFile(f *os.File, mode os.FileMode, gid int) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	sys, _ := st.Sys().(*syscall.Stat_t)
	if gid != NoGroup && sys != nil && (sys.Uid != 0 || int(sys.Gid) != gid) {
		if err := f.Chown(0, gid); err != nil {
			return err
		}
	}
	if st.Mode().Perm() != mode {
		return f.Chmod(mode)
	}
	return nil
}

// openLog opens (or creates) a crash log for appending, refusing anything
// but a regular file.
func openLog(p string, mode os.FileMode) (*os.File, error) {
	f, err := safefs.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, mode)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("crash log %s is a symbolic link: remove it", p)
		}
		return nil, fmt.Errorf("crash log: %w", err)
	}
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("crash log %s: %w", p, err)
		}
		return nil, fmt.Errorf("crash log %s is not a regular file (%v): remove it", p, st.Mode().Type())
	}
	return f, nil
}

// appendLocked writes line to f under an exclusive lock, rotating first
// when the line would take it beyond limit. done is false when f is no
// longer the file at p (rotated by another writer): nothing was written.
func appendLocked(f *os.File, p string, line []byte, limit int64, mode os.FileMode) (done bool, err error) {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return false, err
	}
	st, err := f.Stat()
	if err != nil {
		return false, err
	}
	cur, err := os.Lstat(p)
	if err != nil || !os.SameFile(st, cur) {
		return false, nil
	}
	if st.Size() > 0 && st.Size()+int64(len(line)) > limit {
		// The lock stays on the old generation, now <file>.1: a writer
		// waiting for it sees that it moved and opens the new file.
		if err := os.Rename(p, p+".1"); err != nil {
			return false, fmt.Errorf("rotate: %w", err)
		}
		g, err := openLog(p, mode)
		if err != nil {
			return false, err
		}
		defer g.Close()
		// The new generation gets the old one's owner, group and mode.
		if sys, ok := st.Sys().(*syscall.Stat_t); ok && os.Geteuid() == 0 {
			if err := g.Chown(int(sys.Uid), int(sys.Gid)); err != nil {
				return false, err
			}
		}
		if err := g.Chmod(st.Mode().Perm()); err != nil {
			return false, err
		}
		if err := syscall.Flock(int(g.Fd()), syscall.LOCK_EX); err != nil {
			return false, err
		}
		f = g
	}
	if _, err := f.Write(line); err != nil {
		return false, err
	}
	return true, nil
}

// Last returns the newest line of an instance's crash log (its time and
// reason; the rest is for people), and false when there is none. Just
// after a rotation the newest line may still be the last of <file>.1.
func (c Logs) Last(project, instance string) (Crash, bool) {
	lines := c.LastLines(project, instance, 1)
	if len(lines) == 0 {
		return Crash{}, false
	}
	return ParseLine(lines[0])
}

// ParseLine reads back the time, reason and detail of a crash.log line.
func ParseLine(line string) (Crash, bool) {
	ts, rest, ok := strings.Cut(line, " ")
	if !ok {
		return Crash{}, false
	}
	t, err := time.Parse("2006-01-02T15:04:05.000Z", ts)
	if err != nil {
		return Crash{}, false
	}
	r, ok := strings.CutPrefix(rest, "reason=")
	if !ok {
		return Crash{}, false
	}
	r, _, _ = strings.Cut(r, " ")
	c := Crash{Time: t, Reason: reason.Reason(r)}
	if _, d, ok := strings.Cut(rest, " detail="); ok {
		// The last field, Go-quoted (Line); a line cut short has none.
		c.Detail, _ = strconv.Unquote(d)
	}
	return c, true
}
