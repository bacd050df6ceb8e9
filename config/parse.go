package config

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// rawProject mirrors the file. Pointers tell "absent" from "zero".
type rawProject struct {
	Name           *string           `toml:"name"`
	Script         *string           `toml:"script"`
	Cwd            *string           `toml:"cwd"`
	Runtime        *string           `toml:"runtime"`
	RuntimePath    *string           `toml:"runtime_path"`
	RuntimeArgs    []string          `toml:"runtime_args"`
	Args           []string          `toml:"args"`
	Instances      *instances        `toml:"instances"`
	Port           *int64            `toml:"port"`
	ExecMode       *string           `toml:"exec_mode"`
	User           *string           `toml:"user"`
	Group          *string           `toml:"group"`
	RestartDelayMS *int64            `toml:"restart_delay_ms"`
	MaxRestarts    *int64            `toml:"max_restarts"`
	MinUptimeMS    *int64            `toml:"min_uptime_ms"`
	StopTimeoutMS  *int64            `toml:"stop_timeout_ms"`
	EnvFile        *string           `toml:"env_file"`
	Env            map[string]string `toml:"env"`
	Notify         *struct {
		Webhook *string `toml:"webhook"`
		Level   *string `toml:"level"`
	} `toml:"notify"`
	Resources *struct {
		MemoryMax   *string `toml:"memory_max"`
		MemoryHigh  *string `toml:"memory_high"`
		CPUQuota    *string `toml:"cpu_quota"`
		CPUWeight   *int64  `toml:"cpu_weight"`
		TasksMax    *int64  `toml:"tasks_max"`
		LimitNOFILE *int64  `toml:"limit_nofile"`
	} `toml:"resources"`
}

// instances is an integer or the string "max".
type instances struct {
	n   int64
	max bool
}

func (in *instances) UnmarshalTOML(v any) error {
	switch v := v.(type) {
	case int64:
		in.n = v
		return nil
	case string:
		if v == "max" {
			in.max = true
			return nil
		}
		return fmt.Errorf("must be a whole number or \"max\", got %q", v)
	default:
		return fmt.Errorf("must be a whole number or \"max\", got a %s", tomlTypeName(v))
	}
}

func tomlTypeName(v any) string {
	switch v.(type) {
	case int64:
		return "integer"
	case float64:
		return "float"
	case bool:
		return "boolean"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "table"
	default:
		return fmt.Sprintf("%T", v)
	}
}

var (
	nameRE     = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	userRE     = regexp.MustCompile(`^([a-z_][a-z0-9_-]*[$]?|[0-9]+)$`)
	envNameRE  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	sizeRE     = regexp.MustCompile(`^([0-9]+[KMGT]?|[0-9]+(\.[0-9]+)?%|infinity)$`)
	cpuQuotaRE = regexp.MustCompile(`^[1-9][0-9]*%$`)
)

// Stem is the project name a file path implies: its base name without ".toml".
func Stem(file string) string {
	return strings.TrimSuffix(filepath.Base(file), ".toml")
}

// Parse decodes and validates one project file. file is used for messages
// and for the name-must-match-stem rule; numCPU resolves instances = "max".
// On failure the error is an Errors value listing every problem found.
func Parse(file string, data []byte, numCPU int) (*Project, error) {
	var raw rawProject
	md, err := toml.NewDecoder(strings.NewReader(string(data))).Decode(&raw)
	if err != nil {
		return nil, Errors{decodeError(file, err)}
	}
	v := &validator{file: file, lines: keyLines(data)}
	for _, k := range md.Undecoded() {
		key := k.String()
		// Report only the outermost unknown key: [foo] with foo.a and foo.b
		// is one mistake, not three.
		if len(k) > 1 && !md.IsDefined(k[:len(k)-1]...) {
			continue
		}
		if len(k) > 1 && isUndecoded(md, k[:len(k)-1]) {
			continue
		}
		v.add(key, ErrUnknownKey, "unknown key%s", suggest(key))
	}
	p := v.project(&raw, numCPU)
	if len(v.errs) > 0 {
		sort.SliceStable(v.errs, func(i, j int) bool { return v.errs[i].Line < v.errs[j].Line })
		return nil, v.errs
	}
	return p, nil
}

func isUndecoded(md toml.MetaData, k toml.Key) bool {
	want := k.String()
	for _, u := range md.Undecoded() {
		if u.String() == want {
			return true
		}
	}
	return false
}

// known lists every key, for "did you mean" hints.
var known = []string{
	"name", "script", "cwd", "runtime", "runtime_path", "runtime_args", "args",
	"instances", "port", "exec_mode", "user", "group", "restart_delay_ms",
	"max_restarts", "min_uptime_ms", "stop_timeout_ms", "env_file", "env",
	"notify", "notify.webhook", "notify.level", "resources",
	"resources.memory_max", "resources.memory_high", "resources.cpu_quota",
	"resources.cpu_weight", "resources.tasks_max", "resources.limit_nofile",
}

// suggest returns ` (did you mean "x"?)` for a near miss, or "".
func suggest(key string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// decodeError turns the TOML library's error into an *Error with a line.
func decodeError(file string, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		msg := pe.Message
		class := ErrSyntax
		if strings.Contains(msg, "incompatible types") || strings.Contains(msg, "must be a whole number") ||
			strings.Contains(msg, "cannot be") || strings.Contains(msg, "type mismatch") {
			class = ErrType
			msg = typeMessage(msg)
		}
		return &Error{File: file, Line: pe.Position.Line, Key: pe.LastKey, Msg: msg, Err: class}
	}
	// Type mismatches come as plain errors:
	// toml: line 4 (last key "port"): incompatible types: ...
	if m := typeErrRE.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		return &Error{File: file, Line: line, Key: m[2], Msg: typeMessage(m[3]), Err: ErrType}
	}
	return &Error{File: file, Msg: err.Error(), Err: ErrSyntax}
}

var typeErrRE = regexp.MustCompile(`^toml: (?:line (\d+) )?\(last key "([^"]*)"\): (.*)$`)

// typeMessage rewrites the library's type complaint in the words of the file.
func typeMessage(msg string) string {
	// "incompatible types: TOML value has type int64; destination has type string"
	if i := strings.Index(msg, "TOML value has type "); i >= 0 {
		rest := msg[i+len("TOML value has type "):]
		got, want, ok := strings.Cut(rest, "; destination has type ")
		if ok {
			msg := fmt.Sprintf("must be %s, got %s", goTypeWord(want), goTypeWord(got))
			if goTypeWord(want) == "a string" && goTypeWord(got) != "a table" && goTypeWord(got) != "an array" {
				msg += " (put the value in quotes)"
			}
			return msg
		}
	}
	return msg
}

func goTypeWord(t string) string {
	t = strings.TrimSpace(t)
	switch {
	case t == "string":
		return "a string"
	case strings.HasPrefix(t, "int"), strings.HasPrefix(t, "uint"):
		return "an integer"
	case strings.HasPrefix(t, "float"):
		return "a float"
	case t == "bool":
		return "a boolean"
	case strings.HasPrefix(t, "[]"), strings.HasPrefix(t, "array"):
		return "an array"
	case strings.HasPrefix(t, "map"), strings.HasPrefix(t, "struct"), strings.HasPrefix(t, "table"):
		return "a table"
	}
	return t
}

type validator struct {
	file  string
	lines map[string]int
	errs  Errors
}

func (v *validator) add(key string, class error, format string, args ...any) {
	v.errs = append(v.errs, &Error{
		File: v.file, Line: v.lines[key], Key: key, Msg: fmt.Sprintf(format, args...), Err: class,
	})
}

func (v *validator) missing(key, hint string) {
	v.errs = append(v.errs, &Error{File: v.file, Key: key, Msg: "required" + hint, Err: ErrMissing})
}

// text checks a string that ends up in a unit file: no NUL or control
// characters other than tab.
func (v *validator) text(key, s string) bool {
	for _, r := range s {
		if r == 0 || (r < 0x20 && r != '\t') || r == 0x7f {
			v.add(key, ErrValue, "must not contain control characters")
			return false
		}
	}
	return true
}

func (v *validator) absPath(key, s string) bool {
	if !v.text(key, s) {
		return false
	}
	if !path.IsAbs(s) {
		v.add(key, ErrValue, "must be an absolute path, got %q", s)
		return false
	}
	if strings.ContainsRune(s, '\\') || strings.TrimSpace(s) != s {
		v.add(key, ErrValue, "must not contain backslashes or surrounding spaces, got %q", s)
		return false
	}
	return true
}

func (v *validator) intRange(key string, n, lo, hi int64) bool {
	if n < lo || n > hi {
		v.add(key, ErrValue, "must be between %d and %d, got %d", lo, hi, n)
		return false
	}
	return true
}

func (v *validator) project(raw *rawProject, numCPU int) *Project {
	p := &Project{
		File:         v.file,
		Mode:         Cluster,
		User:         DefaultUser,
		RestartDelay: DefaultRestartDelay,
		MaxRestarts:  DefaultMaxRestarts,
		MinUptime:    DefaultMinUptime,
		StopTimeout:  DefaultStopTimeout,
		Notify:       Notify{Level: DefaultNotifyLevel},
	}
	stem := Stem(v.file)
	switch {
	case raw.Name == nil:
		v.missing("name", fmt.Sprintf(" (the project's name; this file's name implies %q)", stem))
	case !nameRE.MatchString(*raw.Name) || len(*raw.Name) > maxNameLen:
		v.add("name", ErrValue, "%q is not a valid project name: use 1 to %d of a-z, 0-9, '-' and '_', starting with a letter or digit", *raw.Name, maxNameLen)
	case *raw.Name != stem:
		v.add("name", ErrValue, "%q does not match the file name: rename the file to %s.toml or set name = %q", *raw.Name, *raw.Name, stem)
	default:
		p.Name = *raw.Name
	}

	if raw.Script == nil {
		v.missing("script", " (the entry file, relative to cwd)")
	} else if *raw.Script == "" {
		v.add("script", ErrValue, "must not be empty")
	} else if v.text("script", *raw.Script) {
		p.Script = *raw.Script
	}

	if raw.Cwd == nil {
		v.missing("cwd", " (the app's absolute directory; bm2 serve fills it in)")
	} else if v.absPath("cwd", *raw.Cwd) {
		p.Cwd = path.Clean(*raw.Cwd)
	}

	if raw.Runtime != nil {
		switch r := Runtime(*raw.Runtime); r {
		case Bun, Node:
			p.Runtime = r
		default:
			v.add("runtime", ErrValue, "must be \"bun\" or \"node\", got %q", *raw.Runtime)
		}
	} else {
		p.Runtime = RuntimeFor(p.Script)
	}
	if raw.RuntimePath != nil && v.absPath("runtime_path", *raw.RuntimePath) {
		p.RuntimePath = path.Clean(*raw.RuntimePath)
	}
	for i, a := range raw.RuntimeArgs {
		v.text(fmt.Sprintf("runtime_args[%d]", i), a)
	}
	p.RuntimeArgs = raw.RuntimeArgs
	for i, a := range raw.Args {
		v.text(fmt.Sprintf("args[%d]", i), a)
	}
	p.Args = raw.Args

	p.Instances = 1
	if raw.Instances != nil {
		if raw.Instances.max {
			p.MaxInstance = true
			p.Instances = max(1, min(numCPU, maxInstances))
		} else if v.intRange("instances", raw.Instances.n, 1, maxInstances) {
			p.Instances = int(raw.Instances.n)
		}
	}

	if raw.ExecMode != nil {
		switch m := ExecMode(*raw.ExecMode); m {
		case Cluster, Fork:
			p.Mode = m
		default:
			v.add("exec_mode", ErrValue, "must be \"cluster\" or \"fork\", got %q", *raw.ExecMode)
		}
	}

	if raw.Port == nil {
		v.missing("port", " (the port the app listens on, 1-65535)")
	} else if v.intRange("port", *raw.Port, 1, 65535) {
		p.Port = int(*raw.Port)
		if p.Mode == Fork && p.Port+p.Instances-1 > 65535 {
			v.add("port", ErrValue, "fork mode needs ports %d~%d, past 65535", p.Port, p.Port+p.Instances-1)
		}
	}

	if raw.User != nil {
		if !userRE.MatchString(*raw.User) || len(*raw.User) > 32 {
			v.add("user", ErrValue, "%q is not a valid user name", *raw.User)
		} else {
			p.User = *raw.User
		}
	}
	if raw.Group != nil {
		if !userRE.MatchString(*raw.Group) || len(*raw.Group) > 32 {
			v.add("group", ErrValue, "%q is not a valid group name", *raw.Group)
		} else {
			p.Group = *raw.Group
		}
	}

	ms := func(key string, n *int64, lo, hi time.Duration, dst *time.Duration) {
		if n != nil && v.intRange(key, *n, lo.Milliseconds(), hi.Milliseconds()) {
			*dst = time.Duration(*n) * time.Millisecond
		}
	}
	ms("restart_delay_ms", raw.RestartDelayMS, 0, maxRestartDelay, &p.RestartDelay)
	ms("min_uptime_ms", raw.MinUptimeMS, 0, maxRestartDelay, &p.MinUptime)
	ms("stop_timeout_ms", raw.StopTimeoutMS, time.Millisecond, maxStopTimeout, &p.StopTimeout)
	if raw.MaxRestarts != nil && v.intRange("max_restarts", *raw.MaxRestarts, 0, maxMaxRestarts) {
		p.MaxRestarts = int(*raw.MaxRestarts)
	}

	if raw.EnvFile != nil && v.text("env_file", *raw.EnvFile) {
		switch f := *raw.EnvFile; {
		case f == "":
			v.add("env_file", ErrValue, "must not be empty")
		case path.IsAbs(f):
			p.EnvFile = path.Clean(f)
		case p.Cwd != "":
			p.EnvFile = path.Join(p.Cwd, f)
		}
	}

	names := make([]string, 0, len(raw.Env))
	for k := range raw.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		key := "env." + k
		switch {
		case !envNameRE.MatchString(k):
			v.add(key, ErrValue, "%q is not a valid environment variable name", k)
		case strings.HasPrefix(k, "BM2_APP_"):
			v.add(key, ErrValue, "BM2_APP_* variables are set by bm2 itself")
		case strings.ContainsRune(raw.Env[k], 0):
			v.add(key, ErrValue, "must not contain NUL")
		default:
			p.Env = append(p.Env, EnvVar{Name: k, Value: raw.Env[k]})
		}
	}

	if n := raw.Notify; n != nil {
		if n.Webhook != nil {
			if u, err := url.Parse(*n.Webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || !v.text("notify.webhook", *n.Webhook) {
				v.add("notify.webhook", ErrValue, "must be an http:// or https:// URL, got %q", *n.Webhook)
			} else {
				p.Notify.Webhook = *n.Webhook
			}
		}
		if n.Level != nil {
			switch l := Level(*n.Level); l {
			case LevelInfo, LevelWarning, LevelError:
				p.Notify.Level = l
			default:
				v.add("notify.level", ErrValue, "must be \"info\", \"warning\" or \"error\", got %q", *n.Level)
			}
		}
	}

	if r := raw.Resources; r != nil {
		size := func(key string, s *string, dst *string) {
			if s == nil {
				return
			}
			if !sizeRE.MatchString(*s) {
				v.add(key, ErrValue, "must be a size like \"512M\", \"2G\", \"80%%\" or \"infinity\", got %q", *s)
				return
			}
			*dst = *s
		}
		size("resources.memory_max", r.MemoryMax, &p.Resources.MemoryMax)
		size("resources.memory_high", r.MemoryHigh, &p.Resources.MemoryHigh)
		if r.CPUQuota != nil {
			if !cpuQuotaRE.MatchString(*r.CPUQuota) {
				v.add("resources.cpu_quota", ErrValue, "must be a percentage like \"150%%\", got %q", *r.CPUQuota)
			} else {
				p.Resources.CPUQuota = *r.CPUQuota
			}
		}
		if r.CPUWeight != nil && v.intRange("resources.cpu_weight", *r.CPUWeight, 1, 10000) {
			p.Resources.CPUWeight = int(*r.CPUWeight)
		}
		if r.TasksMax != nil && v.intRange("resources.tasks_max", *r.TasksMax, 1, 4194304) {
			p.Resources.TasksMax = int(*r.TasksMax)
		}
		if r.LimitNOFILE != nil && v.intRange("resources.limit_nofile", *r.LimitNOFILE, 1, 1073741816) {
			p.Resources.LimitNOFILE = int(*r.LimitNOFILE)
		}
	}
	return p
}

// RuntimeFor is the runtime used when the file names none: Bun for
// TypeScript entry files, Node.js otherwise.
func RuntimeFor(script string) Runtime {
	switch strings.ToLower(path.Ext(script)) {
	case ".ts", ".tsx", ".mts", ".cts":
		return Bun
	}
	return defaultRuntimeNodeJS
}

// FormatMS renders a duration as systemd milliseconds, e.g. "100ms".
func FormatMS(d time.Duration) string {
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
