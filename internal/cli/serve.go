package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	fmode "github.com/bm2dev/bm2/internal/failure"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/units"
)

// serveFlags are bm2 serve's flags.
type serveFlags struct {
	timeout time.Duration
	// trustFile: the operator read the file and vouches for it; it may
	// ask root for anything, as root's own files may.
	trustFile bool
	// replace: take a name registered from another source.
	replace bool
}

// serve is `bm2 serve [dir]`.
func (a *App) serve(ctx context.Context, args []string, f serveFlags) error {
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
		return usageErr("serve", "%s is not a directory: bm2 serve takes the project dir that holds %s (or a project file)", dir, ProjectFileName)
	}

	// 1. Everything that can be refused is refused before anything changes.
	p, origin, err := a.dirProject(file, absDir)
	if err != nil {
		return err
	}
	if err := a.vouch(ctx, p, origin, f.trustFile); err != nil {
		return err
	}
	return a.serveProject(ctx, p, dir, f)
}

// serveProject registers and starts a project that was read and vouched
// for (serve, import --serve): from memory, never from a file read again.
// dir is how the project's directory was named, for hints.
func (a *App) serveProject(ctx context.Context, p *config.Project, dir string, f serveFlags) error {
	timeout := f.timeout
	if err := a.preflightErr(ctx, p); err != nil {
		return err
	}
	rc := a.checkRuntime(ctx, p)
	if !rc.OK() {
		if e, ok := fmode.Explain(rc.Reason, fmode.Facts{Project: p.Name, Runtime: string(p.Runtime), Detail: rc.Problem, Again: "`bm2 serve`"}); ok {
			return fail(ExitInvalid, hintOf(e), fmt.Errorf("%s: %s", e.Reason, e.Message))
		}
		return fail(ExitInvalid, jsruntime.Advice(p.Runtime)+"; `bm2 check` shows what bm2 finds", errors.New("runtime "+rc.Problem))
	}
	if p.RuntimePath == "" {
		p.RuntimePath = rc.Path
	}

	if err := a.checkRegistrable(p); err != nil {
		return err
	}

	// From the registry read to the generator's verdict on what was
	// written, no other command changes the registered projects (see
	// lockRegistry): two serves at once must not both pass the conflict
	// check. The lock is released once systemd has the project's units,
	// before its instances are started and waited for: that may take as
	// long as --timeout, it changes no file, and systemd orders the jobs
	// of concurrent commands itself.
	unlock, err := a.lockRegistry(ctx, timeout)
	if err != nil {
		return err
	}
	defer unlock()
	entries, _ := a.registry()
	if err := a.checkOwner(p, entries, f.replace); err != nil {
		return err
	}
	if err := config.CheckConflict(p, held(entries, p.Name)); err != nil {
		return conflictErr(err)
	}
	if err := a.checkSystemConflict(p); err != nil {
		return err
	}
	reg, err := a.registration(p)
	if err != nil {
		return err
	}
	changed := reg.changed

	// 2. systemd must be there before anything is written.
	sd, err := a.Connect(ctx)
	if err != nil {
		return fail(ExitNoSystemd, fmt.Sprintf("nothing was written; bm2 serve needs a running systemd (check the project with `bm2 check %s` meanwhile)", dir), err)
	}
	defer sd.Close()

	target := units.Target(p.Name)
	names := instanceNames(p)
	before, err := a.unitsBefore(ctx, sd, target, names)
	if err != nil {
		return err
	}
	stale := before[0].LoadState != "loaded"
	wasRunning := before[0].ActiveState == "active"
	allOnline := before[0].ActiveState == "active"
	for _, u := range before {
		stale = stale || u.NeedDaemonReload
	}
	online := map[string]bool{}
	for _, u := range before[1:] {
		s, _ := InstanceState(u)
		wasRunning = wasRunning || u.MainPID != 0 || s == StateOnline
		allOnline = allOnline && s == StateOnline
		online[u.Name] = s == StateOnline
	}

	// 3. Register.
	if changed {
		if err := reg.write(); err != nil {
			return a.rootHint(err)
		}
		verb := "registered"
		if reg.existed {
			verb = "updated"
		}
		if a.user() {
			fmt.Fprintf(a.Out, "%s %s for %s: %s\n", verb, p.File, a.layout().Describe(), a.summary(p))
		} else {
			fmt.Fprintf(a.Out, "%s %s: %s\n", verb, p.File, a.summary(p))
		}
		if reg.private != nil {
			who := "root"
			if a.user() {
				who = "you"
			}
			fmt.Fprintf(a.Out, "kept %s in %s, which only %s can read\n", privateWhat(p), config.PrivatePath(p.File), who)
		}
	} else {
		fmt.Fprintf(a.Out, "%s is up to date: %s\n", p.File, a.summary(p))
	}

	// 4. Let systemd see it, and make sure the generator took it: a
	// project it skipped has no target, and what serve wrote for it is
	// taken back. A reload that fails leaves the registration in place:
	// it passed every check, and the next daemon-reload loads it.
	if changed || stale {
		if err := sd.Reload(ctx); err != nil {
			return err
		}
		ts, err := sd.Units(ctx, []string{target})
		if err != nil {
			return err
		}
		if ts[0].LoadState != "loaded" {
			return a.skipped(ctx, sd, p, reg)
		}
	}
	if a.user() {
		// The user's manager started before bm2 was installed has not
		// started the notification path unit paths.target wants now.
		if err := sd.Start(ctx, "bm2-notify.path"); err != nil {
			fmt.Fprintf(a.Err, "bm2: warning: %v; notifications wait until your manager starts it (at your next login)\n", err)
		}
	}
	wasErrored, err := a.clearErrored(p.Name)
	if err != nil {
		return err
	}
	if err := a.clearInstanceMarks(p, nil); err != nil {
		return err
	}
	unlock()

	// 5. Start it.
	for _, n := range names {
		if err := sd.ResetFailed(ctx, n); err != nil {
			return err
		}
	}
	if err := a.stopStray(ctx, sd, p); err != nil {
		return err
	}
	switch {
	case (changed || stale) && wasRunning && !wasErrored:
		// A running project takes its new settings as `bm2 reload` does:
		// one instance at a time, each back before the next, so the port
		// never goes dark. Instances the new file adds start afterwards.
		fmt.Fprintf(a.Out, "rolling restart of %s, one instance at a time\n", p.Name)
		lock, lerr := a.lockProject(p.Name)
		if lerr != nil {
			return lerr
		}
		var ids []int
		for _, i := range allInstances(p) {
			if online[units.Instance(p.Name, i)] {
				ids = append(ids, i)
			}
		}
		rerr := a.roll(ctx, sd, p, ids, timeout)
		lock.unlock()
		if rerr != nil {
			return rerr
		}
		err = sd.Start(ctx, target)
	case (changed || stale) && wasRunning:
		fmt.Fprintf(a.Out, "restarting %s\n", target)
		err = sd.Restart(ctx, target)
	case allOnline && !wasErrored:
		// Already running as registered: nothing to do.
	default:
		if err := a.stopIdleProbes(ctx, sd, p, allInstances(p)); err != nil {
			return err
		}
		fmt.Fprintf(a.Out, "starting %s\n", target)
		err = sd.Start(ctx, target)
	}
	if err := a.startErr(p.Name, err); err != nil {
		return err
	}
	if err := a.waitOnline(ctx, sd, p, allInstances(p), timeout, "serve"); err != nil {
		return err
	}
	fmt.Fprintf(a.Out, "%s %s: %s\n", p.Name, readyWord(p), summaryTail(p))
	if err := a.retireSurge(ctx, sd, p); err != nil {
		return err
	}
	if a.user() {
		fmt.Fprintln(a.Out, a.lingerNote())
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
	return fail(ExitInvalid, hint, err)
}

// skipped is serve's error when systemd has no target for p after the
// daemon-reload: the generator skipped the project (a file written behind
// bm2's back that takes its ports, say). What serve wrote is taken back
// first, the previous registration put back if there was one, and systemd
// reloaded again, so that a failed serve leaves the registry as it found
// it. The error is the generator's reason when bm2 can tell it (the same
// port conflict a serve run after the other file was written reports).
func (a *App) skipped(ctx context.Context, sd Systemd, p *config.Project, reg *registration) error {
	var reason error
	_, l := a.registry()
	if e, ok := l.Find(p.Name); ok && e.Err != nil && filepath.Clean(e.Path) == filepath.Clean(p.File) {
		reason = e.Err
	}
	if reg.changed {
		// Taken back even when the command was interrupted meanwhile.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), defaultTimeout)
		defer cancel()
		err := reg.undo()
		if err == nil {
			err = sd.Reload(ctx)
		}
		if err != nil {
			why := "bm2-generator skipped it"
			if reason != nil {
				why = reason.Error()
			}
			return fmt.Errorf("systemd has no units for %s after daemon-reload (%s), and taking back %s failed: %w", p.Name, why, p.File, err)
		}
		if reg.existed {
			fmt.Fprintf(a.Out, "put the previous %s back: systemd did not take the new one\n", p.File)
		} else {
			fmt.Fprintf(a.Out, "removed %s again: systemd did not take it\n", p.File)
		}
	}
	if errors.Is(reason, config.ErrConflict) {
		return conflictErr(reason)
	}
	if reason != nil {
		return fail(ExitCode(reason), "`bm2 check "+p.File+"` shows the problem", reason)
	}
	return fail(ExitFailure, "`journalctl -b -t bm2` shows why bm2-generator skipped it",
		fmt.Errorf("systemd has no units for %s after daemon-reload: bm2-generator skipped %s", p.Name, p.File))
}

// readyWord is what serve, start and reload say of a project whose
// instances all came up: online, and in cluster mode confirmed by the
// reusePort probe.
func readyWord(p *config.Project) string {
	if p.Mode == config.Cluster {
		return "online and confirmed"
	}
	return "online"
}

// unitsBefore reads the target's state and its instances'. Instances of a
// project systemd has no target for are only asked about when systemd has
// them loaded anyway: asking loads the bare template, and systemd logs
// that it has no ExecStart= into the instance's log.
func (a *App) unitsBefore(ctx context.Context, sd Systemd, target string, names []string) ([]UnitStatus, error) {
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

// summaryTail is the end of serve's final line.
func summaryTail(p *config.Project) string {
	return fmt.Sprintf("%s x %s on port %s, runtime %s (%s); `bm2 list` shows it, `bm2 logs %s` its output",
		fmt.Sprint(p.Instances), p.Mode, portText(p), p.Runtime, p.RuntimeCommand(), p.Name)
}

func portText(p *config.Project) string {
	r := p.Ports()
	if r.Lo == r.Hi {
		return fmt.Sprint(r.Lo)
	}
	return r.String()
}

// checkRegistrable makes sure the file serve writes is the one systemd
// will read: the config dir is on the search path and no file of the same
// name comes before it.
func (a *App) checkRegistrable(p *config.Project) error {
	sp := a.searchPath()
	idx := -1
	for i, d := range sp {
		if filepath.Clean(d) == filepath.Clean(a.Paths.ConfigDir) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return fail(ExitFailure, "unset $"+config.SearchPathEnv+", or include "+a.Paths.ConfigDir+" in it",
			fmt.Errorf("%s is not on the project search path (%s), so the generator would never read %s",
				a.Paths.ConfigDir, strings.Join(sp, ":"), p.File))
	}
	for _, d := range sp[:idx] {
		f := filepath.Join(d, p.Name+".toml")
		if _, err := os.Lstat(f); err == nil {
			return fail(ExitFailure, fmt.Sprintf("remove %s first, or manage project %s through it", f, p.Name),
				fmt.Errorf("project %s is defined by %s, which comes before %s on the search path and would hide %s",
					p.Name, f, a.Paths.ConfigDir, p.File))
		}
	}
	return nil
}

// stopStray stops instances a project no longer has (instances was
// lowered), and their reusePort probes: systemd keeps them running after
// the reload otherwise.
func (a *App) stopStray(ctx context.Context, sd Systemd, p *config.Project) error {
	loaded, err := sd.Loaded(ctx, []string{units.InstancePattern(p.Name)})
	if err != nil {
		return err
	}
	for _, u := range loaded {
		name, i, ok := units.ParseInstance(u.Name)
		if !ok || name != p.Name || i < p.Instances {
			continue
		}
		if u.ActiveState != "inactive" && u.ActiveState != "failed" {
			if err := sd.Stop(ctx, u.Name); err != nil {
				return err
			}
			fmt.Fprintf(a.Out, "stopped %s: no longer part of %s\n", units.InstanceID(name, i), p.Name)
		}
		if err := sd.ResetFailed(ctx, u.Name); err != nil {
			return err
		}
	}
	probes, err := a.loadedProbes(ctx, sd, p.Name, -1)
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
	return nil
}

func instanceNames(p *config.Project) []string {
	names := make([]string, p.Instances)
	for i := range names {
		names[i] = units.Instance(p.Name, i)
	}
	return names
}

func allInstances(p *config.Project) []int {
	ids := make([]int, p.Instances)
	for i := range ids {
		ids[i] = i
	}
	return ids
}

// registration is what bm2 serve writes for a project: the project file,
// which every user may read, and its private part ([env] and the webhook),
// which only root may (config.Marshal).
type registration struct {
	p               *config.Project
	public, private []byte
	oldPublic       []byte      // what the project file held before, if it existed
	oldMode         os.FileMode // and its mode
	oldPrivate      []byte      // what the private part held before, nil if none
	existed         bool        // the project file was there before
	changed         bool
}

// registration works out what to write for p and whether anything
// changes. A hand-written file that means the same is left alone, unless
// it holds secrets every user may read: those move to the private part.
func (a *App) registration(p *config.Project) (*registration, error) {
	r := &registration{p: p}
	r.public, r.private = config.Marshal(p)
	src := config.Source{Path: p.File, Data: r.public, PrivatePath: config.PrivatePath(p.File), PrivateData: r.private}
	if q, err := config.ParseSource(src, a.configOptions()); err != nil || !config.Equal(p, q) {
		return nil, fmt.Errorf("internal error: the registered files would not read back as the project (%v); please report this", err)
	}
	old, err := os.ReadFile(p.File)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, a.rootHint(fmt.Errorf("read %s: %w", p.File, err))
	}
	r.existed = err == nil
	if r.existed {
		r.oldPublic, r.oldMode = old, 0o644
		if st, err := os.Stat(p.File); err == nil {
			r.oldMode = st.Mode().Perm()
		}
	}
	r.oldPrivate, err = os.ReadFile(src.PrivatePath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, a.rootHint(fmt.Errorf("read %s: %w", src.PrivatePath, err))
	}
	r.changed = !bytes.Equal(old, r.public) || !bytes.Equal(r.oldPrivate, r.private)
	if r.changed && r.existed {
		oldSrc := config.Source{Path: p.File, Data: old, PrivatePath: src.PrivatePath, PrivateData: r.oldPrivate}
		if q, err := config.ParseSource(oldSrc, a.configOptions()); err == nil && !q.SecretsInFile {
			if q.Source == "" {
				// Registered before bm2 recorded the source, from where
				// this one comes (checkOwner): not a change to restart for.
				q.Source = p.Source
			}
			if config.Equal(p, q) {
				r.changed = false
			}
		}
	}
	return r, nil
}

// write registers the project: the private part first (so the project
// file never names secrets that are not in place), then the project file;
// if that fails, the private part is put back as it was.
func (r *registration) write() error {
	priv := config.PrivatePath(r.p.File)
	if r.private != nil {
		if err := os.MkdirAll(filepath.Dir(priv), 0o700); err != nil {
			return fmt.Errorf("create %s: %w", filepath.Dir(priv), err)
		}
		if err := safefs.Write(priv, r.private, 0o600); err != nil {
			return fmt.Errorf("write %s: %w", priv, err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(r.p.File), 0o755); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(r.p.File), err)
	}
	if err := safefs.Write(r.p.File, r.public, 0o644); err != nil {
		if r.oldPrivate != nil {
			_ = safefs.Write(priv, r.oldPrivate, 0o600)
		} else if r.private != nil {
			_ = safefs.Remove(priv)
		}
		return fmt.Errorf("write %s: %w", r.p.File, err)
	}
	if r.private == nil && r.oldPrivate != nil {
		if err := safefs.Remove(priv); err != nil {
			return fmt.Errorf("remove %s: %w", priv, err)
		}
	}
	return nil
}

// undo takes back what write did: the previous project file and private
// part are put back, or removed when there were none. The private part
// goes first when a project file stays and last when it goes, in the
// order write keeps: no project file is left naming secrets that are not
// in place.
func (r *registration) undo() error {
	priv := config.PrivatePath(r.p.File)
	restorePrivate := func() error {
		switch {
		case r.oldPrivate != nil:
			if err := safefs.Write(priv, r.oldPrivate, 0o600); err != nil {
				return fmt.Errorf("write %s: %w", priv, err)
			}
		case r.private != nil:
			if err := safefs.Remove(priv); err != nil {
				return fmt.Errorf("remove %s: %w", priv, err)
			}
		}
		return nil
	}
	if !r.existed {
		if err := safefs.Remove(r.p.File); err != nil {
			return fmt.Errorf("remove %s: %w", r.p.File, err)
		}
		return restorePrivate()
	}
	if err := restorePrivate(); err != nil {
		return err
	}
	if err := safefs.Write(r.p.File, r.oldPublic, r.oldMode); err != nil {
		return fmt.Errorf("write %s: %w", r.p.File, err)
	}
	return nil
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

// rootHint adds "run it as root" to permission errors.
func (a *App) rootHint(err error) error {
	if errors.Is(err, fs.ErrPermission) && a.user() {
		return withHint(err, "bm2 writes your projects under ~/.bm2: make it yours (chown -R $USER: ~/.bm2; chmod 0700 ~/.bm2)")
	}
	if errors.Is(err, fs.ErrPermission) {
		return withHint(err, "this needs root: run the command again with sudo")
	}
	return err
}

// clearErrored removes a project's errored mark, saying so, and reports
// whether there was one.
func (a *App) clearErrored(name string) (bool, error) {
	reason, errored, err := a.erroredMark(name)
	if err != nil {
		return false, fmt.Errorf("read errored state of %s: %w", name, err)
	}
	if !errored {
		return false, nil
	}
	if err := a.state().ClearErrored(name); err != nil {
		return false, a.rootHint(err)
	}
	fmt.Fprintf(a.Out, "cleared errored state of %s (was: %s)\n", name, reason)
	return true, nil
}

// startErr filters the error of a start job. When the reusePort probe stops
// the project while its start job still waits (it replaces that job), the
// job ends "canceled"; the project is then errored, and waitOnline explains
// why better than "job canceled" would.
func (a *App) startErr(project string, err error) error {
	if err == nil {
		return nil
	}
	if _, errored, _ := a.erroredMark(project); errored {
		return nil
	}
	return err
}
