package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/config"
	"github.com/bm2dev/bm2/units"
)

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

// projectLock is the flock of one project's reload.
type projectLock struct{ f *os.File }

func (l *projectLock) unlock() {
	if l != nil && l.f != nil {
		l.f.Close() // releases the flock
	}
}

// lockPath is the lock file of a project's reloads.
func (a *App) lockPath(name string) string {
	return filepath.Join(a.Paths.StateDir, "reload", name+".lock")
}

// tryLockProject takes the project's reload lock without waiting. held is
// false (and the lock nil) when another command has it; holder is then
// the pid it wrote, when known.
func (a *App) tryLockProject(name string) (l *projectLock, holder int, err error) {
	path := a.lockPath(name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, 0, rootHint(fmt.Errorf("create %s: %w", filepath.Dir(path), err))
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, 0, rootHint(fmt.Errorf("open %s: %w", path, err))
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		data, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			return nil, pid, nil
		}
		return nil, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &projectLock{f: f}, 0, nil
}

// lockProject takes the reload lock or says who has it.
func (a *App) lockProject(name string) (*projectLock, error) {
	l, holder, err := a.tryLockProject(name)
	if err != nil || l != nil {
		return l, err
	}
	who := "another bm2 command"
	if holder > 0 {
		who += fmt.Sprintf(" (pid %d)", holder)
	}
	return nil, fail(ExitFailure, "wait for it to finish, then try again",
		fmt.Errorf("%s is reloading %s", who, name))
}

// surgeActive tells whether the surge unit has a run or a job.
func surgeActive(u UnitStatus) bool {
	return u.LoadState == "loaded" && u.ActiveState != "inactive" && u.ActiveState != "failed" || u.JobPending
}

// retireSurge stops a surge left running by an interrupted or failed
// reload, unless a reload still holds the project's lock. Commands on the
// project call it first.
func (a *App) retireSurge(ctx context.Context, sd Systemd, p *config.Project) error {
	surge := units.Instance(p.Name, units.Surge)
	loaded, err := sd.Loaded(ctx, []string{surge})
	if err != nil || len(loaded) == 0 {
		return err
	}
	u := loaded[0]
	if u.ActiveState == "failed" {
		return sd.ResetFailed(ctx, surge)
	}
	if !surgeActive(u) {
		return nil
	}
	l, _, err := a.tryLockProject(p.Name)
	if err != nil || l == nil {
		return err // a reload runs: the surge is its business
	}
	defer l.unlock()
	if err := sd.Stop(ctx, surge); err != nil {
		return err
	}
	if err := sd.ResetFailed(ctx, surge); err != nil {
		return err
	}
	fmt.Fprintf(a.Out, "retired %s, left running by an interrupted bm2 reload\n", units.InstanceID(p.Name, units.Surge))
	return nil
}

// roll restarts instances ids of p one at a time, each back before the
// next; in cluster mode the surge serves beside them meanwhile. It is the
// rolling restart of `bm2 reload` and of `bm2 serve` with a changed file.
func (a *App) roll(ctx context.Context, sd Systemd, p *config.Project, ids []int, timeout time.Duration) error {
	surgeUp := false
	if p.Mode == config.Cluster {
		if err := a.startSurge(ctx, sd, p, timeout); err != nil {
			return err
		}
		surgeUp = true
	}
	for k, i := range ids {
		if err := a.reloadInstance(ctx, sd, p, i, timeout); err != nil {
			left := ids[k+1:]
			var nb *notBackError
			switch {
			case ctx.Err() != nil:
				msg := "interrupted"
				if surgeUp {
					msg += fmt.Sprintf(": %s keeps serving; the next bm2 command on %s retires it", units.InstanceID(p.Name, units.Surge), p.Name)
				}
				fmt.Fprintf(a.Err, "bm2: %s\n", msg)
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
				msg += fmt.Sprintf("\nreload stopped: %s still %s the previous version", joinIDs(p, left), verb)
			}
			if surgeUp {
				msg += fmt.Sprintf("\n%s keeps serving in its place (the new version); the next bm2 command on %s retires it",
					units.InstanceID(p.Name, units.Surge), p.Name)
			}
			return &notBackError{err: errors.New(msg), id: nb.id}
		}
	}
	if surgeUp {
		surge := units.Instance(p.Name, units.Surge)
		if err := sd.Stop(ctx, surge); err != nil {
			return err
		}
		if err := sd.ResetFailed(ctx, surge); err != nil {
			return err
		}
		fmt.Fprintf(a.Out, "%s retired\n", units.InstanceID(p.Name, units.Surge))
	}
	return nil
}

// startSurge starts the surge with the new version and waits until it
// listens and is confirmed. If it does not come up, it is stopped again
// and no instance has been touched.
func (a *App) startSurge(ctx context.Context, sd Systemd, p *config.Project, timeout time.Duration) error {
	surge := units.Instance(p.Name, units.Surge)
	before, err := sd.Units(ctx, []string{surge})
	if err != nil {
		return err
	}
	if before[0].LoadState != "loaded" {
		return fmt.Errorf("systemd has no %s (is bm2-generator installed? run systemctl daemon-reload)", surge)
	}
	w := newWaiter(untilBack, p, []int{units.Surge}, a.Now())
	w.before = before[0]
	w.checkListen = true
	fmt.Fprintf(a.Out, "%s starting… ", units.InstanceID(p.Name, units.Surge))
	w.lineOpen = true
	err = func() error {
		defer func() {
			for _, o := range w.closeLine() {
				fmt.Fprint(a.Out, o)
			}
		}()
		if err := sd.ResetFailed(ctx, surge); err != nil {
			return err
		}
		// A surge left by an interrupted reload runs the version before:
		// restart it with the new one.
		if err := sd.Restart(ctx, surge); err != nil {
			return err
		}
		return a.wait(ctx, sd, w, timeout, "reload")
	}()
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
