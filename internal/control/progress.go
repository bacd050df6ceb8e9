package control

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/history"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// journalLines is how many log lines a failure report shows.
const journalLines = explain.TailLines

// wait drives a wait (package wait) through the scope's host until it is
// done, fails or runs out of time, and explains a failure with the
// instance's last log lines.
func (c *Client) wait(ctx context.Context, sd Systemd, w *wait.Waiter, timeout time.Duration, verb string) error {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	d := wait.Driver{Host: waitHost{c, sd}, Clock: c.Clock, Poll: c.PollInterval, Report: reporterOf(c.Report)}
	end, err := d.Run(ctx, w, timeout)
	switch {
	case err != nil || end == nil:
		return err
	case end.TimedOut:
		return c.explainTimeout(ctx, w, end.Last, timeout, verb)
	}
	return c.explain(ctx, sd, w, end, verb)
}

// waitHost is a wait's I/O on the scope's host: systemd (sd), the
// errored marks, the probe's verdict files and the journal, the health
// check's state files and /proc.
type waitHost struct {
	c  *Client
	sd Systemd
}

func (h waitHost) Now() time.Time { return h.c.Now() }

func (h waitHost) Units(ctx context.Context, names []string) ([]view.UnitStatus, error) {
	return h.sd.Units(ctx, names)
}

func (h waitHost) Errored(project string) (string, bool) {
	reason, errored, _ := h.c.Layout.State().ErroredMark(project)
	return reason, errored
}

func (h waitHost) VerdictFile(id string) (journal.Event, bool, error) {
	if h.c.ReadVerdict == nil {
		return journal.Event{}, false, nil
	}
	return h.c.ReadVerdict(id)
}

func (h waitHost) WatchVerdicts() (<-chan struct{}, func()) {
	if h.c.WatchVerdicts == nil {
		return nil, func() {}
	}
	return h.c.WatchVerdicts()
}

func (h waitHost) Verdicts(ctx context.Context, project string, since time.Time) ([]journal.Event, error) {
	return history.ProjectEvents(ctx, h.c.ReadJournal, journalUser(h.c), []string{project}, view.ReuseportKinds, since)
}

func (h waitHost) Start(ctx context.Context, unit string) error { return h.sd.Start(ctx, unit) }
func (h waitHost) StartQueued(ctx context.Context, unit string) error {
	return h.sd.StartQueued(ctx, unit)
}

func (h waitHost) Health(project string) (health.State, error) {
	return health.Read(health.Path(h.c.ScopeLayout().HealthDir(project)))
}

func (h waitHost) Listening(ctx context.Context, u view.UnitStatus, port int) (bool, error) {
	return h.c.Listening(ctx, u, port)
}

func (h waitHost) FirstError(ctx context.Context, p *config.Project, unit string, u view.UnitStatus, settle bool) string {
	var run explain.RunLog
	if settle {
		run, _ = h.c.journal().RunLogSettled(ctx, p, unit, u)
	} else {
		run, _ = h.c.journal().RunLog(ctx, p, unit, u)
	}
	return run.FirstError()
}

func (h waitHost) JournalctlUnit(unit string) string { return h.c.ScopeLayout().JournalctlUnit(unit) }

// explain turns a failed step into the error the user reads.
func (c *Client) explain(ctx context.Context, sd Systemd, w *wait.Waiter, end *wait.Ending, verb string) error {
	p, ids := w.Project(), w.IDs()
	if mark, ok := end.Errored(); ok {
		return c.projectErrored(ctx, sd, p, ids[0], mark, verb)
	}
	if u, reason, ok := end.NotBack(); ok {
		how := wait.ExitText(u, reason)
		if how == "" {
			how, _ = view.ProjectInstanceState(u, p.MaxRestarts)
		}
		id := units.InstanceID(p.Name, ids[0])
		what := "did not come back after its restart"
		if ids[0] == units.Surge {
			what = "(the surge, with the new version) did not come up"
		}
		// The run's lines first: read while journald catches up with
		// them, which the reason then quotes too.
		tail := c.runTail(ctx, p, units.Instance(p.Name, ids[0]), u)
		if e, ok := c.ExplainInstance(ctx, p, ids[0], u, reason, "`bm2 reload "+p.Name+"`"); ok {
			how = string(e.Reason) + ": " + e.Message
			tail += "\n" + hintOf(e)
		}
		return &notBackError{err: fmt.Errorf("instance %s %s: %s%s", id, what, how, tail), id: id}
	}
	k, u, reason := end.Failed()
	return c.instanceFailed(ctx, sd, p, ids[k], u, reason, verb)
}

func (c *Client) explainTimeout(ctx context.Context, w *wait.Waiter, last []view.UnitStatus, timeout time.Duration, verb string) error {
	for _, o := range w.FlushAllExits() {
		progress(c.Report, o)
	}
	if w.Mode() == wait.UntilBack {
		for _, o := range w.CloseLine() {
			progress(c.Report, o)
		}
		p, i := w.Project(), w.IDs()[0]
		id := units.InstanceID(p.Name, i)
		return &notBackError{err: fmt.Errorf("timed out after %s waiting for %s %s%s", timeout, id, w.WaitingFor(), c.logTail(ctx, units.Instance(p.Name, i))), id: id}
	}
	return c.timedOut(ctx, w, last, timeout, verb)
}

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
	return c.wait(ctx, sd, wait.New(wait.UntilOnline, p, ids, c.Now()), timeout, verb)
}

// reloadInstance restarts instance i and waits until it is back: online,
// listening again if it listened before, and (cluster mode) confirmed.
// before is its state as read just now (the run the restart replaces). It
// prints one line: "api-0 restarting… online, listening, confirmed (1.2s)".
func (c *Client) reloadInstance(ctx context.Context, sd Systemd, p *config.Project, i int, before view.UnitStatus, timeout time.Duration) error {
	w := wait.New(wait.UntilBack, p, []int{i}, c.Now())
	// An instance that listened on its port must listen again before the
	// next one goes: a bind test cannot tell, as the port group
	// stays joinable while the other instances listen. (One that did not,
	// or whose sockets cannot be read, is not waited for: it may not be a
	// network service, or listen through a process bm2 cannot see.)
	wasListening, lerr := false, error(nil)
	if !p.IsWorker() { // a worker has no port
		wasListening, lerr = c.Listening(ctx, before, p.InstancePort(i))
	}
	w.Back(before, lerr == nil && wasListening)
	return c.restartAndWait(ctx, sd, w, "restarting", timeout)
}

// restartAndWait restarts the one instance of an UntilBack wait (a fresh
// budget first) and waits until it is back, on one progress line that
// starts "<id> <doing>… ".
func (c *Client) restartAndWait(ctx context.Context, sd Systemd, w *wait.Waiter, doing string, timeout time.Duration) error {
	unit := units.Instance(w.Project().Name, w.IDs()[0])
	progress(c.Report, w.OpenLine(doing))
	defer func() {
		for _, o := range w.CloseLine() {
			progress(c.Report, o)
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
	if mark, errored, _ := c.Layout.State().ErroredMark(p.Name); errored {
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
	} else if r := wait.ExitText(u, reason); r != "" {
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
func (c *Client) timedOut(ctx context.Context, w *wait.Waiter, last []view.UnitStatus, timeout time.Duration, verb string) error {
	p, ids := w.Project(), w.IDs()
	listened, judged, healthy := w.Listened(last), w.Judged(last), w.HealthyNow(last)
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
			unhealthy = append(unhealthy, fmt.Sprintf("%s is online but did not answer %s", id, w.HealthWait(k, u)))
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
			if r := wait.ExitText(u, reason); r != "" {
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
			strings.Join(unconfirmed, ", "), verb, c.ScopeLayout().JournalctlUnit("'bm2-probe@"+p.Name+"-*'")))
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
				Port: p.HealthPort(ids[k]), Runtime: string(p.Runtime), Detail: w.HealthWord(k, last[k]), Again: AgainText(p, verb)})
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
	fmt.Fprintf(&b, "\nlast lines of its log (%s -n %d):", c.ScopeLayout().JournalctlUnit(unit), journalLines)
	for _, l := range lines {
		b.WriteString("\n  ")
		b.WriteString(termtext.Escape(l)) // the app's
	}
	return b.String()
}

// runTail is the failure message's quote of run u of instance unit: from
// its first error (explain.RunLog.Text), or, when nothing of the run is in the
// journal, the unit's last lines (logTail).
func (c *Client) runTail(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) string {
	if r, ok := c.journal().RunLogSettled(ctx, p, unit, u); ok {
		return r.Text()
	}
	return c.logTail(ctx, unit)
}
