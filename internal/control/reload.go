package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/account"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// Reload is `bm2 reload <name | name-i>`: a rolling restart. Instances are
// restarted one at a time, and the next one only when the previous one is
// back: running, listening on its port again (when its previous run did),
// and in cluster mode confirmed by the reusePort probe. In cluster mode the
// surge instance (surge.go) serves beside them meanwhile, so the port keeps
// as many listeners as the project has instances, one instance included;
// the kernel hands new connections to the listeners there are, and with an
// app that closes its listener on SIGTERM and net.ipv4.tcp_migrate_req=1
// (which bm2 installs) no request fails. In fork mode each instance owns
// its port, which is dark while it restarts: a gateway in front retries
// another instance. The first instance that does not come back stops the
// reload; the ones not reached yet still run the previous version.
func (c *Client) Reload(ctx context.Context, arg string, timeout time.Duration) error {
	e, idx, err := c.Projects().Resolve(arg)
	if err != nil {
		return err
	}
	if idx == units.Surge {
		return refuseSurge(e.Name, arg)
	}
	p, err := Usable(e)
	if err != nil {
		return err
	}
	ids := view.AllInstances(p)
	if idx >= 0 {
		ids = []int{idx}
	}
	sd, err := c.Connect(ctx)
	if err != nil {
		return err
	}
	defer sd.Close()

	if reason, errored, _ := c.Layout.State().ErroredMark(p.Name); errored {
		return fail(Failed, fmt.Sprintf("fix the app, then `bm2 start %s` (or `bm2 serve` in %s) clears the errored state and starts it", p.Name, p.Cwd),
			fmt.Errorf("project %s is errored (%s): there is nothing running to reload", p.Name, reason))
	}
	lock, err := lockProject(c.Scope().Layout(), p.Name)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	target := units.Target(p.Name)
	statuses, err := sd.Units(ctx, append([]string{target}, view.InstanceNames(p)...))
	if err != nil {
		return err
	}
	stale, running := reloadState(statuses)
	if running == 0 && idx < 0 {
		return fail(Failed, fmt.Sprintf("`bm2 start %s` starts it", p.Name),
			fmt.Errorf("project %s is not running: there is nothing to reload", p.Name))
	}
	if stale {
		// The project file changed since systemd read it: the restarted
		// instances should run what it says now.
		if err := sd.Reload(ctx); err != nil {
			return err
		}
		say(c.Report, "reloaded systemd: %s changed since it was read", e.Path)
	}
	account.TidyRunDirs(c.Scope().Layout(), p, ids, warner(c.Report))
	if who := account.Other(c.Scope().Layout(), c.Accounts, p, statuses[1:]); who != "" && p.Mode == config.Cluster {
		// No instance of the new account could listen beside the
		// running ones: all restart at once, as bm2 restart does.
		if idx >= 0 {
			return fail(Failed, fmt.Sprintf("`bm2 restart %s` restarts every instance at once", p.Name),
				fmt.Errorf("%s: %s alone cannot be reloaded", account.MoveText(p, who), arg))
		}
		say(c.Report, "%s", account.MoveText(p, who))
		lock.Unlock()
		sel, err := selectUnits(c.Projects(), p.Name)
		if err != nil {
			return err
		}
		return controlling{c: c, sd: sd, sel: sel, timeout: timeout}.restart(ctx)
	}

	say(c.Report, "reloading %s: %s, %s", p.Name, view.ShapeText(p), reloadHow(p, len(ids)))
	if p.Mode == config.Fork {
		reporterOf(c.Report).Note("in fork mode each instance owns its port, which has no listener while it restarts; " +
			"put a gateway in front that retries another instance (`bm2 gateway`)")
	}
	start := c.Now()
	if err := (rolling{c: c, sd: sd, p: p, timeout: timeout}).roll(ctx, ids); err != nil {
		var nb *notBackError
		if !errors.As(err, &nb) {
			return err // systemd refused, the probe stopped the project, or interrupted
		}
		return fail(Failed, fmt.Sprintf("fix the app and run `bm2 reload %s` again; `bm2 logs %s` shows its output", arg, nb.id), err)
	}
	if idx < 0 {
		if err := stopStray(ctx, sd, c.Report, p); err != nil {
			return err
		}
	}
	label := p.Name
	if idx >= 0 {
		label = units.InstanceID(p.Name, idx)
	}
	say(c.Report, "%s reloaded: %s in %s, %s", label, wording.Plural(len(ids), "instance", "instances"),
		wait.Seconds(c.Now().Sub(start)), readyWord(p))
	return nil
}

// reloadState is what a reload reads of a project's target and
// instances (statuses, the target first): whether systemd's units are
// older than the project file (stale), and how many instances run.
func reloadState(statuses []view.UnitStatus) (stale bool, running int) {
	stale = statuses[0].LoadState != "loaded"
	for _, u := range statuses {
		stale = stale || u.NeedDaemonReload
	}
	for _, u := range statuses[1:] {
		if st, _ := view.InstanceState(u); st == view.StateOnline || u.MainPID != 0 {
			running++
		}
	}
	return stale, running
}

// reloadHow says how a reload of n instances of p goes: one at a time,
// and in cluster mode with the surge serving beside them.
func reloadHow(p *config.Project, n int) string {
	how := "one instance at a time"
	if n == 1 {
		how = "one instance"
	}
	if p.Mode == config.Cluster {
		how += ", with " + units.InstanceID(p.Name, units.Surge) + " serving beside them"
		if n == 1 {
			how = "one instance, with " + units.InstanceID(p.Name, units.Surge) + " serving beside it"
		}
	}
	return how
}
