package control

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
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
)

// ChooseScope is the layout a command runs in: the flag's, else system
// scope as root and the caller's own user scope for anyone else.
func ChooseScope(choice layout.Kind) (layout.Layout, error) {
	root := os.Geteuid() == 0
	switch {
	case choice == layout.SystemScope:
		return layout.System(), nil
	case choice == layout.UserScope && root:
		return layout.Layout{}, fail(BadArg, "run bm2 as the user whose projects these are (for example `sudo -iu alice bm2 list`), or without --user for system scope",
			fmt.Errorf("--user: root's projects are system projects (/etc/bm2); root has no user scope"))
	case root:
		return layout.System(), nil
	}
	l, err := layout.Self()
	if err != nil && choice == "" {
		// An account without a home (nobody, a service account) has no
		// projects of its own: it reads the system's, as before user
		// scope existed.
		return layout.System(), nil
	}
	if err != nil {
		return layout.Layout{}, fail(Failed, "give the account a home directory; `bm2 --system list` (or status, logs) reads system projects without one, and sudo bm2 manages them", err)
	}
	return l, nil
}

// IsUser tells whether the command runs in user scope.
func (c *Client) IsUser() bool { return c.Layout != nil && c.Layout.IsUser() }

// ScopeLayout is the command's scope (system scope when none was chosen).
func (c *Client) ScopeLayout() layout.Layout {
	if c.Layout == nil {
		return layout.System()
	}
	return *c.Layout
}

// ConfigOptions are the parse options of the scope.
func (c *Client) ConfigOptions() config.Options {
	o := config.Options{NumCPU: c.NumCPU}
	if c.IsUser() {
		min := layout.UnprivilegedPortStart()
		if c.MinPort != nil {
			min = *c.MinPort
		}
		o.User = &config.UserScope{Name: c.Layout.Name, MinPort: min}
	}
	return o
}

// projectDirOptions are the parse options of a project dir's bm2.toml.
func (c *Client) projectDirOptions(dir string) config.Options {
	o := c.ConfigOptions()
	o.Cwd, o.AnyName = dir, true
	return o
}

// uidString is the scope's UID in decimal, for journal matches.
func (c *Client) uidString() string { return strconv.Itoa(c.ScopeLayout().UID) }

// Decode reads one of bm2's events back from an entry, believing only
// the scope's own writers (journal.TrustedFrom).
func (c *Client) Decode(e journal.Entry) (journal.Event, bool) {
	return journal.DecodeFrom(e, c.uidString())
}

// Systemctl is the scope's systemctl, for hints.
func (c *Client) Systemctl() string { return c.ScopeLayout().Systemctl }

// JournalctlUnit is the scope's journalctl for one unit, for hints.
func (c *Client) JournalctlUnit(unit string) string { return c.ScopeLayout().JournalUnit + " " + unit }

// userDefaults are the Env defaults of user scope.
func (e *Env) userDefaults() {
	l := *e.Layout
	if e.Connect == nil {
		e.Connect = func(ctx context.Context) (Systemd, error) {
			c, err := sysd.ConnectUser(ctx, l.PrivateSocket)
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

// UserManagerHint is what to do when the user's own manager cannot be
// reached (user scope).
func (c *Client) UserManagerHint() string {
	l := c.ScopeLayout()
	return fmt.Sprintf("your user manager (user@%d.service) runs while you are logged in (ssh, console); `bm2 startup` turns lingering on, "+
		"which starts it now and at every boot; with su or sudo -u, log in with `su -l %s` or `machinectl shell %s@` instead, so that logind starts it", l.UID, l.Name, l.Name)
}

// SystemProjects counts the system scope's project files a user can see.
func (c *Client) SystemProjects() int {
	found := config.Discover(c.systemSearchPath())
	return len(found.Sources)
}

// systemSearchPath is where system projects are (Env.SystemSearchPath in
// tests).
func (c *Client) systemSearchPath() []string {
	if c.SystemSearchPath != nil {
		return c.SystemSearchPath
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
// ports are the host's, whichever manager runs the app. The fix names the
// file the project comes from (its bm2.toml), not the registered file,
// which a project not registered yet does not have.
func (c *Client) checkSystemConflict(p *config.Project) error {
	if !c.IsUser() {
		return nil
	}
	l := config.Load(c.systemSearchPath(), config.Options{NumCPU: c.NumCPU})
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
		return fail(Invalid, fmt.Sprintf("choose another port in %s: the system project %s is root's (`bm2 --system list` shows it)", c.sourceText(p), h.Name),
			fmt.Errorf("%w: %s port range %s overlaps system project %s %s (%s)", config.ErrConflict, p.Name, pr, h.Name, hr, h.File))
	}
	return nil
}

// CheckSystemConflict is checkSystemConflict, for bm2 check.
func (c *Client) CheckSystemConflict(p *config.Project) error { return c.checkSystemConflict(p) }

// sourceText names the file a project comes from, for a fix that edits
// it: its source (the bm2.toml bm2 serve read), else the project file.
func (c *Client) sourceText(p *config.Project) string {
	f := p.Source
	if f == "" {
		f = p.File
	}
	return c.ScopeLayout().Short(f)
}

// UserScopeNote is what serve says of a project it registers in user
// scope, which a user who meant the system's may not expect: whose
// systemd runs it, that root does not see it, and how to register it for
// the system instead.
func (c *Client) UserScopeNote() string {
	l := c.ScopeLayout()
	return fmt.Sprintf("user scope (%s's own systemd: root's `bm2 list` does not show it; `sudo bm2 serve` registers it for the system)", l.Name)
}

// lingerNote says whether the user's projects outlive their sessions.
func (c *Client) lingerNote() string {
	l := c.ScopeLayout()
	if l.Lingering() {
		return "lingering is on for " + l.Name + ": your projects keep running after you log out, and start at boot"
	}
	return "lingering is off for " + l.Name + ": your projects stop when you log out and do not start at boot; `bm2 startup` turns it on"
}

// ensureUserDirs makes ~/.bm2 and its directories, the user's alone.
func (c *Client) ensureUserDirs() error {
	if !c.IsUser() {
		return nil
	}
	l := c.ScopeLayout()
	for _, d := range []string{filepath.Join(l.Home, layout.DotDir), c.Layout.ConfigDir, c.Layout.StateDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return c.rootHint(fmt.Errorf("create %s: %w", d, err))
		}
	}
	return nil
}
