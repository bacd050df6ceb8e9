package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"github.com/bm2dev/bm2/units"
)

// ExecMode says how the instances of a project share out ports.
type ExecMode string

const (
	// Cluster: every instance listens on the same port with SO_REUSEPORT and
	// the kernel spreads new connections across them.
	Cluster ExecMode = "cluster"
	// Fork: instance i listens on port+i.
	Fork ExecMode = "fork"
	// Worker: a project without port (queue consumers, cron jobs, bots):
	// its instances listen on no port of their own, have no probe and no
	// gateway, and their port fence lets them bind no fixed port.
	Worker ExecMode = "worker"
)

// ReusePort says who gives a cluster-mode app's listener SO_REUSEPORT
// (reuseport in bm2.toml(5)).
type ReusePort string

const (
	// ReusePortApp: the app listens with reusePort: true itself (the
	// default).
	ReusePortApp ReusePort = "app"
	// ReusePortPreload: bm2 supplies it. Every instance's runtime loads
	// bm2's preload (package preload), which adds reusePort: true to the
	// app's listen on the instance's port when the app does not set it, so
	// that a PM2 cluster app runs unchanged. The probe judges the result
	// as it judges any app.
	ReusePortPreload ReusePort = "preload"
)

// Runtime names a JavaScript runtime bm2 knows how to start.
type Runtime string

const (
	Bun  Runtime = "bun"
	Node Runtime = "node"
)

// Level orders notifications and events by severity.
type Level string

const (
	LevelInfo    Level = "info"
	LevelWarning Level = "warning"
	LevelError   Level = "error"
)

// SandboxMode is how tightly systemd confines a project's instances.
type SandboxMode string

const (
	// Strict: the whole sandbox of bm2@.service (bm2.toml(5), "Sandbox").
	Strict SandboxMode = "strict"
	// Compat: the sandbox of bm2 0.1 (NoNewPrivileges=, PrivateTmp=,
	// ProtectSystem=full) for projects that need more than writable
	// paths; `bm2 migrate` gives it to the projects of a 0.1 host.
	Compat SandboxMode = "compat"
)

// Defaults, documented in bm2.toml(5).
const (
	DefaultRestartDelay  = 100 * time.Millisecond
	DefaultMaxRestarts   = 16
	DefaultMinUptime     = 1000 * time.Millisecond
	DefaultStopTimeout   = 1600 * time.Millisecond
	DefaultNotifyLevel   = LevelError
	maxNameLen           = 64
	maxInstances         = MaxInstances
	maxRestartDelay      = time.Hour
	maxStopTimeout       = time.Hour
	maxMaxRestarts       = 10000
	defaultRuntimeNodeJS = Node
)

// The drain of a stopping cluster instance (drain_ms).
const (
	DefaultDrain = 1000 * time.Millisecond
	maxDrain     = time.Minute
	// DrainMargin is what a drain leaves of stop_timeout_ms, which
	// systemd gives the ExecStop= that drains (TimeoutStopSec= bounds
	// each ExecStop= too, and one cut short fails the stop): the drain
	// waits at most stop_timeout_ms less this, and an instance whose
	// stop_timeout_ms is shorter gets no drain.
	DrainMargin = 500 * time.Millisecond
)

// MaxInstances is the most instances a project may have (instances =).
const MaxInstances = 1024

// EnvVar is one variable of the [env] table.
type EnvVar struct {
	Name, Value string
}

// Notify is the [notify] table.
type Notify struct {
	Webhook string // "" means notifications are disabled
	Level   Level  // minimum level that is sent
	// AllowLocal lets bm2-notify post to this host itself, a loopback
	// address or another of its own (notify.allow_local); never set from
	// a file root did not write
	// (Options.Foreign).
	AllowLocal bool
}

// Resources is the [resources] table: cgroup and rlimit settings applied to
// every instance. Zero values mean "not set".
type Resources struct {
	MemoryMax   string // systemd size, e.g. "512M"; MemoryMax=
	MemoryHigh  string // MemoryHigh=
	CPUQuota    string // e.g. "150%"; CPUQuota=
	CPUWeight   int    // 1..10000; CPUWeight=
	TasksMax    int    // TasksMax= of each instance
	LimitNOFILE int    // LimitNOFILE=
	// SliceTasksMax is the TasksMax= of the project's slice (every
	// instance, the surge and what they spawn, together); 0 means
	// DefaultSliceTasksMax.
	SliceTasksMax int
}

// TasksPerInstance is what the default slice_tasks_max allows each
// instance (and the surge of a reload): a Node.js or Bun process runs
// about a dozen threads (the main one, V8's or JavaScriptCore's, libuv's
// pool of 4), so 512 leaves room for worker threads and child processes
// while a fork bomb in one project stops far below the kernel's pid_max.
const TasksPerInstance = 512

// DefaultSliceTasksMax is the slice's TasksMax= when slice_tasks_max is
// not set: TasksPerInstance (or tasks_max, when larger) for each instance
// and one more for the surge, at most the largest value systemd takes.
func (p *Project) DefaultSliceTasksMax() int {
	return min(max(TasksPerInstance, p.Resources.TasksMax)*(p.Instances+1), maxTasks)
}

// maxTasks is the largest TasksMax= bm2 writes (the kernel's pid_max
// limit on 64-bit).
const maxTasks = 4194304

// SliceTasksMax is the TasksMax= of the project's slice.
func (p *Project) SliceTasksMax() int {
	if p.Resources.SliceTasksMax > 0 {
		return p.Resources.SliceTasksMax
	}
	return p.DefaultSliceTasksMax()
}

// Sandbox is the [sandbox] table.
type Sandbox struct {
	Mode     SandboxMode
	Writable []string // absolute; ReadWritePaths=
	// ExtraPorts are the ports every instance may bind besides its own
	// (the port fence, package portfence), as written.
	ExtraPorts []int
}

// Log is how the instances' output reaches the journal (bm2.toml(5),
// LOGS).
type Log struct {
	// RateLimitBurst and RateLimitInterval are log_rate_limit_burst and
	// log_rate_limit_interval_ms: journald's rate limit of each instance
	// (LogRateLimitBurst=, LogRateLimitIntervalSec=). nil when not set:
	// journald's own limit applies. 0 is no limit (see Unlimited).
	RateLimitBurst    *int
	RateLimitInterval *time.Duration
	// LevelPrefix is log_level_prefix: journald takes a line's "<N>"
	// prefix (sd-daemon(3)) for its priority. Off by default: an app's
	// output is not to log at emerg, which journald walls to every
	// terminal, nor to pass for an error.
	LevelPrefix bool
}

// RateLimited tells whether the project sets its own rate limit, either
// key.
func (l Log) RateLimited() bool { return l.RateLimitBurst != nil || l.RateLimitInterval != nil }

// Unlimited tells whether the project asks for no rate limit at all: a
// burst or an interval of 0, as journald.conf(5) reads them.
func (l Log) Unlimited() bool {
	return (l.RateLimitBurst != nil && *l.RateLimitBurst == 0) ||
		(l.RateLimitInterval != nil && *l.RateLimitInterval == 0)
}

// MaxLogRateLimitBurst is the largest log_rate_limit_burst, and what
// "no limit" becomes in the unit. systemd passes a burst of 0 on as
// "not set" (journald's default applies, not no limit), so no limit is
// a burst too large to reach: journald multiplies the burst by up to 47
// and divides by 4 to scale it with free disk space (journald.conf(5)),
// in 32 bits, and this is the largest burst that does not wrap around
// there: 2^32-1 / 47. It allows more than 3 million lines a second per
// instance in journald's default 30 s window.
const MaxLogRateLimitBurst = (1<<32 - 1) / 47

// MaxLogRateLimitInterval is the longest log_rate_limit_interval_ms: a
// day.
const MaxLogRateLimitInterval = 24 * time.Hour

// Project is one validated project file with every default filled in.
type Project struct {
	Name        string
	File        string // the project file it came from
	Script      string // as written, relative to Cwd unless absolute
	Cwd         string
	Runtime     Runtime
	RuntimePath string // absolute, or "" for systemd's executable search path
	RuntimeArgs []string
	Args        []string
	Instances   int
	MaxInstance bool // instances = "max": one per CPU
	Port        int
	Mode        ExecMode
	User        string   // "" means the project's own account, see Account
	Group       string   // "" means the user's primary group
	Env         []EnvVar // sorted by name
	EnvFile     string   // absolute, or ""
	// PortEnv names variables that also receive the instance's port
	// (InstancePort), as written: PM2 apps read PORT, not BM2_APP_PORT.
	PortEnv []string
	// InstanceVar also receives the instance's index (BM2_APP_INSTANCE's
	// value): instance_var as written, "" for DefaultInstanceVar (IndexVar).
	InstanceVar string
	// ReusePort is who sets reusePort in cluster mode (see Preload).
	ReusePort ReusePort

	// Wants and Requires are the systemd units the instances need, as
	// written: every instance pulls them in and is ordered after them
	// (Wants= or Requires=, and After=). See Needs.
	Wants    []string
	Requires []string
	// After are units the instances are ordered after and never pull in
	// (After= only): what bm2 serve makes of wants and requires from a
	// file root did not write (package trust).
	After []string
	// Source is the file bm2 serve registered the project from (its real
	// path), "" when not known: a name has one owner, and serve refuses
	// another source for it without --replace.
	Source string

	// RestartSchedule is restart_schedule: a systemd calendar expression
	// (CheckCalendar), as written; "" for none. At those times the
	// project's restart timer runs `bm2 reload <name>`.
	RestartSchedule string

	RestartDelay time.Duration
	// RestartDelayMax is restart_delay_max_ms: the longest delay of an
	// exponential backoff that starts at RestartDelay (systemd's
	// RestartSteps= and RestartMaxDelaySec=, systemd 254 and later); 0
	// for none, and every restart waits RestartDelay.
	RestartDelayMax time.Duration
	MaxRestarts     int
	MinUptime       time.Duration
	StopTimeout     time.Duration
	// Drain is drain_ms (cluster mode): how long a stopping instance,
	// taken out of its port's kernel-steered turn, waits for its accept
	// queue and its connections' unread and unsent bytes to empty before
	// systemd sends SIGTERM; 0 does not wait.
	Drain time.Duration

	// Health is the HTTP health check (health_* keys); zero for none.
	Health Health
	// MemoryRestart is the graceful memory restart (memory_restart);
	// zero for none.
	MemoryRestart MemoryRestart

	Notify    Notify
	Resources Resources
	Sandbox   Sandbox
	Log       Log

	// PrivateFile is the project's private part (see PrivatePath) when it
	// has one; PrivateUnread says it exists but this process may not read
	// it, so Env and Notify.Webhook are not known.
	PrivateFile   string
	PrivateUnread bool
	// SecretsInFile: the project file itself (not its private part) holds
	// [env] or the webhook; ExposedSecrets: and every user may read it.
	SecretsInFile  bool
	ExposedSecrets bool
}

// Account is the user the instances run as: user =, or the project's own
// account (units.Account).
func (p *Project) Account() string {
	if p.User != "" {
		return p.User
	}
	return units.Account(p.Name)
}

// OwnAccount tells whether the project runs as its own account (no user =).
func (p *Project) OwnAccount() bool { return p.User == "" }

// DefaultInstanceVar is PM2's name for the instance's index, which apps
// written for PM2 read.
const DefaultInstanceVar = "NODE_APP_INSTANCE"

// IndexVar is InstanceVar, DefaultInstanceVar when it is not set.
func (p *Project) IndexVar() string {
	if p.InstanceVar == "" {
		return DefaultInstanceVar
	}
	return p.InstanceVar
}

// IsWorker tells whether the project has no port (Worker).
func (p *Project) IsWorker() bool { return p.Mode == Worker }

// Ports is the range of ports a project occupies; the zero range for a
// worker, which occupies none.
func (p *Project) Ports() PortRange {
	switch p.Mode {
	case Worker:
		return PortRange{}
	case Fork:
		return PortRange{Lo: p.Port, Hi: p.Port + p.Instances - 1}
	}
	return PortRange{Lo: p.Port, Hi: p.Port}
}

// Occupied is every port range the project holds: Ports, then its
// health ports (HealthPorts) when it has them, then each of [sandbox]
// extra_ports as a range of one. OccupiedBy names each one's key.
func (p *Project) Occupied() []PortRange {
	out := []PortRange{p.Ports()} // a worker's is empty, and overlaps nothing
	if r, ok := p.HealthPorts(); ok {
		out = append(out, r)
	}
	for _, n := range p.Sandbox.ExtraPorts {
		out = append(out, PortRange{Lo: n, Hi: n})
	}
	return out
}

// OccupiedBy is the key that makes the project hold range k of
// Occupied: "" for its port range, "health_port" or "[sandbox]
// extra_ports".
func (p *Project) OccupiedBy(k int) string {
	_, health := p.HealthPorts()
	switch {
	case k == 0:
		return ""
	case k == 1 && health:
		return "health_port"
	}
	return "[sandbox] extra_ports"
}

// AllowedPorts is what instance i may bind (the port fence): its own
// port, its health port when that is another one (HealthPort), and
// [sandbox] extra_ports.
func (p *Project) AllowedPorts(i int) []int {
	var out []int
	if !p.IsWorker() {
		out = append(out, p.InstancePort(i))
	}
	if h := p.HealthPort(i); h != 0 && (len(out) == 0 || h != out[0]) {
		out = append(out, h)
	}
	return append(out, p.Sandbox.ExtraPorts...)
}

// Preload tells whether the instances load bm2's reusePort preload:
// reuseport = "preload", which config accepts in cluster mode only.
func (p *Project) Preload() bool {
	return p.Mode == Cluster && p.ReusePort == ReusePortPreload
}

// InstancePort is the port instance i listens on (BM2_APP_PORT); 0 for
// a worker's.
func (p *Project) InstancePort(i int) int {
	switch p.Mode {
	case Worker:
		return 0
	case Fork:
		return p.Port + i
	}
	return p.Port
}

// RuntimeCommand is what ExecStart runs: runtime_path, or the bare runtime
// name that systemd resolves along its fixed executable search path.
func (p *Project) RuntimeCommand() string {
	if p.RuntimePath != "" {
		return p.RuntimePath
	}
	return string(p.Runtime)
}

// ScriptPath is the entry file's absolute path.
func (p *Project) ScriptPath() string {
	if filepath.IsAbs(p.Script) {
		return p.Script
	}
	return filepath.Join(p.Cwd, p.Script)
}

// Need is a systemd unit a project's instances need, and how: "wants"
// or "requires", the key that names it.
type Need struct {
	Unit, How string
}

// Needs is every unit of wants and then of requires, in the order written.
func (p *Project) Needs() []Need {
	out := make([]Need, 0, len(p.Wants)+len(p.Requires))
	for _, u := range p.Wants {
		out = append(out, Need{Unit: u, How: "wants"})
	}
	for _, u := range p.Requires {
		out = append(out, Need{Unit: u, How: "requires"})
	}
	return out
}

// Summary is the first line of `bm2 check`:
// `project "api", 4 x cluster on port 3000, runtime bun`.
func (p *Project) Summary() string {
	if p.IsWorker() {
		return fmt.Sprintf("project %q, %d x worker (no port), runtime %s", p.Name, p.Instances, p.Runtime)
	}
	return fmt.Sprintf("project %q, %d x %s on port %d, runtime %s",
		p.Name, p.Instances, p.Mode, p.Port, p.Runtime)
}

// PrivatePath is where the private part of the project file at file lives:
// private/<name>.toml in the same directory. It holds what other users
// must not read ([env] and the webhook); it must be root's and readable by
// root alone.
func PrivatePath(file string) string {
	return filepath.Join(filepath.Dir(file), "private", filepath.Base(file))
}

// Stem is the project name a file path implies: its base name without ".toml".
func Stem(file string) string {
	return strings.TrimSuffix(filepath.Base(file), ".toml")
}

// Equal reports whether two projects are the same, treating an empty list
// (args, runtime_args, env, writable paths, wants, requires) like an
// absent one: both mean "none". Where the project was read from does not
// count.
func Equal(p, q *Project) bool {
	return reflect.DeepEqual(normalized(p), normalized(q))
}

func normalized(p *Project) Project {
	c := *p
	c.PrivateFile, c.PrivateUnread, c.SecretsInFile, c.ExposedSecrets = "", false, false, false
	if len(c.RuntimeArgs) == 0 {
		c.RuntimeArgs = nil
	}
	if len(c.Args) == 0 {
		c.Args = nil
	}
	if len(c.Env) == 0 {
		c.Env = nil
	}
	if len(c.Sandbox.Writable) == 0 {
		c.Sandbox.Writable = nil
	}
	if len(c.Sandbox.ExtraPorts) == 0 {
		c.Sandbox.ExtraPorts = nil
	}
	if len(c.Wants) == 0 {
		c.Wants = nil
	}
	if len(c.Requires) == 0 {
		c.Requires = nil
	}
	if len(c.After) == 0 {
		c.After = nil
	}
	if len(c.PortEnv) == 0 {
		c.PortEnv = nil
	}
	if c.ReusePort == "" {
		c.ReusePort = ReusePortApp
	}
	return c
}
