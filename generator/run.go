package generator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/bm2dev/bm2/config"
)

// ErrSkipped is returned by Run when at least one project was skipped; every
// valid project was still written.
var ErrSkipped = errors.New("some projects were skipped")

// Env is what Run needs from the process; tests replace it.
type Env struct {
	Getenv func(string) string
	Log    Logger
	NumCPU int
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
	found := config.Discover(config.SearchPath(env.Getenv))
	for _, p := range found.Shadow {
		env.Log.Log(6, fmt.Sprintf("%s is hidden by a file of the same name earlier in the search path", p))
	}
	for _, p := range found.Masked {
		env.Log.Log(6, fmt.Sprintf("%s masks project %s", p, config.Stem(p)))
	}
	res := Generate(found.Sources, Options{NumCPU: env.NumCPU})
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
		env.Log.Log(3, d.String())
	}
	if skipped > 0 {
		instances := 0
		for _, p := range res.Projects {
			instances += p.Instances
		}
		env.Log.Log(4, fmt.Sprintf("generated %d projects (%d instances), skipped %d", len(res.Projects), instances, skipped))
		return fmt.Errorf("%w: %d of %d", ErrSkipped, skipped, skipped+len(res.Projects))
	}
	return nil
}

// Write puts files into dir. Every regular file is written to a temporary
// name and renamed into place, so a reader never sees half a file; symlinks
// are created under a temporary name and renamed likewise.
func Write(dir string, files []File) error {
	made := map[string]bool{}
	for _, f := range files {
		dst := filepath.Join(dir, filepath.FromSlash(f.Path))
		parent := filepath.Dir(dst)
		if !made[parent] {
			if err := os.MkdirAll(parent, 0o755); err != nil {
				return err
			}
			made[parent] = true
		}
		tmp := filepath.Join(parent, ".#"+filepath.Base(dst))
		if f.Link != "" {
			_ = os.Remove(tmp)
			if err := os.Symlink(f.Link, tmp); err != nil {
				return err
			}
		} else if err := writeFile(tmp, f.Data); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst); err != nil {
			_ = os.Remove(tmp)
			return err
		}
	}
	return nil
}

func writeFile(name string, data []byte) error {
	fh, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = fh.Write(data)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
	}
	return err
}

// KmsgLogger writes "<prio>bm2[pid]: msg" records to /dev/kmsg, from where
// journald files them under SYSLOG_IDENTIFIER=bm2. When kmsg cannot be
// opened it falls back to Fallback (stderr in production).
type KmsgLogger struct {
	w        io.Writer
	Fallback io.Writer
}

// OpenKmsg opens /dev/kmsg for writing, or returns a logger that writes to
// fallback only.
func OpenKmsg(fallback io.Writer) *KmsgLogger {
	l := &KmsgLogger{Fallback: fallback}
	if f, err := os.OpenFile("/dev/kmsg", os.O_WRONLY, 0); err == nil {
		l.w = f
	}
	return l
}

// Log writes one message; kmsg takes one record per write.
func (l *KmsgLogger) Log(priority int, msg string) {
	if l.w != nil {
		// 8 is LOG_USER (the kernel would force it anyway).
		if _, err := fmt.Fprintf(l.w, "<%d>bm2[%d]: %s\n", 8+priority, os.Getpid(), msg); err == nil {
			return
		}
	}
	if l.Fallback != nil {
		fmt.Fprintf(l.Fallback, "bm2-generator: %s\n", msg)
	}
}
