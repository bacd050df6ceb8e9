package state

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/bm2dev/bm2/internal/safefs"
)

// Dir is a state directory; the zero value is not usable: a scope's is
// layout.Layout.State(), a test's a Dir{Path: ...} of its own.
type Dir struct {
	Path string // kept across reboots: /var/lib/bm2
	// Run is kept until the next boot only: /run/bm2, or the user's
	// $XDG_RUNTIME_DIR/bm2. "" means Path/run (tests).
	Run string
}

// ErroredPath is the mark file of an errored project; the generator writes
// it into ConditionPathExists=!.
func (d Dir) ErroredPath(project string) string {
	return filepath.Join(d.Path, "errored", project)
}

// SetErrored marks the project errored with a reason, atomically. Marking an
// already errored project keeps the first reason and reports false.
func (d Dir) SetErrored(project, reason string) (bool, error) {
	p := d.ErroredPath(project)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, fmt.Errorf("mark %s errored: %w", project, err)
	}
	// The first verdict wins, atomically.
	first, err := safefs.CreateExclusive(p, []byte(reason+"\n"), 0o644)
	if err != nil {
		return false, fmt.Errorf("mark %s errored: %w", project, err)
	}
	return first, nil
}

// Errored returns the reason a project is errored, and whether it is.
func (d Dir) Errored(project string) (reason string, ok bool, err error) {
	data, err := os.ReadFile(d.ErroredPath(project))
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(data)), true, nil
}

// ClearErrored removes the mark; clearing a project that is not errored is
// not an error.
func (d Dir) ClearErrored(project string) error {
	if err := safefs.Remove(d.ErroredPath(project)); err != nil {
		return fmt.Errorf("clear errored state of %s: %w", project, err)
	}
	return nil
}

// runDir is where the marks that last one boot live.
func (d Dir) runDir() string {
	if d.Run != "" {
		return d.Run
	}
	return filepath.Join(d.Path, "run")
}

// InstanceErroredPath is the mark file of one errored instance
// ("api-1"), under Run: the generator writes it into the instance's
// ConditionPathExists=!. It lasts until the next boot only, so that what
// set it (another user's listener on the instance's port) is looked at
// again after a reboot.
func (d Dir) InstanceErroredPath(instance string) string {
	return filepath.Join(d.runDir(), "errored", instance)
}

// Mark is an errored instance's mark: the reason, and what the root side
// saw that made it (the holder of the port: "python3 (pid 812), uid 65534
// (nobody)"), on one line.
type Mark struct {
	Reason string
	Detail string
}

// SetInstanceErrored marks one instance errored, atomically; the first
// mark wins (false: it was marked already). Its neighbours are not
// touched.
func (d Dir) SetInstanceErrored(instance string, m Mark) (bool, error) {
	p := d.InstanceErroredPath(instance)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, fmt.Errorf("mark %s errored: %w", instance, err)
	}
	detail := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, m.Detail)
	first, err := safefs.CreateExclusive(p, []byte(m.Reason+"\n"+detail+"\n"), 0o644)
	if err != nil {
		return false, fmt.Errorf("mark %s errored: %w", instance, err)
	}
	return first, nil
}

// InstanceErrored reads an instance's mark, and whether there is one. The
// mark is read without following a link and without waiting on a FIFO.
func (d Dir) InstanceErrored(instance string) (Mark, bool, error) {
	f, err := safefs.OpenFile(d.InstanceErroredPath(instance), os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return Mark{}, false, nil
	}
	if err != nil {
		return Mark{}, false, err
	}
	defer f.Close()
	buf := make([]byte, 4096)
	n, err := f.Read(buf)
	if err != nil && n == 0 && !errors.Is(err, io.EOF) {
		return Mark{}, true, err
	}
	reason, detail, _ := strings.Cut(string(buf[:n]), "\n")
	detail, _, _ = strings.Cut(detail, "\n")
	return Mark{Reason: strings.TrimSpace(reason), Detail: strings.TrimSpace(detail)}, true, nil
}

// ClearInstanceErrored removes an instance's mark; clearing an instance
// that is not errored is not an error.
func (d Dir) ClearInstanceErrored(instance string) error {
	if err := safefs.Remove(d.InstanceErroredPath(instance)); err != nil {
		return fmt.Errorf("clear errored state of %s: %w", instance, err)
	}
	return nil
}

// ErroredInstances lists the instances of project that carry a mark
// ("api-0", "api-surge"), sorted.
func (d Dir) ErroredInstances(project string) ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(d.runDir(), "errored"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		rest, ok := strings.CutPrefix(e.Name(), project+"-")
		if !ok || rest == "" || strings.HasPrefix(e.Name(), ".#") {
			continue
		}
		if rest != "surge" && strings.Trim(rest, "0123456789") != "" {
			continue // another project's, whose name starts with ours and a dash
		}
		out = append(out, e.Name())
	}
	return out, nil
}
