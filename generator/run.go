package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/bm2dev/bm2/config"
	"golang.org/x/sys/unix"
)

// ErrSkipped is returned by Run when at least one project was skipped; every
// valid project was still written.
var ErrSkipped = errors.New("some projects were skipped")

// Env is what Run needs from the process; tests replace it.
type Env struct {
	Getenv func(string) string
	Log    Logger
	NumCPU int
	Helper string // bm2-probe's path; "" means next to this generator (see HelperNextTo)
}

// HelperNextTo is where bm2-probe sits for a generator installed at exe:
// <prefix>/lib/systemd/system-generators/bm2-generator → <prefix>/lib/bm2/bm2-probe.
// It falls back to DefaultHelper when there is no such file.
func HelperNextTo(exe string) string {
	p := filepath.Join(filepath.Dir(exe), "..", "..", "bm2", "bm2-probe")
	if _, err := os.Stat(p); err == nil {
		return p
	}
	return DefaultHelper
}

// Logger receives the generator's messages with a syslog priority
// (3 error, 4 warning, 6 info).
type Logger interface {
	Log(priority int, msg string)
}

// Run is the generator as systemd calls it: args are the normal, early and
// late output directories (one argument is used for all three). Only the
// normal directory is written to.
func Run(ctx context.Context, args []string, env Env) error {
	if len(args) != 1 && len(args) != 3 {
		return fmt.Errorf("usage: bm2-generator NORMAL-DIR [EARLY-DIR LATE-DIR] (got %d arguments)", len(args))
	}
	out := args[0]
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	if env.NumCPU == 0 {
		env.NumCPU = runtime.NumCPU()
	}
	if env.Helper == "" {
		if exe, err := os.Executable(); err == nil {
			env.Helper = HelperNextTo(exe)
		}
	}
	found := config.Discover(config.SearchPath(env.Getenv))
	for _, p := range found.Shadow {
		env.Log.Log(6, fmt.Sprintf("%s is hidden by a file of the same name earlier in the search path", p))
	}
	for _, p := range found.Masked {
		env.Log.Log(6, fmt.Sprintf("%s masks project %s", p, config.Stem(p)))
	}
	res := Generate(found.Sources, Options{NumCPU: env.NumCPU, Helper: env.Helper})
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := Write(out, res.Files); err != nil {
		return err
	}
	skipped := len(res.Skipped) + len(found.Errors)
	for _, err := range found.Errors {
		env.Log.Log(3, "skipped: "+strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	for _, d := range res.Skipped {
		for _, line := range d.Lines() {
			env.Log.Log(3, line)
		}
	}
	instances := 0
	for _, p := range res.Projects {
		instances += p.Instances
	}
	summary := fmt.Sprintf("generated %s (%s)", plural(len(res.Projects), "project"), plural(instances, "instance"))
	if skipped > 0 {
		env.Log.Log(4, fmt.Sprintf("%s, skipped %d", summary, skipped))
		return fmt.Errorf("%w: %d of %d", ErrSkipped, skipped, skipped+len(res.Projects))
	}
	env.Log.Log(6, summary)
	return nil
}

// Write puts files into dir. Every regular file is written to a temporary
// name and renamed into place, so a reader never sees half a file; symlinks
// are created under a temporary name and renamed likewise. Directories are
// made first; files are then written by a few goroutines (the work is all
// system calls, and they run in parallel).
func Write(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	made := map[string]bool{dir: true}
	for _, f := range files {
		parent := filepath.Dir(filepath.Join(dir, filepath.FromSlash(f.Path)))
		if made[parent] {
			continue
		}
		if err := unix.Mkdir(parent, 0o755); err != nil && err != unix.EEXIST {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return err
			}
		}
		made[parent] = true
	}
	workers := min(runtime.GOMAXPROCS(0), 4, max(1, len(files)/64))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < len(files); i += workers {
				if err := writeOne(dir, files[i]); err != nil {
					errs[w] = err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	return errors.Join(errs...)
}

func writeOne(dir string, f File) error {
	dst := filepath.Join(dir, filepath.FromSlash(f.Path))
	tmp := filepath.Join(filepath.Dir(dst), ".#"+filepath.Base(dst))
	if f.Link != "" {
		err := unix.Symlink(f.Link, tmp)
		if err == unix.EEXIST { // left over from an interrupted run
			_ = unix.Unlink(tmp)
			err = unix.Symlink(f.Link, tmp)
		}
		if err != nil {
			return &fs.PathError{Op: "symlink", Path: tmp, Err: err}
		}
	} else if err := writeFile(tmp, f.Data); err != nil {
		return err
	}
	if err := unix.Rename(tmp, dst); err != nil {
		_ = unix.Unlink(tmp)
		return &fs.PathError{Op: "rename", Path: dst, Err: err}
	}
	return nil
}

// writeFile creates name with data using plain system calls: os.File would
// add fcntl and epoll calls per file, which dominate for thousands of files.
func writeFile(name string, data []byte) error {
	fd, err := unix.Open(name, unix.O_WRONLY|unix.O_CREAT|unix.O_TRUNC|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return &fs.PathError{Op: "open", Path: name, Err: err}
	}
	for len(data) > 0 && err == nil {
		var n int
		n, err = unix.Write(fd, data)
		data = data[n:]
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	if err != nil {
		_ = unix.Unlink(name)
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	return nil
}

// OpenLogger picks where the generator's messages go. systemd.generator(7)
// says /dev/kmsg (PID 1 discards a generator's stdout and stderr on systemd
// 252), and journald files kmsg records written as "bm2[pid]: msg" under
// SYSLOG_IDENTIFIER=bm2. Containers usually have no /dev/kmsg; there the
// messages go to journald's native socket when it exists (a datagram with a
// short deadline, so a busy journald can never stall PID 1), and to
// fallback (stderr) as a last resort.
func OpenLogger(fallback io.Writer) Logger {
	if f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0); err == nil {
		return &lineLogger{w: f, format: kmsgFormat, fallback: fallback}
	}
	if c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: JournalSocket, Net: "unixgram"}); err == nil {
		return &lineLogger{w: deadlineWriter{c}, format: journalFormat, fallback: fallback}
	}
	return &lineLogger{w: fallback, format: plainFormat}
}

// JournalSocket is journald's native protocol socket.
const JournalSocket = "/run/systemd/journal/socket"

type lineLogger struct {
	w        io.Writer
	format   func(priority int, msg string) string
	fallback io.Writer
}

// Log writes one record in a single write.
func (l *lineLogger) Log(priority int, msg string) {
	msg = strings.ReplaceAll(msg, "\n", " ")
	if _, err := io.WriteString(l.w, l.format(priority, msg)); err != nil && l.fallback != nil {
		io.WriteString(l.fallback, plainFormat(priority, msg))
	}
}

// kmsgFormat: priority with the user facility (8), then "bm2[pid]: ".
func kmsgFormat(priority int, msg string) string {
	return fmt.Sprintf("<%d>bm2[%d]: %s\n", 8+priority, os.Getpid(), msg)
}

// journalFormat is one entry of journald's native protocol.
func journalFormat(priority int, msg string) string {
	return fmt.Sprintf("PRIORITY=%d\nSYSLOG_FACILITY=1\nSYSLOG_IDENTIFIER=bm2\nSYSLOG_PID=%d\nMESSAGE=%s\n",
		priority, os.Getpid(), msg)
}

func plainFormat(priority int, msg string) string { return "bm2-generator: " + msg + "\n" }

type deadlineWriter struct{ c *net.UnixConn }

func (d deadlineWriter) Write(p []byte) (int, error) {
	d.c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	return d.c.Write(p)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
