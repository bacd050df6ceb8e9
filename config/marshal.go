package config

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MarshalHeader is the comment that starts every file [Marshal] writes.
const MarshalHeader = "# Registered by `bm2 serve`. Edit the project's bm2.toml and run `bm2 serve`\n" +
	"# again (or edit this file and run `systemctl daemon-reload`). See bm2.toml(5).\n"

// Marshal renders a project as the canonical project file that `bm2 serve`
// registers: keys in a fixed order, name, script, cwd, runtime,
// runtime_path (when set), instances, port and exec_mode always, every other
// key only when it differs from its default. The same project always gives
// the same bytes, and Parse(p.File, Marshal(p), n) gives back p (for
// instances = "max", with the same n).
func Marshal(p *Project) []byte {
	var b bytes.Buffer
	b.WriteString(MarshalHeader)
	kv := func(key, value string) {
		b.WriteString(key)
		b.WriteString(" = ")
		b.WriteString(value)
		b.WriteByte('\n')
	}
	str := func(key, value string) { kv(key, TOMLString(value)) }
	num := func(key string, n int64) { kv(key, strconv.FormatInt(n, 10)) }
	list := func(key string, values []string) {
		q := make([]string, len(values))
		for i, v := range values {
			q[i] = TOMLString(v)
		}
		kv(key, "["+strings.Join(q, ", ")+"]")
	}

	str("name", p.Name)
	str("script", p.Script)
	str("cwd", p.Cwd)
	str("runtime", string(p.Runtime))
	if p.RuntimePath != "" {
		str("runtime_path", p.RuntimePath)
	}
	if len(p.RuntimeArgs) > 0 {
		list("runtime_args", p.RuntimeArgs)
	}
	if len(p.Args) > 0 {
		list("args", p.Args)
	}
	if p.MaxInstance {
		str("instances", "max")
	} else {
		num("instances", int64(p.Instances))
	}
	num("port", int64(p.Port))
	str("exec_mode", string(p.Mode))
	if p.User != DefaultUser {
		str("user", p.User)
	}
	if p.Group != "" {
		str("group", p.Group)
	}
	if p.RestartDelay != DefaultRestartDelay {
		num("restart_delay_ms", p.RestartDelay.Milliseconds())
	}
	if p.MaxRestarts != DefaultMaxRestarts {
		num("max_restarts", int64(p.MaxRestarts))
	}
	if p.MinUptime != DefaultMinUptime {
		num("min_uptime_ms", p.MinUptime.Milliseconds())
	}
	if p.StopTimeout != DefaultStopTimeout {
		num("stop_timeout_ms", p.StopTimeout.Milliseconds())
	}
	if p.EnvFile != "" {
		str("env_file", p.EnvFile) // absolute after Parse
	}

	if len(p.Env) > 0 {
		b.WriteString("\n[env]\n")
		for _, e := range p.Env { // sorted by Parse
			kv(tomlKey(e.Name), TOMLString(e.Value))
		}
	}

	if p.Notify.Webhook != "" || (p.Notify.Level != DefaultNotifyLevel && p.Notify.Level != "") {
		b.WriteString("\n[notify]\n")
		if p.Notify.Webhook != "" {
			str("webhook", p.Notify.Webhook)
		}
		if p.Notify.Level != DefaultNotifyLevel && p.Notify.Level != "" {
			str("level", string(p.Notify.Level))
		}
	}

	if r := p.Resources; r != (Resources{}) {
		b.WriteString("\n[resources]\n")
		if r.MemoryMax != "" {
			str("memory_max", r.MemoryMax)
		}
		if r.MemoryHigh != "" {
			str("memory_high", r.MemoryHigh)
		}
		if r.CPUQuota != "" {
			str("cpu_quota", r.CPUQuota)
		}
		if r.CPUWeight != 0 {
			num("cpu_weight", int64(r.CPUWeight))
		}
		if r.TasksMax != 0 {
			num("tasks_max", int64(r.TasksMax))
		}
		if r.LimitNOFILE != 0 {
			num("limit_nofile", int64(r.LimitNOFILE))
		}
	}
	return b.Bytes()
}

var bareKeyRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

func tomlKey(k string) string {
	if bareKeyRE.MatchString(k) {
		return k
	}
	return TOMLString(k)
}

// TOMLString quotes s as a TOML basic string: quotes, backslashes and every
// control character TOML forbids in a basic string are escaped; other
// characters, including non-ASCII ones, are kept as they are. Invalid UTF-8
// is replaced by U+FFFD, as TOML documents must be valid UTF-8.
func TOMLString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			switch {
			case r < 0x20 || r == 0x7f:
				fmt.Fprintf(&b, `\u%04X`, r)
			case r == utf8.RuneError:
				b.WriteRune(utf8.RuneError)
			default:
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
