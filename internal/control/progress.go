package control

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// verdictJournalEvery is how often a wait that watches the probe's
// verdict files also reads the journal for its verdicts.
const verdictJournalEvery = 500 * time.Millisecond

// verdictFiles are the verdicts the probe keeps in files on w's
// instances (statuses, in w.ids' order); covered is whether there is one
// on every instance's current run, which leaves the journal nothing to
// add. Each names the run it judged, so no time filters them: a file
// from before the oldest unconfirmed run (an instance confirmed earlier)
// still covers its own.
func (c *Client) verdictFiles(w *waiter, statuses []view.UnitStatus) (evs []journal.Event, covered bool) {
	if c.ReadVerdict == nil {
		return nil, false
	}
	covered = true
	for k, i := range w.ids {
		ev, ok, err := c.ReadVerdict(units.InstanceID(w.p.Name, i))
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

// journalLines is how many log lines a failure report shows.
const journalLines = 5

// wait drives a waiter (wait.go) until it is done, fails or runs out of
// time: at every tick a looker reads the instances' states and the
// errored mark, and whatever the last step asked for (the probe's
// verdicts, the instance's sockets, the health check's state); the step
// says what to report, and a failure is explained with the instance's
// last log lines.
func (c *Client) wait(ctx context.Context, sd Systemd, w *waiter, timeout time.Duration, verb string) error {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	wctx, cancel := c.Clock.WithTimeout(ctx, timeout)
	defer cancel()
	l := c.newLooker(sd, w)
	defer l.close()
	tick, stop := c.Clock.Tick(c.PollInterval)
	defer stop()
	var ask needs
	warned := false
	// quick: woken by a verdict file (see looker.look).
	quick := false
	for {
		s, wasQuick, ok, err := l.look(wctx, ask, quick)
		if err != nil {
			return err
		}
		quick = false
		if ok && wctx.Err() == nil {
			r := w.step(s)
			done, err := c.apply(ctx, wctx, l, r, s, &warned, verb)
			if done || err != nil {
				return err
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
				return ctx.Err()
			}
			return c.explainTimeout(ctx, w, l.last, timeout, verb)
		case <-tick:
		case <-l.written:
			quick = true
		}
	}
}

// apply carries out what a step said: its words, the lines of the runs
// that ended, the probes to start again, and a warning for verdicts that
// cannot be read (once: warned). It tells whether the wait is over, and
// the error that ends it when it failed.
func (c *Client) apply(ctx, wctx context.Context, l *looker, r stepResult, s snapshot, warned *bool, verb string) (bool, error) {
	w := l.w
	for _, o := range r.out {
		c.progress(o)
	}
	for _, e := range r.exits {
		for _, o := range w.exited(e.k, e.unit, l.firstError(wctx, e)) {
			c.progress(o)
		}
	}
	for _, k := range r.reprobe {
		if err := l.reprobe(wctx, k); err != nil && w.mode != untilBack {
			// (untilBack: its line is open; the timeout says the rest.)
			c.warn("cannot start %s again: %v", l.probeNames[k], err)
		}
	}
	switch r.fail.kind {
	case failNone:
	case failJournalOff:
		if !*warned {
			c.warn("cannot read the reusePort probe's verdicts from the journal (%v); not waiting for them", s.eventsErr)
			*warned = true
		}
	default:
		return true, c.explain(ctx, l.sd, w, r.fail, verb)
	}
	return r.done, nil
}

// looker is a wait's I/O: what it reads of the host at each look, and
// what it does there on the step's word (a run of the health check, a
// probe started again, an ended run's log read). It keeps when it last
// did each, so that a look costs the host no more than the wait needs.
type looker struct {
	c                 *Client
	sd                Systemd
	w                 *waiter
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

func (c *Client) newLooker(sd Systemd, w *waiter) *looker {
	l := &looker{c: c, sd: sd, w: w, names: make([]string, len(w.ids)), probeNames: make([]string, len(w.ids)), unwatch: func() {}}
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
	if w.probe && c.WatchVerdicts != nil {
		l.written, l.unwatch = c.WatchVerdicts()
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
	c, w := l.c, l.w
	var statuses []view.UnitStatus
	// Only with states read within a tick or so: a look that started
	// the health check, or read the journal, took longer.
	wasQuick = quick && l.last != nil && c.Now().Sub(l.lastAt) <= 2*c.PollInterval
	if wasQuick {
		statuses = l.last
	} else {
		statuses, err = l.sd.Units(ctx, l.names)
		l.lastAt = c.Now()
	}
	if err != nil {
		if ctx.Err() == nil {
			return s, wasQuick, false, err
		}
		return s, wasQuick, false, nil
	}
	l.last = statuses
	s = snapshot{now: c.Now(), units: statuses, asked: ask}
	if reason, errored, _ := c.ErroredMark(w.p.Name); errored {
		s.errored = reason
	}
	if ask.events {
		l.verdicts(ctx, &s, ask, wasQuick)
	}
	if ask.health {
		l.health(ctx, &s)
	}
	if ask.listen && w.mode == untilBack {
		s.listen, s.listenErr = c.Listening(ctx, statuses[0], w.p.InstancePort(w.ids[0]))
	} else if ask.listen {
		s.listens, s.listenErrs = make([]bool, len(statuses)), make([]error, len(statuses))
		for k, u := range statuses {
			if w.needsListen(k, u) {
				s.listens[k], s.listenErrs[k] = c.Listening(ctx, u, w.p.InstancePort(w.ids[k]))
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
	c := l.c
	files, covered := c.verdictFiles(l.w, s.units)
	if now := c.Now(); !covered && !wasQuick && now.Sub(l.probesRead) >= time.Second {
		if probes, err := l.sd.Units(ctx, l.probeNames); err == nil {
			s.probes, l.probesRead = probes, now
			files, covered = c.verdictFiles(l.w, s.units)
		}
	}
	now := c.Now()
	if l.journalDue.IsZero() && l.written != nil {
		// Watched: the files come first; the journal only for
		// what none has written by then.
		l.journalDue = now.Add(verdictJournalEvery)
	}
	if !covered && !now.Before(l.journalDue) {
		l.fromJournal, l.journalErr = c.ProjectEvents(ctx, []string{l.w.p.Name}, view.ReuseportKinds, ask.since)
		if l.written != nil {
			l.journalDue = now.Add(verdictJournalEvery)
		}
	}
	s.events, s.eventsErr = mergeEvents(l.fromJournal, files), l.journalErr
}

// health runs the health check and reads its state file into s. A run of
// the check, rather than a wait for its timer: the instance's first
// healthy answer is what online means. At most one a second (the run
// itself takes up to health_timeout_ms); a failure in these runs counts
// no faster than the timer's (package health).
func (l *looker) health(ctx context.Context, s *snapshot) {
	c, p := l.c, l.w.p
	if now := c.Now(); l.healthRun.IsZero() || now.Sub(l.healthRun) >= healthEvery {
		l.healthRun = now
		svc := units.HealthService(p.Name)
		if err := l.sd.Start(ctx, svc); err != nil && ctx.Err() == nil && !l.healthWarned {
			c.warn("%s: %v; waiting for its checks all the same (`%s` shows why)", svc, err, c.JournalctlUnit(svc))
			l.healthWarned = true
		}
	}
	st, err := health.Read(health.Path(c.ScopeLayout().HealthDir(p.Name)))
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
	unit := units.Instance(p.Name, l.w.ids[e.k])
	var run RunLog
	if e.settle {
		run, _ = l.c.runLogSettled(ctx, p, unit, e.unit)
	} else {
		run, _ = l.c.runLog(ctx, p, unit, e.unit)
	}
	return run.FirstError()
}

// reprobe starts instance k's probe again: queued, not waited for, as
// the probe runs for as long as its window; its verdict comes through
// the journal.
func (l *looker) reprobe(ctx context.Context, k int) error {
	return l.sd.Trigger(ctx, l.probeNames[k])
}

// explain turns a failed step into the error the user reads.
func (c *Client) explain(ctx context.Context, sd Systemd, w *waiter, f failure, verb string) error {
	switch f.kind {
	case failProject:
		return c.projectErrored(ctx, sd, w.p, w.ids[0], f.reason, verb)
	case failNotBack:
		how := exitText(f.unit, f.reason)
		if how == "" {
			how, _ = view.ProjectInstanceState(f.unit, w.p.MaxRestarts)
		}
		id := units.InstanceID(w.p.Name, w.ids[0])
		what := "did not come back after its restart"
		if w.ids[0] == units.Surge {
			what = "(the surge, with the new version) did not come up"
		}
		// The run's lines first: read while journald catches up with
		// them, which the reason then quotes too.
		tail := c.runTail(ctx, w.p, units.Instance(w.p.Name, w.ids[0]), f.unit)
		if e, ok := c.ExplainInstance(ctx, w.p, w.ids[0], f.unit, f.reason, "`bm2 reload "+w.p.Name+"`"); ok {
			how = string(e.Reason) + ": " + e.Message
			tail += "\n" + hintOf(e)
		}
		return &notBackError{err: fmt.Errorf("instance %s %s: %s%s", id, what, how, tail), id: id}
	}
	return c.instanceFailed(ctx, sd, w.p, w.ids[f.k], f.unit, f.reason, verb)
}

func (c *Client) explainTimeout(ctx context.Context, w *waiter, last []view.UnitStatus, timeout time.Duration, verb string) error {
	for _, o := range w.flushAllExits() {
		c.progress(o)
	}
	if w.mode == untilBack {
		for _, o := range w.closeLine() {
			c.progress(o)
		}
		id := units.InstanceID(w.p.Name, w.ids[0])
		return &notBackError{err: fmt.Errorf("timed out after %s waiting for %s %s%s", timeout, id, w.waitingFor(), c.logTail(ctx, units.Instance(w.p.Name, w.ids[0]))), id: id}
	}
	return c.timedOut(ctx, w, last, timeout, verb)
}

// healthEvery is how often a wait starts the health service while an
// instance has not answered healthy yet.
const healthEvery = time.Second

// waitOnline watches instances ids of p until every one is online, printing
// a line as each comes online. Online means running with a main process
// that listens on the instance's port (or, when its sockets cannot be read,
// running for min_uptime_ms); a crash after that is the restart budget's
// business. In cluster mode an instance is done only when the reusePort
// probe has confirmed it too (a reuseport_confirmed event logged for its
// current run). An instance
// that fails or stops, or a project that becomes errored (the reusePort
// probe stopped it) ends the wait with an error naming the instance, its
// result and its last log lines; so does the timeout.
func (c *Client) waitOnline(ctx context.Context, sd Systemd, p *config.Project, ids []int, timeout time.Duration, verb string) error {
	return c.wait(ctx, sd, newWaiter(untilOnline, p, ids, c.Now()), timeout, verb)
}

// reloadInstance restarts instance i and waits until it is back: online,
// listening again if it listened before, and (cluster mode) confirmed.
// before is its state as read just now (the run the restart replaces). It
// prints one line: "api-0 restarting… online, listening, confirmed (1.2s)".
func (c *Client) reloadInstance(ctx context.Context, sd Systemd, p *config.Project, i int, before view.UnitStatus, timeout time.Duration) error {
	w := newWaiter(untilBack, p, []int{i}, c.Now())
	w.before = before
	// An instance that listened on its port must listen again before the
	// next one goes: a bind test cannot tell, as the port group
	// stays joinable while the other instances listen. (One that did not,
	// or whose sockets cannot be read, is not waited for: it may not be a
	// network service, or listen through a process bm2 cannot see.)
	wasListening, lerr := false, error(nil)
	if !p.IsWorker() { // a worker has no port
		wasListening, lerr = c.Listening(ctx, before, p.InstancePort(i))
	}
	w.checkListen = lerr == nil && wasListening
	w.listening = !w.checkListen
	return c.restartAndWait(ctx, sd, w, "restarting", timeout)
}

// restartAndWait restarts the one instance of an untilBack waiter (a fresh
// budget first) and waits until it is back, on one progress line that
// starts "<id> <doing>… ".
func (c *Client) restartAndWait(ctx context.Context, sd Systemd, w *waiter, doing string, timeout time.Duration) error {
	unit := units.Instance(w.p.Name, w.ids[0])
	c.progress(fmt.Sprintf("%s %s… ", units.InstanceID(w.p.Name, w.ids[0]), doing))
	w.lineOpen = true
	defer func() {
		for _, o := range w.closeLine() {
			c.progress(o)
		}
	}()
	if err := sd.ResetFailed(ctx, unit); err != nil {
		return err
	}
	if err := sd.Restart(ctx, unit); err != nil {
		return err
	}
	return c.wait(ctx, sd, w, timeout, "reload")
}

// notBackError is a restarted instance that did not come back: the
// reload stops there.
type notBackError struct {
	err error
	id  string // the instance, "api-1"
}

func (e *notBackError) Error() string { return e.err.Error() }
func (e *notBackError) Unwrap() error { return e.err }

// instanceFailed builds the error for an instance that will not come
// online: which one, why (systemd's Result and the exit status, the first
// error its last run logged), and that run's lines from its first error.
func (c *Client) instanceFailed(ctx context.Context, sd Systemd, p *config.Project, i int, u view.UnitStatus, reason, verb string) error {
	if mark, errored, _ := c.ErroredMark(p.Name); errored {
		return c.projectErrored(ctx, sd, p, i, mark, verb)
	}
	id := units.InstanceID(p.Name, i)
	// The run's lines first: read while journald catches up with them,
	// which the reason then quotes too.
	tail := c.runTail(ctx, p, units.Instance(p.Name, i), u)
	var b strings.Builder
	st, _ := c.InstanceStateOf(p, i, u)
	fmt.Fprintf(&b, "instance %s %s", id, st)
	e, known := c.ExplainInstance(ctx, p, i, u, reason, AgainText(p, verb))
	if known {
		fmt.Fprintf(&b, ": %s: %s", e.Reason, e.Message)
	} else if r := exitText(u, reason); r != "" {
		fmt.Fprintf(&b, ": %s", r)
	}
	b.WriteString(tail)
	if known {
		return fail(Failed, hintOf(e), errors.New(b.String()))
	}
	return fail(Failed, fmt.Sprintf("fix the app and run `%s` again; `bm2 status %s` shows every instance", againCommand(p, verb), p.Name),
		errors.New(b.String()))
}

func againCommand(p *config.Project, verb string) string {
	if verb == "serve" {
		return "bm2 serve"
	}
	return "bm2 start " + p.Name
}

// projectErrored builds the error for a project bm2 stopped on purpose
// while a command waited for it: the reason, what the probe saw, the
// app's last lines and what to do.
func (c *Client) projectErrored(ctx context.Context, sd Systemd, p *config.Project, i int, mark, verb string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is errored: %s", p.Name, mark)
	e, inst, known := c.ExplainErrored(ctx, p, mark, verb)
	if !known {
		b.WriteString(c.logTail(ctx, units.Instance(p.Name, i)))
		return fail(Failed, fmt.Sprintf("fix the app and run `%s` again; `bm2 events %s` shows what happened", againCommand(p, verb), p.Name),
			errors.New(b.String()))
	}
	fmt.Fprintf(&b, ": %s", e.Message)
	if inst >= 0 && inst < p.Instances {
		i = inst
	}
	if mark == string(reason.ReuseportMissing) || mark == string(reason.LoopbackOnly) {
		// The instance that held the port is the one that restarted least
		// (the others failed to listen: EADDRINUSE); its log shows how it
		// listened.
		if i < 0 || i >= p.Instances {
			i = 0 // the surge: look at the instances
		}
		if statuses, err := sd.Units(ctx, view.InstanceNames(p)); err == nil {
			for k, u := range statuses {
				if u.NRestarts < statuses[i].NRestarts {
					i = k
				}
			}
		}
	}
	if i < 0 || i >= p.Instances {
		i = 0
	}
	b.WriteString(c.logTail(ctx, units.Instance(p.Name, i)))
	return fail(Failed, hintOf(e), errors.New(b.String()))
}

// timedOut builds the error for instances that did not come online (or
// were not confirmed, or did not answer healthy) in time.
func (c *Client) timedOut(ctx context.Context, w *waiter, last []view.UnitStatus, timeout time.Duration, verb string) error {
	p, ids := w.p, w.ids
	listened, judged, healthy := w.listened(last), w.judged(last), w.healthyNow(last)
	var pending, unconfirmed, unhealthy []string
	first, firstUnconfirmed, firstUnhealthy := -1, -1, -1
	now := c.Now()
	for k, u := range last {
		st, reason := view.ProjectInstanceState(u, p.MaxRestarts)
		id := units.InstanceID(p.Name, ids[k])
		switch {
		case listened[k] && judged[k] && healthy[k]:
			continue
		case listened[k] && judged[k]:
			unhealthy = append(unhealthy, fmt.Sprintf("%s is online but did not answer %s", id, w.healthWait(k, u)))
			if firstUnhealthy < 0 {
				firstUnhealthy = k
			}
			continue
		case listened[k]:
			unconfirmed = append(unconfirmed, id)
			if firstUnconfirmed < 0 {
				firstUnconfirmed = k
			}
			continue
		case view.Up(u):
			pending = append(pending, fmt.Sprintf("%s has run for %s but does not listen on port %d (it must listen on $BM2_APP_PORT)", id,
				wording.FormatUptime(now.Sub(u.ActiveEnter)), p.InstancePort(ids[k])))
		default:
			s := fmt.Sprintf("%s is %s", id, st)
			if r := exitText(u, reason); r != "" {
				s += " (" + r + ")"
			}
			pending = append(pending, s)
		}
		if first < 0 {
			first = k
		}
	}
	what := "come online"
	if len(unconfirmed) > 0 {
		what = "come online and be confirmed"
		verb := "is"
		if len(unconfirmed) > 1 {
			verb = "are"
		}
		pending = append(pending, fmt.Sprintf("%s %s online but not confirmed (no reuseport_confirmed event yet; `%s` shows the probe)",
			strings.Join(unconfirmed, ", "), verb, c.JournalctlUnit("'bm2-probe@"+p.Name+"-*'")))
		if first < 0 {
			first = firstUnconfirmed
		}
	}
	hint := fmt.Sprintf("a slow app may need a longer --timeout; `bm2 status %s` and `bm2 logs %s` show what it does", p.Name, p.Name)
	if len(unhealthy) > 0 {
		what = "come online and pass the health check"
		if len(unconfirmed) > 0 {
			what = "come online, be confirmed and pass the health check"
		}
		pending = append(pending, unhealthy...)
		if first < 0 {
			first = firstUnhealthy
			k := firstUnhealthy
			e, _ := reason.Explain(reason.Unhealthy, reason.Facts{Project: p.Name, Instance: units.InstanceID(p.Name, ids[k]),
				Port: p.HealthPort(ids[k]), Runtime: string(p.Runtime), Detail: w.healthWord(k, last[k]), Again: AgainText(p, verb)})
			hint = hintOf(e)
		}
	}
	msg := fmt.Sprintf("timed out after %s waiting for %s to %s", timeout, p.Name, what)
	if len(pending) > 0 {
		msg += ": " + strings.Join(pending, ", ")
	}
	if first >= 0 {
		if u := last[first]; !view.Up(u) && u.ExecMainCode != 0 {
			// Crash-looping when time ran out: its last run, from its error.
			msg += c.runTail(ctx, p, units.Instance(p.Name, ids[first]), u)
		} else {
			msg += c.logTail(ctx, units.Instance(p.Name, ids[first]))
		}
	}
	return fail(Failed, hint, errors.New(msg))
}

// logTail is "\nlast lines of UNIT's log:\n  ..." or "" when there are none.
func (c *Client) logTail(ctx context.Context, unit string) string {
	lines, err := c.Journal(ctx, unit, journalLines)
	if err != nil {
		return fmt.Sprintf("\n(no log lines: %v)", err)
	}
	if len(lines) == 0 {
		return fmt.Sprintf("\n(%s has logged nothing)", unit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nlast lines of its log (%s -n %d):", c.JournalctlUnit(unit), journalLines)
	for _, l := range lines {
		b.WriteString("\n  ")
		b.WriteString(termtext.Escape(l)) // the app's
	}
	return b.String()
}
