package config

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Options are what parsing needs beyond the file.
type Options struct {
	// NumCPU resolves instances = "max".
	NumCPU int
	// Cwd is cwd when the file sets none: the directory of a project dir's
	// bm2.toml, which bm2 serve registers. "" makes cwd required.
	Cwd string
	// AnyName lifts the rule that name equals the file's stem (a project
	// dir's bm2.toml is registered as <name>.toml).
	AnyName bool
	// User is set in user scope: the project runs as this user, under
	// their own systemd.
	User *UserScope
	// Foreign: the file was written by someone root does not speak for
	// (in system scope, a file not owned by root: a user's bm2.toml that
	// bm2 serve or check reads). Keys only root may set
	// (notify.allow_local) are refused.
	Foreign bool
}

// UserScope is what user scope adds to validation.
type UserScope struct {
	Name    string // the user: user = may name only them
	MinPort int    // net.ipv4.ip_unprivileged_port_start: lower ports are refused
}

// Parse decodes and validates one project file. file is used for messages
// and for the name-must-match-stem rule. On failure the error is an Errors
// value listing every problem found, in line order.
func Parse(file string, data []byte, opts Options) (*Project, error) {
	return ParseSource(Source{Path: file, Data: data}, opts)
}

// ParseSource is Parse for a project found on the search path, with its
// private part (PrivatePath) when it has one: the private part may hold
// only [env] and notify.webhook, and a key set in both files is an error.
func ParseSource(src Source, opts Options) (*Project, error) {
	v := &validator{file: src.Path, numCPU: opts.NumCPU, anyName: opts.AnyName, user: opts.User, foreign: opts.Foreign}
	fields := v.decode(src.Path, src.Data, false)
	if src.PrivateErr != nil {
		v.errs = append(v.errs, &Error{File: src.PrivatePath, Msg: src.PrivateErr.Error(), Err: ErrValue})
	} else if src.PrivateData != nil {
		fields = v.merge(fields, v.decode(src.PrivatePath, src.PrivateData, true))
	}
	if v.syntax {
		return nil, v.errs
	}
	p := v.build(fields, opts)
	if len(v.errs) > 0 {
		sort.SliceStable(v.errs, func(i, j int) bool {
			if v.errs[i].File != v.errs[j].File {
				return v.errs[i].File == src.Path // the project file's own first
			}
			return v.errs[i].Line < v.errs[j].Line
		})
		return nil, v.errs
	}
	p.File = src.Path
	if src.PrivateData != nil {
		p.PrivateFile = src.PrivatePath
	}
	p.PrivateUnread = src.PrivateUnread
	p.SecretsInFile = v.publicSecret
	p.ExposedSecrets = v.publicSecret && src.Mode.Perm()&0o004 != 0
	return p, nil
}

// field is one key set in a file, with its value as the TOML decoder gave
// it and where it was set.
type field struct {
	key  string // dotted
	val  any
	file string
	// Where it was set: the key (table, key within it) in its document,
	// located only for an error message.
	doc      *document
	top, sub string
}

func (f field) line() int {
	if f.doc == nil {
		return 0
	}
	return f.doc.line(f.top, f.sub)
}

// document is one decoded file's text, which tells the line of a key
// when a message needs it. The TOML library knows every key's line but
// reports it only in a decoding error: a second decode, into
// toml.Primitive values, makes one such error per key asked for (see
// capture). Only files with something to report pay for it.
type document struct {
	text    string
	decoded bool
	md      toml.MetaData
	top     map[string]toml.Primitive
	tables  map[string]map[string]toml.Primitive
}

// line is the line of key top, or of key sub of table top; 0 when it
// cannot be told.
func (d *document) line(top, sub string) int {
	if !d.decoded {
		d.decoded = true
		d.md, _ = toml.Decode(d.text, &d.top) // decoded once already: no error
		d.tables = map[string]map[string]toml.Primitive{}
	}
	p, ok := d.top[top]
	if sub != "" {
		t, seen := d.tables[top]
		if !seen && ok {
			d.md.PrimitiveDecode(p, &t) // nil when it is no table
			d.tables[top] = t
		}
		p, ok = t[sub]
	}
	if !ok {
		return 0
	}
	var c capture
	var pe toml.ParseError
	if errors.As(d.md.PrimitiveDecode(p, &c), &pe) {
		// Where the value starts, on the key's line: the library's Line
		// is where it ends, lines later for a multi-line string.
		return lineAt(d.text, pe.Position.Start)
	}
	return 0
}

type validator struct {
	file    string // the project file, for the name rule
	numCPU  int
	anyName bool
	errs    Errors
	syntax  bool // a file did not decode at all
	// publicSecret: the project file itself (not its private part) sets
	// [env] or the webhook.
	publicSecret bool
	where        map[string]field
	// portEnvAt is where each accepted port_env name was written.
	portEnvAt map[string]int
	// extraPortAt is where each accepted extra port was written.
	extraPortAt map[int64]int
	user        *UserScope
	foreign     bool
}

func (v *validator) add(key string, class error, format string, args ...any) {
	f := v.where[strings.SplitN(key, "[", 2)[0]]
	file := f.file
	if file == "" {
		file = v.file
	}
	v.errs = append(v.errs, &Error{File: file, Line: f.line(), Key: key, Msg: fmt.Sprintf(format, args...), Err: class})
}

// errAt locates a value: decoding a toml.Primitive into a type whose
// UnmarshalTOML fails makes the library report the key's line, which it
// does not expose otherwise.
var errAt = errors.New("locate")

type capture struct{ v any }

func (c *capture) UnmarshalTOML(v any) error { c.v = v; return errAt }

// decode reads one document into fields: top-level keys, and the keys of
// known tables as "table.key". Unknown keys are reported here, with a
// "did you mean" from the key table; a private part may hold only
// private keys.
func (v *validator) decode(file string, data []byte, private bool) []field {
	// Into one value: the tables come out as the library parsed them,
	// map[string]any, with nothing to reflect on key by key.
	text := strings.TrimPrefix(string(data), "\ufeff")
	var doc any
	if _, err := toml.Decode(text, &doc); err != nil {
		v.syntax = true
		v.errs = append(v.errs, decodeError(file, text, err))
		return nil
	}
	top, _ := doc.(map[string]any)
	d := &document{text: text}
	var out []field
	defer func() {
		for _, f := range out {
			if !private && (strings.HasPrefix(f.key, "env.") || f.key == "notify.webhook") {
				v.publicSecret = true
			}
		}
	}()
	unknown := func(key string, line int) {
		v.errs = append(v.errs, &Error{File: file, Line: line, Key: key, Msg: "unknown key" + suggest(key), Err: ErrUnknownKey})
	}
	for _, k := range sortedKeys(top) {
		val := top[k]
		s, ok := lookup(k)
		if !ok {
			unknown(k, d.line(k, ""))
			continue
		}
		if private && !s.private && s.kind != kTable {
			v.errs = append(v.errs, &Error{File: file, Line: d.line(k, ""), Key: k, Err: ErrValue,
				Msg: "does not belong in the private part, which holds only [env] and notify.webhook: move it to the project file"})
			continue
		}
		sub, table := val.(map[string]any)
		if (s.kind != kTable && s.kind != kEnv) || !table {
			out = append(out, field{key: k, val: val, file: file, doc: d, top: k})
			continue
		}
		for _, sk := range sortedKeys(sub) {
			key := k + "." + sk
			f := field{key: key, val: sub[sk], file: file, doc: d, top: k, sub: sk}
			if s.kind == kEnv { // free names, checked by the env key
				out = append(out, f)
				continue
			}
			ss, ok := lookup(key)
			switch {
			case !ok:
				unknown(key, f.line())
			case private && !ss.private:
				v.errs = append(v.errs, &Error{File: file, Line: f.line(), Key: key, Err: ErrValue,
					Msg: "does not belong in the private part, which holds only [env] and notify.webhook"})
			default:
				out = append(out, f)
			}
		}
	}
	return out
}

// envTable gathers the variables of [env], decoded one field each (so
// that each has its own line), back into one table.
func envTable(key string, fields []field) (field, bool) {
	m := map[string]any{}
	for _, f := range fields {
		if name, ok := strings.CutPrefix(f.key, key+"."); ok {
			m[name] = f.val
		}
	}
	return field{key: key, val: m}, len(m) > 0
}

// merge adds the private part's fields; a key set in both files is an
// error that names both.
func (v *validator) merge(main, private []field) []field {
	seen := map[string]field{}
	for _, f := range main {
		seen[f.key] = f
	}
	for _, f := range private {
		if m, dup := seen[f.key]; dup {
			v.errs = append(v.errs, &Error{File: f.file, Line: f.line(), Key: f.key, Err: ErrValue,
				Msg: fmt.Sprintf("is set in %s:%d too: keep it in one of the two files", m.file, m.line())})
			continue
		}
		main = append(main, f)
	}
	return main
}

// build checks every field against the key table and makes the project.
func (v *validator) build(fields []field, opts Options) *Project {
	p := &Project{
		Mode:         Cluster,
		ReusePort:    ReusePortApp,
		Instances:    1,
		RestartDelay: DefaultRestartDelay,
		MaxRestarts:  DefaultMaxRestarts,
		MinUptime:    DefaultMinUptime,
		StopTimeout:  DefaultStopTimeout,
		Drain:        DefaultDrain,
		Notify:       Notify{Level: DefaultNotifyLevel},
		Sandbox:      Sandbox{Mode: Strict},
	}
	v.where = make(map[string]field, len(fields))
	for _, f := range fields {
		v.where[f.key] = f
	}
	// In table order: instances before port (fork ranges), cwd before the
	// paths relative to it.
	for _, s := range specs {
		f, ok := v.where[s.key]
		if s.kind == kEnv && !ok {
			f, ok = envTable(s.key, fields)
		}
		if !ok {
			continue
		}
		if val, ok := v.typed(s, f); ok && s.set != nil {
			s.set(v, p, s.key, val)
		}
	}
	v.finish(p, opts)
	return p
}

// typed checks a value's TOML type against the key's kind and returns it
// in the Go type the key's set function takes.
func (v *validator) typed(s spec, f field) (any, bool) {
	want := ""
	switch s.kind {
	case kString:
		if _, ok := f.val.(string); ok {
			return f.val, true
		}
		want = "a string"
	case kInt:
		if _, ok := f.val.(int64); ok {
			return f.val, true
		}
		want = "an integer"
	case kIntOrMax:
		if n, ok := f.val.(int64); ok {
			return n, true
		}
		if s, ok := f.val.(string); ok {
			if s == "max" {
				return s, true
			}
			v.add(f.key, ErrValue, "must be a whole number or \"max\", got %q", s)
			return nil, false
		}
		want = "a whole number or \"max\""
	case kStrings:
		arr, ok := f.val.([]any)
		if !ok {
			want = "an array of strings"
			break
		}
		out := make([]string, 0, len(arr))
		good := true
		for i, e := range arr {
			s, ok := e.(string)
			if !ok {
				v.add(fmt.Sprintf("%s[%d]", f.key, i), ErrType, "must be a string, got %s%s", typeWord(e), quoteHint(e))
				good = false
				continue
			}
			out = append(out, s)
		}
		return out, good
	case kInts:
		arr, ok := f.val.([]any)
		if !ok {
			want = "an array of integers"
			break
		}
		out := make([]int64, 0, len(arr))
		good := true
		for i, e := range arr {
			n, ok := e.(int64)
			if !ok {
				v.add(fmt.Sprintf("%s[%d]", f.key, i), ErrType, "must be an integer, got %s", typeWord(e))
				good = false
				continue
			}
			out = append(out, n)
		}
		return out, good
	case kEnv:
		m, ok := f.val.(map[string]any)
		if !ok {
			want = "a table of strings"
			break
		}
		out := make(map[string]string, len(m))
		good := true
		for _, k := range sortedKeys(m) {
			s, ok := m[k].(string)
			if !ok {
				v.add(f.key+"."+k, ErrType, "must be a string, got %s%s", typeWord(m[k]), quoteHint(m[k]))
				good = false
				continue
			}
			out[k] = s
		}
		return out, good
	case kBool:
		if _, ok := f.val.(bool); ok {
			return f.val, true
		}
		want = "true or false"
	case kTable:
		want = "a table"
	}
	hint := ""
	if want == "a string" {
		hint = quoteHint(f.val)
	}
	v.add(f.key, ErrType, "must be %s, got %s%s", want, typeWord(f.val), hint)
	return nil, false
}

// finish fills in what depends on several keys, reports required keys
// that are missing and checks what no single key can.
func (v *validator) finish(p *Project, opts Options) {
	if _, ok := v.where["name"]; !ok {
		v.missing("name", fmt.Sprintf(" (the project's name; this file's name implies %q)", Stem(v.file)))
		if opts.AnyName {
			v.errs[len(v.errs)-1].Msg = "required: the project's name, e.g. name = \"api\" (bm2 serve registers it as <name>.toml)"
		}
	}
	if _, ok := v.where["script"]; !ok {
		v.missing("script", " (the entry file, relative to cwd)")
	}
	if _, ok := v.where["cwd"]; !ok {
		if opts.Cwd != "" {
			p.Cwd = path.Clean(opts.Cwd)
		} else {
			v.missing("cwd", " (the app's absolute directory; bm2 serve fills it in)")
		}
	}
	if _, ok := v.where["port"]; !ok {
		v.worker(p)
	}
	if _, ok := v.where["runtime"]; !ok {
		p.Runtime = RuntimeFor(p.Script)
	}
	if _, ok := v.where["restart_delay_max_ms"]; ok && p.RestartDelayMax > 0 {
		_, first := v.where["restart_delay_ms"]
		switch {
		case p.RestartDelay == 0:
			v.add("restart_delay_max_ms", ErrValue, "needs restart_delay_ms above 0: that is the backoff's first delay, and the only one on systemd before 254, where 0 would restart a crashing app at once; set restart_delay_ms (e.g. 100) or remove the key")
		case p.RestartDelayMax < p.RestartDelay && first:
			v.add("restart_delay_max_ms", ErrValue, "must be at least restart_delay_ms (%d), got %d: it is the longest delay of a backoff that starts at restart_delay_ms",
				p.RestartDelay.Milliseconds(), p.RestartDelayMax.Milliseconds())
		case p.RestartDelayMax < p.RestartDelay:
			v.add("restart_delay_max_ms", ErrValue, "must be at least restart_delay_ms, %d by default, got %d: it is the longest delay of a backoff that starts at restart_delay_ms; raise it to %d or more, or write restart_delay_ms = %d or less",
				p.RestartDelay.Milliseconds(), p.RestartDelayMax.Milliseconds(), p.RestartDelay.Milliseconds(), p.RestartDelayMax.Milliseconds())
		}
	}
	if p.Mode == Fork && p.ReusePort == ReusePortPreload {
		v.add("reuseport", ErrValue, "\"preload\" is for cluster mode: in fork mode every instance listens on a port of its own and needs no reusePort; remove the key, or set exec_mode = \"cluster\"")
	}
	if p.Mode == Fork {
		// No shared port to be taken out of: nothing to drain.
		p.Drain = 0
		if _, ok := v.where["drain_ms"]; ok {
			v.add("drain_ms", ErrValue, "is for cluster mode: it bounds the wait of an instance taken out of its shared port's turn, and in fork mode every instance has a port of its own; remove the key, or set exec_mode = \"cluster\"")
		}
	}
	if p.Mode == Fork && p.Port > 0 && p.Port+p.Instances-1 > 65535 {
		v.add("port", ErrValue, "fork mode needs ports %d~%d, past 65535", p.Port, p.Port+p.Instances-1)
	}
	if p.Name != "" {
		if msg := NameError(p.Name, p.Instances); msg != "" {
			v.add("name", ErrValue, "%s", msg)
		}
	}
	if p.Cwd != "" {
		if p.EnvFile != "" && !path.IsAbs(p.EnvFile) {
			p.EnvFile = path.Join(p.Cwd, p.EnvFile)
		}
		for i, w := range p.Sandbox.Writable {
			if !path.IsAbs(w) {
				p.Sandbox.Writable[i] = path.Join(p.Cwd, w)
			} else {
				p.Sandbox.Writable[i] = path.Clean(w)
			}
		}
		if len(p.Cwd)+len(p.Script)+1 > maxPath {
			v.add("script", ErrValue, "makes a path longer than %d bytes with cwd", maxPath)
		}
		for i, w := range p.Sandbox.Writable {
			if len(w) > maxPath {
				v.add(fmt.Sprintf("sandbox.writable[%d]", i), ErrValue, "makes a path longer than %d bytes with cwd", maxPath)
			}
		}
	}
	if p.EnvFile != "" {
		p.EnvFile = path.Clean(p.EnvFile)
		if len(p.EnvFile) > maxPath {
			v.add("env_file", ErrValue, "makes a path longer than %d bytes", maxPath)
		}
	}
	sort.Strings(p.Sandbox.Writable)
	if p.Port > 0 {
		own := p.Ports()
		for _, n := range p.Sandbox.ExtraPorts {
			if own.Lo <= n && n <= own.Hi {
				v.add(fmt.Sprintf("sandbox.extra_ports[%d]", v.extraPortAt[int64(n)]), ErrValue,
					"%d is in the project's own port range %s: every instance may bind its own port (BM2_APP_PORT) already, and a fork instance only its own", n, own)
			}
		}
	}
	v.health(p)
	v.memoryRestart(p)
	if u := opts.User; u != nil {
		v.userScope(p, u)
		v.userScopeHealth(p, u)
	}
	if _, ok := v.where["instance_var"]; ok {
		// (Without the key, an [env] NODE_APP_INSTANCE simply wins: the
		// [env] file is applied over Environment=.)
		for _, e := range p.Env {
			if e.Name == p.IndexVar() {
				v.add("instance_var", ErrValue, "%q is also in [env], which would hide the instance's index: remove it from [env], or choose another name", e.Name)
			}
		}
	}
	if _, ok := v.portEnvAt[p.IndexVar()]; ok {
		v.add("instance_var", ErrValue, "%q is also in port_env: one variable cannot hold both the port and the index", p.IndexVar())
	}
	for _, name := range p.PortEnv {
		i := v.portEnvAt[name]
		for _, e := range p.Env {
			if e.Name == name {
				// [env] reaches the instance through EnvironmentFile=,
				// which systemd applies over Environment=: the port would
				// be lost.
				v.add(fmt.Sprintf("port_env[%d]", i), ErrValue,
					"%q is also in [env]: it receives the instance's port; remove it from [env]", name)
			}
		}
	}
}

// worker makes a project without port a worker (queue consumers, cron
// jobs, bots): exec_mode may only be "fork" (or left out), and the keys
// that are about a port of its own are refused, each with what to do.
func (v *validator) worker(p *Project) {
	if p.Mode == Cluster {
		if _, ok := v.where["exec_mode"]; ok {
			v.add("exec_mode", ErrValue, "\"cluster\" shares one port between the instances, and this file sets no port: "+
				"set port = N for a network service, or remove exec_mode for a worker (no port)")
		}
	}
	p.Mode = Worker
	p.Drain = 0
	for _, k := range []string{"reuseport", "drain_ms", "port_env"} {
		if _, ok := v.where[k]; ok {
			v.add(k, ErrValue, "is about the instances' port, and this file sets no port (a worker): set port = N, or remove the key")
		}
	}
}

// userScope checks what user scope cannot do: run as anyone but the user,
// change group (a user manager has no User= or Group=), or bind a port
// below net.ipv4.ip_unprivileged_port_start.
func (v *validator) userScope(p *Project, u *UserScope) {
	if p.User != "" && p.User != u.Name {
		v.add("user", ErrValue, "%q: in user scope every project runs as you (%s); remove the key, or register the project as root (sudo bm2 serve)", p.User, u.Name)
	}
	if _, ok := v.where["group"]; ok {
		v.add("group", ErrValue, "not available in user scope: the project runs as you (%s), with your groups; remove the key, or register the project as root (sudo bm2 serve)", u.Name)
	}
	if p.Port > 0 && p.Port < u.MinPort {
		v.add("port", ErrValue, "%d is below net.ipv4.ip_unprivileged_port_start (%d): only root may bind it; in user scope use a port of %d or more (with a gateway in front for %d), or register the project as root (sudo bm2 serve)",
			p.Port, u.MinPort, u.MinPort, p.Port)
	}
	for _, n := range p.Sandbox.ExtraPorts {
		if n < u.MinPort {
			v.add(fmt.Sprintf("sandbox.extra_ports[%d]", v.extraPortAt[int64(n)]), ErrValue,
				"%d is below net.ipv4.ip_unprivileged_port_start (%d): only root may bind it; in user scope use a port of %d or more", n, u.MinPort, u.MinPort)
		}
	}
}

func (v *validator) missing(key, hint string) {
	v.errs = append(v.errs, &Error{File: v.file, Key: key, Msg: "required" + hint, Err: ErrMissing})
}

// text checks a string that ends up in a unit file: no NUL or control
// characters other than tab, and at most max bytes.
func (v *validator) text(key, s string, max int) bool {
	for _, r := range s {
		// C1 too: a terminal obeys U+009B as it does ESC [.
		if r == 0 || (r < 0x20 && r != '\t') || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			v.add(key, ErrValue, "must not contain control characters")
			return false
		}
	}
	if len(s) > max {
		v.add(key, ErrValue, "is %d bytes long, more than %d", len(s), max)
		return false
	}
	return true
}

func (v *validator) noBackslash(key, s string) bool {
	if strings.ContainsRune(s, '\\') || strings.TrimSpace(s) != s {
		v.add(key, ErrValue, "must not contain backslashes or surrounding spaces, got %q", s)
		return false
	}
	return true
}

func (v *validator) absPath(key, s string) bool {
	if !v.text(key, s, maxPath) {
		return false
	}
	if !path.IsAbs(s) {
		v.add(key, ErrValue, "must be an absolute path, got %q", s)
		return false
	}
	return v.noBackslash(key, s) && v.pathNames(key, s)
}

// pathNames checks that no name in a path is longer than a file name can
// be (NAME_MAX): no file system holds such a path, and systemd refuses it
// in WorkingDirectory= or ReadWritePaths= ("path has invalid length").
func (v *validator) pathNames(key, s string) bool {
	for _, name := range strings.Split(s, "/") {
		if len(name) > maxFileName {
			v.add(key, ErrValue, "has a name of %d bytes, more than %d (%.20q…)", len(name), maxFileName, name)
			return false
		}
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

// words checks the words of a command line (runtime_args, args).
func (v *validator) words(key string, words []string) []string {
	total := 0
	for i, w := range words {
		v.text(fmt.Sprintf("%s[%d]", key, i), w, maxWord)
		total += len(w) + 1
	}
	if total > maxWordsLen {
		v.add(key, ErrValue, "is %d bytes long in all, more than %d", total, maxWordsLen)
	}
	return words
}

// account checks a user or group as systemd's User= and Group= accept it:
// a name of at most 31 characters, or a number in systemd's valid range
// (0 to 4294967294, without 65535, which 16-bit interfaces use as -1).
func (v *validator) account(key, s, what string) bool {
	if uidRE.MatchString(s) {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n > maxUID || n == invalidUID16 {
			v.add(key, ErrValue, "%s is not a %s id systemd accepts (0 to %d, without %d)", s, what, uint64(maxUID), invalidUID16)
			return false
		}
		return true
	}
	if !userRE.MatchString(s) || len(s) > maxUserName {
		v.add(key, ErrValue, "%q is not a valid %s name (at most %d of a-z, A-Z, 0-9, '_' and '-', not starting with a digit or '-')", s, what, maxUserName)
		return false
	}
	return true
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

// suggest returns ` (did you mean "x"?)` for a near miss, or for the
// start of keys (log_rate_limit: the burst and the interval), or "".
func suggest(key string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(key, k); d < bestD {
			best, bestD = k, d
		}
	}
	if best != "" {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	// A key cut short at a word: every key it starts, when they are few.
	var starts []string
	for _, k := range known {
		if strings.HasPrefix(k, key+"_") {
			starts = append(starts, strconv.Quote(k))
		}
	}
	if len(starts) == 0 || len(starts) > 3 {
		return ""
	}
	if n := len(starts); n > 1 {
		return " (did you mean " + strings.Join(starts[:n-1], ", ") + " or " + starts[n-1] + "?)"
	}
	return " (did you mean " + starts[0] + "?)"
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

// decodeError turns the TOML library's syntax error in text into an
// *Error with a line: that of the last byte the library read, the one it
// could not take. Its own Line counts that byte's newline when the byte
// is one ("[env" ended by a newline: expected ']', got '\n'), which put
// the error on the line after.
func decodeError(file, text string, err error) *Error {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		line := pe.Position.Line
		if pe.Position.Len > 0 {
			line = lineAt(text, pe.Position.Start+pe.Position.Len-1)
		}
		return &Error{File: file, Line: line, Key: pe.LastKey, Msg: pe.Message, Err: ErrSyntax}
	}
	return &Error{File: file, Msg: err.Error(), Err: ErrSyntax}
}

// lineAt is the line (from 1) of byte offset off in text; a newline is on
// the line it ends.
func lineAt(text string, off int) int {
	off = max(0, min(off, len(text)))
	return 1 + strings.Count(text[:off], "\n")
}

// typeWord names the TOML type of a decoded value.
func typeWord(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any, []map[string]any:
		return "an array"
	case map[string]any:
		return "a table"
	}
	return "a date or time"
}

// quoteHint suggests quotes when a value that should be a string was
// written as a scalar of another type.
func quoteHint(v any) string {
	switch v.(type) {
	case int64, float64, bool:
		return " (put the value in quotes)"
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// KeyLines maps every key a project file sets ("user", "sandbox.mode",
// "env.TOKEN") to its 1-based line, for messages about a file that
// parsed. A file that does not decode gives nil.
func KeyLines(data []byte) map[string]int {
	v := &validator{}
	fields := v.decode("", data, false)
	if v.syntax {
		return nil
	}
	out := make(map[string]int, len(fields))
	for _, f := range fields {
		out[f.key] = f.line()
	}
	return out
}
