package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
)

// Scope flags, accepted before or after the command (bm2 --user list,
// bm2 list --user).
const (
	flagUser   = "--user"
	flagSystem = "--system"
)

// takeScope removes the scope flags from a command line (up to a "--")
// and says which was given: "", "user" or "system".
func takeScope(args []string) (rest []string, choice scope.Kind, err error) {
	rest = make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		switch a {
		case flagUser, flagSystem:
			k := scope.User
			if a == flagSystem {
				k = scope.System
			}
			if choice != "" && choice != k {
				return nil, "", usageErr("", "--user and --system exclude each other")
			}
			choice = k
		default:
			rest = append(rest, a)
		}
	}
	return rest, choice, nil
}

// chooseScope is the layout a command runs in: the flag's, else system
// scope as root and the caller's own user scope for anyone else.
func chooseScope(choice scope.Kind) (scope.Layout, error) {
	root := os.Geteuid() == 0
	switch {
	case choice == scope.System:
		return scope.SystemLayout(), nil
	case choice == scope.User && root:
		return scope.Layout{}, fail(ExitUsage, "run bm2 as the user whose projects these are (for example `sudo -iu alice bm2 list`), or without --user for system scope",
			fmt.Errorf("--user: root's projects are system projects (/etc/bm2); root has no user scope"))
	case root:
		return scope.SystemLayout(), nil
	}
	l, err := scope.Self()
	if err != nil && choice == "" {
		// An account without a home (nobody, a service account) has no
		// projects of its own: it reads the system's, as before user
		// scope existed.
		return scope.SystemLayout(), nil
	}
	if err != nil {
		return scope.Layout{}, fail(ExitFailure, "give the account a home directory; `bm2 --system list` (or status, logs) reads system projects without one, and sudo bm2 manages them", err)
	}
	return l, nil
}

// user tells whether the command runs in user scope.
func (a *App) user() bool { return a.Layout != nil && a.Layout.IsUser() }

// layout is the command's scope (system scope when none was chosen).
func (a *App) layout() scope.Layout {
	if a.Layout == nil {
		return scope.SystemLayout()
	}
	return *a.Layout
}

// configOptions are the parse options of the scope.
func (a *App) configOptions() config.Options {
	o := config.Options{NumCPU: a.NumCPU}
	if a.user() {
		min := scope.UnprivilegedPortStart()
		if a.MinPort != nil {
			min = *a.MinPort
		}
		o.User = &config.UserScope{Name: a.Layout.Name, MinPort: min}
	}
	return o
}

// projectDirOptions are the parse options of a project dir's bm2.toml.
func (a *App) projectDirOptions(dir string) config.Options {
	o := a.configOptions()
	o.Cwd, o.AnyName = dir, true
	return o
}

// uidString is the scope's UID in decimal, for journal matches.
func (a *App) uidString() string { return strconv.Itoa(a.layout().UID) }

// decode reads one of bm2's events back from an entry, believing only
// the scope's own writers (journal.TrustedFrom).
func (a *App) decode(e journal.Entry) (journal.Event, bool) {
	return journal.DecodeFrom(e, a.uidString())
}

// systemctl is the scope's systemctl, for hints.
func (a *App) systemctl() string { return a.layout().Systemctl() }

// journalctlUnit is the scope's journalctl for one unit, for hints.
func (a *App) journalctlUnit(unit string) string {
	if a.user() {
		return "journalctl --user-unit " + unit
	}
	return "journalctl -u " + unit
}

// userDefaults are the Env defaults of user scope.
func (e *Env) userDefaults() {
	l := *e.Layout
	if e.Connect == nil {
		e.Connect = func(ctx context.Context) (Systemd, error) {
			c, err := sysd.ConnectUser(ctx, l.PrivateSocket())
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	}
	if e.LookupUser == nil {
		e.LookupUser = func(ctx context.Context, name, group string) (identity.Identity, error) {
			id := identity.Self()
			id.Name = l.Name
			return id, nil
		}
	}
	if e.Security == nil {
		e.Security = func(ctx context.Context, unit string) (string, error) {
			return securityScoreArgs(ctx, unit, "--user")
		}
	}
	if e.Journal == nil {
		uid := strconv.Itoa(l.UID)
		e.Journal = func(ctx context.Context, unit string, n int) ([]string, error) {
			lines, err := journalctl(ctx, "_SYSTEMD_USER_UNIT="+unit, "_UID="+uid, "-n", fmt.Sprint(n))
			if err == nil && len(lines) > 0 {
				return lines, nil
			}
			return journalctl(ctx, "--user-unit", unit, "-n", fmt.Sprint(n))
		}
	}
}

// scopedJournal makes every journal query of user scope the user's own
// (journal.Query.User).
func scopedJournal(read func(context.Context, journal.Query, func(journal.Entry) error) error, uid string) func(context.Context, journal.Query, func(journal.Entry) error) error {
	return func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error {
		q.User = uid
		return read(ctx, q, each)
	}
}

// userManagerHint is what to do when the user's own manager cannot be
// reached (user scope).
func (a *App) userManagerHint() string {
	l := a.layout()
	return fmt.Sprintf("your user manager (user@%d.service) runs while you are logged in (ssh, console), or always with lingering on: `bm2 startup`; "+
		"with su or sudo -u, log in with `su -l %s` or `machinectl shell %s@` instead, so that logind starts it", l.UID, l.Name, l.Name)
}

// systemProjects counts the system scope's project files a user can see.
func (a *App) systemProjects() int {
	found := config.Discover(a.systemSearchPath())
	return len(found.Sources)
}

// systemSearchPath is where system projects are (Env.SystemSearchPath in
// tests).
func (a *App) systemSearchPath() []string {
	if a.SystemSearchPath != nil {
		return a.SystemSearchPath
	}
	return config.DefaultSearchPath
}

// securityScoreArgs is securityScore with extra systemd-analyze flags.
func securityScoreArgs(ctx context.Context, unit string, extra ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	args := append(append([]string{"security", "--no-pager"}, extra...), unit)
	cmd := exec.CommandContext(ctx, "systemd-analyze", args...)
	cmd.Env = append(os.Environ(), "SYSTEMD_COLORS=0", "SYSTEMD_PAGER=")
	out, err := cmd.Output()
	if m := exposureRE.FindSubmatch(out); m != nil {
		return string(m[1]), nil
	}
	if err == nil {
		err = fmt.Errorf("no exposure level in its output")
	}
	return "", fmt.Errorf("systemd-analyze %s: %w", strings.Join(args, " "), err)
}

// checkSystemConflict refuses, in user scope, a project whose port range
// overlaps a system project's (the ones in /etc/bm2 a user can read): the
// ports are the host's, whichever manager runs the app.
func (a *App) checkSystemConflict(p *config.Project) error {
	if !a.user() {
		return nil
	}
	l := config.Load(a.systemSearchPath(), config.Options{NumCPU: a.NumCPU})
	for _, e := range l.Entries {
		h := e.Project
		if h == nil {
			continue
		}
		// Extra ports count: a system project's are its to bind.
		pr, hr, ok := config.Overlap(p, h)
		if !ok {
			continue
		}
		return fail(ExitInvalid, fmt.Sprintf("choose another port in %s: the system project %s is root's (`bm2 --system list` shows it)", p.File, h.Name),
			fmt.Errorf("%w: %s port range %s overlaps system project %s %s (%s)", config.ErrConflict, p.Name, pr, h.Name, hr, h.File))
	}
	return nil
}

// lingerNote says whether the user's projects outlive their sessions.
func (a *App) lingerNote() string {
	l := a.layout()
	if l.Lingering() {
		return "lingering is on for " + l.Name + ": your projects keep running after you log out, and start at boot"
	}
	return "lingering is off for " + l.Name + ": your projects stop when you log out and do not start at boot; `bm2 startup` turns it on"
}

// ensureUserDirs makes ~/.bm2 and its directories, the user's alone.
func (a *App) ensureUserDirs() error {
	if !a.user() {
		return nil
	}
	l := a.layout()
	for _, d := range []string{filepath.Join(l.Home, scope.Dir), a.Paths.ConfigDir, a.Paths.StateDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return a.rootHint(fmt.Errorf("create %s: %w", d, err))
		}
	}
	return nil
}
