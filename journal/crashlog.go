package journal

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// DefaultLogDir is where crash logs live: <dir>/<project>/<instance>.crash.log.
const DefaultLogDir = "/var/log/bm2"

// DefaultMaxSize is how large a crash.log grows before it is rotated to
// <file>.1, replacing the previous .1. A line is 60 to 300 bytes, so the
// log keeps the last several thousand crashes, far more than anyone reads,
// and an instance that crashes every second for months takes at most
// 2 MiB of /var/log (the journal, with its own limits, has the events
// too).
const DefaultMaxSize = 1 << 20

// CrashLog appends to per-instance crash logs under Dir.
type CrashLog struct {
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
	Reason   Reason // first-class: reuseport_missing, exited, killed, …
	ExitCode *int   // the exit status, when the process exited
	Signal   string // the signal that killed it, e.g. SIGKILL
	Detail   string
}

// Path is the crash log of one instance, e.g. /var/log/bm2/api/api-0.crash.log
// (system scope) or ~/.bm2/api/logs/api-0.crash.log (user scope).
func (c CrashLog) Path(project, instance string) string {
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

// Append adds one line to the instance's crash log, creating the file and
// its directory as needed. A single write(2) with O_APPEND keeps concurrent
// writers from interleaving within a line. A line that would take the file
// beyond MaxSize first rotates it: rename(2) to <file>.1 (atomic, replacing
// the previous generation), then a new file. Writers hold an flock(2) on
// the file while they check its size and write, so that two of them never
// rotate the same file twice or write into a generation just moved away.
// No symbolic link is followed: not the log, not its directory, and the
// rename moves a link itself, never its target.
func (c CrashLog) Append(project, instance string, cr Crash) error {
	p := c.Path(project, instance)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("crash log: %w", err)
	}
	if st, err := os.Lstat(dir); err != nil {
		return fmt.Errorf("crash log: %w", err)
	} else if !st.IsDir() {
		return fmt.Errorf("crash log directory %s is not a directory (a symbolic link?): remove it", dir)
	}
	line := []byte(cr.Line() + "\n")
	limit := c.MaxSize
	if limit <= 0 {
		limit = DefaultMaxSize
	}
	for range 10 {
		f, err := openLog(p)
		if err != nil {
			return err
		}
		done, err := appendLocked(f, p, line, limit)
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

// openLog opens (or creates) a crash log for appending, refusing anything
// but a regular file.
func openLog(p string) (*os.File, error) {
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0o644)
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
func appendLocked(f *os.File, p string, line []byte, limit int64) (done bool, err error) {
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
		g, err := openLog(p)
		if err != nil {
			return false, err
		}
		defer g.Close()
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
func (c CrashLog) Last(project, instance string) (Crash, bool) {
	lines := c.LastLines(project, instance, 1)
	if len(lines) == 0 {
		return Crash{}, false
	}
	return ParseCrashLine(lines[0])
}

// ParseCrashLine reads back the time and reason of a crash.log line.
func ParseCrashLine(line string) (Crash, bool) {
	ts, rest, ok := strings.Cut(line, " ")
	if !ok {
		return Crash{}, false
	}
	t, err := time.Parse("2006-01-02T15:04:05.000Z", ts)
	if err != nil {
		return Crash{}, false
	}
	reason, ok := strings.CutPrefix(rest, "reason=")
	if !ok {
		return Crash{}, false
	}
	reason, _, _ = strings.Cut(reason, " ")
	return Crash{Time: t, Reason: Reason(reason)}, true
}
