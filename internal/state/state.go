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

// ErroredRunPath is where an errored project's mark goes when it cannot
// be written to ErroredPath: under Run, so it lasts until the next boot
// only (see the package's doc). Its directory is not Run/errored, where
// the instances' marks are: a project named like an instance ("api-1")
// must not be taken for one.
func (d Dir) ErroredRunPath(project string) string {
	return filepath.Join(d.runDir(), "errored-projects", project)
}

// MarkError is SetErrored's word that the project's mark could not be
// written to Path. Held says where the project's mark is nonetheless:
// Fallback (under Run, until the next boot), Path itself when only the
// directory's sync failed (the mark is there, perhaps not on disk), or ""
// when it is nowhere and the project is not marked at all (FallbackErr
// says why not under Run).
type MarkError struct {
	Project     string
	Path        string
	Err         error
	Fallback    string
	FallbackErr error
	Held        string
}

func (e *MarkError) Error() string {
	msg := fmt.Sprintf("mark %s errored: %s: %v", e.Project, e.Path, e.Err)
	switch {
	case e.Held == e.Fallback:
		msg += "; marked in " + e.Fallback + " instead, until the next boot"
	case e.Held == "" && e.FallbackErr != nil:
		msg += fmt.Sprintf("; nor in %s: %v", e.Fallback, e.FallbackErr)
	}
	return msg
}

func (e *MarkError) Unwrap() []error {
	if e.FallbackErr == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.FallbackErr}
}

// SetErrored marks the project errored with a reason, atomically. Marking an
// already errored project keeps the first reason and reports false.
//
// When the mark cannot be written under Path (a full /var, one mounted
// read-only, a failing disk), it is written under Run instead
// (ErroredRunPath), and the error is a *MarkError saying so: the project
// is errored all the same, until the next boot. first is then that
// mark's verdict.
func (d Dir) SetErrored(project, reason string) (bool, error) {
	fallback := d.ErroredRunPath(project)
	if _, err := os.Lstat(fallback); err == nil {
		// Marked already, under Run: the first verdict stands, even when
		// /var has room again.
		return false, nil
	}
	p := d.ErroredPath(project)
	if _, err := os.Lstat(p); err == nil {
		// Marked already: on a full or read-only /var the exclusive
		// create would fail before it could tell, and the fallback
		// would take a second verdict.
		return false, nil
	}
	first, err := createMark(p, reason)
	if err == nil {
		return first, nil
	}
	merr := &MarkError{Project: project, Path: p, Err: err, Fallback: fallback}
	if first {
		// Linked, but the directory did not sync: the mark is there.
		merr.Held = p
		return true, merr
	}
	first, merr.FallbackErr = createMark(fallback, reason)
	if merr.FallbackErr == nil || first {
		merr.Held = fallback
	}
	return first, merr
}

// createMark writes a mark atomically; first is whether it is this call's
// (it may be, with an error: the directory's sync failed).
func createMark(p, reason string) (bool, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, err
	}
	// The first verdict wins, atomically.
	return safefs.CreateExclusive(p, []byte(reason+"\n"), 0o644)
}

// Errored returns the reason a project is errored, and whether it is: by
// its mark under Path, or by the one under Run that stands in for it when
// Path could not be written.
func (d Dir) Errored(project string) (reason string, ok bool, err error) {
	reason, ok, err = readMark(d.ErroredPath(project))
	if ok {
		return reason, ok, err
	}
	if r, ok, ferr := readMark(d.ErroredRunPath(project)); ok || ferr != nil {
		return r, ok, ferr
	}
	return "", false, err
}

func readMark(p string) (string, bool, error) {
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return strings.TrimSpace(string(data)), true, nil
}

// ErroredMark is Errored for what a command shows: a mark that exists
// but cannot be read (it is root's, and the reader is not) still means
// errored.
func (d Dir) ErroredMark(project string) (reason string, errored bool, err error) {
	reason, errored, err = d.Errored(project)
	if errors.Is(err, fs.ErrPermission) {
		if _, serr := os.Lstat(d.ErroredPath(project)); serr == nil {
			return "unknown (run as root to read it)", true, nil
		}
	}
	return reason, errored, err
}

// InstanceMark is the errored mark of one instance ("api-1") as a
// command shows it: a mark that exists but cannot be read still means
// errored.
func (d Dir) InstanceMark(instance string) (Mark, bool) {
	m, ok, err := d.InstanceErrored(instance)
	if err != nil {
		if _, serr := os.Lstat(d.InstanceErroredPath(instance)); serr == nil {
			return Mark{Reason: "unknown (run as root to read it)"}, true
		}
		return Mark{}, false
	}
	return m, ok
}

// ClearErrored removes the mark, and the one under Run that may stand in
// for it; clearing a project that is not errored is not an error.
func (d Dir) ClearErrored(project string) error {
	err := errors.Join(safefs.Remove(d.ErroredPath(project)), safefs.Remove(d.ErroredRunPath(project)))
	if err != nil {
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
