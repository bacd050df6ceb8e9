// Package scope says which manager a command speaks to (system scope,
// root's /etc/bm2 and systemd; user scope, a user's ~/.bm2 and own
// systemd) and what that means for a project: the parse options, the
// ports a user shares with system projects, what a user is told of
// lingering and of a manager that is not running, and why a user's
// instances may have no MEM or CPU figures. It imports no command code.
package scope

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
)

// Refusal is a scope a command cannot run in: Usage when the command
// line asked for what cannot be (cli reports it as a usage error), Fix
// what the user can do about it.
type Refusal struct {
	Usage bool
	Fix   string
	Err   error
}

func (r *Refusal) Error() string { return r.Err.Error() }
func (r *Refusal) Unwrap() error { return r.Err }

// Choose is the layout a command runs in: the flag's, else system scope
// as root and the caller's own user scope for anyone else.
func Choose(choice layout.Kind) (layout.Layout, error) {
	root := os.Geteuid() == 0
	switch {
	case choice == layout.SystemScope:
		return layout.System(), nil
	case choice == layout.UserScope && root:
		return layout.Layout{}, &Refusal{Usage: true, Fix: "run bm2 as the user whose projects these are (for example `sudo -iu alice bm2 list`), or without --user for system scope",
			Err: fmt.Errorf("--user: root's projects are system projects (/etc/bm2); root has no user scope")}
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
		return layout.Layout{}, &Refusal{Fix: "give the account a home directory; `bm2 --system list` (or status, logs) reads system projects without one, and sudo bm2 manages them", Err: err}
	}
	return l, nil
}

// Of is a command's scope: l, or system scope when none was chosen.
func Of(l *layout.Layout) layout.Layout {
	if l == nil {
		return layout.System()
	}
	return *l
}

// Options are the parse options of scope l: a user scope's projects get
// its name and the lowest port it may bind (minPort, else the host's
// first unprivileged port).
func Options(l *layout.Layout, numCPU int, minPort *int) config.Options {
	o := config.Options{NumCPU: numCPU}
	if l != nil && l.IsUser() {
		min := layout.UnprivilegedPortStart()
		if minPort != nil {
			min = *minPort
		}
		o.User = &config.UserScope{Name: l.Name, MinPort: min}
	}
	return o
}

// SearchPath is where system projects are: path when set (tests), else
// config.DefaultSearchPath.
func SearchPath(path []string) []string {
	if path != nil {
		return path
	}
	return config.DefaultSearchPath
}

// SystemProjects counts the system scope's project files a user can see
// on path (SearchPath).
func SystemProjects(path []string) int {
	found := config.Discover(SearchPath(path))
	return len(found.Sources)
}

// SystemConflict is the system project (the ones in /etc/bm2 a user can
// read) whose port range overlaps p's, and both ranges: the ports are the
// host's, whichever manager runs the app. Extra ports count: a system
// project's are its to bind.
func SystemConflict(p *config.Project, path []string, numCPU int) (*config.Project, config.PortRange, config.PortRange, bool) {
	l := config.Load(SearchPath(path), config.Options{NumCPU: numCPU})
	for _, e := range l.Entries {
		h := e.Project
		if h == nil {
			continue
		}
		if pr, hr, ok := config.Overlap(p, h); ok {
			return h, pr, hr, true
		}
	}
	return nil, config.PortRange{}, config.PortRange{}, false
}

// SourceText names the file a project comes from, for a fix that edits
// it: its source (the bm2.toml bm2 serve read), else the project file.
func SourceText(l layout.Layout, p *config.Project) string {
	f := p.Source
	if f == "" {
		f = p.File
	}
	return l.Short(f)
}

// UserManagerHint is what to do when the user's own manager cannot be
// reached (user scope).
func UserManagerHint(l layout.Layout) string {
	return fmt.Sprintf("your user manager (user@%d.service) runs while you are logged in (ssh, console); `bm2 startup` turns lingering on, "+
		"which starts it now and at every boot; with su or sudo -u, log in with `su -l %s` or `machinectl shell %s@` instead, so that logind starts it", l.UID, l.Name, l.Name)
}

// UserNote is what serve says of a project it registers in user scope,
// which a user who meant the system's may not expect: whose systemd runs
// it, that root does not see it, and how to register it for the system
// instead.
func UserNote(l layout.Layout) string {
	return fmt.Sprintf("user scope (%s's own systemd: root's `bm2 list` does not show it; `sudo bm2 serve` registers it for the system)", l.Name)
}

// LingerNote says whether the user's projects outlive their sessions.
func LingerNote(l layout.Layout) string {
	if l.Lingering() {
		return "lingering is on for " + l.Name + ": your projects keep running after you log out, and start at boot"
	}
	return "lingering is off for " + l.Name + ": your projects stop when you log out and do not start at boot; `bm2 startup` turns it on"
}

// EnsureUserDirs makes, in user scope l, ~/.bm2 and its directories, the
// user's alone; in system scope it does nothing.
func EnsureUserDirs(l layout.Layout) error {
	if !l.IsUser() {
		return nil
	}
	for _, d := range []string{filepath.Join(l.Home, layout.DotDir), l.ConfigDir, l.StateDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create %s: %w", d, err)
		}
	}
	return nil
}

// Scope is the scope a command runs in, with what its project files are
// parsed with there and where a user scope finds the system's projects.
type Scope struct {
	// Chosen is the scope's layout; nil: none was chosen (system scope).
	Chosen *layout.Layout
	// NumCPU resolves instances = "max"; MinPort replaces the host's
	// first unprivileged port in user scope (tests).
	NumCPU  int
	MinPort *int
	// SystemPath is where user scope looks for system projects
	// (SearchPath: config.DefaultSearchPath when nil).
	SystemPath []string
}

// IsUser tells whether the command runs in user scope.
func (s Scope) IsUser() bool { return s.Chosen != nil && s.Chosen.IsUser() }

// Layout is the scope's layout (system scope when none was chosen).
func (s Scope) Layout() layout.Layout { return Of(s.Chosen) }

// Options are the parse options of the scope (Options).
func (s Scope) Options() config.Options { return Options(s.Chosen, s.NumCPU, s.MinPort) }

// SystemConflict is, in user scope, the system project whose port range
// overlaps p's, and both ranges (the package's SystemConflict); never in
// system scope.
func (s Scope) SystemConflict(p *config.Project) (*config.Project, config.PortRange, config.PortRange, bool) {
	if !s.IsUser() {
		return nil, config.PortRange{}, config.PortRange{}, false
	}
	return SystemConflict(p, s.SystemPath, s.NumCPU)
}
