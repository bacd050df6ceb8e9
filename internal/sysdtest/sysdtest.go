// Package sysdtest is a fake of the calls in internal/sysd that the
// helpers' tests share: systemd's units by name, read as they are, and the
// jobs asked for, recorded. Only tests import it.
package sysdtest

import (
	"context"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/bm2dev/bm2/internal/sysd"
)

// Systemd answers the calls of internal/sysd's interfaces from its units
// and records the jobs it is asked for. Its fields are a test's to set
// before the code under test runs, and to read after.
type Systemd struct {
	mu sync.Mutex
	// ByName are the units by name; a name not in it is not found.
	ByName map[string]sysd.Status
	// OnUnit, if set, changes a unit as Unit reads it (a restart of its
	// own between two readings).
	OnUnit func(name string, st sysd.Status) sysd.Status
	// RestartErr, if set, is what RestartQueued answers (systemd took no
	// job).
	RestartErr error

	// The jobs asked for, in order: each unit restarted, started, reset
	// (ResetFailed), and the units of each StopQueued.
	Restarted, Started, Reset []string
	Stopped                   [][]string

	reads []string
}

// New is a Systemd with no units.
func New() *Systemd { return &Systemd{ByName: map[string]sysd.Status{}} }

var (
	_ sysd.Reader        = (*Systemd)(nil)
	_ sysd.Resetter      = (*Systemd)(nil)
	_ sysd.StartQueuer   = (*Systemd)(nil)
	_ sysd.RestartQueuer = (*Systemd)(nil)
	_ sysd.StopQueuer    = (*Systemd)(nil)
)

// Set puts st in as the unit named st.Name.
func (s *Systemd) Set(st sysd.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ByName == nil {
		s.ByName = map[string]sysd.Status{}
	}
	s.ByName[st.Name] = st
}

// Change changes the unit name with f, under the lock.
func (s *Systemd) Change(name string, f func(st sysd.Status) sysd.Status) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ByName[name] = f(s.ByName[name])
}

// Unit is the unit name (sysd.NotFound if there is none), changed by
// OnUnit if set; it records the read.
func (s *Systemd) Unit(ctx context.Context, name string) (sysd.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reads = append(s.reads, name)
	st, ok := s.ByName[name]
	if !ok {
		st = sysd.NotFound(name)
	}
	if s.OnUnit != nil {
		st = s.OnUnit(name, st)
	}
	return st, nil
}

// Units reads each name with Unit.
func (s *Systemd) Units(ctx context.Context, names []string) ([]sysd.Status, error) {
	out := make([]sysd.Status, len(names))
	for k, n := range names {
		out[k], _ = s.Unit(ctx, n)
	}
	return out, nil
}

// Loaded is the loaded units whose names match a pattern, sorted by name,
// with Name and the states only, as [sysd.Conn.Loaded] answers.
func (s *Systemd) Loaded(ctx context.Context, patterns []string) ([]sysd.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []sysd.Status
	for name, st := range s.ByName {
		for _, p := range patterns {
			if ok, _ := path.Match(p, name); ok && st.LoadState == "loaded" {
				out = append(out, sysd.Status{Name: name, LoadState: st.LoadState, ActiveState: st.ActiveState, SubState: st.SubState,
					MemoryCurrent: sysd.Unknown, CPUUsageNSec: sysd.Unknown, TasksCurrent: sysd.Unknown, UID: sysd.NoID, GID: sysd.NoID})
				break
			}
		}
	}
	slices.SortFunc(out, func(a, b sysd.Status) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// Reads returns and forgets the units read so far.
func (s *Systemd) Reads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.reads
	s.reads = nil
	return r
}

// ResetFailed records the reset.
func (s *Systemd) ResetFailed(ctx context.Context, unit string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Reset = append(s.Reset, unit)
	return nil
}

// StartQueued records the start.
func (s *Systemd) StartQueued(ctx context.Context, unit string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Started = append(s.Started, unit)
	return nil
}

// RestartQueued records the restart, or answers RestartErr.
func (s *Systemd) RestartQueued(ctx context.Context, unit string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.RestartErr != nil {
		return s.RestartErr
	}
	s.Restarted = append(s.Restarted, unit)
	return nil
}

// StopQueued records the stops.
func (s *Systemd) StopQueued(ctx context.Context, units ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Stopped = append(s.Stopped, units)
	return nil
}
