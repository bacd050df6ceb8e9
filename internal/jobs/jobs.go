package jobs

import (
	"context"
	"path"
	"slices"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/units"
)

// Systemd is what the jobs need of systemd (see package control's
// Systemd, and sysd.Conn).
type Systemd interface {
	sysd.Stopper
	sysd.Resetter
	sysd.UnitsReader
	sysd.Lister
}

// Stop stops unit (a project's target, or one instance when idx >=
// 0) the way bm2 always stops: the reusePort probes first, so that none
// reacts to the stop, then the unit, then any of instances still up (an
// instance started on its own is not stopped with its target); with
// loadedOnly, only those systemd has a unit file for (delete). It returns
// the probes it stopped.
func Stop(ctx context.Context, sd Systemd, name string, idx int, unit string, instances []string, loadedOnly bool) ([]string, error) {
	probes, err := Probes(ctx, sd, name, idx)
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

// ResetFailed is `systemctl reset-failed` for each unit.
func ResetFailed(ctx context.Context, sd Systemd, names ...string) error {
	for _, n := range names {
		if err := sd.ResetFailed(ctx, n); err != nil {
			return err
		}
	}
	return nil
}

// StopTimed stops what a project's timers start. A scheduled reload, or
// a health check that would restart an instance, does not go on beside
// the deletion, nor start again: the timers, then their services, are
// stopped first. So does a memory check, and a reload it started (of any
// instance). It returns the units (and patterns) it looked for, and the
// loaded ones among them.
func StopTimed(ctx context.Context, sd Systemd, name string) (timed, loaded []string, err error) {
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

// ResetLeft resets what systemd still has of a deleted project after the
// reload: it keeps a unit that failed until it is reset; everything else
// without a unit file is garbage-collected.
func ResetLeft(ctx context.Context, sd Systemd, name string, timed []string) error {
	target, slice := units.Target(name), units.Slice(name)
	left, err := sd.Loaded(ctx, append([]string{units.InstancePattern(name), units.ProbePattern(name), units.SteerPattern(name), target, slice}, timed...))
	if err != nil {
		return err
	}
	for _, u := range left {
		if u.Name == target || u.Name == slice || slices.Contains(timed, u.Name) || projectOf(u.Name) == name {
			if err := sd.ResetFailed(ctx, u.Name); err != nil {
				return err
			}
		}
	}
	return nil
}

// Instances lists a project's instance units: those its file declares
// and any other instance systemd has loaded (its file may be invalid, or
// instances may have been lowered).
func Instances(ctx context.Context, sd Systemd, name string, p *config.Project) ([]string, error) {
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

// Probes lists the reusePort probe units systemd has loaded for a
// project (idx < 0) or one of its instances.
func Probes(ctx context.Context, sd Systemd, name string, idx int) ([]string, error) {
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

// StopIdleProbes stops the probe of every instance of ids that is not
// running. Such a probe is one that judged the instance's last run and is
// ending: a start enqueued now would merge into its job (a oneshot being
// started is not started again), and the new run would go unprobed,
// never confirmed. Stopped first, the start's Wants= brings a fresh one.
func StopIdleProbes(ctx context.Context, sd Systemd, p *config.Project, ids []int) error {
	probes, err := Probes(ctx, sd, p.Name, -1)
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

// projectOf returns the project of an instance or probe unit name, or "".
func projectOf(unit string) string {
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

// Before reads the target's state and its instances'. Instances of a
// project systemd has no target for are only asked about when systemd has
// them loaded anyway: asking loads the bare template, and systemd logs
// that it has no ExecStart= into the instance's log.
func Before(ctx context.Context, sd Systemd, target string, names []string) ([]view.UnitStatus, error) {
	ts, err := sd.Units(ctx, []string{target})
	if err != nil {
		return nil, err
	}
	if ts[0].LoadState == "loaded" {
		is, err := sd.Units(ctx, names)
		return append(ts, is...), err
	}
	loaded, err := sd.Loaded(ctx, names)
	if err != nil {
		return nil, err
	}
	isLoaded := map[string]bool{}
	for _, u := range loaded {
		isLoaded[u.Name] = true
	}
	out := ts
	for _, n := range names {
		if !isLoaded[n] {
			out = append(out, sysd.NotFound(n))
			continue
		}
		st, err := sd.Units(ctx, []string{n})
		if err != nil {
			return nil, err
		}
		out = append(out, st[0])
	}
	return out, nil
}
