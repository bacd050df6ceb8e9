package explain

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// This file words how a wait of serve, start, restart, reload or scale
// that did not succeed ended (a wait.Ending): which instance, why, what
// to do, and the lines it logged.

// Waits is what the words of a failed wait read of the scope: the
// reasons' facts (Host), what a run logged (Journal, whose Scope is the
// scope's layout: its errored marks, how to show a unit's lines), a
// unit's last lines (Tail) and systemd's states of units (Units).
type Waits struct {
	Host    Host
	Journal Journal
	Tail    func(ctx context.Context, unit string, n int) ([]string, error)
	Units   func(ctx context.Context, names []string) ([]view.UnitStatus, error)
}

// Failure is a wait that did not succeed, as the user reads it.
type Failure struct {
	// Err is what happened, with the lines the app logged; Fix is what
	// to do about it.
	Err error
	Fix string
	// NotBack is the instance ("api-1") that a reload restarted and that
	// did not come back ("" for any other failure): the reload stops
	// there, and Fix is "".
	NotBack string
}

// Again is the command that tries again after a fix, as the failure
// table's {again}: serve's, or the start of p.
func Again(p *config.Project, verb string) string {
	return "`" + againCommand(p, verb) + "`"
}

func againCommand(p *config.Project, verb string) string {
	if verb == "serve" {
		return "bm2 serve"
	}
	return "bm2 start " + p.Name
}

// InstanceState is view.ProjectInstanceState with the instance's own
// errored mark: a marked instance that is down is errored, for the
// mark's reason.
func InstanceState(h Host, p *config.Project, i int, u view.UnitStatus) (st, why string) {
	st, why = view.ProjectInstanceState(u, p.MaxRestarts)
	if m, ok := h.MarkOf(p, i, u); ok {
		return view.StateErrored, m.Reason
	}
	return st, why
}

// Ended words a wait that failed (end is not a timeout): a project that
// became errored, an instance that did not come back after its restart,
// or one that failed or stopped. verb is the command that waited.
func (x Waits) Ended(ctx context.Context, w *wait.Waiter, end *wait.Ending, verb string) Failure {
	p, ids := w.Project(), w.IDs()
	if mark, ok := end.Errored(); ok {
		return x.projectErrored(ctx, p, ids[0], mark, verb)
	}
	if u, why, ok := end.NotBack(); ok {
		how := wait.ExitText(u, why)
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
		tail := x.runTail(ctx, p, units.Instance(p.Name, ids[0]), u)
		if e, ok := Instance(ctx, x.Host, p, ids[0], u, why, "`bm2 reload "+p.Name+"`"); ok {
			how = string(e.Reason) + ": " + e.Message
			tail += "\n" + e.FixLine()
		}
		return Failure{Err: fmt.Errorf("instance %s %s: %s%s", id, what, how, tail), NotBack: id}
	}
	k, u, why := end.Failed()
	return x.instanceFailed(ctx, p, ids[k], u, why, verb)
}

// TimedOut words a wait whose time ran out; last are the states it
// read last.
func (x Waits) TimedOut(ctx context.Context, w *wait.Waiter, last []view.UnitStatus, timeout time.Duration, verb string) Failure {
	if w.Mode() == wait.UntilBack {
		p, i := w.Project(), w.IDs()[0]
		id := units.InstanceID(p.Name, i)
		return Failure{Err: fmt.Errorf("timed out after %s waiting for %s %s%s", timeout, id, w.WaitingFor(), x.logTail(ctx, units.Instance(p.Name, i))), NotBack: id}
	}
	return x.timedOut(ctx, w, last, timeout, verb)
}

// instanceFailed words an instance that will not come online: which
// one, why (systemd's Result and the exit status, the first error its
// last run logged), and that run's lines from its first error.
func (x Waits) instanceFailed(ctx context.Context, p *config.Project, i int, u view.UnitStatus, why, verb string) Failure {
	if mark, errored, _ := x.Journal.Scope.State().ErroredMark(p.Name); errored {
		return x.projectErrored(ctx, p, i, mark, verb)
	}
	id := units.InstanceID(p.Name, i)
	// The run's lines first: read while journald catches up with them,
	// which the reason then quotes too.
	tail := x.runTail(ctx, p, units.Instance(p.Name, i), u)
	var b strings.Builder
	st, _ := InstanceState(x.Host, p, i, u)
	fmt.Fprintf(&b, "instance %s %s", id, st)
	e, known := Instance(ctx, x.Host, p, i, u, why, Again(p, verb))
	if known {
		fmt.Fprintf(&b, ": %s: %s", e.Reason, e.Message)
	} else if r := wait.ExitText(u, why); r != "" {
		fmt.Fprintf(&b, ": %s", r)
	}
	b.WriteString(tail)
	if known {
		return Failure{Err: errors.New(b.String()), Fix: e.FixLine()}
	}
	return Failure{Err: errors.New(b.String()),
		Fix: fmt.Sprintf("fix the app and run `%s` again; `bm2 status %s` shows every instance", againCommand(p, verb), p.Name)}
}

// projectErrored words a project bm2 stopped on purpose while a command
// waited for it: the reason, what the probe saw, the app's last lines
// and what to do.
func (x Waits) projectErrored(ctx context.Context, p *config.Project, i int, mark, verb string) Failure {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is errored: %s", p.Name, mark)
	e, inst, known := Errored(ctx, x.Host, p, mark, Again(p, verb))
	if !known {
		b.WriteString(x.logTail(ctx, units.Instance(p.Name, i)))
		return Failure{Err: errors.New(b.String()),
			Fix: fmt.Sprintf("fix the app and run `%s` again; `bm2 events %s` shows what happened", againCommand(p, verb), p.Name)}
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
		if statuses, err := x.Units(ctx, view.InstanceNames(p)); err == nil {
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
	b.WriteString(x.logTail(ctx, units.Instance(p.Name, i)))
	return Failure{Err: errors.New(b.String()), Fix: e.FixLine()}
}

// timedOut words instances that did not come online (or were not
// confirmed, or did not answer healthy) in time.
func (x Waits) timedOut(ctx context.Context, w *wait.Waiter, last []view.UnitStatus, timeout time.Duration, verb string) Failure {
	p, ids := w.Project(), w.IDs()
	listened, judged, healthy := w.Listened(last), w.Judged(last), w.HealthyNow(last)
	var pending, unconfirmed, unhealthy []string
	first, firstUnconfirmed, firstUnhealthy := -1, -1, -1
	now := x.Host.Now()
	for k, u := range last {
		st, why := view.ProjectInstanceState(u, p.MaxRestarts)
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
			if r := wait.ExitText(u, why); r != "" {
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
			strings.Join(unconfirmed, ", "), verb, x.Journal.Scope.JournalctlUnit("'bm2-probe@"+p.Name+"-*'")))
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
				Port: p.HealthPort(ids[k]), Runtime: string(p.Runtime), Detail: w.HealthWord(k, last[k]), Again: Again(p, verb)})
			hint = e.FixLine()
		}
	}
	msg := fmt.Sprintf("timed out after %s waiting for %s to %s", timeout, p.Name, what)
	if len(pending) > 0 {
		msg += ": " + strings.Join(pending, ", ")
	}
	if first >= 0 {
		if u := last[first]; !view.Up(u) && u.ExecMainCode != 0 {
			// Crash-looping when time ran out: its last run, from its error.
			msg += x.runTail(ctx, p, units.Instance(p.Name, ids[first]), u)
		} else {
			msg += x.logTail(ctx, units.Instance(p.Name, ids[first]))
		}
	}
	return Failure{Err: errors.New(msg), Fix: hint}
}

// logTail is "\nlast lines of UNIT's log:\n  ..." or "" when there are none.
func (x Waits) logTail(ctx context.Context, unit string) string {
	lines, err := x.Tail(ctx, unit, TailLines)
	if err != nil {
		return fmt.Sprintf("\n(no log lines: %v)", err)
	}
	if len(lines) == 0 {
		return fmt.Sprintf("\n(%s has logged nothing)", unit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nlast lines of its log (%s -n %d):", x.Journal.Scope.JournalctlUnit(unit), TailLines)
	for _, l := range lines {
		b.WriteString("\n  ")
		b.WriteString(termtext.Escape(l)) // the app's
	}
	return b.String()
}

// runTail is the failure message's quote of run u of instance unit: from
// its first error (RunLog.Text), or, when nothing of the run is in the
// journal, the unit's last lines (logTail).
func (x Waits) runTail(ctx context.Context, p *config.Project, unit string, u view.UnitStatus) string {
	if r, ok := x.Journal.RunLogSettled(ctx, p, unit, u); ok {
		return r.Text()
	}
	return x.logTail(ctx, unit)
}
