package wait

import (
	"context"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/view"
)

// Clock is what a wait needs of time: a deadline and a ticker.
type Clock interface {
	// WithTimeout is context.WithTimeout on this clock.
	WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc)
	// Tick returns a channel that ticks every d, and a function that
	// stops it.
	Tick(d time.Duration) (<-chan time.Time, func())
}

// Reporter is where a wait's words go: the step's progress, as it gives
// it, and the problems the wait goes on despite.
type Reporter interface {
	Progress(text string)
	Warn(msg string)
}

// Driver runs waits: it looks through Host every Poll on Clock (or at
// once when the step asks for more, or a verdict file is written), hands
// the step what it saw and says what the step says to Report.
type Driver struct {
	Host   Host
	Clock  Clock
	Poll   time.Duration
	Report Reporter
}

// Ending is how a wait that did not succeed ended, for its caller to
// explain: a step's failure, or the timeout with the states last read.
type Ending struct {
	TimedOut bool
	Last     []view.UnitStatus // the states last read (TimedOut)
	f        failure
}

// Errored is the project's errored mark, when it became errored.
func (e *Ending) Errored() (mark string, ok bool) {
	return e.f.reason, !e.TimedOut && e.f.kind == failProject
}

// NotBack is the run of an UntilBack wait's instance that did not come
// back, and its reason, when it did not.
func (e *Ending) NotBack() (u view.UnitStatus, reason string, ok bool) {
	return e.f.unit, e.f.reason, !e.TimedOut && e.f.kind == failNotBack
}

// Failed is the instance (k, an index into the wait's ids) that failed
// or stopped, its state and its reason.
func (e *Ending) Failed() (k int, u view.UnitStatus, reason string) {
	return e.f.k, e.f.unit, e.f.reason
}

// Run drives w until it is done (nil, nil), fails or runs out of time
// (an Ending), or ctx ends or a look fails (the error).
func (d Driver) Run(ctx context.Context, w *Waiter, timeout time.Duration) (*Ending, error) {
	wctx, cancel := d.Clock.WithTimeout(ctx, timeout)
	defer cancel()
	l := newLooker(d.Host, d.Report, w, d.Poll)
	defer l.close()
	tick, stop := d.Clock.Tick(d.Poll)
	defer stop()
	var ask needs
	warned := false
	// quick: woken by a verdict file (see looker.look).
	quick := false
	for {
		s, wasQuick, ok, err := l.look(wctx, ask, quick)
		if err != nil {
			return nil, err
		}
		quick = false
		if ok && wctx.Err() == nil {
			r := w.step(s)
			if end, done := d.apply(wctx, l, r, s, &warned); done {
				return end, nil
			}
			fetchNow := wasQuick || (r.next.events && !ask.events) || (r.next.listen && !ask.listen) || (r.next.health && !ask.health)
			ask = r.next
			if fetchNow {
				continue // what it needs next, at once
			}
		}
		select {
		case <-l.written: // before a tick that is due as well
			quick = true
			continue
		default:
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			d.timedOut(w)
			return &Ending{TimedOut: true, Last: l.last}, nil
		case <-tick:
		case <-l.written:
			quick = true
		}
	}
}

// timedOut says what the step has not said yet when the wait's time
// ran out: the runs that ended, and an UntilBack wait's open line.
func (d Driver) timedOut(w *Waiter) {
	for _, o := range w.flushAllExits() {
		d.Report.Progress(o)
	}
	for _, o := range w.closeLine() {
		d.Report.Progress(o)
	}
}

// RunBack restarts the one instance of an UntilBack wait (restart) and
// drives w until it is back, on one progress line that starts "<id>
// <doing>… " and that ends however the wait does.
func (d Driver) RunBack(ctx context.Context, w *Waiter, doing string, restart func(context.Context) error, timeout time.Duration) (*Ending, error) {
	d.Report.Progress(w.openLine(doing))
	defer func() {
		for _, o := range w.closeLine() {
			d.Report.Progress(o)
		}
	}()
	if err := restart(ctx); err != nil {
		return nil, err
	}
	return d.Run(ctx, w, timeout)
}

// apply carries out what a step said: its words, the lines of the runs
// that ended, the probes to start again, and a warning for verdicts that
// cannot be read (once: warned). It tells whether the wait is over, and
// how it ended when it failed.
func (d Driver) apply(ctx context.Context, l *looker, r stepResult, s snapshot, warned *bool) (*Ending, bool) {
	w := l.w
	for _, o := range r.out {
		d.Report.Progress(o)
	}
	for _, e := range r.exits {
		for _, o := range w.exited(e.k, e.unit, l.firstError(ctx, e)) {
			d.Report.Progress(o)
		}
	}
	for _, k := range r.reprobe {
		// Queued, not waited for: the probe runs for as long as its
		// window; its verdict comes through the journal.
		if err := d.Host.StartQueued(ctx, l.probeNames[k]); err != nil && w.mode != UntilBack {
			// (UntilBack: its line is open; the timeout says the rest.)
			d.Report.Warn(fmt.Sprintf("cannot start %s again: %v", l.probeNames[k], err))
		}
	}
	switch r.fail.kind {
	case failNone:
	case failJournalOff:
		if !*warned {
			d.Report.Warn(fmt.Sprintf("cannot read the reusePort probe's verdicts from the journal (%v); not waiting for them", s.eventsErr))
			*warned = true
		}
	default:
		return &Ending{f: r.fail}, true
	}
	return nil, r.done
}
