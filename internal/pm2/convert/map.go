package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/jsruntime"
)

// Source is what an ecosystem file or a dump holds, as data.
type Source struct {
	File string    // absolute path of the ecosystem file or dump
	Dump bool      // a dump.pm2 written by pm2 save (Apps are its processes)
	Apps []*Object // the apps (a dump: one entry per process)
	// Keys are the ecosystem file's top-level keys other than apps
	// (deploy, static, ...).
	Keys []string
	// Owner is the uid of the file's owner as it was read (from the file
	// descriptor the data came from), and OwnerKnown says it was: the
	// file speaks for that user only (package trust).
	Owner      int
	OwnerKnown bool
	// Speaker is who the file speaks for (trust.File.Speaker): 0 for
	// root's, a uid when only that user could have written it,
	// trust.Nobody (-1) when more than one user could; Why says why for
	// Nobody. Set with Owner.
	Speaker int
	Why     string
}

// Options are the choices of the command line and the facts of the host
// that an import depends on.
type Options struct {
	Env  string   // --env NAME: env_NAME over env
	Only []string // --only: import these apps (by PM2 name, see Chosen) only
	Port int      // --port: the port, over what the file says (one app only)
	Fork bool     // --mode fork
	Out  string   // --out DIR: write DIR/<name>.toml instead of <cwd>/bm2.toml

	NumCPU int // for instances = -N
	// Owner names the owner of a directory when it is a user other than
	// root ("" otherwise, or when the directory does not exist): an app
	// whose cwd is a user's runs as that user, as it did under PM2.
	Owner func(dir string) string
	// Runtime says what is wrong with the runtime a project would run
	// (kind, and runtime_path or "" for the one systemd finds), "" when it
	// is usable. nil: not checked.
	Runtime func(kind config.Runtime, runtimePath string) string
}

// Project is one imported app.
type Project struct {
	App     string // the app's name in PM2
	Name    string // the project's name
	Cwd     string
	File    string // where its bm2.toml goes
	Data    []byte // the bm2.toml
	Secrets bool   // it has [env]: written readable by its owner only
	User    string // user =, "" for an account of its own
	Summary string // `4 x cluster on port 3000, runtime node`
	Notes   []string
	// Dropped are the variables of a dump's environment that were not the
	// app's own (see OwnEnv), by name.
	Dropped []string
}

// Refusal is an app that was not imported, and why.
type Refusal struct {
	App    string // its name, or "app 2" for one without
	Reason string
}

func (r Refusal) String() string { return r.App + ": " + r.Reason }

// Result is an import's outcome. Notes are about the file as a whole.
type Result struct {
	Projects []Project
	Refused  []Refusal
	Notes    []string
}

// Map imports every app of src (or those in opts.Only). It never fails
// as a whole: what cannot be imported is refused app by app.
func Map(src Source, opts Options) Result {
	var res Result
	base := path.Base(src.File)
	apps := src.Apps
	if src.Dump {
		var notes []string
		apps, notes = DumpApps(src.Apps)
		res.Notes = append(res.Notes, notes...)
	}
	for _, k := range src.Keys {
		switch k {
		case "deploy":
			res.Notes = append(res.Notes, base+": deploy ignored: bm2 does not deploy; after a deploy, `bm2 reload <name>` restarts a project without dropping a request")
		case "static":
			res.Notes = append(res.Notes, base+": static ignored: bm2 does not serve static files; a gateway (nginx, Caddy) does that better")
		default:
			res.Notes = append(res.Notes, fmt.Sprintf("%s: top-level key %q ignored", base, k))
		}
	}
	// Apps that share a cwd cannot all have its bm2.toml: each gets
	// bm2.<name>.toml. Decided on every app of the file, not only those
	// imported, so that --only changes no file name.
	perDir := map[string]int{}
	for _, a := range apps {
		perDir[appCwd(src, a)]++
	}
	seen := map[string]string{}
	for i, a := range apps {
		label, derived := appLabel(a, i, base)
		if len(opts.Only) > 0 && !Chosen(opts.Only, label) {
			continue
		}
		m := &mapper{src: src, opts: opts, app: a, label: label, derived: derived, shared: perDir[appCwd(src, a)] > 1}
		p, err := m.run()
		if err != nil {
			res.Refused = append(res.Refused, Refusal{App: label, Reason: err.Error()})
			continue
		}
		if prev, dup := seen[p.Name]; dup {
			why := fmt.Sprintf("its project name %q is taken by app %q: rename one of them", p.Name, prev)
			if derived {
				// PM2 runs both under the one name; bm2 has one
				// project per name.
				why = fmt.Sprintf("it has no name, and the one PM2 gives it after its script, %q, is taken by app %q (PM2 ran both under that name): add name: \"...\" to one of them", label, prev)
			}
			res.Refused = append(res.Refused, Refusal{App: label, Reason: why})
			continue
		}
		seen[p.Name] = label
		res.Projects = append(res.Projects, *p)
	}
	for _, name := range opts.Only {
		found := false
		for i, a := range apps {
			if label, _ := appLabel(a, i, base); Chosen([]string{name}, label) {
				found = true
			}
		}
		if !found {
			res.Refused = append(res.Refused, Refusal{App: name, Reason: fmt.Sprintf("no app of that name in %s (it has %s)", base, appNames(apps, base))})
		}
	}
	return res
}

// Chosen tells whether --only names an app called name: a value is a
// whole name ("Custom Metrics"), matched as given or without the blanks
// around it ("api, web" names api and web).
func Chosen(only []string, name string) bool {
	for _, o := range only {
		if o == name || strings.TrimSpace(o) == name {
			return true
		}
	}
	return false
}

// PM2Name is an app's name as PM2 7 gives it (lib/Common.js,
// renderApplicationName): its name, or, when it has none, its script's
// file name without the last extension: "server" for ./src/server.js,
// "www" for bin/www, "npm" for npm, "app.config" for app.config.js.
// derived says it came from the script (script, or its aliases cmd,
// command and exec). It is "" when the app has neither.
func PM2Name(a *Object) (name string, derived bool) {
	if v, ok := a.Get("name"); ok && truthy(v) {
		switch v.(type) {
		case string, json.Number:
			s, _ := jsString(v)
			return s, false
		}
		return "", false // not a name: the mapper says so
	}
	r, _ := ruleFor0("script")
	for _, k := range append([]string{r.Key}, r.Aliases...) {
		if s, ok := a.Values[k].(string); ok && s != "" {
			base := path.Base(s)
			if dot := strings.LastIndex(base, "."); dot > 0 {
				base = base[:dot]
			}
			return base, true
		}
	}
	return "", false
}

// appLabel is how an app is called in messages and by --only: its PM2
// name, or "app N of FILE" for one without.
func appLabel(a *Object, i int, base string) (string, bool) {
	if name, derived := PM2Name(a); name != "" {
		return name, derived
	}
	return fmt.Sprintf("app %d of %s", i+1, base), false
}

// Names are the apps of src as --only names them (their PM2 names, see
// PM2Name; "app N of FILE" for one without), each once, in order.
func Names(src Source) []string {
	apps := src.Apps
	if src.Dump {
		apps, _ = DumpApps(src.Apps)
	}
	base := path.Base(src.File)
	var out []string
	for i, a := range apps {
		if label, _ := appLabel(a, i, base); !slices.Contains(out, label) {
			out = append(out, label)
		}
	}
	return out
}

func appNames(apps []*Object, base string) string {
	var names []string
	for i, a := range apps {
		label, _ := appLabel(a, i, base)
		names = append(names, strconv.Quote(label))
	}
	return strings.Join(names, ", ")
}

// appCwd is an app's directory: cwd, relative to the ecosystem file's
// directory, or that directory.
func appCwd(src Source, a *Object) string {
	dir := path.Dir(src.File)
	if v, ok := a.Get("cwd"); ok {
		if s, ok := v.(string); ok && s != "" {
			if path.IsAbs(s) {
				return path.Clean(s)
			}
			return path.Join(dir, s)
		}
	}
	return dir
}

// mapper imports one app.
type mapper struct {
	src   Source
	opts  Options
	app   *Object
	label string
	// derived: the app has no name, and label is the one PM2 gives it
	// after its script (PM2Name).
	derived bool
	shared  bool // another app of the file has the same cwd
	notes   []string
	p       config.Project
}

type refusal struct{ msg string }

func (r refusal) Error() string { return r.msg }

func (m *mapper) refuse(format string, args ...any) error {
	return refusal{fmt.Sprintf(format, args...)}
}

func (m *mapper) note(format string, args ...any) {
	m.notes = append(m.notes, m.p.Name+": "+fmt.Sprintf(format, args...))
}

// str reads a string key; numbers are taken as their text.
func (m *mapper) str(key string) (string, bool, error) {
	v, ok := m.app.Get(key)
	if !ok || v == nil {
		return "", false, nil
	}
	switch v := v.(type) {
	case string:
		return v, true, nil
	case json.Number:
		return jsNumber(v), true, nil
	}
	return "", false, m.refuse("%s must be a string, got %s", key, describe(v))
}

// value returns the value of a key or of its first alias set.
func (m *mapper) value(key string) (any, string, bool) {
	r, _ := ruleFor0(key)
	for _, k := range append([]string{key}, r.Aliases...) {
		if v, ok := m.app.Get(k); ok && v != nil {
			return v, k, true
		}
	}
	return nil, "", false
}

func (m *mapper) run() (*Project, error) {
	m.app = numbers(m.app)
	if err := m.name(); err != nil {
		return nil, err
	}
	m.p.Cwd = appCwd(m.src, m.app)
	for _, step := range []func() error{m.script, m.runtime, m.args, m.instances, m.timing, m.memory, m.user} {
		if err := step(); err != nil {
			return nil, err
		}
	}
	env, err := m.env()
	if err != nil {
		return nil, err
	}
	if err := m.port(env); err != nil {
		return nil, err
	}
	m.schedule() // after port, which settles the mode
	if m.p.Mode == config.Cluster {
		m.p.Drain = config.DefaultDrain // PM2 has none to map; fork mode has none at all
	}
	m.p.Env = nil
	for _, k := range sortedKeys(env) {
		m.p.Env = append(m.p.Env, config.EnvVar{Name: k, Value: env[k]})
	}
	m.others()
	return m.render()
}

var invalidNameRE = regexp.MustCompile(`[^a-z0-9_-]+`)

func (m *mapper) name() error {
	raw, ok, err := m.str("name")
	if err != nil && !m.derived {
		return err
	}
	if m.derived {
		raw, ok = m.label, true
	}
	if !ok || raw == "" {
		return m.refuse("no name and no script: add script: \"index.js\" (the file node runs; PM2 names an app without a name after it)")
	}
	n := invalidNameRE.ReplaceAllString(strings.ToLower(raw), "-")
	n = strings.TrimLeft(n, "-_")
	n = strings.TrimRight(n, "-")
	if len(n) > 64 {
		n = strings.TrimRight(n[:64], "-")
	}
	if n == "" {
		return m.refuse("its name %q has none of a-z 0-9: rename the app", raw)
	}
	m.p.Name = n
	switch {
	case m.derived && n != raw:
		m.note("the app has no name: named after its script, as PM2 names it (%q there; bm2 names are a-z 0-9 - _); add name: \"%s\" to the app to keep the name when the script changes", raw, n)
	case m.derived:
		m.note("the app has no name: named after its script, as PM2 names it; add name: \"%s\" to the app to keep the name when the script changes", n)
	case n != raw:
		m.note("named %q (bm2 names are a-z 0-9 - _): the PM2 app was %q", n, raw)
	}
	return nil
}

// jsExt are the scripts bm2 runs with node or bun.
var jsExt = []string{".js", ".cjs", ".mjs", ".jsx", ".ts", ".cts", ".mts", ".tsx"}

func (m *mapper) script() error {
	key := "script"
	if _, k, ok := m.value("script"); ok {
		key = k // or an alias: cmd, command, exec
	}
	if m.app.Has("pm_exec_path") {
		key = "pm_exec_path" // a dump
	} else {
		r, _ := ruleFor0("script")
		for _, k := range append([]string{"script"}, r.Aliases...) {
			if v, ok := m.app.Get(k); ok && v != nil && k != key {
				m.note("%s ignored: %s is the script, as for PM2", k, key)
			}
		}
	}
	s, ok, err := m.str(key)
	if err != nil {
		return err
	}
	if !ok || s == "" {
		return m.refuse("no script: add script: \"index.js\" (the file node runs)")
	}
	ext := strings.ToLower(path.Ext(s))
	switch {
	case s == "serve":
		return m.refuse("script \"serve\" is PM2's static file server: bm2 runs apps; a gateway (nginx, Caddy) serves files")
	case ext != "" && !slices.Contains(jsExt, ext):
		return m.refuse("script %q is not JavaScript or TypeScript (%s): bm2 runs Node.js and Bun apps only", s, ext)
	case !strings.Contains(s, "/") && !slices.Contains(jsExt, ext):
		return m.refuse("script %q is a command, not a JavaScript file: bm2 runs node or bun on a file; set script to the file it starts (for npm or yarn, the one package.json's \"scripts\" names)", s)
	}
	if path.IsAbs(s) {
		if rel, ok := strings.CutPrefix(path.Clean(s), m.p.Cwd+"/"); ok {
			s = rel
		} else {
			s = path.Clean(s)
		}
	} else {
		s = path.Clean(s)
	}
	m.p.Script = s
	return nil
}

func (m *mapper) runtime() error {
	v, key, ok := m.value("exec_interpreter")
	interp := ""
	if ok {
		s, isStr := v.(string)
		if !isStr {
			return m.refuse("%s must be a string, got %s", key, describe(v))
		}
		interp = s
	}
	switch base := path.Base(interp); {
	case interp == "":
		m.p.Runtime = config.RuntimeFor(m.p.Script)
	case interp == "none":
		return m.refuse("%s \"none\" runs the script as a program: bm2 runs Node.js and Bun apps only", key)
	case base == "node" || base == "nodejs":
		m.p.Runtime = config.Node
	case strings.HasPrefix(interp, "node@"):
		m.p.Runtime = config.Node
		m.nvm(key, interp)
	case base == "bun":
		m.p.Runtime = config.Bun
	default:
		return m.refuse("%s %q: bm2 runs Node.js (node) and Bun (bun) only", key, interp)
	}
	if path.IsAbs(interp) {
		m.p.RuntimePath = path.Clean(interp)
	}
	if m.opts.Runtime != nil {
		if problem := m.opts.Runtime(m.p.Runtime, m.p.RuntimePath); problem != "" {
			return m.refuse("runtime %s", problem)
		}
	}
	if v, key, ok := m.value("node_args"); ok {
		args, err := m.words(key, v)
		if err != nil {
			return err
		}
		m.p.RuntimeArgs = args
	}
	return nil
}

// nvm notes what becomes of PM2's interpreter "node@VERSION": PM2 ran
// $NVM_DIR/versions/node/vVERSION/bin/node (and had nvm install it when
// missing; without NVM_DIR it refused to start the app). bm2 runs the node
// systemd finds unless runtime_path names one.
func (m *mapper) nvm(key, interp string) {
	version := strings.TrimPrefix(interp, "node@")
	found := fmt.Sprintf("the node systemd finds (%s; `bm2 check` says which and its version)", strings.Join(jsruntime.SearchPath(), ":"))
	what := fmt.Sprintf("%s %q is PM2's nvm syntax: PM2 ran $NVM_DIR/versions/node/v%s/bin/node", key, interp, version)
	floor, _ := jsruntime.Floor(config.Node)
	if v, err := jsruntime.ParseVersion(version); err == nil && v.Major < floor.Major {
		m.note("%s; Node.js %s is below bm2's floor, %s, so the app runs on %s; to pin a node, set runtime_path to a Node.js %d or newer (an nvm one is $NVM_DIR/versions/node/vX.Y.Z/bin/node, ~/.nvm by default)",
			what, version, floor, found, floor.Major)
		return
	}
	m.note("%s; under bm2 it runs on %s; to pin that one, set runtime_path to its absolute path ($NVM_DIR/versions/node/v%s/bin/node, ~/.nvm by default)",
		what, found, version)
}

func (m *mapper) args() error {
	if v, ok := m.app.Get("args"); ok && v != nil {
		args, err := m.words("args", v)
		if err != nil {
			return err
		}
		m.p.Args = args
	}
	return nil
}

// argRE is how PM2 splits a string where it takes an array (lib/tools/Config.js).
var argRE = regexp.MustCompile(`[^\s"'=]+="[^"]*"|[^\s"'=]+='[^']*'|"([^"]*)"|'([^']*)'|\S+`)

// SplitArgs splits a string of arguments as PM2 does: on white space,
// with "..." and '...' kept together (and their quotes dropped when they
// make up the whole argument).
func SplitArgs(s string) []string {
	var out []string
	for _, w := range argRE.FindAllString(s, -1) {
		if len(w) >= 2 && (w[0] == '"' && w[len(w)-1] == '"' || w[0] == '\'' && w[len(w)-1] == '\'') {
			w = w[1 : len(w)-1]
		}
		if strings.TrimSpace(w) != "" {
			out = append(out, w)
		}
	}
	return out
}

func (m *mapper) words(key string, v any) ([]string, error) {
	switch v := v.(type) {
	case string:
		return SplitArgs(v), nil
	case []any:
		var out []string
		for i, e := range v {
			s, ok := jsString(e)
			if !ok {
				return nil, m.refuse("%s[%d] is null", key, i)
			}
			if _, isObj := e.(*Object); isObj {
				return nil, m.refuse("%s[%d] must be a string, got an object", key, i)
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, m.refuse("%s must be a string or an array of strings, got %s", key, describe(v))
}

func (m *mapper) instances() error {
	n := 1
	v, ok := m.app.Get("instances")
	if c, isDump := m.app.Get(dumpCount); isDump {
		v, ok = c, true
	}
	if ok && v != nil {
		switch x := v.(type) {
		case json.Number:
			i, err := strconv.Atoi(string(x))
			if err != nil {
				return m.refuse("instances must be a whole number or \"max\", got %s", describe(v))
			}
			n = i
		case string:
			if x == "max" {
				n = 0
				break
			}
			i, err := strconv.Atoi(strings.TrimSpace(x))
			if err != nil {
				return m.refuse("instances must be a number or \"max\", got %q", x)
			}
			n = i
		default:
			return m.refuse("instances must be a number or \"max\", got %s", describe(v))
		}
	}
	switch {
	case n == 0:
		m.p.MaxInstance = true
		m.p.Instances = max(1, m.opts.NumCPU)
	case n < 0:
		m.p.Instances = max(1, m.opts.NumCPU+n)
		m.note("instances %d (every CPU but %d) is %d on this host, which has %d CPUs: bm2 takes a number or \"max\"", n, -n, m.p.Instances, m.opts.NumCPU)
	case n > 1024:
		return m.refuse("instances %d: bm2 runs at most 1024", n)
	default:
		m.p.Instances = n
	}
	// exec_mode, or PM2's default: cluster for node or bun apps with
	// instances set, fork otherwise.
	mode, _, err := m.str("exec_mode")
	if err != nil {
		return err
	}
	switch mode {
	case "cluster", "cluster_mode":
		m.p.Mode = config.Cluster
	case "fork", "fork_mode":
		m.p.Mode = config.Fork
	case "":
		m.p.Mode = config.Fork
		if ok && v != nil {
			m.p.Mode = config.Cluster
		}
	default:
		return m.refuse("exec_mode %q: PM2 knows cluster and fork", mode)
	}
	return nil
}

func (m *mapper) timing() error {
	m.p.RestartDelay = config.DefaultRestartDelay
	m.p.MaxRestarts = config.DefaultMaxRestarts
	m.p.MinUptime = config.DefaultMinUptime
	m.p.StopTimeout = config.DefaultStopTimeout
	ms := func(key string, lo, hi int64, dst *time.Duration) error {
		v, ok := m.app.Get(key)
		if !ok || v == nil {
			return nil
		}
		d, err := duration(v)
		if err != nil {
			return m.refuse("%s: %v", key, err)
		}
		if d < lo || d > hi {
			return m.refuse("%s %d ms: bm2 takes %d to %d", key, d, lo, hi)
		}
		*dst = time.Duration(d) * time.Millisecond
		return nil
	}
	if err := ms("restart_delay", 0, 3600000, &m.p.RestartDelay); err != nil {
		return err
	}
	if err := m.backoff(ms); err != nil {
		return err
	}
	if err := ms("min_uptime", 0, 3600000, &m.p.MinUptime); err != nil {
		return err
	}
	if err := ms("kill_timeout", 1, 3600000, &m.p.StopTimeout); err != nil {
		return err
	}
	if v, ok := m.app.Get("max_restarts"); ok && v != nil {
		n, isNum := v.(json.Number)
		i, err := strconv.Atoi(string(n))
		if !isNum || err != nil || i < 0 || i > 10000 {
			return m.refuse("max_restarts must be a whole number from 0 to 10000, got %s", describe(v))
		}
		m.p.MaxRestarts = i
	}
	return nil
}

// PM2BackoffCap is where PM2's exp_backoff_restart_delay stops growing
// (15 s, PM2's own constant): what bm2 import makes
// restart_delay_max_ms.
const PM2BackoffCap = 15000 * time.Millisecond

// backoff maps exp_backoff_restart_delay, PM2's backoff: restarts that
// wait N ms first and 1.5 times longer each time, up to PM2BackoffCap.
// It becomes restart_delay_ms = N (restart_delay, when the app sets it
// too, stays the first delay) and restart_delay_max_ms = PM2BackoffCap,
// which systemd 254 and later grow the delay to (bm2.toml(5)); before 254
// only the first delay applies, and the note says so.
func (m *mapper) backoff(ms func(key string, lo, hi int64, dst *time.Duration) error) error {
	var n time.Duration
	if err := ms("exp_backoff_restart_delay", 0, 3600000, &n); err != nil {
		return err
	}
	if n == 0 {
		return nil // PM2 takes 0 for no backoff
	}
	what := fmt.Sprintf("exp_backoff_restart_delay %d", n.Milliseconds())
	if v, ok := m.app.Get("restart_delay"); ok && v != nil {
		what += fmt.Sprintf(" with restart_delay %d: restart_delay_ms = %d stays the first delay (PM2 would wait %d ms first)",
			m.p.RestartDelay.Milliseconds(), m.p.RestartDelay.Milliseconds(), n.Milliseconds())
	} else {
		m.p.RestartDelay = n
		what += fmt.Sprintf(" is restart_delay_ms = %d, the first delay", n.Milliseconds())
	}
	switch first := m.p.RestartDelay; {
	case first == 0:
		m.note("%s; no backoff: it cannot grow from 0 (set restart_delay_ms above 0 and restart_delay_max_ms = %d for one)", what, PM2BackoffCap.Milliseconds())
	case first >= PM2BackoffCap:
		m.note("%s; no backoff: that is PM2's cap of %d ms already, and every restart waits it", what, PM2BackoffCap.Milliseconds())
	default:
		m.p.RestartDelayMax = PM2BackoffCap
		m.note("%s, and restart_delay_max_ms = %d (PM2's cap) the longest: systemd 254 and later grow the delay to it over 5 restarts in a row; "+
			"before 254 only the first delay applies (`bm2 check` says which)", what, PM2BackoffCap.Milliseconds())
	}
	return nil
}

var durationRE = regexp.MustCompile(`^([0-9]+)(ms|s|m|h)?$`)

// duration reads PM2's time values: a number of milliseconds, or a string
// like "10s", "1m", "1h" (or "500" ms).
func duration(v any) (int64, error) {
	var s string
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil || f < 0 || f != math.Trunc(f) {
			return 0, fmt.Errorf("must be a whole number of milliseconds, got %s", describe(v))
		}
		return int64(f), nil
	case string:
		s = strings.TrimSpace(x)
	default:
		return 0, fmt.Errorf("must be milliseconds or a time like \"10s\", got %s", describe(v))
	}
	mm := durationRE.FindStringSubmatch(s)
	if mm == nil {
		return 0, fmt.Errorf("must be milliseconds or a time like \"10s\", \"1m\", \"1h\", got %q", s)
	}
	n, err := strconv.ParseInt(mm[1], 10, 64)
	if err != nil || n > 1<<40 {
		return 0, fmt.Errorf("%q is too long", s)
	}
	switch mm[2] {
	case "s":
		n *= 1000
	case "m":
		n *= 60000
	case "h":
		n *= 3600000
	}
	return n, nil
}

var memRE = regexp.MustCompile(`^([0-9]+)\s*([KMG])?B?$`)

func (m *mapper) memory() error {
	v, ok := m.app.Get("max_memory_restart")
	if !ok || v == nil {
		return nil
	}
	var bytes uint64
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		if err != nil || f < 1 || f != math.Trunc(f) || f > 1<<60 {
			return m.refuse("max_memory_restart must be bytes or a size like \"300M\", got %s", describe(v))
		}
		bytes = uint64(f)
	case string:
		mm := memRE.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(x)))
		if mm == nil {
			return m.refuse("max_memory_restart must be a size like \"300M\" or \"1G\", got %q", x)
		}
		n, err := strconv.ParseUint(mm[1], 10, 64)
		shift := map[string]uint{"": 0, "K": 10, "M": 20, "G": 30}[mm[2]]
		if err != nil || n == 0 || n > (1<<60)>>shift {
			return m.refuse("max_memory_restart %q is out of range", x)
		}
		bytes = n << shift
	default:
		return m.refuse("max_memory_restart must be a size like \"300M\", got %s", describe(v))
	}
	size := strconv.FormatUint(bytes, 10)
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"G", 30}, {"M", 20}, {"K", 10}} {
		if bytes%(1<<u.shift) == 0 {
			size = strconv.FormatUint(bytes>>u.shift, 10) + u.suffix
			break
		}
	}
	if bytes < config.MinMemoryRestart {
		// The rest of the app imports: only the limit has no home.
		m.note("max_memory_restart %q is not imported: memory_restart takes 32M or more (a Node.js app uses some 40 MiB doing nothing, and would be reloaded forever)", size)
		return nil
	}
	m.p.MemoryRestart = config.MemoryRestart{Limit: bytes, Size: size, Interval: config.DefaultMemoryCheckInterval}
	m.note("max_memory_restart is memory_restart = %q: an instance above it is reloaded gracefully, as PM2 did, checked every 5 s instead of PM2's 30 s; "+
		"[resources] memory_max (none here) would be the kernel's hard limit above it", size)
	return nil
}

func (m *mapper) user() error {
	if v, key, ok := m.value("uid"); ok {
		s, isStr := jsString(v)
		if !isStr {
			return m.refuse("%s is null", key)
		}
		m.p.User = s
	}
	if v, ok := m.app.Get("gid"); ok && v != nil {
		s, _ := jsString(v)
		m.p.Group = s
	}
	if m.p.User == "" && m.opts.Owner != nil {
		if owner := m.opts.Owner(m.p.Cwd); owner != "" {
			m.p.User = owner
			m.note("runs as %s, the owner of %s, so that it reads its files as under PM2 (remove user to give it an account of its own, bm2-%s)", owner, m.p.Cwd, m.p.Name)
		}
	}
	return nil
}

// schedule maps cron_restart (or its alias cron) to restart_schedule,
// converted to a systemd calendar expression. What cannot be converted
// (a day of the month and a weekday both set, cron's L, W and #) is left
// out with a note that says why and what to write; the app is imported
// all the same. 0, PM2's "no cron restart", is nothing to schedule.
func (m *mapper) schedule() {
	v, key, ok := m.value("cron_restart")
	if !ok {
		return
	}
	expr, isStr := v.(string)
	if n, isNum := v.(json.Number); isNum {
		expr, isStr = string(n), true
	}
	expr = strings.TrimSpace(expr)
	switch {
	case !isStr:
		m.note("%s %s not imported: it must be a cron expression (a string); set restart_schedule yourself (bm2.toml(5))", key, describe(v))
		return
	case expr == "" || expr == "0":
		return
	}
	cal, err := CronToCalendar(expr)
	switch {
	case errors.Is(err, ErrCronDays):
		byDay, byWeekday, both := cronDaysApart(expr)
		m.note("%s %q not imported: %v; set restart_schedule yourself: %q for the days of the month, %q for the weekdays, or %q for the days that are both",
			key, expr, err, byDay, byWeekday, both)
	case err != nil:
		m.note("%s %q not imported: %v; set restart_schedule yourself (a systemd calendar expression, bm2.toml(5))", key, expr, err)
	default:
		m.p.RestartSchedule = cal
		how := "with a surge instance serving beside them, so that the port never has fewer listeners"
		if m.p.Mode == config.Fork {
			how = "each instance's port dark while it restarts (fork mode: a gateway in front retries another)"
		}
		m.note("%s %q is restart_schedule = %q: at those times a systemd timer runs `bm2 reload %s`, which restarts the instances one at a time, %s; PM2 restarted every instance at that time",
			key, expr, cal, m.p.Name, how)
	}
}

// env is the app's environment as PM2 would give it: env, then env_NAME
// over it (--env NAME); values as JavaScript's String() makes them. A
// dump's env is what DumpApps kept of it.
func (m *mapper) env() (map[string]string, error) {
	env := map[string]string{}
	merge := func(key string) error {
		v, ok := m.app.Get(key)
		if !ok || v == nil {
			return nil
		}
		o, isObj := v.(*Object)
		if !isObj {
			return m.refuse("%s must be an object of variables, got %s", key, describe(v))
		}
		for _, k := range o.Keys {
			if s, ok := jsString(o.Values[k]); ok {
				env[k] = s
			} else {
				delete(env, k)
			}
		}
		return nil
	}
	if err := merge("env"); err != nil {
		return nil, err
	}
	var unused []string
	for _, k := range m.app.Keys {
		if name, ok := strings.CutPrefix(k, "env_"); ok && !m.src.Dump && name != m.opts.Env {
			unused = append(unused, k)
		}
	}
	if m.opts.Env != "" && !m.src.Dump {
		if !m.app.Has("env_" + m.opts.Env) {
			m.note("has no env_%s: imported with env alone", m.opts.Env)
		}
		if err := merge("env_" + m.opts.Env); err != nil {
			return nil, err
		}
	}
	if len(unused) > 0 {
		m.note("%s not used (pass --env NAME to import env_NAME over env)", strings.Join(unused, ", "))
	}
	for _, k := range sortedKeys(env) {
		switch {
		case strings.HasPrefix(k, "BM2_"):
			m.note("env.%s dropped: BM2_* variables are bm2's own", k)
			delete(env, k)
		case !envNameRE.MatchString(k):
			m.note("env.%s dropped: not a name systemd can pass to the app", k)
			delete(env, k)
		}
	}
	return env, nil
}

// worker makes an app with no port anywhere (env, args, --port) a
// worker: queue consumers, cron jobs and bots are most of such apps.
func (m *mapper) worker() error {
	m.p.Mode, m.p.Port, m.p.PortEnv = config.Worker, 0, nil
	m.note("a worker (no port): %s gives it neither env.PORT nor env.NODE_PORT nor a port in its args, so bm2 runs it with no port, no reusePort probe and no gateway, and lets it bind no port of its own; if it does serve on a port, import it with --port N --only %s (the app then gets it in PORT)",
		path.Base(m.src.File), m.label)
	if v, ok := m.app.Get("increment_var"); ok && v != nil {
		s, _ := jsString(v)
		m.note("increment_var %s ignored: bm2 has no counter variable; read NODE_APP_INSTANCE or BM2_APP_INSTANCE (0 to %d) instead", s, m.p.Instances-1)
	}
	return nil
}

var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// portVars are the variables PM2 apps read their port from, in the order
// they are looked at.
var portVars = []string{"PORT", "NODE_PORT"}

// port answers the port question (see the package doc) and the modes
// that follow from it.
func (m *mapper) port(env map[string]string) error {
	if v, ok := m.app.Get("port"); ok && v != nil {
		if s, ok := jsString(v); ok {
			env["PORT"] = s // PM2: app.env.PORT = app.port
		}
	}
	type found struct{ name, value string }
	var have []found
	for _, name := range portVars {
		if v, ok := env[name]; ok {
			have = append(have, found{name, v})
		}
	}
	for _, f := range have {
		m.p.PortEnv = append(m.p.PortEnv, f.name)
	}
	argPort, argText, inArgs := PortInArgs(m.p.Args)
	fromArgs := false
	if m.opts.Port != 0 {
		m.p.Port = m.opts.Port
		for _, f := range have {
			if f.value != strconv.Itoa(m.opts.Port) {
				m.note("env.%s was %q: it is the port %d now (--port)", f.name, f.value, m.opts.Port)
			}
		}
		if len(have) == 0 {
			m.p.PortEnv = []string{"PORT"}
		}
		if inArgs && argPort != m.opts.Port {
			m.note("its args still pass %s: the app listens on %d, not on %d (--port), unless args change too", argText, argPort, m.opts.Port)
		}
	} else if len(have) == 0 && inArgs {
		// The port is where the app takes it from: its command line.
		m.p.Port, fromArgs = argPort, true
		m.note("port %d is the one its args pass (%s): the app takes its port from there, so no variable gets it (port_env is empty); pass --port N if it listens on another", argPort, argText)
	} else {
		if len(have) == 0 {
			return m.worker()
		}
		for _, f := range have[1:] {
			if f.value != have[0].value {
				return m.refuse("env.%s is %q and env.%s is %q: which port does it listen on? Pass --port N --only %s",
					have[0].name, have[0].value, f.name, f.value, m.label)
			}
		}
		n, err := strconv.Atoi(have[0].value)
		if err != nil || n < 1 || n > 65535 {
			return m.refuse("env.%s is %q, not a TCP port (1-65535): bm2 runs TCP services; pass --port N --only %s if it has one", have[0].name, have[0].value, m.label)
		}
		if inArgs && argPort != n {
			// -p is not always a port: env says what it is meant to be.
			m.note("port %d is env.%s; its args pass %s too: if the app listens on %d, import it with --port %d --only %s",
				n, have[0].name, argText, argPort, argPort, m.label)
		}
		m.p.Port = n
		if shell, _ := m.app.Values[dumpShellPort].([]string); slices.Contains(shell, have[0].name) {
			m.note("port %d is env.%s of the dump: PM2 ran the app with it, though not as one of the app's own variables (the shell that ran `pm2 start` had it); pass --port N if the app listens on another", n, have[0].name)
		}
	}
	for _, name := range m.p.PortEnv {
		delete(env, name) // port_env sets them; [env] would override it
	}

	// increment_var: PM2 gives instance i the variable's value + i. For
	// the port variable, that is fork mode.
	if v, ok := m.app.Get("increment_var"); ok && v != nil {
		s, _ := jsString(v)
		switch {
		case slices.Contains(m.p.PortEnv, s):
			if m.p.Mode == config.Cluster && m.p.Instances > 1 {
				m.note("increment_var %s gives each instance a port of its own: that is bm2's fork mode (instance i gets %d+i)", s, m.p.Port)
			}
			m.p.Mode = config.Fork
		default:
			m.note("increment_var %s ignored: bm2 has no counter variable; read BM2_APP_INSTANCE (0 to %d) instead", s, m.p.Instances-1)
		}
	}
	if m.opts.Fork && m.p.Mode == config.Cluster {
		m.p.Mode = config.Fork
		if m.p.Instances > 1 {
			m.note("fork mode (--mode fork): instance i listens on %d+i, so a gateway in front must spread requests over %s (`bm2 check` shows the range)",
				m.p.Port, m.rangeText())
		} else {
			m.note("fork mode (--mode fork): one instance on port %d, no reusePort needed", m.p.Port)
		}
	} else if m.p.Mode == config.Fork && m.p.Instances > 1 && !m.app.Has("increment_var") {
		m.note("fork mode with %d instances: instance i listens on %d+i (%s; PM2 gave every one the same port): a gateway in front must spread requests over them",
			m.p.Instances, m.p.Port, m.rangeText())
	}
	if fromArgs && m.p.Mode == config.Fork && m.p.Instances > 1 {
		return m.refuse("its args pass %s to every instance, and fork mode gives instance i port %d+i: import it in cluster mode (all on %d), or make it listen on process.env.PORT instead and pass --port %d --only %s",
			argText, argPort, argPort, argPort, m.label)
	}
	if m.p.Mode == config.Cluster {
		// PM2's node:cluster master shared the port, so the app never set
		// reusePort: bm2 supplies it (package preload).
		m.p.ReusePort = config.ReusePortPreload
		if m.p.Runtime == config.Bun {
			m.note("cluster mode: every instance listens on port %d itself (there is no node:cluster master), so bm2 gives Bun.serve reusePort: true on it (reuseport = \"preload\"); Bun's node:http (Express, Fastify, Koa) ignores reusePort, and the first `bm2 serve` stops such an app: then import with --mode fork (ports %d~%d), or run it with node",
				m.p.Port, m.p.Port, m.p.Port+m.p.Instances-1)
		} else {
			m.note("cluster mode: every instance listens on port %d itself (there is no node:cluster master), so bm2 adds reusePort: true to the app's listen on it (reuseport = \"preload\"): no code change; the first `bm2 serve` checks it and stops the project if the port is still held alone (by a child process, say). --mode fork gives each instance a port of its own instead (%d~%d)",
				m.p.Port, m.p.Port, m.p.Port+m.p.Instances-1)
		}
	}
	lo, hi := m.p.Port, m.p.Port
	if m.p.Mode == config.Fork {
		hi = m.p.Port + m.p.Instances - 1
	}
	if hi > 65535 {
		return m.refuse("fork mode needs ports %d~%d, past 65535: pass --port with a lower port", lo, hi)
	}
	if lo < 1024 {
		m.note("port %d is privileged: bm2 gives the instances CAP_NET_BIND_SERVICE and no other capability (bm2.toml(5)); or put a gateway (nginx, Caddy) on %d and import with --port 3000", lo, lo)
	}
	return nil
}

// PortInArgs finds the port an app's arguments give it, in the forms
// servers and frameworks commonly take (next start -p 3000, nuxt
// --port=3000, http-server -p 8080): --port N, --port=N, -p N, -p=N. It
// returns the port and the arguments that gave it ("--port 8080").
func PortInArgs(args []string) (port int, text string, ok bool) {
	for i, a := range args {
		name, value, eq := strings.Cut(a, "=")
		if name != "--port" && name != "-p" {
			continue
		}
		if !eq {
			if i+1 >= len(args) {
				continue
			}
			value = args[i+1]
			a += " " + value
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || n > 65535 {
			continue
		}
		return n, a, true
	}
	return 0, "", false
}

func (m *mapper) rangeText() string {
	return fmt.Sprintf("%d~%d", m.p.Port, m.p.Port+m.p.Instances-1)
}

// others notes every key that is not mapped, in the table's order, and
// every key PM2 does not know.
func (m *mapper) others() {
	for _, r := range rules {
		for _, k := range append([]string{r.Key}, r.Aliases...) {
			v, ok := m.app.Get(k)
			if !ok || r.Key == "env_*" {
				continue
			}
			switch {
			case r.Key == "instance_var":
				switch s, _ := jsString(v); {
				case s == "" || s == config.DefaultInstanceVar:
				case !envNameRE.MatchString(s) || strings.HasPrefix(s, "BM2_") || slices.Contains(m.p.PortEnv, s):
					m.note("instance_var %s dropped: not a name bm2 can give the index to; the app gets NODE_APP_INSTANCE and BM2_APP_INSTANCE (0 to %d)", s, m.p.Instances-1)
				default:
					m.p.InstanceVar = s // bm2 sets it as PM2 did
				}
			case !r.Mapped():
				if s := r.Note(m.p.Name, v); s != "" {
					m.notes = append(m.notes, s)
				}
			}
		}
	}
	for _, k := range m.app.Keys {
		if _, ok := ruleFor(k); !ok {
			m.note("unknown PM2 key %q ignored", k)
		}
	}
}

func (m *mapper) render() (*Project, error) {
	p := m.p
	p.Notify.Level = config.DefaultNotifyLevel
	p.Sandbox.Mode = config.Strict
	file := path.Join(p.Cwd, "bm2.toml")
	if m.shared {
		file = path.Join(p.Cwd, "bm2."+p.Name+".toml")
	}
	if m.opts.Out != "" {
		file = path.Join(m.opts.Out, p.Name+".toml")
	}
	p.File = file
	pub, priv := config.Marshal(&p)
	var b strings.Builder
	what := fmt.Sprintf("app %q of %q", m.label, m.src.File)
	b.WriteString("# Imported by `bm2 import` from " + what + ".\n")
	b.WriteString("# Check it with `bm2 check`, start it with `sudo bm2 serve`; see bm2.toml(5).\n")
	for _, n := range m.notes {
		b.WriteString("#   " + strings.NewReplacer("\n", " ", "\r", " ").Replace(n) + "\n")
	}
	b.WriteString(strings.TrimPrefix(string(pub), config.MarshalHeader))
	if priv != nil {
		b.WriteString(strings.TrimPrefix(string(priv), config.PrivateHeader))
	}
	data := []byte(b.String())
	// What was written must be a project bm2 takes, and the same one.
	q, err := config.Parse(file, data, config.Options{NumCPU: m.opts.NumCPU, AnyName: true})
	if err != nil {
		return nil, m.refuse("%v", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if !config.Equal(&p, q) {
		return nil, fmt.Errorf("internal error: %s does not read back as the imported project; please report this", file)
	}
	return &Project{
		App: m.label, Name: p.Name, Cwd: p.Cwd, File: file, Data: data,
		Secrets: len(p.Env) > 0, User: p.User,
		Summary: summary(&p),
		Notes:   m.notes,
		Dropped: m.dropped(),
	}, nil
}

func (m *mapper) dropped() []string {
	if v, ok := m.app.Get(dumpDropped); ok {
		if list, ok := v.([]string); ok {
			return list
		}
	}
	return nil
}

func portRange(p *config.Project) string {
	if r := p.Ports(); r.Lo != r.Hi {
		return r.String()
	}
	return strconv.Itoa(p.Port)
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// summary is `4 x cluster on port 3000, runtime node`, or `2 x worker
// (no port), runtime node`.
func summary(p *config.Project) string {
	if p.IsWorker() {
		return fmt.Sprintf("%d x worker (no port), runtime %s", p.Instances, p.Runtime)
	}
	return fmt.Sprintf("%d x %s on port %s, runtime %s", p.Instances, p.Mode, portRange(p), p.Runtime)
}
