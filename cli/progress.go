package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/units"
)

// journalLines is how many log lines a failure report shows.
const journalLines = 5

// waitOnline watches instances ids of p until every one is online, printing
// a line as each comes online. Online means running with a main process
// for at least the project's min_uptime_ms: an app that crashes right after
// it starts is not online, it is restarting. An instance that fails or
// stops, or a project that becomes errored (the reusePort probe stopped it)
// ends the wait with an error naming the instance, its result and its last
// log lines; so does the timeout.
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
	tick := time.NewTicker(a.PollInterval)
	defer tick.Stop()
	var last []UnitStatus
	for {
		statuses, err := sd.Units(wctx, names)
		if err != nil {
			if wctx.Err() != nil && ctx.Err() == nil {
				return a.timedOut(ctx, p, ids, last, timeout, verb)
			}
			return err
		}
		last = statuses
		if reason, errored, _ := a.erroredMark(p.Name); errored {
			return a.instanceFailed(ctx, p, ids[0], statuses[0], reason, verb)
		}
		done := true
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
					continue
				}
			case StateErrored, StateStopped:
				return a.instanceFailed(ctx, p, ids[k], u, reason, verb)
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
		if done {
			return nil
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return a.timedOut(ctx, p, ids, last, timeout, verb)
		case <-tick.C:
		}
	}
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
func (a *App) instanceFailed(ctx context.Context, p *config.Project, i int, u UnitStatus, reason, verb string) error {
	id := units.InstanceID(p.Name, i)
	var b strings.Builder
	if mark, errored, _ := a.erroredMark(p.Name); errored {
		fmt.Fprintf(&b, "%s is errored: %s", p.Name, mark)
		if mark == "reuseport_missing" {
			fmt.Fprintf(&b, " (cluster mode needs the app to listen with reusePort: true on $BM2_APP_PORT)")
		}
	} else {
		st, _ := projectInstanceState(u, p.MaxRestarts)
		fmt.Fprintf(&b, "instance %s %s", id, st)
		if r := exitText(u, reason); r != "" {
			fmt.Fprintf(&b, ": %s", r)
		}
	}
	b.WriteString(a.logTail(ctx, units.Instance(p.Name, i)))
	again := "bm2 serve"
	if verb != "serve" {
		again = "bm2 start " + p.Name
	}
	return fail(ExitFailure, fmt.Sprintf("fix the app and run `%s` again; `bm2 status %s` shows every instance", again, p.Name),
		errors.New(b.String()))
}

// timedOut builds the error for instances that did not come online in time.
func (a *App) timedOut(ctx context.Context, p *config.Project, ids []int, last []UnitStatus, timeout time.Duration, verb string) error {
	var pending []string
	first := -1
	for k, u := range last {
		st, reason := projectInstanceState(u, p.MaxRestarts)
		if a.settled(u, p) {
			continue
		}
		if first < 0 {
			first = k
		}
		s := fmt.Sprintf("%s is %s", units.InstanceID(p.Name, ids[k]), st)
		if st == StateOnline {
			s = fmt.Sprintf("%s has run for only %s (min_uptime_ms = %d)", units.InstanceID(p.Name, ids[k]),
				formatUptime(a.Now().Sub(u.ActiveEnter)), p.MinUptime.Milliseconds())
		} else if r := exitText(u, reason); r != "" {
			s += " (" + r + ")"
		}
		pending = append(pending, s)
	}
	msg := fmt.Sprintf("timed out after %s waiting for %s to come online", timeout, p.Name)
	if len(pending) > 0 {
		msg += ": " + strings.Join(pending, ", ")
	}
	if first >= 0 {
		msg += a.logTail(ctx, units.Instance(p.Name, ids[first]))
	}
	return fail(ExitFailure,
		fmt.Sprintf("a slow app may need a longer --timeout; `bm2 status %s` and `journalctl -u 'bm2@%s-*'` show what it does", p.Name, p.Name),
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
