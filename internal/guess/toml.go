package guess

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/units"
)

// TOML writes the guess as a bm2.toml: each key with a comment that
// says where it came from, and the keys left at their defaults commented
// out, so that the file teaches them.
func (g *Guess) TOML() []byte {
	var b strings.Builder
	line := func(off bool, key, value, why string) {
		s := key + " = " + value
		if off {
			s = "# " + s
		}
		if why != "" {
			s = fmt.Sprintf("%-26s # %s", s, why)
		}
		b.WriteString(s + "\n")
	}
	comment := func(lines ...string) {
		for _, l := range lines {
			b.WriteString("# " + l + "\n")
		}
	}
	comment("The bm2 project file of "+g.name+", written by `bm2 init` from what it found",
		"in this directory: each key says where it came from, and the keys commented",
		"out show their defaults. Every key is in bm2.toml(5). `bm2 check` checks",
		"this file; `sudo bm2 serve` fills in cwd (this directory) and runtime_path,",
		"registers the project and starts it.")
	b.WriteString("\n")
	line(false, "name", config.TOMLString(g.name), g.nameWhy)
	comment(g.scriptAbove...)
	line(false, "script", config.TOMLString(g.script), g.scriptWhy)
	line(false, "runtime", config.TOMLString(g.runtime), g.runtimeWhy)
	if len(g.runtimeArgs) > 0 {
		line(false, "runtime_args", tomlStrings(g.runtimeArgs), g.runtimeArgsWhy)
	}
	if g.runtimeArgsOff != "" {
		comment(g.runtimeArgsOff)
	}
	b.WriteString("\n")
	if g.worker {
		comment(g.workerWhy...)
		line(true, "port", strconv.Itoa(defaultPort), "")
		line(true, "port_env", `["PORT"]`, "")
	} else {
		line(false, "port", strconv.Itoa(g.port), g.portWhy)
		if g.portEnv != "" {
			line(false, "port_env", tomlStrings([]string{g.portEnv}), g.portEnvWhy)
		}
		switch {
		case g.fork:
			comment(g.forkWhy...)
			line(false, "exec_mode", `"fork"`, "instance i on port+i")
		case g.preload:
			line(false, "reuseport", `"preload"`, g.reuseWhy)
		default:
			line(true, "reuseport", `"app"`, g.reuseWhy)
		}
	}
	b.WriteString("\n")
	line(true, "instances", "1", "how many; \"max\" is one per CPU")
	if !g.worker && !g.fork {
		line(true, "exec_mode", `"cluster"`, "the default: all on port (SO_REUSEPORT); \"fork\": instance i on port+i")
	}
	if g.User != "" {
		comment(fmt.Sprintf("The project's own account could not enter %s: it runs as", g.UserWhy),
			"the directory's owner. Leave user out for an account of its own, "+units.Account(g.name)+".")
		line(false, "user", config.TOMLString(g.User), "the owner of this directory")
	} else {
		line(true, "user", `"www-data"`, "default: an account of its own, "+units.Account(g.name))
	}
	b.WriteString("\n")
	if len(g.env) > 0 {
		b.WriteString("[env]                      # " + g.envWhy + "\n")
		for _, kv := range g.env {
			b.WriteString(tomlEnvKey(kv[0]) + " = " + config.TOMLString(kv[1]) + "\n")
		}
	} else {
		b.WriteString("# [env]\n# NODE_ENV = \"production\"\n")
	}
	return []byte(b.String())
}

func tomlStrings(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = config.TOMLString(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// tomlEnvKey is an [env] name as a TOML key: bare when it may be (every
// environment name config takes may).
func tomlEnvKey(k string) string {
	if envWordRE.MatchString(k + "=") {
		return k
	}
	return config.TOMLString(k)
}
