package control

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/bm2dev/bm2/internal/account"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/steer"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// Control is `bm2 start|stop|restart <name | name-i>`.
func (c *Client) Control(ctx context.Context, verb, arg string, timeout time.Duration) error {
	sel, err := c.selectUnits(arg)
	if err != nil {
		return err
	}
	sd, err := c.Connect(ctx)
	if err != nil {
		return err
	}
	defer sd.Close()
	switch verb {
	case "start":
		return c.start(ctx, sd, sel, timeout)
	case "restart":
		return c.restart(ctx, sd, sel, timeout)
	case "stop":
		if _, err := stopUnits(ctx, sd, sel.p.Name, sel.idx, sel.unit, sel.names, false); err != nil {
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

// selectUnits resolves `<name | name-i>` to a selection.
func (c *Client) selectUnits(arg string) (selection, error) {
	e, idx, err := c.ResolveUnit(arg)
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

// start clears the errored marks a start is meant to clear, starts the
// selection and waits for it.
func (c *Client) start(ctx context.Context, sd Systemd, sel selection, timeout time.Duration) error {
	if _, err := c.clearErrored(sel.p.Name); err != nil {
		return err
	}
	if err := c.clearInstanceMarks(sel.p, markIDs(sel.idx)); err != nil {
		return err
	}
	account.TidyRunDirs(c.Scope().Layout(), sel.p, sel.ids, warner(c.Report))
	if err := resetFailed(ctx, sd, sel.names...); err != nil {
		return err
	}
	if err := c.stopIdleProbes(ctx, sd, sel.p, sel.ids); err != nil {
		return err
	}
	say(c.Report, "starting %s", sel.unit)
	if err := c.startErr(sel.p.Name, sd.Start(ctx, sel.unit)); err != nil {
		return err
	}
	return c.settle(ctx, sd, sel, timeout, "start")
}

// restart restarts the selection of a project that is not errored, and
// waits for it.
func (c *Client) restart(ctx context.Context, sd Systemd, sel selection, timeout time.Duration) error {
	p := sel.p
	if reason, errored, _ := c.Layout.State().ErroredMark(p.Name); errored {
		return fail(Failed, fmt.Sprintf("fix the app, then `bm2 start %s` (or `bm2 serve` in its dir) clears the errored state and starts it", p.Name),
			fmt.Errorf("project %s is errored (%s) and stays down until it is started again", p.Name, reason))
	}
	// An instance errored on its own (port_in_use) is restarted on
	// purpose: its mark goes.
	if err := c.clearInstanceMarks(p, markIDs(sel.idx)); err != nil {
		return err
	}
	account.TidyRunDirs(c.Scope().Layout(), p, sel.ids, warner(c.Report))
	if err := resetFailed(ctx, sd, sel.names...); err != nil {
		return err
	}
	say(c.Report, "restarting %s", sel.unit)
	if err := sd.Restart(ctx, sel.unit); err != nil {
		return err
	}
	return c.settle(ctx, sd, sel, timeout, "restart")
}

// settle is how a start and a restart end: the wait for the instances,
// their ready line, and the retirement of a surge an interrupted reload
// left.
func (c *Client) settle(ctx context.Context, sd Systemd, sel selection, timeout time.Duration, verb string) error {
	if err := waitingOn(c, sd).online(ctx, sel.p, sel.ids, timeout, verb); err != nil {
		return err
	}
	say(c.Report, "%s %s", sel.label, readyWord(sel.p))
	return c.retireSurge(ctx, sd, sel.p)
}

// stopUnits stops unit (a project's target, or one instance when idx >=
// 0) the way bm2 always stops: the reusePort probes first, so that none
// reacts to the stop, then the unit, then any of instances still up (an
// instance started on its own is not stopped with its target); with
// loadedOnly, only those systemd has a unit file for (delete). It returns
// the probes it stopped.
func stopUnits(ctx context.Context, sd Systemd, name string, idx int, unit string, instances []string, loadedOnly bool) ([]string, error) {
	probes, err := loadedProbes(ctx, sd, name, idx)
	if err != nil {
		return nil, err
	}
	for _, pr := range probes {
		if err := sd.Stop(ctx, pr); err != nil {
			return nil, err
		}
	}
	if err := sd.Stop(ctx, unit); err != nil {
		return nil, err
	}
	if idx >= 0 {
		return probes, nil
	}
	statuses, err := sd.Units(ctx, instances)
	if err != nil {
		return nil, err
	}
	for _, u := range statuses {
		if !u.Down() && !(loadedOnly && u.LoadState == "not-found") {
			if err := sd.Stop(ctx, u.Name); err != nil {
				return nil, err
			}
		}
	}
	return probes, nil
}

// resetFailed is `systemctl reset-failed` for each unit.
func resetFailed(ctx context.Context, sd Systemd, names ...string) error {
	for _, n := range names {
		if err := sd.ResetFailed(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// Delete is `bm2 delete <name>`.
func (c *Client) Delete(ctx context.Context, name string) error {
	// Held to the end: from the registry read, through the stops, to the
	// reload that makes systemd forget the project, no other command may
	// register a project of this name (or the one this file hid) in
	// between.
	unlock, err := c.lockRegistry(ctx, DefaultTimeout)
	if err != nil {
		return err
	}
	defer unlock()
	regFile := filepath.Join(c.Layout.ConfigDir, name+".toml")
	found := config.Discover(c.SearchPath())
	e, err := c.deletable(name, regFile, found)
	if err != nil {
		return err
	}

	sd, err := c.Connect(ctx)
	if err != nil {
		return fail(NoSystemd, "nothing was changed; without systemd, removing "+regFile+" by hand is enough", err)
	}
	defer sd.Close()

	instances, err := c.projectUnits(ctx, sd, name, e.Project)
	if err != nil {
		return err
	}
	timed, schedNames, err := stopTimed(ctx, sd, name)
	if err != nil {
		return err
	}
	// The target's instances are PartOf= it; the slice goes last, with
	// whatever else still runs in it.
	target, slice := units.Target(name), units.Slice(name)
	probes, err := stopUnits(ctx, sd, name, -1, target, instances, true)
	if err != nil {
		return err
	}
	if err := sd.Stop(ctx, slice); err != nil {
		return err
	}
	all := append(append(append([]string{target}, instances...), probes...), schedNames...)
	if err := resetFailed(ctx, sd, append(all, slice)...); err != nil {
		return err
	}
	if err := c.forget(name, regFile); err != nil {
		return err
	}
	if err := sd.Reload(ctx); err != nil {
		return err
	}
	if err := resetLeft(ctx, sd, name, timed); err != nil {
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

// deletable is the registered project bm2 delete may remove: the one
// serve registered in regFile, neither masked nor defined by another
// file on the search path (found).
func (c *Client) deletable(name, regFile string, found config.Found) (entry, error) {
	for _, m := range found.Masked {
		if config.Stem(m) == name {
			return entry{}, fail(Failed, fmt.Sprintf("remove %s by hand if you want the project it hides back", m),
				fmt.Errorf("%s masks project %s (an empty file or a link to /dev/null); bm2 delete leaves masks alone", m, name))
		}
	}
	e, err := c.FindProject(name)
	if err != nil {
		return entry{}, err
	}
	if filepath.Clean(e.Path) != filepath.Clean(regFile) {
		return entry{}, fail(Failed,
			fmt.Sprintf("remove %s yourself (or mask it with an empty %s), then run `%s daemon-reload`", e.Path, regFile, c.Scope().Layout().Systemctl),
			fmt.Errorf("project %s is defined by %s, not %s: bm2 delete only removes what bm2 serve registered", name, e.Path, regFile))
	}
	return e, nil
}

// stopTimed stops what a project's timers start. A scheduled reload, or
// a health check that would restart an instance, does not go on beside
// the deletion, nor start again: the timers, then their services, are
// stopped first. So does a memory check, and a reload it started (of any
// instance). It returns the units (and patterns) it looked for, and the
// loaded ones among them.
func stopTimed(ctx context.Context, sd Systemd, name string) (timed, loaded []string, err error) {
	timed = []string{units.RestartTimer(name), units.RestartService(name), units.HealthTimer(name), units.HealthService(name),
		units.MemoryTimer(name), units.MemoryService(name), units.ReloadPattern(name)}
	sched, err := sd.Loaded(ctx, timed)
	if err != nil {
		return nil, nil, err
	}
	for _, n := range timed {
		for _, u := range sched {
			if ok, _ := path.Match(n, u.Name); !ok {
				continue
			}
			loaded = append(loaded, u.Name)
			if !u.Down() {
				if err := sd.Stop(ctx, u.Name); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return timed, loaded, nil
}

// forget removes what bm2 keeps of a stopped project besides systemd's
// units: its registered file (regFile) and private part, its errored
// marks, its health counts, the probe's verdicts and its port steering.
func (c *Client) forget(name, regFile string) error {
	if err := safefs.Remove(regFile); err != nil {
		return c.rootHint(fmt.Errorf("remove %s: %w", regFile, err))
	}
	if err := safefs.Remove(config.PrivatePath(regFile)); err != nil {
		return c.rootHint(fmt.Errorf("remove %s: %w", config.PrivatePath(regFile), err))
	}
	if err := c.Layout.State().ClearErrored(name); err != nil {
		return c.rootHint(err)
	}
	// The health checks' counts (the service's RuntimeDirectory=, kept
	// between its runs): a project of this name registered later starts
	// without them.
	if l := c.Scope().Layout(); l.RunStateDir != "" {
		hdir := l.HealthDir(name)
		if err := safefs.Remove(health.Path(hdir)); err != nil {
			return c.rootHint(fmt.Errorf("remove %s: %w", health.Path(hdir), err))
		}
		_ = os.Remove(hdir)
		// The probe's verdict files: a wait of a project registered later
		// under this name never takes them for its own runs (they name
		// theirs), but they are this project's.
		// Not removable (a directory bm2 does not trust): said, and the
		// deletion goes on; they are matched by run, never by name alone.
		if err := relay.NewVerdicts(l).Forget(name); err != nil {
			warn(c.Report, "the probe's verdicts on %s stay: %v", name, err)
		}
	}
	// The port's steering (system scope): the pinned group, which steers
	// on while the port has listeners and goes with the last, and the
	// mark that it was unavailable. A project registered later under
	// this name starts from nothing, on whatever port it has.
	if !c.Scope().IsUser() {
		if err := steer.ScopeStore(c.SteerPins, c.Scope().Layout()).Remove(name); err != nil {
			return c.rootHint(fmt.Errorf("remove the steering of %s: %w", name, err))
		}
	}
	marked, _ := c.Layout.State().ErroredInstances(name)
	for _, n := range marked {
		if err := c.Layout.State().ClearInstanceErrored(n); err != nil {
			return c.rootHint(err)
		}
	}
	return nil
}

// resetLeft resets what systemd still has of a deleted project after the
// reload: it keeps a unit that failed until it is reset; everything else
// without a unit file is garbage-collected.
func resetLeft(ctx context.Context, sd Systemd, name string, timed []string) error {
	target, slice := units.Target(name), units.Slice(name)
	left, err := sd.Loaded(ctx, append([]string{units.InstancePattern(name), units.ProbePattern(name), units.SteerPattern(name), target, slice}, timed...))
	if err != nil {
		return err
	}
	for _, u := range left {
		if u.Name == target || u.Name == slice || slices.Contains(timed, u.Name) || instanceOf(u.Name) == name {
			if err := sd.ResetFailed(ctx, u.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// projectUnits lists a project's instance units: those its file declares
// and any other instance systemd has loaded (its file may be invalid, or
// instances may have been lowered).
func (c *Client) projectUnits(ctx context.Context, sd Systemd, name string, p *config.Project) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	if p != nil {
		for _, n := range view.InstanceNames(p) {
			seen[n] = true
			out = append(out, n)
		}
	}
	loaded, err := sd.Loaded(ctx, []string{units.InstancePattern(name)})
	if err != nil {
		return nil, err
	}
	for _, u := range loaded {
		if n, _, ok := units.ParseInstance(u.Name); ok && n == name && !seen[u.Name] {
			seen[u.Name] = true
			out = append(out, u.Name)
		}
	}
	return out, nil
}

// loadedProbes lists the reusePort probe units systemd has loaded for a
// project (idx < 0) or one of its instances.
func loadedProbes(ctx context.Context, sd Systemd, name string, idx int) ([]string, error) {
	loaded, err := sd.Loaded(ctx, []string{units.ProbePattern(name)})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, u := range loaded {
		n, i, ok := units.ParseProbe(u.Name)
		if ok && n == name && (idx < 0 || i == idx) {
			out = append(out, u.Name)
		}
	}
	return out, nil
}

// stopIdleProbes stops the probe of every instance of ids that is not
// running. Such a probe is one that judged the instance's last run and is
// ending: a start enqueued now would merge into its job (a oneshot being
// started is not started again), and the new run would go unprobed,
// never confirmed. Stopped first, the start's Wants= brings a fresh one.
func (c *Client) stopIdleProbes(ctx context.Context, sd Systemd, p *config.Project, ids []int) error {
	probes, err := loadedProbes(ctx, sd, p.Name, -1)
	if err != nil || len(probes) == 0 {
		return err
	}
	active := map[int]bool{}
	loaded, err := sd.Loaded(ctx, probes)
	if err != nil {
		return err
	}
	for _, u := range loaded {
		if _, i, ok := units.ParseProbe(u.Name); ok && !u.Down() {
			active[i] = true
		}
	}
	for _, i := range ids {
		if !active[i] {
			continue
		}
		st, err := sd.Units(ctx, []string{units.Instance(p.Name, i)})
		if err != nil {
			return err
		}
		if st[0].Down() {
			if err := sd.Stop(ctx, units.Probe(p.Name, i)); err != nil {
				return err
			}
		}
	}
	return nil
}

// instanceOf returns the project of an instance or probe unit name, or "".
func instanceOf(unit string) string {
	n, _, ok := units.ParseProbe(unit)
	if !ok {
		n, _, ok = units.ParseSteer(unit)
	}
	if !ok {
		n, _, ok = units.ParseInstance(unit)
	}
	if !ok {
		return ""
	}
	return n
}

// markIDs is which instance marks a command on instance idx (-1: the
// whole project) clears: that instance's, or every marked one (nil).
func markIDs(idx int) []int {
	if idx < 0 {
		return nil
	}
	return []int{idx}
}
