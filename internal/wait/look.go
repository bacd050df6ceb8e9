package wait

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Host is the I/O of a wait's looks: what it reads of the world and what
// it does there on the step's word. Package control implements it over
// systemd, the journal, /proc and the scope's files; tests, over fakes.
type Host interface {
	Now() time.Time
	// Units are the states of the named units, in their order.
	Units(ctx context.Context, names []string) ([]view.UnitStatus, error)
	// Errored is a project's errored mark.
	Errored(project string) (reason string, errored bool)
	// VerdictFile is the reusePort probe's latest verdict on instance id
	// from the file it keeps; ok is false when there is none.
	VerdictFile(id string) (ev journal.Event, ok bool, err error)
	// WatchVerdicts returns a channel that receives when the probe writes
	// a verdict file, and what stops the watch; a nil channel when they
	// cannot be watched.
	WatchVerdicts() (<-chan struct{}, func())
	// Verdicts are the probe's verdicts on a project's instances logged
	// since then (the journal).
	Verdicts(ctx context.Context, project string, since time.Time) ([]journal.Event, error)
	// Start starts a unit and waits for its job (a run of the health
	// check); StartQueued only queues the start (a probe started again).
	Start(ctx context.Context, unit string) error
	StartQueued(ctx context.Context, unit string) error
	// Health is a project's health check's state file.
	Health(project string) (health.State, error)
	// Listening tells whether the processes of unit u listen on port.
	Listening(ctx context.Context, u view.UnitStatus, port int) (bool, error)
	// FirstError is the first error the ended run u of an instance
	// logged; with settle, after a moment for journald to have its last
	// lines.
	FirstError(ctx context.Context, p *config.Project, unit string, u view.UnitStatus, settle bool) string
	// JournalctlUnit is the command that shows a unit's journal.
	JournalctlUnit(unit string) string
}

// verdictJournalEvery is how often a wait that watches the probe's
// verdict files also reads the journal for its verdicts.
const verdictJournalEvery = 500 * time.Millisecond

// healthEvery is how often a wait starts the health service while an
// instance has not answered healthy yet.
const healthEvery = time.Second

// looker does a wait's looks through a Host. It keeps when it last did
// each costly thing, so that a look costs the host no more than the wait
// needs.
type looker struct {
	h                 Host
	r                 Reporter
	w                 *Waiter
	poll              time.Duration
	names, probeNames []string
	// written wakes the wait when the probe writes a verdict file (nil:
	// not watched).
	written <-chan struct{}
	unwatch func()

	fromJournal  []journal.Event
	journalErr   error
	journalDue   time.Time // when the journal is read next for verdicts
	probesRead   time.Time // when the probes' states were last read
	healthRun    time.Time // when the health service was last started
	healthWarned bool
	last         []view.UnitStatus // the states last read
	lastAt       time.Time         // when last was read
}

func newLooker(h Host, r Reporter, w *Waiter, poll time.Duration) *looker {
	l := &looker{h: h, r: r, w: w, poll: poll, names: make([]string, len(w.ids)), probeNames: make([]string, len(w.ids)), unwatch: func() {}}
	for k, i := range w.ids {
		l.names[k] = units.Instance(w.p.Name, i)
		l.probeNames[k] = units.Probe(w.p.Name, i)
	}
	// The probe keeps each verdict in a file too: a wait wakes the moment
	// one is written, reads the files at every look, and the journal (for
	// verdicts without a file: a probe older than this bm2, a write that
	// failed) once every verdictJournalEvery, from verdictJournalEvery
	// after it first looks for verdicts: a journalctl run beside starting
	// instances costs them, and the wait, some 30 ms of the CPUs.
	if w.probe {
		l.written, l.unwatch = h.WatchVerdicts()
	}
	return l
}

func (l *looker) close() { l.unwatch() }

// look takes the snapshot the step needs: ask is what the last step
// asked for. ok is false when the states could not be read as the
// wait's time ran out (err only for another failure); wasQuick says the
// look took the states read last.
//
// quick: woken by a verdict file. The look takes the states read last
// (at most two ticks ago) with the files, rather than asking PID 1 again
// first: under load a read takes it 20-100 ms, and a reload's every step
// waits for this look. A look that does not finish the wait is followed
// by a full one at once.
func (l *looker) look(ctx context.Context, ask needs, quick bool) (s snapshot, wasQuick, ok bool, err error) {
	h, w := l.h, l.w
	var statuses []view.UnitStatus
	// Only with states read within a tick or so: a look that started
	// the health check, or read the journal, took longer.
	wasQuick = quick && l.last != nil && h.Now().Sub(l.lastAt) <= 2*l.poll
	if wasQuick {
		statuses = l.last
	} else {
		statuses, err = h.Units(ctx, l.names)
		l.lastAt = h.Now()
	}
	if err != nil {
		if ctx.Err() == nil {
			return s, wasQuick, false, err
		}
		return s, wasQuick, false, nil
	}
	l.last = statuses
	s = snapshot{now: h.Now(), units: statuses, asked: ask}
	if reason, errored := h.Errored(w.p.Name); errored {
		s.errored = reason
	}
	if ask.events {
		l.verdicts(ctx, &s, ask, wasQuick)
	}
	if ask.health {
		l.health(ctx, &s)
	}
	if ask.listen && w.mode == UntilBack {
		s.listen, s.listenErr = h.Listening(ctx, statuses[0], w.p.InstancePort(w.ids[0]))
	} else if ask.listen {
		s.listens, s.listenErrs = make([]bool, len(statuses)), make([]error, len(statuses))
		for k, u := range statuses {
			if w.needsListen(k, u) {
				s.listens[k], s.listenErrs[k] = h.Listening(ctx, u, w.p.InstancePort(w.ids[k]))
			}
		}
	}
	return s, wasQuick, true, nil
}

// verdicts reads the probe's verdicts on the instances into s: the files
// on every current run leave nothing else to read. Otherwise the probes
// first: a probe seen gone logged its verdict before it ended, so what
// is read next holds it. Once a second is enough for them
// (reprobeAfter).
func (l *looker) verdicts(ctx context.Context, s *snapshot, ask needs, wasQuick bool) {
	h := l.h
	files, covered := l.verdictFiles(s.units)
	if now := h.Now(); !covered && !wasQuick && now.Sub(l.probesRead) >= time.Second {
		if probes, err := h.Units(ctx, l.probeNames); err == nil {
			s.probes, l.probesRead = probes, now
			files, covered = l.verdictFiles(s.units)
		}
	}
	now := h.Now()
	if l.journalDue.IsZero() && l.written != nil {
		// Watched: the files come first; the journal only for
		// what none has written by then.
		l.journalDue = now.Add(verdictJournalEvery)
	}
	if !covered && !now.Before(l.journalDue) {
		l.fromJournal, l.journalErr = h.Verdicts(ctx, l.w.p.Name, ask.since)
		if l.written != nil {
			l.journalDue = now.Add(verdictJournalEvery)
		}
	}
	s.events, s.eventsErr = mergeEvents(l.fromJournal, files), l.journalErr
}

// verdictFiles are the verdicts the probe keeps in files on the
// instances (statuses, in w.ids' order); covered is whether there is one
// on every instance's current run, which leaves the journal nothing to
// add. Each names the run it judged, so no time filters them: a file
// from before the oldest unconfirmed run (an instance confirmed earlier)
// still covers its own.
func (l *looker) verdictFiles(statuses []view.UnitStatus) (evs []journal.Event, covered bool) {
	covered = true
	for k, i := range l.w.ids {
		ev, ok, err := l.h.VerdictFile(units.InstanceID(l.w.p.Name, i))
		if err != nil || !ok {
			covered = false
			continue
		}
		evs = append(evs, ev)
		covered = covered && ev.Invocation != "" && ev.Invocation == statuses[k].InvocationID
	}
	return evs, covered
}

// mergeEvents is a and b in the order they were logged.
func mergeEvents(a, b []journal.Event) []journal.Event {
	if len(b) == 0 {
		return a
	}
	out := slices.Concat(a, b)
	slices.SortStableFunc(out, func(x, y journal.Event) int { return x.Time.Compare(y.Time) })
	return out
}

// health runs the health check and reads its state file into s. A run of
// the check, rather than a wait for its timer: the instance's first
// healthy answer is what online means. At most one a second (the run
// itself takes up to health_timeout_ms); a failure in these runs counts
// no faster than the timer's (package health).
func (l *looker) health(ctx context.Context, s *snapshot) {
	h, p := l.h, l.w.p
	if now := h.Now(); l.healthRun.IsZero() || now.Sub(l.healthRun) >= healthEvery {
		l.healthRun = now
		svc := units.HealthService(p.Name)
		if err := h.Start(ctx, svc); err != nil && ctx.Err() == nil && !l.healthWarned {
			l.r.Warn(fmt.Sprintf("%s: %v; waiting for its checks all the same (`%s` shows why)", svc, err, h.JournalctlUnit(svc)))
			l.healthWarned = true
		}
	}
	st, err := h.Health(p.Name)
	if err == nil {
		s.health = &st
	} else {
		s.healthErr = err
	}
}

// firstError is the first error an ended run logged: what decides
// whether its exit is news. It gives journald a moment for the last
// lines unless the run ended as the last one did.
func (l *looker) firstError(ctx context.Context, e runEnded) string {
	p := l.w.p
	return l.h.FirstError(ctx, p, units.Instance(p.Name, l.w.ids[e.k]), e.unit, e.settle)
}
