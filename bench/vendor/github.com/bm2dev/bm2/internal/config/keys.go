package config

import (
	"fmt"
	"math"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/bm2dev/bm2/units"
)

// kind is the TOML type a key takes.
type kind int

const (
	kString   kind = iota
	kInt           // a whole number
	kStrings       // an array of strings
	kIntOrMax      // a whole number or "max"
	kTable         // a table of known keys
	kEnv           // a table of strings with free names
	kInts          // an array of whole numbers
	kBool          // true or false
)

// spec is one key of the project file: its TOML type, how its value is
// checked and stored, how Marshal writes it back, and the unit directive
// it maps to when it maps to one directly. The table below is the only
// list of keys: parsing, the "did you mean" hints, Marshal, the private
// part and the generator's plain directives all read it.
type spec struct {
	key  string
	kind kind
	// private keys may live in the project's private part (PrivatePath)
	// and are written there by Marshal.
	private bool
	// set checks a value (already of the right TOML type) and stores it.
	set func(v *validator, p *Project, key string, val any)
	// get returns the stored value (a string, an int or a []string) for
	// Marshal and for the directive; false means it is at its default and
	// is left out.
	get func(p *Project) (any, bool)
	// directive, when set, is the [Service] directive the key's value is
	// written to unchanged (see Directives).
	directive string
}

// The limits that keep every accepted value loadable by systemd: paths fit
// PATH_MAX, command lines and environment files stay far below systemd's
// line limit (LONG_LINE_MAX, 1 MiB).
const (
	maxPath      = 4095
	maxFileName  = 255
	maxWord      = 32 << 10
	maxWordsLen  = 256 << 10
	maxEnvValue  = 32 << 10
	maxEnvLen    = 512 << 10
	maxURL       = 2048
	maxUserName  = 31
	maxUID       = math.MaxUint32 - 1
	reservedEnv  = "BM2_"
	invalidUID16 = 65535
	maxNeeds     = 64
	// MaxExtraPorts bounds [sandbox] extra_ports: with the instance's own
	// port they make one compare each in the port fence's program.
	MaxExtraPorts = 32
)

// unitTypes are the unit types wants and requires may name: the ones an
// instance can be pulled in with and ordered after (not slices or scopes,
// which hold processes rather than start anything).
var unitTypes = []string{"service", "socket", "target", "mount", "device", "path", "timer", "swap"}

const unitTypesText = ".service, .socket, .target, .mount, .device, .path, .timer or .swap"

var specs = []spec{
	{key: "name", kind: kString, set: setName, get: always(func(p *Project) any { return p.Name })},
	{key: "script", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		s := val.(string)
		if s == "" {
			v.add(k, ErrValue, "must not be empty")
		} else if v.text(k, s, maxPath) && v.pathNames(k, s) {
			p.Script = s
		}
	}, get: always(func(p *Project) any { return p.Script })},
	{key: "cwd", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if s := val.(string); v.absPath(k, s) {
			p.Cwd = path.Clean(s)
		}
	}, get: always(func(p *Project) any { return p.Cwd })},
	{key: "runtime", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		switch r := Runtime(val.(string)); r {
		case Bun, Node:
			p.Runtime = r
		default:
			v.add(k, ErrValue, "must be \"bun\" or \"node\", got %q", val)
		}
	}, get: always(func(p *Project) any { return string(p.Runtime) })},
	{key: "runtime_path", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if s := val.(string); v.absPath(k, s) {
			p.RuntimePath = path.Clean(s)
		}
	}, get: str(func(p *Project) string { return p.RuntimePath })},
	{key: "runtime_args", kind: kStrings, set: func(v *validator, p *Project, k string, val any) {
		p.RuntimeArgs = v.words(k, val.([]string))
	}, get: list(func(p *Project) []string { return p.RuntimeArgs })},
	{key: "args", kind: kStrings, set: func(v *validator, p *Project, k string, val any) {
		p.Args = v.words(k, val.([]string))
	}, get: list(func(p *Project) []string { return p.Args })},
	{key: "instances", kind: kIntOrMax, set: func(v *validator, p *Project, k string, val any) {
		if val == "max" {
			p.MaxInstance = true
			p.Instances = max(1, min(v.numCPU, maxInstances))
		} else if n := val.(int64); v.intRange(k, n, 1, maxInstances) {
			p.Instances = int(n)
		}
	}, get: always(func(p *Project) any {
		if p.MaxInstance {
			return "max"
		}
		return p.Instances
	})},
	{key: "port", kind: kInt, set: func(v *validator, p *Project, k string, val any) {
		if n := val.(int64); v.intRange(k, n, 1, 65535) {
			p.Port = int(n)
		}
	}, get: func(p *Project) (any, bool) { return p.Port, !p.IsWorker() }},
	{key: "exec_mode", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		switch m := ExecMode(val.(string)); m {
		case Cluster, Fork:
			p.Mode = m
		default:
			v.add(k, ErrValue, "must be \"cluster\" or \"fork\", got %q", val)
		}
	}, get: func(p *Project) (any, bool) { return string(p.Mode), !p.IsWorker() }},
	{key: "reuseport", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		switch r := ReusePort(val.(string)); r {
		case ReusePortApp, ReusePortPreload:
			p.ReusePort = r
		default:
			v.add(k, ErrValue, "must be \"app\" (the app listens with reusePort: true) or \"preload\" (bm2 supplies it), got %q", val)
		}
	}, get: func(p *Project) (any, bool) { return string(p.ReusePort), p.ReusePort == ReusePortPreload }},
	{key: "user", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if s := val.(string); v.account(k, s, "user") {
			p.User = s
		}
	}, get: str(func(p *Project) string { return p.User })},
	{key: "group", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if s := val.(string); v.account(k, s, "group") {
			p.Group = s
		}
	}, get: str(func(p *Project) string { return p.Group }), directive: "Group"},
	{key: "restart_delay_ms", kind: kInt, set: ms(0, maxRestartDelay, func(p *Project) *time.Duration { return &p.RestartDelay }),
		get: msValue(DefaultRestartDelay, func(p *Project) time.Duration { return p.RestartDelay })},
	// The cap of the exponential backoff from restart_delay_ms
	// (RestartMaxDelaySec=, package generator); checked against
	// restart_delay_ms in finish.
	{key: "restart_delay_max_ms", kind: kInt, set: ms(time.Millisecond, maxRestartDelay, func(p *Project) *time.Duration { return &p.RestartDelayMax }),
		get: msValue(0, func(p *Project) time.Duration { return p.RestartDelayMax })},
	{key: "max_restarts", kind: kInt, set: func(v *validator, p *Project, k string, val any) {
		if n := val.(int64); v.intRange(k, n, 0, maxMaxRestarts) {
			p.MaxRestarts = int(n)
		}
	}, get: num(func(p *Project) int { return p.MaxRestarts }, DefaultMaxRestarts)},
	{key: "min_uptime_ms", kind: kInt, set: ms(0, maxRestartDelay, func(p *Project) *time.Duration { return &p.MinUptime }),
		get: msValue(DefaultMinUptime, func(p *Project) time.Duration { return p.MinUptime })},
	{key: "stop_timeout_ms", kind: kInt, set: ms(time.Millisecond, maxStopTimeout, func(p *Project) *time.Duration { return &p.StopTimeout }),
		get: msValue(DefaultStopTimeout, func(p *Project) time.Duration { return p.StopTimeout })},
	// The drain of a stopping cluster instance (bm2-probe steer drain,
	// BM2_DRAIN_MS in its drop-in); checked against exec_mode in finish.
	{key: "drain_ms", kind: kInt, set: ms(0, maxDrain, func(p *Project) *time.Duration { return &p.Drain }),
		get: func(p *Project) (any, bool) {
			return int(p.Drain.Milliseconds()), p.Mode == Cluster && p.Drain != DefaultDrain
		}},
	// A systemd calendar expression (calendar.go), the OnCalendar= of the
	// project's restart timer (package generator).
	{key: "restart_schedule", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if err := CheckCalendar(val.(string)); err != nil {
			v.add(k, ErrValue, "%v", err)
		} else {
			p.RestartSchedule = val.(string)
		}
	}, get: str(func(p *Project) string { return p.RestartSchedule })},
	// The HTTP health check (health.go): checked against each other and
	// the port ranges in finish, and written only with health_path.
	{key: "health_path", kind: kString, set: setHealthPath, get: str(func(p *Project) string { return p.Health.Path })},
	{key: "health_interval_ms", kind: kInt, set: ms(minHealthInterval, maxHealthInterval, func(p *Project) *time.Duration { return &p.Health.Interval }),
		get: healthValue(func(h Health) (int, bool) {
			return int(h.Interval.Milliseconds()), h.Interval != DefaultHealthInterval
		})},
	{key: "health_timeout_ms", kind: kInt, set: ms(minHealthTimeout, maxHealthTimeout, func(p *Project) *time.Duration { return &p.Health.Timeout }),
		get: healthValue(func(h Health) (int, bool) {
			return int(h.Timeout.Milliseconds()), h.Timeout != DefaultHealthTimeout
		})},
	{key: "health_failures", kind: kInt, set: intInto(1, maxHealthFailures, func(p *Project) *int { return &p.Health.Failures }),
		get: healthValue(func(h Health) (int, bool) { return h.Failures, h.Failures != DefaultHealthFailures })},
	{key: "health_port", kind: kInt, set: intInto(1, 65535, func(p *Project) *int { return &p.Health.Port }),
		get: healthValue(func(h Health) (int, bool) { return h.Port, h.Port != 0 })},
	// The graceful memory restart (memory.go): checked against
	// [resources] memory_max in finish, and written only with
	// memory_restart.
	{key: "memory_restart", kind: kString, set: setMemoryRestart, get: str(func(p *Project) string { return p.MemoryRestart.Size })},
	{key: "memory_check_interval_ms", kind: kInt, set: ms(minMemoryCheckInterval, maxMemoryCheckInterval, func(p *Project) *time.Duration { return &p.MemoryRestart.Interval }),
		get: func(p *Project) (any, bool) {
			m := p.MemoryRestart
			return int(m.Interval.Milliseconds()), p.MemoryWatched() && m.Interval != DefaultMemoryCheckInterval
		}},
	{key: "env_file", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if s := val.(string); s == "" {
			v.add(k, ErrValue, "must not be empty")
		} else if v.text(k, s, maxPath) && v.noBackslash(k, s) && v.pathNames(k, s) {
			p.EnvFile = s // made absolute against cwd in finish
		}
	}, get: str(func(p *Project) string { return p.EnvFile })},
	{key: "wants", kind: kStrings, set: func(v *validator, p *Project, k string, val any) {
		p.Wants = v.needs(k, val.([]string), p.Name, nil)
	}, get: list(func(p *Project) []string { return p.Wants })},
	{key: "requires", kind: kStrings, set: func(v *validator, p *Project, k string, val any) {
		p.Requires = v.needs(k, val.([]string), p.Name, p.Wants) // wants comes first
	}, get: list(func(p *Project) []string { return p.Requires })},
	{key: "after", kind: kStrings, set: func(v *validator, p *Project, k string, val any) {
		p.After = v.needs(k, val.([]string), p.Name, nil)
	}, get: list(func(p *Project) []string { return p.After })},
	{key: "source", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if s := val.(string); !path.IsAbs(s) {
			v.add(k, ErrValue, "must be an absolute path (bm2 serve writes it: the file it registered the project from), got %q", s)
		} else if v.text(k, s, maxPath) && v.noBackslash(k, s) && v.pathNames(k, s) {
			p.Source = path.Clean(s)
		}
	}, get: str(func(p *Project) string { return p.Source })},
	{key: "port_env", kind: kStrings, set: setPortEnv, get: list(func(p *Project) []string { return p.PortEnv })},
	// instance_var: the variable that also receives BM2_APP_INSTANCE, as
	// PM2's instance_var names it (NODE_APP_INSTANCE by default: apps
	// written for PM2 run their cron where it is "0").
	{key: "instance_var", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		switch name := val.(string); {
		case !envNameRE.MatchString(name):
			v.add(k, ErrValue, "%q is not a valid environment variable name", name)
		case strings.HasPrefix(name, reservedEnv):
			v.add(k, ErrValue, "%q is bm2's own: every instance already gets BM2_APP_INSTANCE", name)
		default:
			p.InstanceVar = name
		}
	}, get: func(p *Project) (any, bool) { return p.IndexVar(), p.IndexVar() != DefaultInstanceVar }},
	// journald's rate limit of each instance and whether it reads level
	// prefixes: directives of their own (package generator), as no limit
	// is not 0 in the unit.
	{key: "log_rate_limit_burst", kind: kInt, set: func(v *validator, p *Project, k string, val any) {
		if n := val.(int64); v.intRange(k, n, 0, MaxLogRateLimitBurst) {
			b := int(n)
			p.Log.RateLimitBurst = &b
		}
	}, get: func(p *Project) (any, bool) {
		if p.Log.RateLimitBurst == nil {
			return nil, false
		}
		return *p.Log.RateLimitBurst, true
	}},
	{key: "log_rate_limit_interval_ms", kind: kInt, set: func(v *validator, p *Project, k string, val any) {
		if n := val.(int64); v.intRange(k, n, 0, MaxLogRateLimitInterval.Milliseconds()) {
			d := time.Duration(n) * time.Millisecond
			p.Log.RateLimitInterval = &d
		}
	}, get: func(p *Project) (any, bool) {
		if p.Log.RateLimitInterval == nil {
			return nil, false
		}
		return int(p.Log.RateLimitInterval.Milliseconds()), true
	}},
	{key: "log_level_prefix", kind: kBool, set: func(v *validator, p *Project, k string, val any) {
		p.Log.LevelPrefix = val.(bool)
	}, get: func(p *Project) (any, bool) { return p.Log.LevelPrefix, p.Log.LevelPrefix }},
	{key: "env", kind: kEnv, private: true, set: setEnv},
	{key: "notify", kind: kTable},
	{key: "notify.webhook", kind: kString, private: true, set: func(v *validator, p *Project, k string, val any) {
		s := val.(string)
		u, err := url.Parse(s)
		switch {
		case !v.text(k, s, maxURL):
		case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
			// The URL may carry a token: the message does not repeat it.
			v.add(k, ErrValue, "must be an http:// or https:// URL")
		default:
			p.Notify.Webhook = s
		}
	}, get: str(func(p *Project) string { return p.Notify.Webhook })},
	{key: "notify.level", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		switch l := Level(val.(string)); l {
		case LevelInfo, LevelWarning, LevelError:
			p.Notify.Level = l
		default:
			v.add(k, ErrValue, "must be \"info\", \"warning\" or \"error\", got %q", val)
		}
	}, get: func(p *Project) (any, bool) {
		return string(p.Notify.Level), p.Notify.Level != DefaultNotifyLevel && p.Notify.Level != ""
	}},
	{key: "notify.allow_local", kind: kBool, set: func(v *validator, p *Project, k string, val any) {
		if val.(bool) && v.foreign {
			// A user's file must not point root's bm2-notify at what
			// listens on the machine's own loopback.
			v.add(k, ErrValue, "is honoured only in a file root wrote: ask root to set it in the project's file in /etc/bm2 "+
				"(a webhook on loopback, or on another of the host's own addresses, is otherwise refused)")
			return
		}
		p.Notify.AllowLocal = val.(bool)
	}, get: func(p *Project) (any, bool) { return p.Notify.AllowLocal, p.Notify.AllowLocal }},
	{key: "resources", kind: kTable},
	{key: "resources.memory_max", kind: kString, set: size(func(p *Project) *string { return &p.Resources.MemoryMax }),
		get: str(func(p *Project) string { return p.Resources.MemoryMax }), directive: "MemoryMax"},
	{key: "resources.memory_high", kind: kString, set: size(func(p *Project) *string { return &p.Resources.MemoryHigh }),
		get: str(func(p *Project) string { return p.Resources.MemoryHigh }), directive: "MemoryHigh"},
	{key: "resources.cpu_quota", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		if s := val.(string); !cpuQuotaRE.MatchString(s) || percentZero(s) {
			v.add(k, ErrValue, "must be a percentage above 0 with at most two decimals, like \"150%%\", got %q", s)
		} else {
			p.Resources.CPUQuota = s
		}
	}, get: str(func(p *Project) string { return p.Resources.CPUQuota }), directive: "CPUQuota"},
	{key: "resources.cpu_weight", kind: kInt, set: intInto(1, 10000, func(p *Project) *int { return &p.Resources.CPUWeight }),
		get: num(func(p *Project) int { return p.Resources.CPUWeight }, 0), directive: "CPUWeight"},
	{key: "resources.tasks_max", kind: kInt, set: intInto(1, 4194304, func(p *Project) *int { return &p.Resources.TasksMax }),
		get: num(func(p *Project) int { return p.Resources.TasksMax }, 0), directive: "TasksMax"},
	// The slice's, not each instance's: no directive in the drop-in.
	{key: "resources.slice_tasks_max", kind: kInt, set: intInto(1, 4194304, func(p *Project) *int { return &p.Resources.SliceTasksMax }),
		get: num(func(p *Project) int { return p.Resources.SliceTasksMax }, 0)},
	{key: "resources.limit_nofile", kind: kInt, set: intInto(1, 1073741816, func(p *Project) *int { return &p.Resources.LimitNOFILE }),
		get: num(func(p *Project) int { return p.Resources.LimitNOFILE }, 0), directive: "LimitNOFILE"},
	{key: "sandbox", kind: kTable},
	{key: "sandbox.mode", kind: kString, set: func(v *validator, p *Project, k string, val any) {
		switch m := SandboxMode(val.(string)); m {
		case Strict, Compat:
			p.Sandbox.Mode = m
		default:
			v.add(k, ErrValue, "must be \"strict\" or \"compat\", got %q", val)
		}
	}, get: func(p *Project) (any, bool) { return string(p.Sandbox.Mode), p.Sandbox.Mode == Compat }},
	{key: "sandbox.writable", kind: kStrings, set: func(v *validator, p *Project, k string, val any) {
		for i, s := range val.([]string) {
			ik := fmt.Sprintf("%s[%d]", k, i)
			switch {
			case s == "":
				v.add(ik, ErrValue, "must not be empty (use \".\" for cwd)")
			case !v.text(ik, s, maxPath) || !v.noBackslash(ik, s) || !v.pathNames(ik, s):
			case strings.ContainsAny(s, " \t\"'%"):
				// ReadWritePaths= is a list split at spaces, with quotes and
				// %-specifiers of its own: "x /etc" would be two paths.
				v.add(ik, ErrValue, "must not contain spaces, quotes or %%, got %q (systemd's ReadWritePaths= would read it as other paths)", s)
			case path.Clean(s) == "/":
				v.add(ik, ErrValue, "must not be / (that is no sandbox: use mode = \"compat\" if the app needs it)")
			case strings.HasPrefix(path.Clean(s), ".."):
				v.add(ik, ErrValue, "must not leave cwd with \"..\", got %q (write the absolute path)", s)
			default:
				p.Sandbox.Writable = append(p.Sandbox.Writable, s) // made absolute in finish
			}
		}
	}, get: list(func(p *Project) []string { return p.Sandbox.Writable })},
	{key: "sandbox.extra_ports", kind: kInts, set: setExtraPorts, get: func(p *Project) (any, bool) {
		return p.Sandbox.ExtraPorts, len(p.Sandbox.ExtraPorts) > 0
	}},
}

// known is every key, for "did you mean" hints.
var known = func() []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.key
	}
	return out
}()

func lookup(key string) (spec, bool) {
	for _, s := range specs {
		if s.key == key {
			return s, true
		}
	}
	return spec{}, false
}

// Directive is a [Service] directive whose value is a project setting as
// written in the file.
type Directive struct{ Name, Value string }

// Directives returns the project's settings that map one to one onto
// [Service] directives (group, the [resources] table), in table order,
// leaving out those not set.
func Directives(p *Project) []Directive {
	var out []Directive
	for _, s := range specs {
		if s.directive == "" {
			continue
		}
		if v, ok := s.get(p); ok {
			out = append(out, Directive{s.directive, fmt.Sprint(v)})
		}
	}
	return out
}

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	userRE     = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_-]*[$]?$`)
	uidRE      = regexp.MustCompile(`^[0-9]+$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sizeRE     = regexp.MustCompile(`^([1-9][0-9]*)([KMGTPE]?)$`)
	percentRE  = regexp.MustCompile(`^(100(\.0{1,2})?|[0-9]{1,2}(\.[0-9]{1,2})?)%$`)
	cpuQuotaRE = regexp.MustCompile(`^[0-9]{1,7}(\.[0-9]{1,2})?%$`)
)

// setName checks the project name: the file's stem (unless the file is a
// project dir's bm2.toml), and short enough for every unit and file name
// bm2 derives from it.
func setName(v *validator, p *Project, k string, val any) {
	s := val.(string)
	switch {
	case !nameRE.MatchString(s) || len(s) > maxNameLen:
		v.add(k, ErrValue, "%q is not a valid project name: use 1 to %d of a-z, 0-9, '-' and '_', starting with a letter or digit", s, maxNameLen)
	case !v.anyName && s != Stem(v.file):
		v.add(k, ErrValue, "%q does not match the file name: rename the file to %s.toml or set name = %q", s, s, Stem(v.file))
	default:
		p.Name = s
	}
}

// NameError says why a valid-looking name cannot be a project: its unit
// names would not fit NAME_MAX. "" when it can.
func NameError(name string, instances int) string {
	if n := units.LongestName(name, instances); n > units.NameMax {
		return fmt.Sprintf("%q is too long once escaped for systemd: its unit files would need names of %d bytes, more than %d (every \"-\" takes 4 bytes in a slice name)",
			name, n, units.NameMax)
	}
	return ""
}

func setEnv(v *validator, p *Project, k string, val any) {
	m := val.(map[string]string)
	names := sortedKeys(m)
	total := 0
	for _, name := range names {
		key := k + "." + name
		value := m[name]
		total += len(name) + len(value)
		switch {
		case !envNameRE.MatchString(name):
			v.add(key, ErrValue, "%q is not a valid environment variable name", name)
		case strings.HasPrefix(name, reservedEnv):
			v.add(key, ErrValue, "BM2_* variables are bm2's own (BM2_APP_NAME, BM2_APP_PORT, ...): choose another name")
		case strings.ContainsRune(value, 0):
			v.add(key, ErrValue, "must not contain NUL")
		case len(value) > maxEnvValue:
			v.add(key, ErrValue, "is %d bytes long, more than %d", len(value), maxEnvValue)
		default:
			p.Env = append(p.Env, EnvVar{Name: name, Value: value})
		}
	}
	if total > maxEnvLen {
		v.add(k, ErrValue, "holds %d bytes, more than %d", total, maxEnvLen)
	}
}

// setPortEnv checks port_env: the variables that also receive the
// instance's port (BM2_APP_PORT's value), for apps that read PORT. Each is
// a valid variable name, none BM2_* (bm2 sets those), none twice, at most
// maxNeeds of them. A name also in [env] is refused in finish: the [env]
// file would override it.
func setPortEnv(v *validator, p *Project, k string, val any) {
	list := val.([]string)
	if len(list) > maxNeeds {
		v.add(k, ErrValue, "lists %d variables, more than %d", len(list), maxNeeds)
		return
	}
	seen := map[string]int{}
	for i, name := range list {
		ik := fmt.Sprintf("%s[%d]", k, i)
		switch j, dup := seen[name]; {
		case !envNameRE.MatchString(name):
			v.add(ik, ErrValue, "%q is not a valid environment variable name", name)
		case strings.HasPrefix(name, reservedEnv):
			v.add(ik, ErrValue, "%q is bm2's own: every instance already gets BM2_APP_PORT", name)
		case dup:
			v.add(ik, ErrValue, "%q is listed twice (also %s[%d])", name, k, j)
		default:
			seen[name] = i
			p.PortEnv = append(p.PortEnv, name)
		}
	}
	v.portEnvAt = seen
}

// setExtraPorts checks [sandbox] extra_ports: the ports every instance may
// bind besides its own (an inspector, a metrics port). Each is 1-65535,
// none twice, at most MaxExtraPorts; one inside the project's own range is
// refused in finish (the port fence gives each instance its own port
// only, and a fork instance must not bind its neighbour's).
func setExtraPorts(v *validator, p *Project, k string, val any) {
	list := val.([]int64)
	if len(list) > MaxExtraPorts {
		v.add(k, ErrValue, "lists %d ports, more than %d", len(list), MaxExtraPorts)
		return
	}
	seen := map[int64]int{}
	for i, n := range list {
		ik := fmt.Sprintf("%s[%d]", k, i)
		if j, dup := seen[n]; dup {
			v.add(ik, ErrValue, "%d is listed twice (also %s[%d])", n, k, j)
			continue
		}
		if !v.intRange(ik, n, 1, 65535) {
			continue
		}
		seen[n] = i
		p.Sandbox.ExtraPorts = append(p.Sandbox.ExtraPorts, int(n))
	}
	v.extraPortAt = seen
}

// needs checks the units of wants or requires: at most maxNeeds, each a
// unit name systemd takes (see unitName), none twice, none of the
// project's own units, and none in other (wants, for requires).
func (v *validator) needs(key string, list []string, project string, other []string) []string {
	if len(list) > maxNeeds {
		v.add(key, ErrValue, "lists %d units, more than %d", len(list), maxNeeds)
		return nil
	}
	first := make(map[string]int, len(list))
	var out []string
	for i, u := range list {
		ik := fmt.Sprintf("%s[%d]", key, i)
		if ownUnit(project, u) {
			v.add(ik, ErrValue, "%q is one of project %s's own units (its target, its slice, its instances and their probes, its restart and health timers): a project cannot need itself", u, project)
			continue
		}
		if !v.unitName(ik, u) {
			continue
		}
		if j, dup := first[u]; dup {
			v.add(ik, ErrValue, "%q is listed twice (also %s[%d])", u, key, j)
			continue
		}
		first[u] = i
		if slices.Contains(other, u) {
			v.add(ik, ErrValue, "%q is in wants too: list it in one of the two (requires pulls it in as well)", u)
			continue
		}
		out = append(out, u)
	}
	return out
}

// unitName checks a unit name as systemd takes it in Wants=, Requires= and
// After=: 1 to 255 bytes of A-Z a-z 0-9 : _ . - @, no specifier (%), a
// name before the type suffix, one of unitTypes, and for a template unit
// an instance.
func (v *validator) unitName(key, s string) bool {
	bad := func(format string, args ...any) bool {
		v.add(key, ErrValue, format, args...)
		return false
	}
	if s == "" {
		return bad("must not be empty: name a unit, like \"postgresql.service\"")
	}
	if !v.text(key, s, units.NameMax) {
		return false
	}
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			return bad("%q must not contain white space: write one unit per string", s)
		case r == '%':
			return bad("%q must not contain %% (systemd would expand a specifier)", s)
		case !unitNameChar(r):
			return bad("%q must not contain %q: a unit name has only A-Z a-z 0-9 : _ . - @", s, r)
		}
	}
	dot := strings.LastIndexByte(s, '.')
	switch {
	case dot < 0:
		return bad("%q has no unit type: did you mean %q?", s, s+".service")
	case !slices.Contains(unitTypes, s[dot+1:]):
		return bad("%q is not a unit of a type wants and requires take (%s)", s, unitTypesText)
	case dot == 0:
		return bad("%q has no name before its type", s)
	}
	switch at := strings.IndexByte(s, '@'); {
	case at == 0:
		return bad("%q has no name before @", s)
	case at == dot-1:
		return bad("%q is a template: name one of its instances, like %q", s, s[:dot]+"main"+s[dot:])
	}
	return true
}

func unitNameChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(":_.-@", r)
}

// ownUnit tells whether unit is one bm2 makes for the project: its target,
// its slice, its restart schedule's and its health check's timer and
// service, or an instance's service, probe or failure unit (of any
// number).
func ownUnit(project, unit string) bool {
	if project == "" {
		return false
	}
	switch unit {
	case units.Target(project), units.Slice(project), units.RestartTimer(project), units.RestartService(project),
		units.HealthTimer(project), units.HealthService(project), units.MemoryTimer(project), units.MemoryService(project),
		units.ReloadTemplate(project):
		return true
	}
	if i, ok := strings.CutPrefix(unit, "bm2-"+project+"-reload@"); ok {
		if n, ok := strings.CutSuffix(i, ".service"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	for _, prefix := range []string{"bm2@", "bm2-probe@", "bm2-failed@"} {
		inst, ok := strings.CutPrefix(unit, prefix+project+"-")
		if !ok {
			continue
		}
		if n, ok := strings.CutSuffix(inst, ".service"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
			return true
		}
	}
	return false
}

func size(dst func(*Project) *string) func(*validator, *Project, string, any) {
	return func(v *validator, p *Project, k string, val any) {
		s := val.(string)
		if !validSize(s) {
			v.add(k, ErrValue, "must be a size like \"512M\" or \"2G\" (at least 1 byte, suffixes K M G T P E), a percentage of memory above 0 and at most 100 with at most two decimals like \"80%%\", or \"infinity\", got %q", s)
			return
		}
		*dst(p) = s
	}
}

// validSize accepts what systemd's MemoryMax= and MemoryHigh= accept and
// apply: bytes (with a base-1024 suffix) that fit 64 bits, a percentage of
// physical memory above 0% and at most 100% with at most two decimals, or
// "infinity". systemd would ignore the rest ("0", "101%", "50.123%", a
// number that overflows), so bm2 refuses it.
func validSize(s string) bool {
	if s == "infinity" {
		return true
	}
	if percentRE.MatchString(s) {
		return !percentZero(s)
	}
	m := sizeRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		return false
	}
	shift := strings.Index("KMGTPE", m[2]) + 1 // 0 without a suffix
	if m[2] == "" {
		shift = 0
	}
	return n <= (math.MaxUint64-1)>>(10*shift)
}

func percentZero(s string) bool {
	f, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	return err != nil || f <= 0
}

func intInto(lo, hi int64, dst func(*Project) *int) func(*validator, *Project, string, any) {
	return func(v *validator, p *Project, k string, val any) {
		if n := val.(int64); v.intRange(k, n, lo, hi) {
			*dst(p) = int(n)
		}
	}
}

func ms(lo, hi time.Duration, dst func(*Project) *time.Duration) func(*validator, *Project, string, any) {
	return func(v *validator, p *Project, k string, val any) {
		if n := val.(int64); v.intRange(k, n, lo.Milliseconds(), hi.Milliseconds()) {
			*dst(p) = time.Duration(n) * time.Millisecond
		}
	}
}

func always(f func(*Project) any) func(*Project) (any, bool) {
	return func(p *Project) (any, bool) { return f(p), true }
}

func str(f func(*Project) string) func(*Project) (any, bool) {
	return func(p *Project) (any, bool) { s := f(p); return s, s != "" }
}

func num(f func(*Project) int, def int) func(*Project) (any, bool) {
	return func(p *Project) (any, bool) { n := f(p); return n, n != def }
}

func msValue(def time.Duration, f func(*Project) time.Duration) func(*Project) (any, bool) {
	return func(p *Project) (any, bool) { d := f(p); return int(d.Milliseconds()), d != def }
}

func list(f func(*Project) []string) func(*Project) (any, bool) {
	return func(p *Project) (any, bool) { v := f(p); return v, len(v) > 0 }
}
