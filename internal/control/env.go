package control

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"time"

	"github.com/bm2dev/bm2/generator"
	"github.com/bm2dev/bm2/internal/analyze"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/listen"
	"github.com/bm2dev/bm2/internal/portfence"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/steer"
	"github.com/bm2dev/bm2/internal/trust"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wait"
	"github.com/bm2dev/bm2/journal"
)

// Env is everything a command needs from the host. The zero value of every
// field means "the real thing"; tests replace fields one by one.
type Env struct {
	// Layout is the scope (system or user, package layout); nil means
	// the one the command line and the caller choose (chooseScope).
	Layout *layout.Layout
	// MinPort replaces net.ipv4.ip_unprivileged_port_start in user scope
	// (tests).
	MinPort *int
	// SystemSearchPath replaces where user scope looks for system projects
	// (config.DefaultSearchPath; tests).
	SystemSearchPath []string
	Getenv           func(string) string // os.Getenv; reads $BM2_CONFIG_PATH
	NumCPU           int                 // resolves instances = "max"
	Now              func() time.Time

	// Connect reaches systemd; ConnectSystemd by default.
	Connect func(ctx context.Context) (Systemd, error)
	// Accounting says why a user's instances have no MEM or CPU figures;
	// scope.AccountingGap by default.
	Accounting func(uid int) string
	// Journal returns the last n lines a unit logged: by default what its
	// processes wrote (journalctl _SYSTEMD_UNIT=UNIT), or when that is
	// nothing, journalctl -u UNIT -n N -o cat --no-pager.
	Journal func(ctx context.Context, unit string, n int) ([]string, error)
	// CheckPorts probes ports as the given user would see them
	// (reuseport.CheckPortsAs by default: as root it takes the user's
	// identity; anyone else can check only as themselves).
	CheckPorts func(ctx context.Context, id identity.Identity, ports []int) ([]reuseport.PortState, error)
	// LookupUser resolves a project's user (identity.Lookup by default).
	LookupUser func(ctx context.Context, name, group string) (identity.Identity, error)
	// RuntimeDirs is where bare runtime names are looked up
	// (jsruntime.SearchPath by default).
	RuntimeDirs []string
	// RuntimeVersion runs `<path> --version` as id (with a 5 s timeout by
	// default; as root, never as root but as the project's user).
	RuntimeVersion func(ctx context.Context, id identity.Identity, path string) (string, error)
	// Replaceable tells whether someone other than root can replace a
	// runtime binary (jsruntime.Replaceable by default).
	Replaceable func(path string) (who string, ok bool)
	// ConfinedVersion asks a runtime someone else can replace for its
	// version inside the project's sandbox, as its account (a transient
	// unit, package confine, by default).
	ConfinedVersion func(ctx context.Context, p *config.Project, path string) (string, error)
	// ReadJournal runs a journal query and calls each for every entry, as
	// it arrives (journal.Read: journalctl -o json by default). bm2 logs,
	// bm2 events and the wait for reusePort verdicts read the journal
	// through it.
	ReadJournal func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error
	// DiskUsage is what the journal's files take, in bytes: the whole
	// journal's, or in user scope the user's own files
	// (journal.DiskUsage: journalctl --disk-usage by default).
	DiskUsage func(ctx context.Context) (int64, error)
	// Security returns the exposure score systemd-analyze security gives a
	// unit (systemd-analyze by default).
	Security func(ctx context.Context, unit string) (string, error)
	// Sockets is what bm2 metrics reads of each instance's sockets:
	// the processes of its control group, their descriptors, and the
	// kernel's listeners and connections on a port (sockdiag and /proc
	// by default).
	Sockets view.Sockets
	// Calendar is what systemd-analyze calendar says of a calendar
	// expression (restart_schedule): its next elapse ("Sun 2026-12-06
	// 04:00:00 UTC", or analyze.Never), analyze.ErrNotInstalled without systemd-analyze,
	// an *analyze.CalendarRefused when it refuses it (analyze.Calendar by default).
	Calendar func(ctx context.Context, expr string) (string, error)
	// Listening tells whether a unit's processes hold a listening TCP
	// socket on port (listen.On, from /proc, by default).
	Listening func(ctx context.Context, u view.UnitStatus, port int) (bool, error)
	// Access tells whether id can open path (dir: enter it), for the
	// checks before start (explain.AccessAs by default: as id when root,
	// else only whether it exists).
	Access func(id identity.Identity, path string, dir bool) error
	// PathOwner is the uid that owns path (os.Stat's, by default): whose
	// account may enter a working directory the project's own cannot.
	PathOwner func(path string) (int, error)
	// PortHolder names the holder of a TCP listener on port owned by
	// another user than uid (hooks.ForeignHolder by default: sock_diag,
	// and /proc for its name and pid).
	PortHolder func(port int, uid uint32) (string, bool)
	// Accounts is the user and group database (trust.System by
	// default): who a file speaks for, and what it may ask.
	Accounts trust.Accounts
	// ReadFile reads a project file root acts on, once, and says who
	// could have written it (trust.Read with Accounts by default).
	ReadFile func(path string) (trust.File, error)
	// ReadVerdict reads the reusePort probe's latest verdict on an instance
	// ("api-0") from the file the probe keeps beside the journal
	// (relay.Verdicts of the scope by default); ok is false when there is
	// none.
	ReadVerdict func(instance string) (ev journal.Event, ok bool, err error)
	// WatchVerdicts returns a channel that receives when a verdict is
	// written, and a function that stops the watch (fsnotify on the
	// scope's VerdictDir by default); a nil channel when nothing can be
	// watched (no such directory: no probe has run, or one older than
	// this bm2), and the waits read the journal at every poll as before.
	WatchVerdicts func() (<-chan struct{}, func())
	// PollInterval is how often serve and start look at instance states.
	PollInterval time.Duration
	// Clock is the time the waits of serve, start, restart and reload
	// run on, their --timeout included (the real one by default). Tests
	// give one whose time moves only as a wait polls, so that a deadline
	// means "so many polls", however busy the host is.
	Clock Clock
	// FenceSupport is nil when this host can fence an instance's ports,
	// else why not (portfence.HostSupport by default).
	FenceSupport func() error
	// FenceAttached tells whether the port fence is attached to a unit's
	// control group (portfence.Attached by default; root only, an
	// fs.ErrPermission error for anyone else).
	FenceAttached func(controlGroup string) (bool, error)
	// SteerPins is where cluster-mode ports' groups are pinned (package
	// steer; steer.PinRoot by default).
	SteerPins string
	// SystemdVersion is the host's systemd version, 0 when not known
	// (generator.DetectSystemdVersion, what the generator asks, by
	// default): restart_delay_max_ms needs generator.BackoffVersion.
	SystemdVersion func(ctx context.Context) int
}

// Clock is what a wait needs of time: a deadline and a ticker.
type Clock = wait.Clock

// Client is how the bm2 command acts on the host: the [Env] it reaches
// the host through and the [Reporter] it tells its progress to. Package
// cli parses the command line and renders; everything that reads or
// changes systemd, the journal or bm2's files is a method of Client,
// and none writes to the user's streams.
type Client struct {
	Env
	// Report is told what a command does as it goes (nil: nobody).
	Report Reporter
}

// realClock is the wall clock.
type realClock struct{}

func (realClock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

func (realClock) Tick(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// WithDefaults fills in every field of Env left at its zero value.
func (e Env) WithDefaults() Env {
	if e.Layout == nil {
		l := layout.System()
		e.Layout = &l
	}
	if e.Layout.IsUser() {
		e.userDefaults()
	}
	e.systemDefaults()
	e.journalDefaults()
	e.fileDefaults()
	return e
}

// systemDefaults are the defaults of how bm2 reaches systemd, the
// accounts and the runtimes.
func (e *Env) systemDefaults() {
	if e.Getenv == nil {
		e.Getenv = os.Getenv
	}
	if e.NumCPU == 0 {
		e.NumCPU = runtime.NumCPU()
	}
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Connect == nil {
		e.Connect = ConnectSystemd
	}
	if e.Accounting == nil {
		e.Accounting = scope.AccountingGap
	}
	if e.LookupUser == nil {
		e.LookupUser = identity.Lookup
	}
	if e.Security == nil {
		e.Security = func(ctx context.Context, unit string) (string, error) { return analyze.Security(ctx, unit) }
	}
	if e.Journal == nil {
		e.Journal = journal.UnitTail
	}
	if e.CheckPorts == nil {
		e.CheckPorts = func(_ context.Context, id identity.Identity, ports []int) ([]reuseport.PortState, error) {
			return reuseport.CheckPortsAs(id, ports)
		}
	}
	if e.RuntimeDirs == nil {
		e.RuntimeDirs = jsruntime.SearchPath()
	}
	if e.RuntimeVersion == nil {
		e.RuntimeVersion = jsruntime.AskVersionAs
	}
	if e.Replaceable == nil {
		e.Replaceable = jsruntime.Replaceable
	}
	if e.ConfinedVersion == nil {
		e.ConfinedVersion = confinedVersion
	}
}

// journalDefaults are the defaults of how bm2 reads the journal (the
// user's own entries in user scope) and an instance's sockets.
func (e *Env) journalDefaults() {
	if e.ReadJournal == nil {
		e.ReadJournal = journal.Read
	}
	if e.Layout != nil && e.Layout.IsUser() {
		e.ReadJournal = scopedJournal(e.ReadJournal, strconv.Itoa(e.Layout.UID))
	}
	if e.DiskUsage == nil {
		user := e.Layout.IsUser()
		e.DiskUsage = func(ctx context.Context) (int64, error) { return journal.DiskUsage(ctx, user) }
	}
	if e.Listening == nil {
		e.Listening = listen.On
	}
	if e.Sockets == nil {
		e.Sockets = view.HostSockets{}
	}
}

// fileDefaults are the defaults of how bm2 reads files, verdicts and
// what the host supports.
func (e *Env) fileDefaults() {
	if e.Calendar == nil {
		e.Calendar = analyze.Calendar
	}
	if e.PathOwner == nil {
		e.PathOwner = statOwner
	}
	if e.Accounts == nil {
		e.Accounts = trust.System()
	}
	if e.ReadFile == nil {
		acc := e.Accounts
		e.ReadFile = func(path string) (trust.File, error) { return trust.Read(path, acc) }
	}
	if e.ReadVerdict == nil {
		e.ReadVerdict = relay.NewVerdicts(*e.Layout).Get
	}
	if e.WatchVerdicts == nil {
		dir := e.Layout.VerdictDir()
		e.WatchVerdicts = func() (<-chan struct{}, func()) { return wait.WatchDir(dir) }
	}
	if e.PollInterval == 0 {
		e.PollInterval = 50 * time.Millisecond
	}
	if e.Clock == nil {
		e.Clock = realClock{}
	}
	if e.FenceSupport == nil {
		e.FenceSupport = portfence.HostSupport
	}
	if e.FenceAttached == nil {
		e.FenceAttached = fenceAttached
	}
	if e.SystemdVersion == nil {
		e.SystemdVersion = generator.DetectSystemdVersion
	}
	if e.SteerPins == "" {
		e.SteerPins = steer.PinRoot
	}
}
