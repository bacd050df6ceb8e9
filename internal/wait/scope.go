package wait

import (
	"context"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/history"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// Systemd is what a wait asks of systemd: the units' states, and starts
// (a run of the health check, waited for; a probe started again, only
// queued).
type Systemd interface {
	sysd.UnitsReader
	sysd.Starter
	sysd.StartQueuer
}

// Scope is a wait's [Host] on a scope of the real host: systemd, the
// errored marks, the probe's verdict files and the journal, the health
// check's state files and /proc. Package control fills it in from its
// environment.
type Scope struct {
	Systemd Systemd
	// Layout is the scope: its errored marks, health state files and
	// how to show a unit's journal.
	Layout layout.Layout
	// Clock is the time (Host.Now).
	Clock func() time.Time
	// Verdict reads the probe's verdict file on an instance; Watch
	// watches them. Either nil: there is none to read or watch.
	Verdict func(id string) (ev journal.Event, ok bool, err error)
	Watch   func() (<-chan struct{}, func())
	// ReadJournal runs a journal query, and JournalUser is whose entries
	// it reads ("" in system scope: journal.Query.User).
	ReadJournal func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error
	JournalUser string
	// Listen tells whether a unit's processes listen on a TCP port.
	Listen func(ctx context.Context, u view.UnitStatus, port int) (bool, error)
	// RunError is the first error an ended run logged (Host.FirstError).
	RunError func(ctx context.Context, p *config.Project, unit string, u view.UnitStatus, settle bool) string
}

// Now is the scope's time.
func (s Scope) Now() time.Time { return s.Clock() }

// Units are the states of the named units, from systemd.
func (s Scope) Units(ctx context.Context, names []string) ([]view.UnitStatus, error) {
	return s.Systemd.Units(ctx, names)
}

// Errored is a project's errored mark.
func (s Scope) Errored(project string) (string, bool) {
	reason, errored, _ := s.Layout.State().ErroredMark(project)
	return reason, errored
}

// VerdictFile is the probe's verdict file on instance id.
func (s Scope) VerdictFile(id string) (journal.Event, bool, error) {
	if s.Verdict == nil {
		return journal.Event{}, false, nil
	}
	return s.Verdict(id)
}

// WatchVerdicts watches the verdict files (a nil channel: it cannot).
func (s Scope) WatchVerdicts() (<-chan struct{}, func()) {
	if s.Watch == nil {
		return nil, func() {}
	}
	return s.Watch()
}

// Verdicts are the probe's verdicts on a project's instances logged
// since then, from the journal.
func (s Scope) Verdicts(ctx context.Context, project string, since time.Time) ([]journal.Event, error) {
	return history.ProjectEvents(ctx, s.ReadJournal, s.JournalUser, []string{project}, view.ReuseportKinds, since)
}

// Start starts a unit and waits for its job.
func (s Scope) Start(ctx context.Context, unit string) error { return s.Systemd.Start(ctx, unit) }

// StartQueued queues a unit's start.
func (s Scope) StartQueued(ctx context.Context, unit string) error {
	return s.Systemd.StartQueued(ctx, unit)
}

// Health is a project's health check's state file.
func (s Scope) Health(project string) (health.State, error) {
	return health.Read(health.Path(s.Layout.HealthDir(project)))
}

// Listening tells whether the processes of unit u listen on port.
func (s Scope) Listening(ctx context.Context, u view.UnitStatus, port int) (bool, error) {
	return s.Listen(ctx, u, port)
}

// FirstError is the first error the ended run u of an instance logged.
func (s Scope) FirstError(ctx context.Context, p *config.Project, unit string, u view.UnitStatus, settle bool) string {
	return s.RunError(ctx, p, unit, u, settle)
}

// JournalctlUnit is the command that shows a unit's journal.
func (s Scope) JournalctlUnit(unit string) string { return s.Layout.JournalctlUnit(unit) }
