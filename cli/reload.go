package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/units"
)

// reload is `bm2 reload <name | name-i>`: a rolling restart. Instances are
// restarted one at a time, and the next one only when the previous one is
// back: online (running for min_uptime_ms), listening on its port again
// (when its previous run did), and in cluster mode confirmed by the
// reusePort probe. Meanwhile the other instances keep the port: in cluster
// mode the kernel hands new connections to them, so that with an app that
// closes its listener on SIGTERM and net.ipv4.tcp_migrate_req=1 (which bm2
// installs) no request fails. The first instance that does not come back
// stops the reload; the ones not reached yet still run the previous
// version.
func (a *App) reload(ctx context.Context, arg string, timeout time.Duration) error {
	e, idx, err := a.resolveUnit(arg)
	if err != nil {
		return err
	}
	p, err := usable(e)
	if err != nil {
		return err
	}
	ids := allInstances(p)
	if idx >= 0 {
		ids = []int{idx}
	}
	sd, err := a.Connect(ctx)
	if err != nil {
		return err
	}
	defer sd.Close()

	if reason, errored, _ := a.erroredMark(p.Name); errored {
		return fail(ExitFailure, fmt.Sprintf("fix the app, then `bm2 start %s` (or `bm2 serve` in %s) clears the errored state and starts it", p.Name, p.Cwd),
			fmt.Errorf("project %s is errored (%s): there is nothing running to reload", p.Name, reason))
	}
	target := units.Target(p.Name)
	statuses, err := sd.Units(ctx, append([]string{target}, instanceNames(p)...))
	if err != nil {
		return err
	}
	stale := statuses[0].LoadState != "loaded"
	running := 0
	for _, u := range statuses {
		stale = stale || u.NeedDaemonReload
	}
	for _, u := range statuses[1:] {
		if st, _ := InstanceState(u); st == StateOnline || u.MainPID != 0 {
			running++
		}
	}
	if running == 0 && idx < 0 {
		return fail(ExitFailure, fmt.Sprintf("`bm2 start %s` starts it", p.Name),
			fmt.Errorf("project %s is not running: there is nothing to reload", p.Name))
	}
	if stale {
		// The project file changed since systemd read it: the restarted
		// instances should run what it says now.
		if err := sd.Reload(ctx); err != nil {
			return err
		}
		fmt.Fprintf(a.Out, "reloaded systemd: %s changed since it was read\n", e.Path)
	}

	how := "one instance at a time"
	if len(ids) == 1 {
		how = "one instance"
	}
	fmt.Fprintf(a.Out, "reloading %s: %s x %s on port %s, %s\n", p.Name, fmt.Sprint(p.Instances), p.Mode, portText(p), how)
	if p.Instances == 1 {
		fmt.Fprintf(a.Err, "bm2: warning: %s has one instance, so port %s has no listener while it restarts; "+
			"with instances >= 2 a reload drops nothing\n", p.Name, portText(p))
	}
	start := a.Now()
	for k, i := range ids {
		if err := a.reloadInstance(ctx, sd, p, i, timeout); err != nil {
			var nb *notBackError
			if !errors.As(err, &nb) {
				return err // systemd refused, the probe stopped the project, or interrupted
			}
			var left []string
			for _, j := range ids[k+1:] {
				left = append(left, units.InstanceID(p.Name, j))
			}
			msg := err.Error()
			if len(left) > 0 {
				verb := "run"
				if len(left) == 1 {
					verb = "runs"
				}
				msg += fmt.Sprintf("\nreload stopped: %s still %s the previous version", strings.Join(left, ", "), verb)
			}
			return fail(ExitFailure, fmt.Sprintf("fix the app and run `bm2 reload %s` again; `bm2 logs %s` shows its output",
				arg, units.InstanceID(p.Name, i)), errors.New(msg))
		}
	}
	if idx < 0 {
		if err := a.stopStray(ctx, sd, p); err != nil {
			return err
		}
	}
	label := p.Name
	if idx >= 0 {
		label = units.InstanceID(p.Name, idx)
	}
	fmt.Fprintf(a.Out, "%s reloaded: %s in %s, %s\n", label, plural(len(ids), "instance", "instances"),
		seconds(a.Now().Sub(start)), readyWord(p))
	return nil
}

// reloadInstance restarts instance i and waits until it is back: online,
// listening again if it listened before, and (cluster mode) confirmed. It
// prints one line: "api-0 restarting… online, listening, confirmed (1.2s)".
func (a *App) reloadInstance(ctx context.Context, sd Systemd, p *config.Project, i int, timeout time.Duration) error {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	id, unit, port := units.InstanceID(p.Name, i), units.Instance(p.Name, i), p.InstancePort(i)
	before, err := sd.Units(ctx, []string{unit})
	if err != nil {
		return err
	}
	// An instance that listened on its port must listen again before the
	// next one goes: the reusePort probe cannot tell, as the port group
	// stays joinable while the other instances listen. (One that did not,
	// or whose sockets cannot be read, is not waited for: it may not be a
	// network service, or listen through a process bm2 cannot see.)
	wasListening, lerr := a.Listening(ctx, before[0], port)
	checkListen := lerr == nil && wasListening
	fmt.Fprintf(a.Out, "%s restarting… ", id)
	open := true // the line is not finished
	online, listening, confirmed := false, !checkListen, p.Mode != config.Cluster
	defer func() {
		if open && online {
			fmt.Fprintln(a.Out, ", failed")
		} else if open {
			fmt.Fprintln(a.Out, "failed")
		}
	}()
	start := a.Now()
	if err := sd.ResetFailed(ctx, unit); err != nil {
		return err
	}
	if err := sd.Restart(ctx, unit); err != nil {
		return err
	}

	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(a.PollInterval)
	defer tick.Stop()
	var u UnitStatus
	for {
		st, err := sd.Units(wctx, []string{unit})
		if err != nil && wctx.Err() == nil {
			return err
		}
		if err == nil {
			u = st[0]
		}
		if reason, errored, _ := a.erroredMark(p.Name); errored {
			return a.projectErrored(ctx, sd, p, i, reason, "reload")
		}
		state, reason := projectInstanceState(u, p.MaxRestarts)
		newRun := invocationKey(u) != invocationKey(before[0]) || before[0].MainPID == 0
		switch {
		case state == StateWaiting || state == StateErrored || state == StateStopped:
			how := exitText(u, reason)
			if how == "" {
				how = state
			}
			return &notBackError{fmt.Errorf("instance %s did not come back after its restart: %s%s", id, how, a.logTail(ctx, unit))}
		case !online && state == StateOnline && newRun && a.settled(u, p):
			online = true
			fmt.Fprint(a.Out, "online")
		}
		if online && !listening {
			switch ok, err := a.Listening(wctx, u, port); {
			case err != nil:
				listening = true
				fmt.Fprintf(a.Out, ", listening unknown (%v)", err)
			case ok:
				listening = true
				fmt.Fprint(a.Out, ", listening")
			}
		}
		if online && listening && !confirmed {
			evs, err := a.projectEvents(wctx, []string{p.Name}, reuseportKinds, u.ActiveEnter)
			switch v, ev := reuseportVerdict(u, id, evs); {
			case err != nil && wctx.Err() == nil:
				confirmed = true
				fmt.Fprintf(a.Out, ", not confirmed (cannot read the journal: %v)", err)
			case v == verdictConfirmed:
				confirmed = true
				fmt.Fprint(a.Out, ", confirmed")
			case v == verdictNoListener:
				confirmed = true
				fmt.Fprintf(a.Out, ", not confirmed (%s)", ev.Message)
			}
		}
		if online && listening && confirmed {
			open = false
			fmt.Fprintf(a.Out, " (%s)\n", seconds(a.Now().Sub(start)))
			return nil
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			var waiting string
			switch {
			case !online:
				waiting = "to come online"
				if state == StateOnline && newRun {
					waiting = fmt.Sprintf("to stay up for min_uptime_ms = %d", p.MinUptime.Milliseconds())
				}
			case !listening:
				waiting = fmt.Sprintf("to listen on port %d", port)
			default:
				waiting = fmt.Sprintf("for the reusePort probe to confirm it (`journalctl -u %s` shows the probe)", units.Probe(p.Name, i))
			}
			return &notBackError{fmt.Errorf("timed out after %s waiting for %s %s%s", timeout, id, waiting, a.logTail(ctx, unit))}
		case <-tick.C:
		}
	}
}

// notBackError is a restarted instance that did not come back: the
// reload stops there.
type notBackError struct{ err error }

func (e *notBackError) Error() string { return e.err.Error() }
func (e *notBackError) Unwrap() error { return e.err }

// seconds renders a duration as "1.2s".
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}
