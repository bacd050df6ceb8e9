package explain

import (
	"context"
	"strconv"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// Journal is the scope's journal as an explanation reads it: the events
// bm2 logged (LastEvent, InstanceEvent) and what one run of an instance
// logged (RunLog, RunLogSettled).
type Journal struct {
	// Read runs a journal query and calls each for every entry.
	Read func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error
	// Scope says whose entries are bm2's and how to show a unit's lines.
	Scope layout.Layout
	Clock Clock
}

// Decode is entry e as a bm2 event, when it is one of the scope's.
func (j Journal) Decode(e journal.Entry) (journal.Event, bool) {
	return journal.DecodeFrom(e, strconv.Itoa(j.Scope.UID))
}

// LastEvent returns the project's most recent event of a kind.
func (j Journal) LastEvent(ctx context.Context, project string, kind journal.Kind) (journal.Event, bool) {
	q := journal.EventQuery([]string{project}, kind)
	return j.last(ctx, q, "")
}

// InstanceEvent returns the most recent event of kinds that names
// instance id of the project.
func (j Journal) InstanceEvent(ctx context.Context, project, id string, kinds ...journal.Kind) (journal.Event, bool) {
	q := journal.EventQuery([]string{project}, kinds...)
	q.Matches = append(q.Matches, journal.FieldInstance+"="+id)
	return j.last(ctx, q, id)
}

// last is the last event q finds (of instance id, unless id is "").
func (j Journal) last(ctx context.Context, q journal.Query, id string) (journal.Event, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var last journal.Event
	found := false
	q.Lines = 1
	_ = j.Read(ctx, q, func(e journal.Entry) error {
		if ev, ok := j.Decode(e); ok && (id == "" || ev.Instance == id) {
			last, found = ev, true
		}
		return nil
	})
	return last, found
}

// runLogWait bounds how long the lines of a run that just ended are
// waited for: journald reads an app's stdout after the app has written
// it, and a process that wrote its error and exited may be seen gone by
// systemd before journald has the error.
const runLogWait = time.Second

// RunLog reads what run u of instance unit of p logged; ok is false when
// the run is not known, or nothing of it is in the journal.
func (j Journal) RunLog(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) (RunLog, bool) {
	q, ok := RunQuery(u)
	if !ok {
		return RunLog{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var entries []journal.Entry
	if err := j.Read(ctx, q, func(e journal.Entry) error {
		entries = append(entries, e)
		return nil
	}); err != nil {
		return RunLog{}, false
	}
	r := RunLogOf(entries, unit, u, trustedUID(j.Scope), p.Log.LevelPrefix)
	if len(r.Lines) == 0 {
		return r, false
	}
	r.Whole = runWhole(j.Scope, unit, u)
	return r, true
}

// RunLogSettled is RunLog for a run that has just ended: when none of
// its lines looks like an error yet, it reads again a few times, for up
// to runLogWait, as journald may not have the app's last lines yet.
func (j Journal) RunLogSettled(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) (RunLog, bool) {
	r, ok := j.RunLog(ctx, p, unit, u)
	if r.First >= 0 {
		return r, ok
	}
	wctx, cancel := j.Clock.WithTimeout(ctx, runLogWait)
	defer cancel()
	tick, stop := j.Clock.Tick(runLogWait / 5)
	defer stop()
	for {
		select {
		case <-wctx.Done():
			return r, ok
		case <-tick:
		}
		if r, ok = j.RunLog(ctx, p, unit, u); r.First >= 0 {
			return r, ok
		}
	}
}

// trustedUID is whose journal entries are bm2's in scope l.
func trustedUID(l layout.Layout) string {
	if l.IsUser() {
		return strconv.Itoa(l.UID)
	}
	return "0"
}

// runWhole is the command that shows every line of run u, in scope l.
func runWhole(l layout.Layout, unit string, u view.UnitStatus) string {
	if u.InvocationID == "" || l.IsUser() {
		return l.JournalctlUnit(unit)
	}
	return "journalctl _SYSTEMD_INVOCATION_ID=" + u.InvocationID
}

// FirstError is the first error the ended run u of instance unit of p
// logged; with settle, after a moment for journald to have its last
// lines (RunLogSettled).
func (j Journal) FirstError(ctx context.Context, p *config.Project, unit string, u view.UnitStatus, settle bool) string {
	var run RunLog
	if settle {
		run, _ = j.RunLogSettled(ctx, p, unit, u)
	} else {
		run, _ = j.RunLog(ctx, p, unit, u)
	}
	return run.FirstError()
}
