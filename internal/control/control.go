package control

import (
	"context"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/account"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/jobs"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// Control is `bm2 start|stop|restart <name | name-i>`.
func (c *Client) Control(ctx context.Context, verb, arg string, timeout time.Duration) error {
	sel, err := selectUnits(c.Projects(), arg)
	if err != nil {
		return err
	}
	sd, err := c.Connect(ctx)
	if err != nil {
		return err
	}
	defer sd.Close()
	k := controlling{c: c, sd: sd, sel: sel, timeout: timeout}
	switch verb {
	case "start":
		return k.start(ctx)
	case "restart":
		return k.restart(ctx)
	case "stop":
		if _, err := jobs.Stop(ctx, sd, sel.p.Name, sel.idx, sel.unit, sel.names, false); err != nil {
			return err
		}
		say(c.Report, "%s stopped (%s)", sel.label, wording.Plural(len(sel.ids), "instance", "instances"))
		return nil
	}
	return fmt.Errorf("internal error: unknown verb %q", verb)
}

// selection is what start, stop and restart act on: a project's target
// and all its instances, or one instance (idx >= 0).
type selection struct {
	p           *config.Project
	idx         int
	unit, label string
	ids         []int
	names       []string // the instances' units
}

// selectUnits resolves `<name | name-i>` to a selection of the projects
// in s.
func selectUnits(s registry.Store, arg string) (selection, error) {
	e, idx, err := s.Resolve(arg)
	if err != nil {
		return selection{}, err
	}
	if idx == units.Surge {
		return selection{}, refuseSurge(e.Name, arg)
	}
	p, err := Usable(e)
	if err != nil {
		return selection{}, err
	}
	sel := selection{p: p, idx: idx, unit: units.Target(p.Name), ids: view.AllInstances(p), label: p.Name}
	if idx >= 0 {
		sel.unit, sel.ids, sel.label = units.Instance(p.Name, idx), []int{idx}, units.InstanceID(p.Name, idx)
	}
	for _, i := range sel.ids {
		sel.names = append(sel.names, units.Instance(p.Name, i))
	}
	return sel, nil
}

// controlling is a start or a restart of a selection: the client whose
// scope it acts in and whose wait it waits with, systemd, and the wait's
// timeout.
type controlling struct {
	c       *Client
	sd      Systemd
	sel     selection
	timeout time.Duration
}

// start clears the errored marks a start is meant to clear, starts the
// selection and waits for it.
func (k controlling) start(ctx context.Context) error {
	c, sd, sel := k.c, k.sd, k.sel
	l := c.Scope().Layout()
	if _, err := clearErrored(l, c.Report, sel.p.Name); err != nil {
		return err
	}
	if err := clearInstanceMarks(l, c.Report, sel.p, markIDs(sel.idx)); err != nil {
		return err
	}
	account.TidyRunDirs(l, sel.p, sel.ids, warner(c.Report))
	if err := jobs.ResetFailed(ctx, sd, sel.names...); err != nil {
		return err
	}
	if err := jobs.StopIdleProbes(ctx, sd, sel.p, sel.ids); err != nil {
		return err
	}
	say(c.Report, "starting %s", sel.unit)
	if err := startErr(l, sel.p.Name, sd.Start(ctx, sel.unit)); err != nil {
		return err
	}
	return k.settle(ctx, "start")
}

// restart restarts the selection of a project that is not errored, and
// waits for it.
func (k controlling) restart(ctx context.Context) error {
	c, sd, sel := k.c, k.sd, k.sel
	p := sel.p
	if reason, errored, _ := c.Scope().Layout().State().ErroredMark(p.Name); errored {
		return fail(Failed, fmt.Sprintf("fix the app, then `bm2 start %s` (or `bm2 serve` in its dir) clears the errored state and starts it", p.Name),
			fmt.Errorf("project %s is errored (%s) and stays down until it is started again", p.Name, reason))
	}
	// An instance errored on its own (port_in_use) is restarted on
	// purpose: its mark goes.
	if err := clearInstanceMarks(c.Scope().Layout(), c.Report, p, markIDs(sel.idx)); err != nil {
		return err
	}
	account.TidyRunDirs(c.Scope().Layout(), p, sel.ids, warner(c.Report))
	if err := jobs.ResetFailed(ctx, sd, sel.names...); err != nil {
		return err
	}
	say(c.Report, "restarting %s", sel.unit)
	if err := sd.Restart(ctx, sel.unit); err != nil {
		return err
	}
	return k.settle(ctx, "restart")
}

// settle is how a start and a restart end: the wait for the instances,
// their ready line, and the retirement of a surge an interrupted reload
// left.
func (k controlling) settle(ctx context.Context, verb string) error {
	if err := waitingOn(k.c, k.sd).online(ctx, k.sel.p, k.sel.ids, k.timeout, verb); err != nil {
		return err
	}
	say(k.c.Report, "%s %s", k.sel.label, readyWord(k.sel.p))
	return retireSurge(ctx, k.sd, k.c.Scope().Layout(), k.c.Report, k.sel.p)
}

// Delete is `bm2 delete <name>`.
func (c *Client) Delete(ctx context.Context, name string) error {
	// Held to the end: from the registry read, through the stops, to the
	// reload that makes systemd forget the project, no other command may
	// register a project of this name (or the one this file hid) in
	// between.
	unlock, err := lockRegistry(ctx, c.Scope().Layout(), c.Report, DefaultTimeout)
	if err != nil {
		return err
	}
	defer unlock()
	projects := c.Projects()
	regFile := projects.Layout.RegisteredFile(name)
	found := config.Discover(projects.SearchPath)
	e, err := projects.Deletable(name, found)
	if err != nil {
		return err
	}

	sd, err := c.Connect(ctx)
	if err != nil {
		return fail(NoSystemd, "nothing was changed; without systemd, removing "+regFile+" by hand is enough", err)
	}
	defer sd.Close()

	instances, err := jobs.Instances(ctx, sd, name, e.Project)
	if err != nil {
		return err
	}
	timed, schedNames, err := jobs.StopTimed(ctx, sd, name)
	if err != nil {
		return err
	}
	// The target's instances are PartOf= it; the slice goes last, with
	// whatever else still runs in it.
	target, slice := units.Target(name), units.Slice(name)
	probes, err := jobs.Stop(ctx, sd, name, -1, target, instances, true)
	if err != nil {
		return err
	}
	if err := sd.Stop(ctx, slice); err != nil {
		return err
	}
	all := append(append(append([]string{target}, instances...), probes...), schedNames...)
	if err := jobs.ResetFailed(ctx, sd, append(all, slice)...); err != nil {
		return err
	}
	if err := registry.Forget(projects.Layout, c.SteerPins, name, warner(c.Report)); err != nil {
		return rootHint(projects.Layout, err)
	}
	if err := sd.Reload(ctx); err != nil {
		return err
	}
	if err := jobs.ResetLeft(ctx, sd, name, timed); err != nil {
		return err
	}
	n := 0
	for _, u := range instances {
		if _, i, _ := units.ParseInstance(u); i != units.Surge {
			n++
		}
	}
	say(c.Report, "deleted %s: stopped %s, removed %s", name, wording.Plural(n, "instance", "instances"), regFile)
	for _, s := range found.Shadow {
		if config.Stem(s) == name {
			say(c.Report, "note: %s now defines project %s (it was hidden by %s)", s, name, regFile)
			break
		}
	}
	return nil
}

// markIDs is which instance marks a command on instance idx (-1: the
// whole project) clears: that instance's, or every marked one (nil).
func markIDs(idx int) []int {
	if idx < 0 {
		return nil
	}
	return []int{idx}
}
