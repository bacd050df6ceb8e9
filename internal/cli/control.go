package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/units"
)

// control is `bm2 start|stop|restart <name | name-i>`.
func (a *App) control(ctx context.Context, verb, arg string, timeout time.Duration) error {
	e, idx, err := a.resolveUnit(arg)
	if err != nil {
		return err
	}
	if idx == units.Surge {
		return refuseSurge(e.Name, arg)
	}
	p, err := usable(e)
	if err != nil {
		return err
	}
	unit, ids, label := units.Target(p.Name), allInstances(p), p.Name
	if idx >= 0 {
		unit, ids, label = units.Instance(p.Name, idx), []int{idx}, units.InstanceID(p.Name, idx)
	}
	names := make([]string, len(ids))
	for k, i := range ids {
		names[k] = units.Instance(p.Name, i)
	}

	sd, err := a.Connect(ctx)
	if err != nil {
		return err
	}
	defer sd.Close()

	switch verb {
	case "start":
		if _, err := a.clearErrored(p.Name); err != nil {
			return err
		}
		if err := a.clearInstanceMarks(p, markIDs(idx)); err != nil {
			return err
		}
		for _, n := range names {
			if err := sd.ResetFailed(ctx, n); err != nil {
				return err
			}
		}
		if err := a.stopIdleProbes(ctx, sd, p, ids); err != nil {
			return err
		}
		fmt.Fprintf(a.Out, "starting %s\n", unit)
		if err := a.startErr(p.Name, sd.Start(ctx, unit)); err != nil {
			return err
		}
		if err := a.waitOnline(ctx, sd, p, ids, timeout, "start"); err != nil {
			return err
		}
		fmt.Fprintf(a.Out, "%s %s\n", label, readyWord(p))
		if err := a.retireSurge(ctx, sd, p); err != nil {
			return err
		}

	case "restart":
		if reason, errored, _ := a.erroredMark(p.Name); errored {
			return fail(ExitFailure, fmt.Sprintf("fix the app, then `bm2 start %s` (or `bm2 serve` in its dir) clears the errored state and starts it", p.Name),
				fmt.Errorf("project %s is errored (%s) and stays down until it is started again", p.Name, reason))
		}
		// An instance errored on its own (port_in_use) is restarted on
		// purpose: its mark goes.
		if err := a.clearInstanceMarks(p, markIDs(idx)); err != nil {
			return err
		}
		for _, n := range names {
			if err := sd.ResetFailed(ctx, n); err != nil {
				return err
			}
		}
		fmt.Fprintf(a.Out, "restarting %s\n", unit)
		if err := sd.Restart(ctx, unit); err != nil {
			return err
		}
		if err := a.waitOnline(ctx, sd, p, ids, timeout, "restart"); err != nil {
			return err
		}
		fmt.Fprintf(a.Out, "%s %s\n", label, readyWord(p))
		if err := a.retireSurge(ctx, sd, p); err != nil {
			return err
		}

	case "stop":
		// The reusePort probes first, so that none reacts to the stop.
		probes, err := a.loadedProbes(ctx, sd, p.Name, idx)
		if err != nil {
			return err
		}
		for _, pr := range probes {
			if err := sd.Stop(ctx, pr); err != nil {
				return err
			}
		}
		if err := sd.Stop(ctx, unit); err != nil {
			return err
		}
		// Stopping the target stops its instances (PartOf=); an instance
		// started on its own is stopped here too.
		if idx < 0 {
			statuses, err := sd.Units(ctx, names)
			if err != nil {
				return err
			}
			for _, u := range statuses {
				if u.ActiveState != "inactive" && u.ActiveState != "failed" {
					if err := sd.Stop(ctx, u.Name); err != nil {
						return err
					}
				}
			}
		}
		fmt.Fprintf(a.Out, "%s stopped (%s)\n", label, plural(len(ids), "instance", "instances"))
	default:
		return fmt.Errorf("internal error: unknown verb %q", verb)
	}
	return nil
}

// delete is `bm2 delete <name>`.
func (a *App) delete(ctx context.Context, name string) error {
	// Held to the end: from the registry read, through the stops, to the
	// reload that makes systemd forget the project, no other command may
	// register a project of this name (or the one this file hid) in
	// between.
	unlock, err := a.lockRegistry(ctx, defaultTimeout)
	if err != nil {
		return err
	}
	defer unlock()
	regFile := filepath.Join(a.Paths.ConfigDir, name+".toml")
	found := config.Discover(a.searchPath())
	for _, m := range found.Masked {
		if config.Stem(m) == name {
			return fail(ExitFailure, fmt.Sprintf("remove %s by hand if you want the project it hides back", m),
				fmt.Errorf("%s masks project %s (an empty file or a link to /dev/null); bm2 delete leaves masks alone", m, name))
		}
	}
	e, err := a.findProject(name)
	if err != nil {
		return err
	}
	if filepath.Clean(e.Path) != filepath.Clean(regFile) {
		return fail(ExitFailure,
			fmt.Sprintf("remove %s yourself (or mask it with an empty %s), then run `%s daemon-reload`", e.Path, regFile, a.systemctl()),
			fmt.Errorf("project %s is defined by %s, not %s: bm2 delete only removes what bm2 serve registered", name, e.Path, regFile))
	}

	sd, err := a.Connect(ctx)
	if err != nil {
		return fail(ExitNoSystemd, "nothing was changed; without systemd, removing "+regFile+" by hand is enough", err)
	}
	defer sd.Close()

	instances, err := a.projectUnits(ctx, sd, name, e.Project)
	if err != nil {
		return err
	}
	probes, err := a.loadedProbes(ctx, sd, name, -1)
	if err != nil {
		return err
	}
	target, slice := units.Target(name), units.Slice(name)
	// Probes first (they must not react to the stop), then the target
	// (its instances are PartOf= it), any instance left, and the slice
	// with whatever else still runs in it.
	for _, pr := range probes {
		if err := sd.Stop(ctx, pr); err != nil {
			return err
		}
	}
	if err := sd.Stop(ctx, target); err != nil {
		return err
	}
	statuses, err := sd.Units(ctx, instances)
	if err != nil {
		return err
	}
	for _, u := range statuses {
		if u.ActiveState != "inactive" && u.ActiveState != "failed" && u.LoadState != "not-found" {
			if err := sd.Stop(ctx, u.Name); err != nil {
				return err
			}
		}
	}
	if err := sd.Stop(ctx, slice); err != nil {
		return err
	}
	all := append(append([]string{target}, instances...), probes...)
	all = append(all, slice)
	for _, n := range all {
		if err := sd.ResetFailed(ctx, n); err != nil {
			return err
		}
	}
	if err := safefs.Remove(regFile); err != nil {
		return a.rootHint(fmt.Errorf("remove %s: %w", regFile, err))
	}
	if err := safefs.Remove(config.PrivatePath(regFile)); err != nil {
		return a.rootHint(fmt.Errorf("remove %s: %w", config.PrivatePath(regFile), err))
	}
	if err := a.state().ClearErrored(name); err != nil {
		return a.rootHint(err)
	}
	marked, _ := a.state().ErroredInstances(name)
	for _, n := range marked {
		if err := a.state().ClearInstanceErrored(n); err != nil {
			return a.rootHint(err)
		}
	}
	if err := sd.Reload(ctx); err != nil {
		return err
	}
	// systemd keeps a unit that failed until it is reset; everything else
	// without a unit file is garbage-collected.
	left, err := sd.Loaded(ctx, []string{units.InstancePattern(name), units.ProbePattern(name), target, slice})
	if err != nil {
		return err
	}
	for _, u := range left {
		if u.Name == target || u.Name == slice || instanceOf(u.Name) == name {
			if err := sd.ResetFailed(ctx, u.Name); err != nil {
				return err
			}
		}
	}
	n := 0
	for _, u := range instances {
		if _, i, _ := units.ParseInstance(u); i != units.Surge {
			n++
		}
	}
	fmt.Fprintf(a.Out, "deleted %s: stopped %s, removed %s\n", name, plural(n, "instance", "instances"), regFile)
	for _, s := range found.Shadow {
		if config.Stem(s) == name {
			fmt.Fprintf(a.Out, "note: %s now defines project %s (it was hidden by %s)\n", s, name, regFile)
			break
		}
	}
	return nil
}

// projectUnits lists a project's instance units: those its file declares
// and any other instance systemd has loaded (its file may be invalid, or
// instances may have been lowered).
func (a *App) projectUnits(ctx context.Context, sd Systemd, name string, p *config.Project) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	if p != nil {
		for _, n := range instanceNames(p) {
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
func (a *App) loadedProbes(ctx context.Context, sd Systemd, name string, idx int) ([]string, error) {
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
func (a *App) stopIdleProbes(ctx context.Context, sd Systemd, p *config.Project, ids []int) error {
	probes, err := a.loadedProbes(ctx, sd, p.Name, -1)
	if err != nil || len(probes) == 0 {
		return err
	}
	active := map[int]bool{}
	loaded, err := sd.Loaded(ctx, probes)
	if err != nil {
		return err
	}
	for _, u := range loaded {
		if _, i, ok := units.ParseProbe(u.Name); ok && u.ActiveState != "inactive" && u.ActiveState != "failed" {
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
		if s := st[0].ActiveState; s == "inactive" || s == "failed" {
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
		n, _, ok = units.ParseInstance(unit)
	}
	if !ok {
		return ""
	}
	return n
}

// buildVersion is set at link time by packaging
// (-ldflags "-X github.com/bm2dev/bm2/cli.buildVersion=1.2.3"); otherwise
// the module version or VCS revision from the build info is used.
var buildVersion string

// version is `bm2 version`.
func (a *App) version() error {
	v, goVersion := buildVersion, ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if v == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		if v == "" {
			rev, dirty := "", false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if rev != "" {
				v = "devel-" + rev
				if dirty {
					v += "-dirty"
				}
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	if goVersion != "" {
		fmt.Fprintf(a.Out, "bm2 %s (%s)\n", v, goVersion)
	} else {
		fmt.Fprintf(a.Out, "bm2 %s\n", v)
	}
	return nil
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// markIDs is which instance marks a command on instance idx (-1: the
// whole project) clears: that instance's, or every marked one (nil).
func markIDs(idx int) []int {
	if idx < 0 {
		return nil
	}
	return []int{idx}
}
