package layout

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/state"
)

// Kind is system or user.
type Kind string

const (
	SystemScope Kind = "system" // root, the system manager
	UserScope   Kind = "user"   // a normal user's own systemd --user
)

// ScopeEnv names the environment variable systemd sets for generators
// (systemd.generator(7), since systemd 251): "system" or "user".
const ScopeEnv = "SYSTEMD_SCOPE"

// Layout is where one scope keeps everything.
type Layout struct {
	Kind Kind
	UID  int    // 0 in system scope
	Name string // the user's name ("root" in system scope)
	Home string // the user's home ("" in system scope)

	SearchPath []string // where project files are found, highest priority first
	ConfigDir  string   // where bm2 serve registers project files
	StateDir   string   // errored marks, reload locks
	// RunStateDir is where the scope keeps state that must not outlive a
	// boot (an instance's errored mark): /run/bm2, or the user's
	// $XDG_RUNTIME_DIR/bm2.
	RunStateDir string
	LockFile    string // held while the registered projects change
	// NotifyDir is the notification spool, the scope's alone (0700):
	// events wait there for bm2-notify.service to deliver them.
	NotifyDir string
	// EventsDir is the relay's spool, the scope's alone (0700), on tmpfs:
	// the exit hook and the port fence, which run in an instance's
	// cgroup, leave their events there for the next probe (or the
	// failure hook, or bm2-events.service) to send to journald from its
	// own (package relay). /run/bm2/events, or the user's
	// $XDG_RUNTIME_DIR/bm2/events; bm2-probe@.service makes it
	// (RuntimeDirectory=), and tmpfiles.d at boot.
	EventsDir string
	// RuntimeDir is the user's $XDG_RUNTIME_DIR (/run/user/UID); "" in
	// system scope.
	RuntimeDir string
	// GeneratorDir is the normal output directory of the scope's generators.
	GeneratorDir string
	// WantedBy is the target whose .wants directory enables projects.
	WantedBy string
	// CrashLogs is where crash logs are written.
	CrashLogs crashlog.Logs
	// PrivateSocket is the manager's private D-Bus socket: systemd's own,
	// which needs no bus daemon (and so no dbus-user-session package in
	// user scope).
	PrivateSocket string
	// Systemctl is the systemctl command line of the scope, for hints:
	// "systemctl" or "systemctl --user"; Analyze is systemd-analyze's, and
	// JournalUnit journalctl's for one unit ("journalctl -u" or
	// "journalctl --user-unit").
	Systemctl, Analyze, JournalUnit string
	// Sudo prefixes a command that changes the scope's projects in hints:
	// "sudo " in system scope, "" in a user's own.
	Sudo string
	// Owner is who alone may read the scope's secrets, as a message
	// says it: "root", or "you".
	Owner string
}

// HealthSubdir is the health checks' directory in RunStateDir: one
// directory per project, the RuntimeDirectory= of its health service
// (bm2/health/<name>, under /run or the user's $XDG_RUNTIME_DIR), which
// holds the check's counts and last answers (see [Layout.HealthDir]).
const HealthSubdir = "health"

// JournalctlUnit is the scope's journalctl for one unit, for hints.
func (l Layout) JournalctlUnit(unit string) string { return l.JournalUnit + " " + unit }

// RegisteredFile is where bm2 serve registers a project of that name.
func (l Layout) RegisteredFile(name string) string {
	return filepath.Join(l.ConfigDir, name+".toml")
}

// HealthDir is where project name's health service keeps its state:
// /run/bm2/health/<name>, or $XDG_RUNTIME_DIR/bm2/health/<name>; root's
// in system scope (0755, its files 0644, so that bm2 list run by anyone
// reads them), gone at reboot.
func (l Layout) HealthDir(name string) string {
	return filepath.Join(l.RunStateDir, HealthSubdir, name)
}

// MemorySubdir is the memory checks' directory in RunStateDir: one
// directory per project, the RuntimeDirectory= of its memory service
// (bm2/memory/<name>), which holds the runs it has reported.
const MemorySubdir = "memory"

// MemoryDir is where project name's memory service keeps its state:
// /run/bm2/memory/<name>, or $XDG_RUNTIME_DIR/bm2/memory/<name>; the
// service's own (0700), gone at reboot.
func (l Layout) MemoryDir(name string) string {
	return filepath.Join(l.RunStateDir, MemorySubdir, name)
}

// SteerSubdir is connection steering's directory in RunStateDir (system
// scope: /run/bm2/steer, root's alone): each cluster-mode project's lock
// and its mark that steering is unavailable (package steer's Store).
const SteerSubdir = "steer"

// SteerDir is RunStateDir/SteerSubdir.
func (l Layout) SteerDir() string { return filepath.Join(l.RunStateDir, SteerSubdir) }

// VerdictSubdir is the reusePort probe's directory in RunStateDir
// (system scope: /run/bm2/verdicts, root's alone, made by
// bm2-probe@.service's RuntimeDirectory=): the latest verdict on each
// instance, one file each (package relay's Verdicts), which the waits of
// bm2 serve, start and reload read the moment it is written.
const VerdictSubdir = "verdicts"

// VerdictDir is RunStateDir/VerdictSubdir.
func (l Layout) VerdictDir() string { return filepath.Join(l.RunStateDir, VerdictSubdir) }

// SystemLayout is system scope.
func System() Layout {
	return Layout{
		Kind: SystemScope, UID: 0, Name: "root",
		SearchPath:    append([]string(nil), config.DefaultSearchPath...),
		ConfigDir:     config.DefaultSearchPath[0],
		StateDir:      "/var/lib/bm2",
		RunStateDir:   "/run/bm2",
		NotifyDir:     "/var/lib/bm2/notify",
		EventsDir:     "/run/bm2/events",
		LockFile:      "/run/bm2/registry.lock",
		GeneratorDir:  "/run/systemd/generator",
		WantedBy:      "multi-user.target",
		CrashLogs:     crashlog.Logs{Dir: "/var/log/bm2"},
		PrivateSocket: "/run/systemd/private",
		Systemctl:     "systemctl",
		Analyze:       "systemd-analyze",
		JournalUnit:   "journalctl -u",
		Sudo:          "sudo ",
		Owner:         "root",
	}
}

// DotDir is bm2's directory in a home: ~/.bm2.
const DotDir = ".bm2"

// UserLayout is user scope for one user.
func User(uid int, name, home string) Layout {
	base := filepath.Join(home, DotDir)
	run := "/run/user/" + strconv.Itoa(uid)
	return Layout{
		Kind: UserScope, UID: uid, Name: name, Home: home,
		SearchPath:    []string{filepath.Join(base, "projects")},
		ConfigDir:     filepath.Join(base, "projects"),
		StateDir:      filepath.Join(base, "state"),
		NotifyDir:     filepath.Join(base, "state", "notify"),
		EventsDir:     filepath.Join(run, "bm2", "events"),
		RunStateDir:   filepath.Join(run, "bm2"),
		LockFile:      filepath.Join(base, "state", "registry.lock"),
		RuntimeDir:    run,
		GeneratorDir:  filepath.Join(run, "systemd", "generator"),
		WantedBy:      "default.target",
		CrashLogs:     crashlog.Logs{Dir: base, Sub: "logs"},
		PrivateSocket: filepath.Join(run, "systemd", "private"),
		Systemctl:     "systemctl --user",
		Analyze:       "systemd-analyze --user",
		JournalUnit:   "journalctl --user-unit",
		Owner:         "you",
	}
}

// ForUID is the layout of the process with that effective UID: system
// scope for root, otherwise that user's (from the password database: the
// probe runs with an empty environment, and $HOME is not to be believed
// by a process that may be something else's).
func ForUID(uid int) (Layout, error) {
	if uid == 0 {
		return System(), nil
	}
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil && uid == os.Geteuid() && filepath.IsAbs(os.Getenv("HOME")) && os.Getenv("USER") != "" {
		// A user the static bm2-probe cannot look up (LDAP, SSSD: it
		// reads /etc/passwd only), run by their own manager, which sets
		// HOME and USER: nothing is at stake in trusting the user about
		// themselves.
		u, err = &user.User{Uid: strconv.Itoa(uid), Username: os.Getenv("USER"), HomeDir: os.Getenv("HOME")}, nil
	}
	if err != nil {
		return Layout{}, fmt.Errorf("user scope: uid %d has no entry in the password database: %w", uid, err)
	}
	if u.HomeDir == "" || !filepath.IsAbs(u.HomeDir) || u.HomeDir == "/" || u.HomeDir == "/nonexistent" {
		return Layout{}, fmt.Errorf("user scope: %s (uid %d) has no home directory (%q): bm2 keeps a user's projects under ~/%s", u.Username, uid, u.HomeDir, DotDir)
	}
	return User(uid, u.Username, filepath.Clean(u.HomeDir)), nil
}

// Self is the calling process's layout (see [ForUID]).
func Self() (Layout, error) { return ForUID(os.Geteuid()) }

// IsUser tells whether this is user scope.
func (l Layout) IsUser() bool { return l.Kind == UserScope }

// Describe names the scope for output: "system scope" or
// "user scope (alice)".
func (l Layout) Describe() string {
	if l.IsUser() {
		return "user scope (" + l.Name + ")"
	}
	return "system scope"
}

// Short is a path for messages, with the home written as "~".
func (l Layout) Short(p string) string {
	if l.Home != "" && (p == l.Home || strings.HasPrefix(p, l.Home+"/")) {
		return "~" + strings.TrimPrefix(p, l.Home)
	}
	return p
}

// State is the scope's state directory, with its part that lasts one
// boot: /run/bm2, or the user's $XDG_RUNTIME_DIR/bm2.
func (l Layout) State() state.Dir { return state.Dir{Path: l.StateDir, Run: l.RunStateDir} }

// UnprivilegedPortStart is the lowest port a normal user may bind
// (net.ipv4.ip_unprivileged_port_start; 1024 when it cannot be read).
func UnprivilegedPortStart() int {
	data, err := os.ReadFile("/proc/sys/net/ipv4/ip_unprivileged_port_start")
	if err != nil {
		return 1024
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n < 0 {
		return 1024
	}
	return n
}

// LingerFile is logind's mark that a user's manager outlives their
// sessions (loginctl enable-linger).
func LingerFile(name string) string { return filepath.Join("/var/lib/systemd/linger", name) }

// Lingering tells whether the user's manager runs without a session: from
// boot, and after the last logout.
func (l Layout) Lingering() bool {
	_, err := os.Stat(LingerFile(l.Name))
	return err == nil
}
