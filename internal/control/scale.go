package control

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/account"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/jobs"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// Scale is `bm2 scale <name> <N | +N | -N | max>`: it changes the number
// of instances of a registered project and applies it without touching
// the instances that stay. Scaling up writes the registered file (as
// serve does: config.Marshal, the registry lock, the private part left
// as it is), has systemd reload, checks that the generator took it, then
// starts only the new instances and waits for them as serve does (online,
// in cluster mode confirmed by the reusePort probe). Scaling down writes
// the file, stops the instances above the new count, the highest first,
// each with a normal stop (SIGTERM, then stop_timeout_ms), so that it
// finishes what it has, then has systemd reload.
//
// It does not go through ServeProject: the target's unit changes with the
// count, and serve restarts every instance of a project whose units
// changed. Everything that can be refused is refused before anything
// changes: the count, the port range (fork mode), a project that is not
// bm2's to rewrite or that is errored.
//
// A registered count that systemd has not applied yet (the operator set
// instances = in the file by hand) is applied the same way when scale is
// asked for that count: it is how a file bm2 does not rewrite is scaled.
func (c *Client) Scale(ctx context.Context, name, count string, timeout time.Duration) error {
	arg, err := parseCount(count)
	if err != nil {
		return err
	}
	// Refused at once, before waiting for any lock.
	if _, _, err := scalable(c.Projects(), name); err != nil {
		return err
	}
	// One reload or scale of a project at a time: a reload's surge and
	// rolling restart work on the instances there are.
	lock, err := lockProject(c.Scope().Layout(), name)
	if err != nil {
		return err
	}
	defer lock.Unlock()
	sd, err := c.Connect(ctx)
	if err != nil {
		return fail(NoSystemd, "nothing was changed; bm2 scale needs a running systemd", err)
	}
	defer sd.Close()

	// From the registry read to the generator's verdict, as for serve:
	// no other command changes the registered projects meanwhile.
	unlock, err := lockRegistry(ctx, c.Scope().Layout(), c.Report, timeout)
	if err != nil {
		return err
	}
	defer unlock()
	p, own, err := scalable(c.Projects(), name)
	if err != nil {
		return err
	}
	if reason, errored, _ := c.Scope().Layout().State().ErroredMark(p.Name); errored {
		return fail(Failed, fmt.Sprintf("fix the app, then `bm2 start %s` (or `bm2 serve` in %s) clears the errored state and starts it; scale it once it runs", p.Name, p.Cwd),
			fmt.Errorf("project %s is errored (%s): nothing was changed", p.Name, reason))
	}
	n, err := arg.resolve(p, c.NumCPU)
	if err != nil {
		return err
	}
	q := *p
	// +0 and -0 keep instances = "max" as it is; N and the other
	// relative counts set a number.
	q.Instances, q.MaxInstance = n, arg.max || (arg.relative && n == p.Instances && p.MaxInstance)
	k := scaling{c: c, sd: sd, p: p, q: &q, timeout: timeout}

	was, err := scaleUnits(ctx, sd, p, n)
	if err != nil {
		return err
	}
	rewrite := n != p.Instances || q.MaxInstance != p.MaxInstance
	if !rewrite && !was.behind && len(was.extra) == 0 {
		say(c.Report, "%s already has %s", p.Name, wording.Plural(n, "instance", "instances"))
		return nil
	}

	reg := &registry.Registration{P: &q}
	if rewrite {
		if reg, err = k.rewrite(ctx, own); err != nil {
			return err
		}
	}
	if reg.Changed {
		if err := reg.Write(); err != nil {
			return rootHint(c.Scope().Layout(), err)
		}
		say(c.Report, "updated %s: instances = %s (was %s)", p.File, registry.CountText(&q), registry.CountText(p))
	} else if !rewrite && was.wanted != n && was.running {
		say(c.Report, "%s says %s, systemd runs %d: applying it", p.File, wording.Plural(n, "instance", "instances"), was.wanted)
	} else if !rewrite && was.behind {
		say(c.Report, "reloading systemd: %s changed since it was read", p.File)
	}
	// The surplus goes before systemd reloads: the generator drops an
	// instance's drop-in with the count, and an instance stopped after
	// that would stop with the bare template's settings (systemd's 90 s
	// default, not stop_timeout_ms) from a unit that no longer loads. A
	// stop that fails leaves the file written: the same scale run again
	// finishes it.
	if err := k.stopScaledDown(ctx, was.extra); err != nil {
		return err
	}
	if err := k.load(ctx, reg, was.behind); err != nil {
		return err
	}
	unlock()
	from := was.wanted
	if !was.loaded {
		from = p.Instances // what the registered file said; nothing ran
	}
	return k.apply(ctx, from, was)
}

// scaling is bm2 scale of one project once its new count is known: the
// client it acts through, systemd, the project as registered (p) and
// with its new count (q), and the timeout of the new instances' wait.
type scaling struct {
	c       *Client
	sd      Systemd
	p, q    *config.Project
	timeout time.Duration
}

// load has systemd reload when the registration changed or systemd's
// units are behind the registered file, and checks that the generator
// took q (skipped takes back what was written when it did not).
func (k scaling) load(ctx context.Context, reg *registry.Registration, behind bool) error {
	if !reg.Changed && !behind {
		return nil
	}
	if err := k.sd.Reload(ctx); err != nil {
		return err
	}
	ts, err := k.sd.Units(ctx, []string{units.Target(k.q.Name)})
	if err != nil {
		return err
	}
	if ts[0].LoadState != "loaded" {
		return skipped(ctx, k.sd, k.c.Projects(), k.c.Report, reg)
	}
	return nil
}

// rewrite is the registration of q, p with its new count, when bm2 may
// rewrite p's file (own: serve registered it) and the count fits beside
// the other projects' ports.
func (k scaling) rewrite(ctx context.Context, own bool) (*registry.Registration, error) {
	c, p, q := k.c, k.p, k.q
	if !own {
		return nil, fail(Failed,
			fmt.Sprintf("set instances = %s in %s yourself, then run `bm2 scale %s %d`: it applies the file's count without restarting the instances that stay", registry.CountText(q), p.File, p.Name, q.Instances),
			fmt.Errorf("project %s is defined by %s, not %s: bm2 scale rewrites only what bm2 serve registered; nothing was changed", p.Name, p.File, c.Scope().Layout().RegisteredFile(p.Name)))
	}
	projects := c.Projects()
	entries, _ := projects.Entries()
	if err := k.fits(ctx, entries); err != nil {
		return nil, err
	}
	reg, err := projects.Rescaled(p, q)
	return reg, rootHint(projects.Layout, err)
}

// countArg is scale's count: N, +N, -N or max.
type countArg struct {
	n        int  // N, or the change for +N and -N
	relative bool // +N or -N
	max      bool // one instance per CPU, as instances = "max"
	text     string
}

// parseCount reads the count argument; its range is checked against the
// project (resolve).
func parseCount(s string) (countArg, error) {
	a := countArg{text: s}
	if s == "max" {
		a.max = true
		return a, nil
	}
	digits := s
	sign := 1
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		digits, a.relative = rest, true
	} else if rest, ok := strings.CutPrefix(s, "-"); ok {
		digits, a.relative, sign = rest, true, -1
	}
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return a, badArg("scale: %q is not a number of instances: give N (1 to %d), +N, -N or max", s, config.MaxInstances)
	}
	n, err := strconv.Atoi(digits)
	if err != nil {
		n = config.MaxInstances + 1 // past every range
	}
	a.n = sign * n
	return a, nil
}

// resolve is the count a project gets: from its registered count for +N
// and -N, the number of CPUs for max (as config reads instances =
// "max"). It must be 1 to config.MaxInstances.
func (a countArg) resolve(p *config.Project, numCPU int) (int, error) {
	n := a.n
	switch {
	case a.max:
		n = max(1, min(numCPU, config.MaxInstances))
	case a.relative:
		n = min(p.Instances+a.n, config.MaxInstances+1)
	}
	switch {
	case n < 1 && a.relative:
		return 0, badArg("scale: %s has %s: %s would leave %d; a project keeps at least 1 (`bm2 stop %s` stops them all)",
			p.Name, wording.Plural(p.Instances, "instance", "instances"), a.text, n, p.Name)
	case n < 1:
		return 0, badArg("scale: a project has at least 1 instance (`bm2 stop %s` stops them all)", p.Name)
	case n > config.MaxInstances:
		return 0, badArg("scale: %s is more instances than a project may have (%d)", a.text, config.MaxInstances)
	}
	return n, nil
}

// scalable is the valid registered project of that name, and whether it
// is bm2's to rewrite: registered in the scope's config dir, where serve
// writes (a file elsewhere on the search path is its package's or the
// operator's), among the projects of s.
func scalable(s registry.Store, name string) (*config.Project, bool, error) {
	e, err := s.Find(name)
	if err != nil {
		return nil, false, err
	}
	p, err := Usable(e)
	if err != nil {
		return nil, false, err
	}
	return p, filepath.Clean(e.Path) == filepath.Clean(s.Layout.RegisteredFile(name)), nil
}

// fits refuses a count the project file could not have: a fork-mode
// range past port 65535 or over another project's ports (entries), unit
// names too long for systemd, anything else config refuses.
func (k scaling) fits(ctx context.Context, entries []entry) error {
	c, q := k.c, k.q
	if q.Mode == config.Fork && q.Port+q.Instances-1 > 65535 {
		return fail(Invalid, "choose fewer instances",
			fmt.Errorf("%s cannot have %d instances: fork mode needs ports %d~%d, past 65535", q.Name, q.Instances, q.Port, q.Port+q.Instances-1))
	}
	if msg := config.NameError(q.Name, q.Instances); msg != "" {
		return fail(Invalid, "choose fewer instances", fmt.Errorf("%s cannot have %d instances: %s", q.Name, q.Instances, msg))
	}
	if err := CheckConflict(ctx, c.Connect, c.Scope(), q, entries); err != nil {
		hint := "choose fewer instances"
		var ce *config.ConflictError
		if errors.As(err, &ce) {
			hint = fmt.Sprintf("choose fewer instances, or move %s or %s (%s) to other ports", q.Name, ce.Holder, ce.HolderFile)
		}
		return fail(Invalid, hint, fmt.Errorf("%w; nothing was changed", err))
	}
	if err := CheckSystemConflict(c.Scope(), q); err != nil {
		return err
	}
	// Anything else config checks of a count (the limits above are the
	// ones known today).
	pub, priv := config.Marshal(q)
	src := config.Source{Path: q.File, Data: pub, PrivatePath: config.PrivatePath(q.File), PrivateData: priv}
	if _, err := config.ParseSource(src, c.Scope().Options()); err != nil {
		return fail(Invalid, "choose another count", fmt.Errorf("%s cannot have %d instances: %w", q.Name, q.Instances, err))
	}
	return nil
}

// scaleWas is what systemd runs of a project before a scale.
type scaleWas struct {
	loaded  bool  // systemd has the project's target
	wanted  int   // the instances that target wants: the count systemd applied
	running bool  // the target is active: new instances are started
	behind  bool  // systemd's units are not the registered file's
	extra   []int // running instances at or above the new count, the highest first
}

// scaleUnits reads the project's target and loaded instances.
func scaleUnits(ctx context.Context, sd Systemd, p *config.Project, n int) (scaleWas, error) {
	var w scaleWas
	ts, err := sd.Units(ctx, []string{units.Target(p.Name)})
	if err != nil {
		return w, err
	}
	t := ts[0]
	w.loaded = t.LoadState == "loaded"
	if w.loaded {
		for _, u := range t.Wants {
			if name, i, ok := units.ParseInstance(u); ok && name == p.Name && i != units.Surge {
				w.wanted++
			}
		}
	}
	w.running = t.ActiveState == "active"
	w.behind = !w.loaded || t.NeedDaemonReload || w.wanted != p.Instances
	loaded, err := sd.Loaded(ctx, []string{units.InstancePattern(p.Name)})
	if err != nil {
		return w, err
	}
	for _, u := range loaded {
		if name, i, ok := units.ParseInstance(u.Name); ok && name == p.Name && i != units.Surge && i >= n && !u.Down() {
			w.extra = append(w.extra, i)
		}
	}
	slices.Sort(w.extra)
	slices.Reverse(w.extra)
	return w, nil
}

// apply starts the instances systemd did not have, when the project
// runs, once systemd has q's units, and says what the scale did (the
// instances above q's count were stopped already: stopScaledDown).
func (k scaling) apply(ctx context.Context, from int, was scaleWas) error {
	c, sd, p, timeout := k.c, k.sd, k.q, k.timeout
	var up []int
	if was.running {
		for i := was.wanted; i < p.Instances; i++ {
			up = append(up, i)
		}
	}
	if len(up) > 0 {
		names := make([]string, len(up))
		for k, i := range up {
			names[k] = units.Instance(p.Name, i)
		}
		if err := clearInstanceMarks(c.Scope().Layout(), c.Report, p, up); err != nil {
			return err
		}
		account.TidyRunDirs(c.Scope().Layout(), p, up, warner(c.Report))
		if err := jobs.ResetFailed(ctx, sd, names...); err != nil {
			return err
		}
		// A probe left ending by an earlier run of the same instance
		// would swallow the new run's (jobs.StopIdleProbes).
		if err := jobs.StopIdleProbes(ctx, sd, p, up); err != nil {
			return err
		}
		say(c.Report, "starting %s", strings.Join(names, ", "))
		for _, n := range names {
			if err := startErr(c.Scope().Layout(), p.Name, sd.Start(ctx, n)); err != nil {
				return err
			}
		}
		if err := waitingOn(c, sd).online(ctx, p, up, timeout, "scale"); err != nil {
			return err
		}
	}
	what := wording.Plural(p.Instances, "instance", "instances")
	if from != p.Instances {
		what = fmt.Sprintf("from %d to %s", from, what)
	}
	switch {
	case len(up) > 0:
		say(c.Report, "scaled %s %s: %s %s", p.Name, what, wait.JoinIDs(p, up), readyWord(p))
	case len(was.extra) > 0:
		stopped := slices.Clone(was.extra)
		slices.Sort(stopped)
		say(c.Report, "scaled %s %s: stopped %s", p.Name, what, wait.JoinIDs(p, stopped))
	case !was.running && from != p.Instances:
		say(c.Report, "scaled %s %s; it is stopped: `bm2 start %s` starts them", p.Name, what, p.Name)
	case from == p.Instances:
		say(c.Report, "%s keeps %s", p.Name, what)
	default:
		say(c.Report, "scaled %s %s", p.Name, what)
	}
	return nil
}

// stopScaledDown stops the instances ids (the highest first) the way
// bm2 stop stops one: its reusePort probe first, so that it does not
// react, then the instance, which gets SIGTERM and stop_timeout_ms to
// finish what it has. Then every probe and mark left of an instance at
// or above q's count goes, as stopStray does for serve.
func (k scaling) stopScaledDown(ctx context.Context, ids []int) error {
	c, sd, p := k.c, k.sd, k.q
	for _, i := range ids {
		unit := units.Instance(p.Name, i)
		if _, err := jobs.Stop(ctx, sd, p.Name, i, unit, nil, false); err != nil {
			return err
		}
		if err := sd.ResetFailed(ctx, unit); err != nil {
			return err
		}
		say(c.Report, "stopped %s", units.InstanceID(p.Name, i))
	}
	probes, err := jobs.Probes(ctx, sd, p.Name, -1)
	if err != nil {
		return err
	}
	for _, pr := range probes {
		if _, i, _ := units.ParseProbe(pr); i >= p.Instances && i != units.Surge {
			if err := sd.Stop(ctx, pr); err != nil {
				return err
			}
		}
	}
	marked, err := c.Scope().Layout().State().ErroredInstances(p.Name)
	if err != nil {
		return fmt.Errorf("read errored state of %s's instances: %w", p.Name, err)
	}
	var gone []int
	for _, m := range marked {
		if _, i, ok := units.ParseInstance(m); ok && i >= p.Instances && i != units.Surge {
			gone = append(gone, i)
		}
	}
	if len(gone) > 0 {
		return clearInstanceMarks(c.Scope().Layout(), c.Report, p, gone)
	}
	return nil
}
