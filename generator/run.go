package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bm2dev/bm2/atomicfile"
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
	res := Generate(found.Sources, Options{NumCPU: env.NumCPU, Helper: env.Helper, OutDir: out})
	if err := ctx.Err(); err != nil {
		return err
	}
	written := res.Projects
	if err := Write(out, res.Files); err != nil {
		var we *WriteError
		if !errors.As(err, &we) {
			return err
		}
		// Only those projects are missing; every other one is there.
		written = nil
		for _, p := range res.Projects {
			if ferr, bad := we.Failed[p.Name]; bad {
				res.Skipped = append(res.Skipped, Diagnostic{File: p.File, Err: fmt.Errorf("cannot write its units: %w", ferr)})
			} else {
				written = append(written, p)
			}
		}
		res.Projects = written
	}
	for _, w := range res.Warnings {
		env.Log.Log(4, w)
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

// Write puts files into dir, each atomically (package atomicfile), the
// directories synced once at the end. Directories are made first; the
// projects are then written by a few goroutines (the work is all system
// calls, and they run in parallel).
//
// A file that cannot be written fails its own project only: that
// project's other files are removed again (a target without its
// instances' drop-ins would not load), its error is returned in a
// *WriteError, and every other project is still written.
func Write(dir string, files []File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// Split by project, keeping the order.
	var groups [][]File
	for i := 0; i < len(files); {
		j := i + 1
		for j < len(files) && files[j].Project == files[i].Project {
			j++
		}
		groups = append(groups, files[i:j])
		i = j
	}
	made := sync.Map{}
	mkdir := func(p string, perm os.FileMode) error {
		if _, ok := made.Load(p); ok {
			return nil
		}
		if err := unix.Mkdir(p, uint32(perm)); err != nil && err != unix.EEXIST {
			if err := os.MkdirAll(p, perm); err != nil {
				return err
			}
		}
		if perm != 0o755 {
			if err := os.Chmod(p, perm); err != nil { // whatever the umask
				return err
			}
		}
		made.Store(p, true)
		return nil
	}
	workers := min(runtime.GOMAXPROCS(0), 4, max(1, len(files)/64))
	failed := make([]map[string]error, workers)
	batches := make([]atomicfile.Batch, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for g := w; g < len(groups); g += workers {
				if err := writeGroup(dir, groups[g], &batches[w], mkdir); err != nil {
					if failed[w] == nil {
						failed[w] = map[string]error{}
					}
					failed[w][groups[g][0].Project] = err
				}
			}
		}(w)
	}
	wg.Wait()
	we := &WriteError{Failed: map[string]error{}}
	var syncErrs []error
	for w := range batches {
		for k, v := range failed[w] {
			we.Failed[k] = v
		}
		syncErrs = append(syncErrs, batches[w].Sync())
	}
	if err := errors.Join(syncErrs...); err != nil {
		return err
	}
	if len(we.Failed) > 0 {
		return we
	}
	return nil
}

// writeGroup writes one project's files; on failure it removes those it
// wrote, so the project is either complete or absent.
func writeGroup(dir string, files []File, b *atomicfile.Batch, mkdir func(string, os.FileMode) error) error {
	var written []string
	for _, f := range files {
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		perm := os.FileMode(0o755)
		if f.Mode != 0 && f.Mode&0o077 == 0 {
			perm = 0o700 // a private file's directory is private too
		}
		err := mkdir(filepath.Dir(dst), perm)
		if err == nil && f.Link != "" {
			err = b.Symlink(f.Link, dst)
		} else if err == nil {
			err = b.Write(dst, f.Data, f.Perm())
		}
		if err != nil {
			for _, w := range written {
				_ = os.Remove(w)
			}
			return err
		}
		written = append(written, dst)
	}
	return nil
}

// WriteError lists the projects whose files could not be written, each
// with the first error.
type WriteError struct {
	Failed map[string]error
}

func (e *WriteError) Error() string {
	names := make([]string, 0, len(e.Failed))
	for n := range e.Failed {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + e.Failed[n].Error()
	}
	return "could not write the units of " + strings.Join(parts, "; ")
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
