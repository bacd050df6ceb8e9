package control

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/units"
)

// LeftSurge reports a surge that runs while no reload holds the project's
// lock (so one that a reload left behind); it changes nothing.
func (c *Client) LeftSurge(ctx context.Context, sd Systemd, p *config.Project) (view.UnitStatus, bool) {
	if p.Mode != config.Cluster {
		return view.UnitStatus{}, false
	}
	loaded, err := sd.Loaded(ctx, []string{units.Instance(p.Name, units.Surge)})
	if err != nil || len(loaded) == 0 || !view.SurgeActive(loaded[0]) || surgeRetiring(loaded[0]) {
		return view.UnitStatus{}, false
	}
	st, err := sd.Units(ctx, []string{loaded[0].Name})
	if err != nil {
		return view.UnitStatus{}, false
	}
	if l, holder, err := c.Projects().TryLockProject(p.Name); err == nil && l != nil {
		l.Unlock()
	} else if err == nil || holder > 0 {
		return view.UnitStatus{}, false // a reload runs: the surge is its business
	}
	return st[0], true
}

// retireSurge stops a surge left running by an interrupted or failed
// reload, unless a reload still holds the project's lock. start, restart
// and serve call it once the instances are online (never before: a surge
// may be the only listener of a one-instance project whose instance does
// not come back). The lock is scope l's; r hears of a retired surge.
func retireSurge(ctx context.Context, sd Systemd, l layout.Layout, r Reporter, p *config.Project) error {
	surge := units.Instance(p.Name, units.Surge)
	loaded, err := sd.Loaded(ctx, []string{surge})
	if err != nil || len(loaded) == 0 {
		return err
	}
	u := loaded[0]
	if u.ActiveState == "failed" {
		return sd.ResetFailed(ctx, surge)
	}
	if !view.SurgeActive(u) || surgeRetiring(u) {
		return nil
	}
	lock, _, err := registry.TryLockProject(l, p.Name)
	if err != nil || lock == nil {
		return rootHint(l, err) // a reload runs: the surge is its business
	}
	defer lock.Unlock()
	if err := sd.Stop(ctx, surge); err != nil {
		return err
	}
	if err := sd.ResetFailed(ctx, surge); err != nil {
		return err
	}
	say(r, "retired %s, left running by an interrupted bm2 reload", units.InstanceID(p.Name, units.Surge))
	return nil
}

// rolling is a rolling restart of a project's instances (reload, and
// serve of a changed file): the client it waits with, systemd, the
// project as it now is, and the timeout of each instance's wait.
type rolling struct {
	c       *Client
	sd      Systemd
	p       *config.Project
	timeout time.Duration
}

// roll restarts instances ids of p one at a time, each back before the
// next; in cluster mode the surge serves beside them meanwhile. It is the
// rolling restart of `bm2 reload` and of `bm2 serve` with a changed file.
//
// A cluster-mode reload keeps the port at full strength with the project's
// surge instance, bm2@<name>-surge.service: a generated unit like the
// others (same user, sandbox and settings, BM2_APP_INSTANCE=<instances>,
// BM2_APP_SURGE=1) that no target wants. The reload starts it with the
// new version, waits until it listens and is confirmed, restarts the
// instances one at a time, each back before the next, then retires it.
// While one instance restarts the surge serves in its place, so the port
// never has fewer than `instances` listeners, one instance included.
//
// There is no daemon to clean up after a reload that is interrupted (Ctrl-C,
// a dropped ssh, SIGKILL) or that stops at an instance that does not come
// back: the surge keeps serving, `bm2 list` shows it, and the next bm2
// command on the project retires it. A reload holds the project's reload
// lock (flock(2), released by the kernel however the process ends), so
// that no other command retires a surge a reload still needs.
func (r rolling) roll(ctx context.Context, ids []int) error {
	c, sd, p, timeout := r.c, r.sd, r.p, r.timeout
	surgeUp := false
	if ok, why, err := surgeFits(ctx, sd, c.Scope().Layout().Systemctl, p, ids); err != nil {
		return err
	} else if ok {
		if err := r.startSurge(ctx); err != nil {
			if ctx.Err() != nil {
				aside(c.Report, "interrupted while %s started; no instance was touched, and the next bm2 start, restart, reload or serve of %s retires it",
					units.InstanceID(p.Name, units.Surge), p.Name)
			}
			return err
		}
		surgeUp = true
	} else if why != "" {
		warn(c.Report, "no surge instance for this reload: %s; each instance's port has one listener fewer while it restarts", why)
	}
	target := units.Target(p.Name)
	for k, i := range ids {
		// The target and the instance in one read (their calls in
		// flight together): each step of a reload waits for it.
		ts, err := sd.Units(ctx, []string{target, units.Instance(p.Name, i)})
		// A project stopped meanwhile (bm2 stop, bm2 delete) stays stopped.
		if err == nil && ts[0].ActiveState != "active" {
			return fmt.Errorf("reload stopped: %s was stopped meanwhile (%s)", p.Name, ts[0].ActiveState)
		}
		if err == nil {
			err = waitingOn(c, sd).reloadInstance(ctx, p, i, ts[1], timeout)
		}
		if err != nil {
			left := ids[k+1:]
			var nb *notBackError
			switch {
			case ctx.Err() != nil:
				msg := "interrupted"
				if surgeUp {
					msg += fmt.Sprintf(": %s keeps serving; the next bm2 command on %s retires it", units.InstanceID(p.Name, units.Surge), p.Name)
				}
				aside(c.Report, "%s", msg)
				return err
			case !errors.As(err, &nb):
				return err // systemd refused, or the probe stopped the project
			}
			msg := err.Error()
			if len(left) > 0 {
				verb := "run"
				if len(left) == 1 {
					verb = "runs"
				}
				msg += fmt.Sprintf("\nreload stopped: %s still %s the previous version", wait.JoinIDs(p, left), verb)
			}
			if surgeUp {
				msg += fmt.Sprintf("\n%s keeps serving in its place (the new version); the next bm2 command on %s retires it",
					units.InstanceID(p.Name, units.Surge), p.Name)
			}
			return &notBackError{err: errors.New(msg), id: nb.id}
		}
	}
	if surgeUp {
		// Queued, not waited for: every instance runs the new version
		// now, and the surge's stop (it leaves the port's turn, drains,
		// then gets SIGTERM) is systemd's to finish, whatever becomes of
		// this command. A surge whose stop fails is left failed, and the
		// project's next start, restart, serve or reload resets it
		// (retireSurge, startSurge).
		if err := sd.StopQueued(ctx, units.Instance(p.Name, units.Surge)); err != nil {
			return err
		}
		say(c.Report, "%s retired", units.InstanceID(p.Name, units.Surge))
	}
	return nil
}

// surgeRetiring tells whether the surge is on its way out: its stop is
// under way (a reload retired it, or someone stopped it).
func surgeRetiring(u view.UnitStatus) bool { return u.ActiveState == "deactivating" }

// surgeFits tells whether the surge can serve beside the instances ids:
// the project is in cluster mode and has a surge unit, and every running
// instance listens on the same port in cluster mode (after a switch from
// fork mode, an old instance holds the port alone, and the surge could not
// join it). why says why not, "" for fork mode; systemctl is the scope's
// command, for the fix.
func surgeFits(ctx context.Context, sd Systemd, systemctl string, p *config.Project, ids []int) (bool, string, error) {
	if p.Mode != config.Cluster {
		return false, "", nil
	}
	if l, err := sd.Loaded(ctx, []string{units.Instance(p.Name, units.Surge)}); err != nil {
		return false, "", err
	} else if len(l) == 0 {
		// Asking for it by name would load the bare template: see
		// whether systemd has the generated drop-in.
		st, err := sd.Units(ctx, []string{units.Instance(p.Name, units.Surge)})
		if err != nil {
			return false, "", err
		}
		if st[0].LoadState != "loaded" || st[0].Env("BM2_APP_SURGE") != "1" {
			return false, fmt.Sprintf("systemd has no %s yet (bm2-generator older than this bm2? run %s daemon-reload)", units.Instance(p.Name, units.Surge), systemctl), nil
		}
	}
	names := make([]string, len(ids))
	for k, i := range ids {
		names[k] = units.Instance(p.Name, i)
	}
	statuses, err := sd.Units(ctx, names)
	if err != nil {
		return false, "", err
	}
	port := fmt.Sprint(p.Port)
	for _, u := range statuses {
		if u.MainPID == 0 {
			continue
		}
		if mode := u.Env("BM2_EXEC_MODE"); mode != "" && (mode != string(config.Cluster) || u.Env("BM2_APP_PORT") != port) {
			return false, fmt.Sprintf("%s still runs in %s mode on port %s", units.InstanceID(p.Name, mustIndex(u.Name)), mode, u.Env("BM2_APP_PORT")), nil
		}
	}
	return true, "", nil
}

// mustIndex is the index of an instance unit's name.
func mustIndex(unit string) int {
	_, i, _ := units.ParseInstance(unit)
	return i
}

// startSurge starts the surge with the new version and waits until it
// listens and is confirmed. If it does not come up, it is stopped again
// and no instance has been touched.
func (r rolling) startSurge(ctx context.Context) error {
	c, sd, p, timeout := r.c, r.sd, r.p, r.timeout
	surge := units.Instance(p.Name, units.Surge)
	before, err := sd.Units(ctx, []string{surge})
	if err != nil {
		return err
	}
	if before[0].LoadState != "loaded" {
		return fmt.Errorf("systemd has no %s (is bm2-generator installed? run %s daemon-reload)", surge, c.Scope().Layout().Systemctl)
	}
	w := wait.New(wait.UntilBack, p, []int{units.Surge}, c.Now())
	w.Back(before[0], true)
	// Restart, not start: a surge left by an interrupted reload runs the
	// version before, and must run the new one.
	err = waitingOn(c, sd).restartAndWait(ctx, w, "starting", timeout)
	if err == nil {
		return nil
	}
	if ctx.Err() == nil {
		_ = sd.Stop(ctx, surge)
		_ = sd.ResetFailed(ctx, surge)
	}
	var nb *notBackError
	if errors.As(err, &nb) {
		return &notBackError{err: fmt.Errorf("%w\nreload stopped before any instance was touched: every instance still runs the previous version", err), id: nb.id}
	}
	return err
}
