package state

import (
	"errors"
	"fmt"
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
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-"+project+"-")
	if err != nil {
		return false, fmt.Errorf("mark %s errored: %w", project, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(reason + "\n"); err != nil {
		tmp.Close()
		return false, fmt.Errorf("mark %s errored: %w", project, err)
	}
	if err := tmp.Close(); err != nil {
		return false, fmt.Errorf("mark %s errored: %w", project, err)
	}
	// link(2) fails if the mark exists: the first verdict wins, atomically.
	if err := os.Link(tmp.Name(), p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return false, nil
		}
		return false, fmt.Errorf("mark %s errored: %w", project, err)
	}
	return true, nil
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
	err := os.Remove(d.ErroredPath(project))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("clear errored state of %s: %w", project, err)
	}
	return nil
}
