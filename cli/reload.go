package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

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
			msg := err.Error()
			if left := ids[k+1:]; len(left) > 0 {
				verb := "run"
				if len(left) == 1 {
					verb = "runs"
				}
				msg += fmt.Sprintf("\nreload stopped: %s still %s the previous version", joinIDs(p, left), verb)
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
