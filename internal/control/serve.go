package control

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/account"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/jobs"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/notify"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// ServeFlags are bm2 serve's flags.
type ServeFlags struct {
	Timeout time.Duration
	// TrustFile: the operator read the file and vouches for it; it may
	// ask root for anything, as root's own files may.
	TrustFile bool
	// Replace: take a name registered from another source.
	Replace bool
	// Force: serve even though what bm2 found on the host says the
	// instances cannot start (a port another program holds, a path the
	// project's account certainly cannot use): warnings, not refusals.
	Force bool
}

// Serve is `bm2 serve [dir]`.
func (c *Client) Serve(ctx context.Context, args []string, f ServeFlags) error {
	dir := "."
	if len(args) > 0 {
		dir = args[0]
	}
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("resolve %s: %w", dir, err)
	}
	file := filepath.Join(dir, ProjectFileName)
	if st, err := os.Stat(absDir); err == nil && st.Mode().IsRegular() && strings.HasSuffix(dir, ".toml") {
		// A project file of its own name (bm2 import writes
		// bm2.<name>.toml for apps that share a directory).
		file, absDir = dir, filepath.Dir(absDir)
	} else if err != nil || !st.IsDir() {
		return badArg("%s is not a directory: bm2 serve takes the project dir that holds %s (or a project file)", dir, ProjectFileName)
	}

	// 1. Everything that can be refused is refused before anything changes.
	p, origin, err := c.Projects().DirProject(file, absDir)
	if err != nil {
		return err
	}
	if err := c.Vouch(ctx, p, origin, f.TrustFile); err != nil {
		return err
	}
	return c.ServeProject(ctx, p, dir, f)
}

// ServeProject registers and starts a project that was read and vouched
// for (serve, import --serve): from memory, never from a file read again.
// dir is how the project's directory was named, for hints.
func (c *Client) ServeProject(ctx context.Context, p *config.Project, dir string, f ServeFlags) error {
	timeout := f.Timeout
	s := serving{c: c, p: p, f: f}
	if err := s.servable(ctx); err != nil {
		return err
	}
	// From the registry read to the generator's verdict on what was
	// written, no other command changes the registered projects (see
	// lockRegistry): two serves at once must not both pass the conflict
	// check. The lock is released once systemd has the project's units,
	// before its instances are started and waited for: that may take as
	// long as --timeout, it changes no file, and systemd orders the jobs
	// of concurrent commands itself.
	unlock, err := lockRegistry(ctx, c.Scope().Layout(), c.Report, timeout)
	if err != nil {
		return err
	}
	defer unlock()
	entries, _ := c.Projects().Entries()
	if err := registry.CheckOwner(p, entries, f.Replace); err != nil {
		return err
	}
	if err := CheckConflict(ctx, c.Connect, c.Scope(), p, entries); err != nil {
		return conflictErr(err)
	}
	if err := CheckSystemConflict(c.Scope(), p); err != nil {
		return err
	}
	// A port another program holds (after the conflicts: a registered
	// project's instances are named as the project).
	if err := heldErr(ctx, c.Explainer(), c.Report, p, f.Force); err != nil {
		return err
	}
	reg, err := newRegistration(c.Scope().Layout(), c.Scope().Options(), p)
	if err != nil {
		return err
	}
	changed := reg.Changed
	if changed {
		noteInstances(c.Report, p, entries)
	}

	// 2. systemd must be there before anything is written.
	sd, err := c.Connect(ctx)
	if err != nil {
		return fail(NoSystemd, fmt.Sprintf("nothing was written; bm2 serve needs a running systemd (check the project with `bm2 check %s` meanwhile)", dir), err)
	}
	defer sd.Close()
	s.sd = sd

	target := units.Target(p.Name)
	names := view.InstanceNames(p)
	before, err := jobs.Before(ctx, sd, target, names)
	if err != nil {
		return err
	}
	was := observe(before)
	was.account = account.Other(c.Scope().Layout(), c.Accounts, p, before[1:])

	// 3. Register, and 4. let systemd see it.
	if err := s.register(ctx, reg, was.stale); err != nil {
		return err
	}
	if c.Scope().IsUser() {
		// The user's manager started before bm2 was installed has not
		// started the units paths.target and timers.target want now:
		// the notification spool's path unit, and the events' relay
		// timer (which sends what no probe has sent).
		if err := sd.Start(ctx, notify.PathUnit); err != nil {
			warn(c.Report, "%v; notifications wait until your manager starts it (at your next login)", err)
		}
		if err := sd.Start(ctx, relay.TimerUnit); err != nil {
			warn(c.Report, "%v; the events the probes have not sent wait until your manager starts it (at your next login)", err)
		}
	}
	wasErrored, err := clearErrored(c.Scope().Layout(), c.Report, p.Name)
	if err != nil {
		return err
	}
	if err := clearInstanceMarks(c.Scope().Layout(), c.Report, p, nil); err != nil {
		return err
	}
	account.TidyRunDirs(c.Scope().Layout(), p, view.AllInstances(p), warner(c.Report))
	unlock()

	// 5. Start it.
	if err := jobs.ResetFailed(ctx, sd, names...); err != nil {
		return err
	}
	if err := stopStray(ctx, sd, c.Report, p); err != nil {
		return err
	}
	return s.startServed(ctx, was, changed, wasErrored)
}

// serving is bm2 serve of one project, read and vouched for: the client
// it acts through, the project, serve's flags, and, once connected,
// systemd.
type serving struct {
	c  *Client
	p  *config.Project
	f  ServeFlags
	sd Systemd
}

// noteInstances says so when serve changes the number of instances of a
// registered project: `bm2 scale` changes only the registered file, and
// the project file served again sets its own count, as PM2's ecosystem
// file does. That is never done silently: r hears it.
func noteInstances(r Reporter, p *config.Project, entries []entry) {
	for _, e := range entries {
		if e.Name != p.Name || e.Project == nil || filepath.Clean(e.Path) != filepath.Clean(p.File) || e.Project.Instances == p.Instances {
			continue
		}
		from := "the project file"
		if p.Source != "" {
			from = p.Source
		}
		say(r, "note: %s has %s (as `bm2 scale` may have set), %s says %d: serving sets %d; to keep %d, set instances = %d in %s",
			e.Path, wording.Plural(e.Project.Instances, "instance", "instances"), from, p.Instances, p.Instances,
			e.Project.Instances, e.Project.Instances, from)
	}
}

// servable refuses, before anything changes, what no start could get
// past: a missing user, directory, script or env_file, a runtime bm2
// cannot use, a project that may not be registered; and, unless force, a
// directory, script or env_file the project's account certainly cannot
// use. A runtime found on the search path is pinned into p.
func (s serving) servable(ctx context.Context) error {
	c, p := s.c, s.p
	if err := preflightErr(ctx, c.Explainer(), c.Report, p, s.f.Force); err != nil {
		return err
	}
	rc := CheckRuntime(ctx, &c.Env, p)
	if !rc.OK() {
		if e, ok := reason.Explain(rc.Reason, reason.Facts{Project: p.Name, Runtime: string(p.Runtime), Detail: rc.Problem, Again: "`bm2 serve`"}); ok {
			return fail(Invalid, hintOf(e), fmt.Errorf("%s: %s", e.Reason, e.Message))
		}
		return fail(Invalid, jsruntime.Advice(p.Runtime)+"; `bm2 check` shows what bm2 finds", errors.New("runtime "+rc.Problem))
	}
	if p.RuntimePath == "" {
		p.RuntimePath = rc.Path
	}
	return c.Projects().CheckRegistrable(p)
}

// unitsWere is what the target and instances of a project were before
// serve changed anything.
type unitsWere struct {
	stale     bool            // systemd's units are not the files' (not loaded, or NeedDaemonReload)
	running   bool            // the target, or some instance, ran
	allOnline bool            // the target and every instance were online
	online    map[string]bool // instance unit -> was online
	// account is the account running instances run as when p names
	// another (account.Other); "" when the same.
	account string
}

// observe reads unitsWere from the target's state and its instances'
// (before[0] is the target).
func observe(before []view.UnitStatus) unitsWere {
	stale := before[0].LoadState != "loaded"
	running := before[0].ActiveState == "active"
	allOnline := before[0].ActiveState == "active"
	for _, u := range before {
		stale = stale || u.NeedDaemonReload
	}
	online := map[string]bool{}
	for _, u := range before[1:] {
		s, _ := view.InstanceState(u)
		running = running || u.MainPID != 0 || s == view.StateOnline
		allOnline = allOnline && s == view.StateOnline
		online[u.Name] = s == view.StateOnline
	}
	return unitsWere{stale: stale, running: running, allOnline: allOnline, online: online}
}

// register writes the registration when it changed and says so, then,
// when anything changed, has systemd reload and checks that the generator
// took the project: a project it skipped has no target, and what serve
// wrote for it is taken back. A reload that fails leaves the registration
// in place: it passed every check, and the next daemon-reload loads it.
func (s serving) register(ctx context.Context, reg *registry.Registration, stale bool) error {
	c, sd, p := s.c, s.sd, s.p
	changed := reg.Changed
	if changed {
		if err := reg.Write(); err != nil {
			return rootHint(c.Scope().Layout(), err)
		}
		verb := "registered"
		if reg.Existed {
			verb = "updated"
		}
		if c.Scope().IsUser() {
			say(c.Report, "%s %s in %s: %s", verb, c.Scope().Layout().Short(p.File), scope.UserNote(c.Scope().Layout()), c.Summary(p))
		} else {
			say(c.Report, "%s %s: %s", verb, p.File, c.Summary(p))
		}
		if reg.Private != nil {
			say(c.Report, "kept %s in %s, which only %s can read", privateWhat(p), config.PrivatePath(p.File), c.Scope().Layout().Owner)
		}
	} else {
		say(c.Report, "%s is up to date: %s", c.Scope().Layout().Short(p.File), c.Summary(p))
	}

	if changed || stale {
		if err := sd.Reload(ctx); err != nil {
			return err
		}
		ts, err := sd.Units(ctx, []string{units.Target(p.Name)})
		if err != nil {
			return err
		}
		if ts[0].LoadState != "loaded" {
			return skipped(ctx, sd, c.Projects(), c.Report, reg)
		}
	}
	return nil
}

// startServed brings a registered project up as its change asks: a
// rolling restart of a running project whose units changed, a restart of
// one that was errored, nothing for one already online as registered, a
// start otherwise; then it waits for every instance.
func (s serving) startServed(ctx context.Context, was unitsWere, changed, wasErrored bool) error {
	c, sd, p, timeout := s.c, s.sd, s.p, s.f.Timeout
	target := units.Target(p.Name)
	stale := was.stale
	var err error
	switch {
	case (changed || stale) && was.running && was.account != "" && p.Mode == config.Cluster:
		// A new instance cannot listen beside one of another account.
		say(c.Report, "%s\nrestarting %s", account.MoveText(p, was.account), target)
		err = sd.Restart(ctx, target)
	case (changed || stale) && was.running && !wasErrored:
		// A running project takes its new settings as `bm2 reload` does:
		// one instance at a time, each back before the next, so the port
		// never goes dark. Instances the new file adds start afterwards.
		say(c.Report, "rolling restart of %s, one instance at a time", p.Name)
		lock, lerr := lockProject(c.Scope().Layout(), p.Name)
		if lerr != nil {
			return lerr
		}
		var ids []int
		for _, i := range view.AllInstances(p) {
			if was.online[units.Instance(p.Name, i)] {
				ids = append(ids, i)
			}
		}
		rerr := rolling{c: c, sd: sd, p: p, timeout: timeout}.roll(ctx, ids)
		lock.Unlock()
		if rerr != nil {
			return rerr
		}
		err = sd.Start(ctx, target)
	case (changed || stale) && was.running:
		say(c.Report, "restarting %s", target)
		err = sd.Restart(ctx, target)
	case was.allOnline && !wasErrored:
		// Already running as registered: nothing to do.
	default:
		if err := jobs.StopIdleProbes(ctx, sd, p, view.AllInstances(p)); err != nil {
			return err
		}
		say(c.Report, "starting %s", target)
		err = sd.Start(ctx, target)
	}
	if err := startErr(c.Scope().Layout(), p.Name, err); err != nil {
		return err
	}
	if err := waitingOn(c, sd).online(ctx, p, view.AllInstances(p), timeout, "serve"); err != nil {
		return err
	}
	say(c.Report, "%s %s: %s", p.Name, readyWord(p), summaryTail(p))
	if err := retireSurge(ctx, sd, c.Scope().Layout(), c.Report, p); err != nil {
		return err
	}
	if c.Scope().IsUser() {
		say(c.Report, "%s", scope.LingerNote(c.Scope().Layout()))
	}
	return nil
}

// conflictErr is serve's refusal of a port range another project holds.
func conflictErr(err error) error {
	hint := "choose another port in bm2.toml, or unregister the other project with `bm2 delete`"
	var ce *config.ConflictError
	if errors.As(err, &ce) {
		hint = fmt.Sprintf("choose another port in bm2.toml, or unregister %s (%s) with `bm2 delete %s`", ce.Holder, ce.HolderFile, ce.Holder)
	}
	return fail(Invalid, hint, err)
}

// skipped is serve's error when systemd has no target for p after the
// daemon-reload: the generator skipped the project (a file written behind
// bm2's back that takes its ports, say). What serve wrote is taken back
// first, the previous registration put back if there was one, and systemd
// reloaded again, so that a failed serve leaves the registry as it found
// it. The error is the generator's reason when bm2 can tell it (the same
// port conflict a serve run after the other file was written reports);
// r hears what was taken back.
func skipped(ctx context.Context, sd Systemd, projects registry.Store, r Reporter, reg *registry.Registration) error {
	p := reg.P
	var cause error
	_, l := projects.Entries()
	if e, ok := l.Find(p.Name); ok && e.Err != nil && filepath.Clean(e.Path) == filepath.Clean(p.File) {
		cause = e.Err
	}
	if reg.Changed {
		// Taken back even when the command was interrupted meanwhile.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTimeout)
		defer cancel()
		err := reg.Undo()
		if err == nil {
			err = sd.Reload(ctx)
		}
		if err != nil {
			why := "bm2-generator skipped it"
			if cause != nil {
				why = cause.Error()
			}
			return fmt.Errorf("systemd has no units for %s after daemon-reload (%s), and taking back %s failed: %w", p.Name, why, p.File, err)
		}
		if reg.Existed {
			say(r, "put the previous %s back: systemd did not take the new one", p.File)
		} else {
			say(r, "removed %s again: systemd did not take it", p.File)
		}
	}
	if errors.Is(cause, config.ErrConflict) {
		return conflictErr(cause)
	}
	if cause != nil {
		return fail(CodeOf(cause), "`bm2 check "+p.File+"` shows the problem", cause)
	}
	return fail(Failed, "`journalctl -b -t bm2` shows why bm2-generator skipped it",
		fmt.Errorf("systemd has no units for %s after daemon-reload: bm2-generator skipped %s", p.Name, p.File))
}

// readyWord is what serve, start and reload say of a project whose
// instances all came up: online, and in cluster mode confirmed by the
// reusePort probe.
func readyWord(p *config.Project) string {
	switch {
	case p.Mode == config.Cluster && p.HealthChecked():
		return "online, confirmed and healthy"
	case p.Mode == config.Cluster:
		return "online and confirmed"
	case p.HealthChecked():
		return "online and healthy"
	}
	return "online"
}

// summaryTail is the end of serve's final line.
func summaryTail(p *config.Project) string {
	return fmt.Sprintf("%s, runtime %s (%s); `bm2 list` shows it, `bm2 logs %s` its output",
		view.ShapeText(p), p.Runtime, p.RuntimeCommand(), p.Name)
}

// stopStray stops instances a project no longer has (instances was
// lowered), and their reusePort probes, and the restart timer of a
// project without restart_schedule: systemd keeps them running after the
// reload otherwise. r hears what is stopped.
func stopStray(ctx context.Context, sd Systemd, r Reporter, p *config.Project) error {
	loaded, err := sd.Loaded(ctx, []string{units.InstancePattern(p.Name)})
	if err != nil {
		return err
	}
	for _, u := range loaded {
		name, i, ok := units.ParseInstance(u.Name)
		if !ok || name != p.Name || i < p.Instances {
			continue
		}
		if !u.Down() {
			if err := sd.Stop(ctx, u.Name); err != nil {
				return err
			}
			say(r, "stopped %s: no longer part of %s", units.InstanceID(name, i), p.Name)
		}
		if err := sd.ResetFailed(ctx, u.Name); err != nil {
			return err
		}
	}
	probes, err := jobs.Probes(ctx, sd, p.Name, -1)
	if err != nil {
		return err
	}
	for _, pr := range probes {
		if _, i, _ := units.ParseProbe(pr); i >= p.Instances {
			if err := sd.Stop(ctx, pr); err != nil {
				return err
			}
		}
	}
	return stopStaleTimer(ctx, sd, r, p)
}

// privateWhat names what a project keeps in its private part.
func privateWhat(p *config.Project) string {
	switch {
	case len(p.Env) > 0 && p.Notify.Webhook != "":
		return "[env] and the webhook"
	case p.Notify.Webhook != "":
		return "the webhook"
	}
	return "[env]"
}

// rootHint adds "run it as root" to permission errors in scope l (in
// user scope: make ~/.bm2 yours).
func rootHint(l layout.Layout, err error) error {
	if errors.Is(err, fs.ErrPermission) && l.IsUser() {
		return withFix(err, "bm2 writes your projects under ~/.bm2: make it yours (chown -R $USER: ~/.bm2; chmod 0700 ~/.bm2)")
	}
	if errors.Is(err, fs.ErrPermission) {
		return withFix(err, "this needs root: run the command again with sudo")
	}
	return err
}
