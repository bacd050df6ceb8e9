package state

import (
	"errors"
	"fmt"
	"github.com/bm2dev/bm2/atomicfile"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDir is bm2's state directory.
const DefaultDir = "/var/lib/bm2"

// Dir is a state directory; the zero value is not usable, use Default or
// a Dir{Path: ...} of your own in tests.
type Dir struct{ Path string }

// Default is the system state directory.
var Default = Dir{Path: DefaultDir}

// ErroredPath is the mark file of an errored project; the generator writes
// it into ConditionPathExists=!.
func (d Dir) ErroredPath(project string) string {
	return filepath.Join(d.Path, "errored", project)
}

// ErroredPath is Default.ErroredPath.
func ErroredPath(project string) string { return Default.ErroredPath(project) }

// SetErrored marks the project errored with a reason, atomically. Marking an
// already errored project keeps the first reason and reports false.
func (d Dir) SetErrored(project, reason string) (bool, error) {
	p := d.ErroredPath(project)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return false, fmt.Errorf("mark %s errored: %w", project, err)
	}
	// The first verdict wins, atomically.
	first, err := atomicfile.CreateExclusive(p, []byte(reason+"\n"), 0o644)
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
	if err := atomicfile.Remove(d.ErroredPath(project)); err != nil {
		return fmt.Errorf("clear errored state of %s: %w", project, err)
	}
	return nil
}
