package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/probehelper"
	"github.com/bm2dev/bm2/units"
)

// journalLines is how many log lines a failure report shows.
const journalLines = 5

// waitOnline watches instances ids of p until every one is online, printing
// a line as each comes online. Online means running with a main process
// for at least the project's min_uptime_ms: an app that crashes right after
// it starts is not online, it is restarting. In cluster mode an instance is
// done only when the reusePort probe has confirmed it too (a
// reuseport_confirmed event logged since it last came online). An instance
// that fails or stops, or a project that becomes errored (the reusePort
// probe stopped it) ends the wait with an error naming the instance, its
// result and its last log lines; so does the timeout.
func (a *App) waitOnline(ctx context.Context, sd Systemd, p *config.Project, ids []int, timeout time.Duration, verb string) error {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	names := make([]string, len(ids))
	for k, i := range ids {
		names[k] = units.Instance(p.Name, i)
	}
	online := make([]bool, len(ids))
	crashed := make([]bool, len(ids))
	verdictOf := make([]string, len(ids)) // the run (invocationKey) the probe gave a verdict on
	probe := p.Mode == config.Cluster
	// judged tells, for the timeout's message, which instances the probe
	// has given a verdict on in their current run.
	judged := func(last []UnitStatus) []bool {
		out := make([]bool, len(last))
		for k, u := range last {
			out[k] = !probe || verdictOf[k] == invocationKey(u)
		}
		return out
	}
	tick := time.NewTicker(a.PollInterval)
	defer tick.Stop()
	var last []UnitStatus
	for {
		statuses, err := sd.Units(wctx, names)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return a.timedOut(ctx, p, ids, last, judged(last), timeout, verb)
			}
			return err
		}
		last = statuses
		if reason, errored, _ := a.erroredMark(p.Name); errored {
			return a.projectErrored(ctx, sd, p, ids[0], reason, verb)
		}
		done := true
		var unconfirmed []int
		for k, u := range statuses {
			id := units.InstanceID(p.Name, ids[k])
			st, reason := projectInstanceState(u, p.MaxRestarts)
			switch st {
			case StateOnline:
				if a.settled(u, p) {
					if !online[k] {
						fmt.Fprintf(a.Out, "%s online (pid %d)\n", id, u.MainPID)
						online[k] = true
					}
					if probe && verdictOf[k] != invocationKey(u) {
						unconfirmed = append(unconfirmed, k)
						done = false
					}
					continue
				}
			case StateErrored, StateStopped:
				return a.instanceFailed(ctx, sd, p, ids[k], u, reason, verb)
			case StateWaiting:
				// Once per crash loop, not once per crash.
				if !crashed[k] || online[k] {
					how := exitText(u, reason)
					if how != "" {
						how = " (" + how + ")"
					}
					fmt.Fprintf(a.Out, "%s exited%s, restarting\n", id, how)
					crashed[k] = true
				}
			}
			online[k] = false
			done = false
		}
		if len(unconfirmed) > 0 {
			since := statuses[unconfirmed[0]].ActiveEnter
			for _, k := range unconfirmed {
				if statuses[k].ActiveEnter.Before(since) {
					since = statuses[k].ActiveEnter
				}
			}
			evs, err := a.projectEvents(wctx, []string{p.Name}, reuseportKinds, since)
			if err != nil && wctx.Err() == nil {
				// Without the journal, there is nothing to wait for.
				fmt.Fprintf(a.Err, "bm2: warning: cannot read the reusePort probe's verdicts from the journal (%v); not waiting for them\n", err)
				probe = false
				for _, k := range unconfirmed {
					verdictOf[k] = invocationKey(statuses[k])
				}
			}
			for _, k := range unconfirmed {
				u, id := statuses[k], units.InstanceID(p.Name, ids[k])
				v, ev := reuseportVerdict(u, id, evs)
				switch v {
				case verdictConfirmed:
					fmt.Fprintf(a.Out, "%s confirmed (reusePort)\n", id)
				case verdictNoListener:
					fmt.Fprintf(a.Out, "%s not confirmed: %s\n", id, ev.Message)
				default:
					continue // missing: the errored mark ends the wait
				}
				verdictOf[k] = invocationKey(u)
			}
			done = true
			for k := range statuses {
				done = done && online[k] && (!probe || verdictOf[k] == invocationKey(statuses[k]))
			}
		}
		if done {
			return nil
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return a.timedOut(ctx, p, ids, last, judged(last), timeout, verb)
		case <-tick.C:
		}
	}
}

// The reusePort probe's verdicts on one run of an instance.
const (
	verdictConfirmed  = "confirmed"   // reuseport_confirmed
	verdictMissing    = "missing"     // reuseport_missing: the probe stopped the project
	verdictNoListener = "no_listener" // reuseport_probe_stopped: nobody listened within 60 s
	verdictPending    = "pending"     // online, no verdict yet
)

var reuseportKinds = []journal.Kind{journal.ReuseportConfirmed, journal.ReuseportMissing, journal.ReuseportProbeStopped}

// invocationKey identifies one run of a unit.
func invocationKey(u UnitStatus) string {
	if u.InvocationID != "" {
		return u.InvocationID
	}
	return u.ActiveEnter.UTC().Format(time.RFC3339Nano)
}

// reuseportVerdict is the probe's latest verdict on the current run of
// instance id (unit u) among evs, and the event that gave it; "" when there
// is none. An event belongs to the run when it records the run's
// InvocationID, or, without one, when it was logged after the run came
// online (the probe only judges a running instance).
func reuseportVerdict(u UnitStatus, id string, evs []event) (string, event) {
	var v string
	var last event
	for _, ev := range evs {
		if ev.Instance != id {
			continue
		}
		if ev.Invocation != "" && u.InvocationID != "" {
			if ev.Invocation != u.InvocationID {
				continue
			}
		} else if u.ActiveEnter.IsZero() || ev.Time.Before(u.ActiveEnter) {
			continue
		}
		switch journal.Kind(ev.Kind) {
		case journal.ReuseportConfirmed:
			v = verdictConfirmed
		case journal.ReuseportMissing:
			v = verdictMissing
		case journal.ReuseportProbeStopped:
			v = verdictNoListener
		default:
			continue
		}
		last = ev
	}
	return v, last
}

// settled tells whether an instance is online for good: running, with a
// main process, for at least min_uptime_ms.
func (a *App) settled(u UnitStatus, p *config.Project) bool {
	st, _ := InstanceState(u)
	return st == StateOnline && u.MainPID != 0 && a.Now().Sub(u.ActiveEnter) >= p.MinUptime
}

// instanceFailed builds the error for an instance that will not come
// online: which one, why (systemd's Result and the exit status), and the
// last lines it logged.
func (a *App) instanceFailed(ctx context.Context, sd Systemd, p *config.Project, i int, u UnitStatus, reason, verb string) error {
	if mark, errored, _ := a.erroredMark(p.Name); errored {
		return a.projectErrored(ctx, sd, p, i, mark, verb)
	}
	id := units.InstanceID(p.Name, i)
	var b strings.Builder
	st, _ := projectInstanceState(u, p.MaxRestarts)
	fmt.Fprintf(&b, "instance %s %s", id, st)
	if r := exitText(u, reason); r != "" {
		fmt.Fprintf(&b, ": %s", r)
	}
	b.WriteString(a.logTail(ctx, units.Instance(p.Name, i)))
	return fail(ExitFailure, fmt.Sprintf("fix the app and run `%s` again; `bm2 status %s` shows every instance", againCommand(p, verb), p.Name),
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
func (a *App) projectErrored(ctx context.Context, sd Systemd, p *config.Project, i int, mark, verb string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%s is errored: %s", p.Name, mark)
	if mark != probehelper.ReasonReuseportMissing {
		b.WriteString(a.logTail(ctx, units.Instance(p.Name, i)))
		return fail(ExitFailure, fmt.Sprintf("fix the app and run `%s` again; `bm2 events %s` shows what happened", againCommand(p, verb), p.Name),
			errors.New(b.String()))
	}
	port := portText(p)
	if ev, ok := a.lastEvent(ctx, p.Name, journal.ReuseportMissing); ok {
		fmt.Fprintf(&b, ": %s", ev.Message)
		if n, idx, ok := units.ParseInstance(ev.Instance); ok && n == p.Name && idx < p.Instances {
			i = idx
		}
	} else {
		fmt.Fprintf(&b, ": port %s is bound exclusively, so the project was stopped", port)
	}
	fmt.Fprintf(&b, "\ncluster mode needs every instance to listen on $BM2_APP_PORT (%s) with reusePort", port)
	// The instance that held the port is the one that restarted least
	// (the others failed to listen: EADDRINUSE); its log shows how it
	// listened.
	if statuses, err := sd.Units(ctx, instanceNames(p)); err == nil {
		for k, u := range statuses {
			if u.NRestarts < statuses[i].NRestarts {
				i = k
			}
		}
	}
	b.WriteString(a.logTail(ctx, units.Instance(p.Name, i)))
	return fail(ExitFailure,
		"listen with reusePort: true — Bun: Bun.serve({ port, reusePort: true }) (Bun's node:http ignores it); "+
			"Node.js >= 24: server.listen({ port, reusePort: true }) — or set exec_mode = \"fork\" in bm2.toml; "+
			fmt.Sprintf("then run `%s` again", againCommand(p, verb)),
		errors.New(b.String()))
}

// lastEvent returns the project's most recent event of a kind.
func (a *App) lastEvent(ctx context.Context, project string, kind journal.Kind) (event, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var last event
	found := false
	q := JournalQuery{Lines: 1, Matches: []string{
		"SYSLOG_IDENTIFIER=" + journal.Identifier, "BM2_PROJECT=" + project, "BM2_EVENT=" + string(kind)}}
	_ = a.ReadJournal(ctx, q, func(e JournalEntry) error {
		last, found = eventOf(e), true
		return nil
	})
	return last, found
}

// timedOut builds the error for instances that did not come online (or
// were not confirmed) in time.
func (a *App) timedOut(ctx context.Context, p *config.Project, ids []int, last []UnitStatus, judged []bool, timeout time.Duration, verb string) error {
	var pending, unconfirmed []string
	first, firstUnconfirmed := -1, -1
	for k, u := range last {
		st, reason := projectInstanceState(u, p.MaxRestarts)
		id := units.InstanceID(p.Name, ids[k])
		switch {
		case a.settled(u, p) && judged[k]:
			continue
		case a.settled(u, p):
			unconfirmed = append(unconfirmed, id)
			if firstUnconfirmed < 0 {
				firstUnconfirmed = k
			}
			continue
		case st == StateOnline:
			pending = append(pending, fmt.Sprintf("%s has run for only %s (min_uptime_ms = %d)", id,
				formatUptime(a.Now().Sub(u.ActiveEnter)), p.MinUptime.Milliseconds()))
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
		pending = append(pending, fmt.Sprintf("%s %s online but not confirmed (no reuseport_confirmed event yet; `journalctl -u 'bm2-probe@%s-*'` shows the probe)",
			strings.Join(unconfirmed, ", "), verb, p.Name))
		if first < 0 {
			first = firstUnconfirmed
		}
	}
	msg := fmt.Sprintf("timed out after %s waiting for %s to %s", timeout, p.Name, what)
	if len(pending) > 0 {
		msg += ": " + strings.Join(pending, ", ")
	}
	if first >= 0 {
		msg += a.logTail(ctx, units.Instance(p.Name, ids[first]))
	}
	return fail(ExitFailure,
		fmt.Sprintf("a slow app may need a longer --timeout; `bm2 status %s` and `bm2 logs %s` show what it does", p.Name, p.Name),
		errors.New(msg))
}

// logTail is "\nlast lines of UNIT's log:\n  ..." or "" when there are none.
func (a *App) logTail(ctx context.Context, unit string) string {
	lines, err := a.Journal(ctx, unit, journalLines)
	if err != nil {
		return fmt.Sprintf("\n(no log lines: %v)", err)
	}
	if len(lines) == 0 {
		return fmt.Sprintf("\n(%s has logged nothing)", unit)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nlast lines of its log (journalctl -u %s -n %d):", unit, journalLines)
	for _, l := range lines {
		b.WriteString("\n  ")
		b.WriteString(l)
	}
	return b.String()
}

// exitText explains how an instance's last run ended: the reason (Result)
// and, when known, the exit status or signal.
func exitText(u UnitStatus, reason string) string {
	var detail string
	switch u.ExecMainCode {
	case 1: // CLD_EXITED
		detail = fmt.Sprintf("exit status %d", u.ExecMainStatus)
	case 2, 3: // CLD_KILLED, CLD_DUMPED
		detail = fmt.Sprintf("signal %s", signalName(u.ExecMainStatus))
	}
	switch {
	case reason == "" && detail == "":
		return ""
	case reason == "":
		return detail
	case detail == "" || (reason == "exit-code" && u.ExecMainCode != 1):
		return reason
	}
	return reason + ", " + detail
}

func signalName(n int32) string {
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "HUP", syscall.SIGINT: "INT", syscall.SIGQUIT: "QUIT", syscall.SIGILL: "ILL",
		syscall.SIGABRT: "ABRT", syscall.SIGBUS: "BUS", syscall.SIGFPE: "FPE", syscall.SIGKILL: "KILL",
		syscall.SIGSEGV: "SEGV", syscall.SIGPIPE: "PIPE", syscall.SIGTERM: "TERM",
	}
	if s, ok := names[syscall.Signal(n)]; ok {
		return "SIG" + s
	}
	return fmt.Sprint(n)
}
