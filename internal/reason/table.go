package reason

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bm2dev/bm2/internal/termtext"
)

// floors names the runtimes bm2 runs, with their floors. The floors are
// package jsruntime's (jsruntime.Floor), written out here because
// jsruntime names its refusals with this package's reasons and so cannot
// be imported by it; a test keeps the two equal.
const floors = "Node.js 24.0.0 (or Bun 1.4.0)"

// Mode is one failure mode: why, in a person's words, and what to do.
type Mode struct {
	Reason Reason
	// Case says when it happens, for the table of docs/troubleshooting.md.
	Case string
	// Message and Fix are templates (see the package doc).
	Message, Fix string
	// BunMessage and BunFix replace them under Bun; "" when the same.
	BunMessage, BunFix string
	// PreloadFix and BunPreloadFix replace the fix when the project has
	// reuseport = "preload" already (Facts.Preload); "" when the same.
	PreloadFix, BunPreloadFix string
	// Man is where to read more: "bm2.toml(5) KEYS".
	Man string
	// Before tells whether bm2 check (and serve) finds it before start.
	Before bool
	// Example is what the table of docs/troubleshooting.md fills the templates with.
	Example Facts
}

// Facts fill a mode's templates.
type Facts struct {
	Project  string
	Instance string // "api-0"; the project's first instance when ""
	Port     int
	Runtime  string // "node" or "bun": picks the wording
	Detail   string // what was found (see the package doc)
	// Again is the command that tries again, "`bm2 serve`";
	// "`bm2 start <project>`" when "".
	Again string
	// Preload: the project has reuseport = "preload" (bm2 supplies
	// reusePort), so the fix does not offer it again.
	Preload bool
}

const again = "then {again}"

// modes is the table, in the order docs/troubleshooting.md lists it.
var modes = []Mode{
	{
		Reason: ReuseportMissing,
		Case:   "Cluster mode, and the app listens without reusePort",
		Message: "{instance} holds port {port} alone (no SO_REUSEPORT): cluster mode needs every instance to share the port, " +
			"so bm2 stopped {project}",
		// First the fix that changes no code (the preload), then the code
		// change, then fork mode.
		Fix: "set `reuseport = \"preload\"` in bm2.toml: bm2 adds reusePort: true to the app's listen (node:http, Express, Fastify, ...), no code change; " +
			"or listen with `server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })` (Node.js >= 24); " +
			"or set `exec_mode = \"fork\"` in bm2.toml; " + again,
		BunMessage: "{instance} holds port {port} alone (no SO_REUSEPORT): under Bun either Bun.serve is called without reusePort, " +
			"or the app listens through node:http (Express, Fastify, Koa, ...), whose reusePort Bun ignores; " +
			"cluster mode needs every instance to share the port, so bm2 stopped {project}",
		BunFix: "with Bun.serve, set `reuseport = \"preload\"` in bm2.toml: bm2 gives Bun.serve reusePort: true, no code change; " +
			"or pass `Bun.serve({ port: Number(process.env.BM2_APP_PORT), reusePort: true })`; " +
			"an app on node:http cannot share a port under Bun, preload or not: set `exec_mode = \"fork\"` (or `runtime = \"node\"`) in bm2.toml; " + again,
		PreloadFix: "`reuseport = \"preload\"` is set, so the port is held by a listener the preload does not reach " +
			"(a child process, a native addon, an explicit `reusePort: false`): " +
			"listen with `server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })` in the process bm2 starts, " +
			"or set `exec_mode = \"fork\"` in bm2.toml; " + again,
		BunPreloadFix: "`reuseport = \"preload\"` is set, and it reaches Bun.serve only: " +
			"an app on node:http cannot share a port under Bun, preload or not: set `exec_mode = \"fork\"` (or `runtime = \"node\"`) in bm2.toml; " +
			"with Bun.serve, look for an explicit `reusePort: false` or a listener in a child process; " + again,
		Man:     "bm2.toml(5) ERRORED PROJECTS",
		Example: Facts{Project: "api", Port: 3000},
	},
	{
		Reason: LoopbackOnly,
		Case:   "The app listens only on 127.0.0.1 or ::1 (Node.js with `host: \"localhost\"`), without reusePort",
		Message: "{instance} listens on port {port} only on {detail}, alone (no SO_REUSEPORT): no other instance can join it " +
			"and nothing outside this host reaches it (`host: \"localhost\"` binds one loopback address), so bm2 stopped {project}",
		Fix: "leave out the host (or listen on \"0.0.0.0\" or \"::\") and listen with " +
			"`server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })`, or set `exec_mode = \"fork\"`; " + again,
		BunFix: "leave out the hostname and pass `Bun.serve({ port: Number(process.env.BM2_APP_PORT), reusePort: true })`, " +
			"or set `exec_mode = \"fork\"`; " + again,
		Man:     "bm2.toml(5) ERRORED PROJECTS",
		Example: Facts{Project: "api", Port: 3000, Detail: "::1"},
	},
	{
		Reason: PortInUse,
		Case:   "The port is held by a process of another user (root included), not by the project",
		Message: "port {port} is held by {detail}, not by {project}: its instances cannot listen there (SO_REUSEPORT joins " +
			"only sockets of the same user)",
		Fix:     "stop that program, or give {project} another `port =` in bm2.toml; " + again,
		Man:     "bm2.toml(5) ERRORED PROJECTS",
		Before:  true,
		Example: Facts{Project: "api", Port: 3000, Detail: "python3 (pid 812), uid 65534 (nobody)"},
	},
	{
		Reason:  PortConflict,
		Case:    "Another registered project has the port",
		Message: "{detail}",
		Fix:     "give {project} another `port =` in bm2.toml, or `bm2 delete` the other project; " + again,
		Man:     "bm2.toml(5) PORT RANGES AND CONFLICTS",
		Before:  true,
		Example: Facts{Project: "web", Detail: "port conflict: web port range 3000 overlaps api 3000~3003 (registered in /etc/bm2/api.toml)"},
	},
	{
		Reason:  RuntimeMissing,
		Case:    "The runtime is missing, not executable by the app's user, or not Node.js or Bun",
		Message: "{instance} not started: runtime {detail}",
		Fix: "install {floors} or newer where the app's user can run it, or set `runtime_path =` " +
			"in bm2.toml (`bm2 check {project}` asks it as that user); " + again,
		Man:     "bm2.toml(5) KEYS",
		Before:  true,
		Example: Facts{Project: "api", Detail: "/opt/node/bin/node: no such file or directory"},
	},
	{
		Reason:  RuntimeBelowFloor,
		Case:    "The runtime is too old",
		Message: "{instance} not started: runtime {detail}",
		Fix: "install {floors} or newer, or point `runtime_path =` in bm2.toml at one " +
			"(`bm2 check {project}` shows the version found); " + again,
		Man:     "bm2.toml(5) KEYS",
		Before:  true,
		Example: Facts{Project: "api", Detail: "/usr/bin/node is Node.js v20.1.0, below the floor 24.0.0"},
	},
	{
		Reason:  ScriptMissing,
		Case:    "The script is missing or not readable by the app's user",
		Message: "{instance} cannot start: script {detail}",
		Fix: "put the script there and make it readable by the app's user (and its directories enterable), " +
			"or fix `script =` in bm2.toml; " + again,
		Man:     "bm2.toml(5) KEYS",
		Before:  true,
		Example: Facts{Project: "api", Detail: "/srv/api/server.js: no such file or directory (as user bm2-api)"},
	},
	{
		Reason:  CwdMissing,
		Case:    "The working directory is missing or not enterable by the app's user",
		Message: "{instance} cannot start: working directory {detail}",
		Fix:     "create it and let the app's user enter it, or fix `cwd =` in bm2.toml; " + again,
		Man:     "bm2.toml(5) KEYS",
		Before:  true,
		Example: Facts{Project: "api", Detail: "/srv/api does not exist (systemd: exit status 200/CHDIR)"},
	},
	{
		Reason:  EnvFile,
		Case:    "env_file is missing, a link, or not the app's user's or root's",
		Message: "{instance} not started: env_file {detail}",
		Fix: "make env_file a regular file (not a link) that the app's user can read, owned by root or that user, " +
			"or fix `env_file =` in bm2.toml; " + again,
		Man:     "bm2.toml(5) KEYS",
		Before:  true,
		Example: Facts{Project: "api", Detail: "/srv/api/.env: no such file or directory"},
	},
	{
		Reason:  UserMissing,
		Case:    "`user =` names an account that does not exist",
		Message: "{instance} cannot start: user {detail} does not exist",
		Fix: "create the account (`useradd --system {detail}`), or fix `user =` in bm2.toml " +
			"(leave it out and the project runs as an account of its own); " + again,
		Man:     "bm2.toml(5) KEYS",
		Before:  true,
		Example: Facts{Project: "api", Detail: "deploy"},
	},
	{
		Reason:  Budget,
		Case:    "Crash loop: the instance crashed until its restart budget ran out",
		Message: "{instance} crashed again and again and gave up (restart budget exhausted); last exit: {detail}",
		Fix:     "`bm2 logs {project}` shows why it crashes; fix the app (or give it more `max_restarts =` in bm2.toml); " + again,
		Man:     "bm2.toml(5) RESTART BUDGET",
		Example: Facts{Project: "api", Detail: "exit status 1: Error: Cannot find module './config.json'"},
	},
	{
		Reason:  Unhealthy,
		Case:    "The app runs but does not pass its HTTP health check (`health_path`)",
		Message: "{instance} runs but did not answer its health check with a 2xx or 3xx status: {detail}",
		Fix: "`bm2 logs {instance}` shows what the app does; make it answer GET health_path on $BM2_HEALTH_PORT ({port}), " +
			"or give it a longer `health_timeout_ms =` or more `health_failures =` in bm2.toml; " + again,
		Man:     "bm2.toml(5) HEALTH CHECKS",
		Example: Facts{Project: "api", Port: 3100, Detail: "no answer within 2s"},
	},
	{
		Reason:  MemoryRestart,
		Case:    "The app's memory stayed above `memory_restart`, and bm2 reloaded the instance",
		Message: "{instance} used more memory than memory_restart and was reloaded: {detail}",
		Fix: "`bm2 logs {instance}` and a heap snapshot show what grows; if the app needs more, raise `memory_restart =` " +
			"(and `memory_max =` above it) in bm2.toml",
		Man:     "bm2.toml(5) MEMORY RESTARTS",
		Example: Facts{Project: "api", Detail: "312.4 MiB, above memory_restart (300.0 MiB)"},
	},
	{
		Reason: FenceFailed,
		Case:   "The host can fence ports, and attaching the instance's fence failed",
		Message: "{instance} not started: its port fence could not be attached ({detail}); bm2 does not run an " +
			"instance unfenced on a host that can fence it",
		Fix:     "`journalctl -u bm2@{instance}` shows the fence step's error; fix what it names; then `bm2 start {instance}`",
		Man:     "bm2.toml(5) KEYS",
		Example: Facts{Project: "api", Detail: "attach bind4: operation not permitted"},
	},
	{
		Reason:  Rejected,
		Case:    "The instance exited with status 78 and bm2 could not confirm a refusal",
		Message: "{instance} not started (exit status 78): {detail}",
		Fix:     "`systemctl status bm2@{instance}` shows the message; `bm2 check {project}` checks what bm2 can; " + again,
		Man:     "bm2(1) EXIT STATUS",
		Example: Facts{Project: "api", Detail: "the cause is not known to bm2"},
	},
	{
		Reason:  NoListener,
		Case:    "Cluster mode, and the app never listened on its port",
		Message: "{instance} did not listen on port {port} within 60 s of its start: the reusePort probe stopped, the instance runs on",
		Fix:     "listen on $BM2_APP_PORT ({port}); `bm2 logs {project}` shows what the app does",
		Man:     "bm2(1) EVENTS",
		Example: Facts{Project: "api", Port: 3000},
	},
	{
		Reason:  NoBPFFS,
		Case:    "Cluster mode (system scope), and no bpf filesystem at /sys/fs/bpf to keep the port's steering in",
		Message: "port {port} of {project} is spread by the kernel's hash, not round-robin: {detail}",
		Fix:     "`mount -t bpf -o mode=0700 bpf /sys/fs/bpf` (systemd mounts it at boot; a container may not have it), then `bm2 reload {project}`",
		Man:     "bm2.toml(5) STEERING",
		Example: Facts{Project: "api", Port: 3000, Detail: "/sys/fs/bpf is on no bpf filesystem"},
	},
	{
		Reason:  NoPermission,
		Case:    "Cluster mode (system scope), and the kernel refused bm2-steer its BPF program or the app's listener",
		Message: "port {port} of {project} is spread by the kernel's hash, not round-robin: {detail}",
		Fix: "`journalctl -u bm2-steer@{instance}` shows the refusal: bm2-steer@.service needs CAP_BPF and CAP_SYS_PTRACE, " +
			"which a container or an LSM may deny, and kernel.yama.ptrace_scope below 3; then `bm2 reload {project}`",
		Man:     "bm2.toml(5) STEERING",
		Example: Facts{Project: "api", Port: 3000, Detail: "create the table: operation not permitted (steering needs CAP_BPF)"},
	},
	{
		Reason:  KernelTooOld,
		Case:    "Cluster mode (system scope) on a kernel before Linux 5.14",
		Message: "port {port} of {project} is spread by the kernel's hash, not round-robin: {detail}",
		Fix:     "run Linux 5.14 or later (`uname -r`) for an even split; until then `exec_mode = \"fork\"` behind a proxy gives one",
		Man:     "bm2.toml(5) STEERING",
		Example: Facts{Project: "api", Port: 3000, Detail: "load the program: not supported (Linux 5.10.0; steering needs 5.14)"},
	},
	{
		Reason:  ListenerNotSteerable,
		Case:    "Cluster mode (system scope), and the app listens with a socket the kernel cannot steer (MPTCP)",
		Message: "port {port} of {project} is spread by the kernel's hash, not round-robin: {instance}'s listener {detail}",
		Fix:     "listen with plain TCP (Node.js and Bun do; a Go app: `GODEBUG=multipathtcp=0`), then `bm2 reload {project}`",
		Man:     "bm2.toml(5) STEERING",
		Example: Facts{Project: "api", Port: 3000, Detail: "is an MPTCP listener"},
	},
	{
		Reason:  ConfigInvalid,
		Case:    "The project file is broken",
		Message: "{detail}",
		Fix:     "fix the key named there (bm2.toml(5) describes each one), then `bm2 check`",
		Man:     "bm2.toml(5) KEYS",
		Before:  true,
		Example: Facts{Project: "api", Detail: "/srv/api/bm2.toml:3: instances: must be a whole number or \"max\", not \"four\""},
	},
}

// Lookup finds the mode of a reason.
func Lookup(r Reason) (Mode, bool) {
	for _, m := range modes {
		if m.Reason == r {
			return m, true
		}
	}
	return Mode{}, false
}

// Explained is a mode worded for one failure.
type Explained struct {
	Reason  Reason
	Message string
	Fix     string
	Man     string
}

// Explain words the mode of r with f; ok is false for a reason that has
// no mode (a plain crash: exited, killed, ...).
func Explain(r Reason, f Facts) (Explained, bool) {
	m, ok := Lookup(r)
	if !ok {
		return Explained{}, false
	}
	msg, fix := m.Message, m.Fix
	if f.Runtime == "bun" {
		if m.BunMessage != "" {
			msg = m.BunMessage
		}
		if m.BunFix != "" {
			fix = m.BunFix
		}
	}
	if f.Preload {
		if f.Runtime == "bun" && m.BunPreloadFix != "" {
			fix = m.BunPreloadFix
		} else if f.Runtime != "bun" && m.PreloadFix != "" {
			fix = m.PreloadFix
		}
	}
	return Explained{Reason: r, Message: fill(msg, f), Fix: fill(fix, f), Man: m.Man}, true
}

func fill(s string, f Facts) string {
	inst := f.Instance
	if inst == "" {
		inst = f.Project + "-0"
	}
	ag := f.Again
	if ag == "" {
		ag = "`bm2 start " + f.Project + "`"
	}
	port := "?"
	if f.Port > 0 {
		port = strconv.Itoa(f.Port)
	}
	return strings.NewReplacer("{floors}", floors, "{again}", ag, "{project}", f.Project, "{instance}", inst,
		"{port}", port, "{detail}", Clean(f.Detail)).Replace(s)
}

// FixLine is the fix as bm2 prints it: "fix: <what to type> (see <man section>)".
func (e Explained) FixLine() string { return "fix: " + e.Fix + " (see " + e.Man + ")" }

// Clean makes text that may come from an untrusted process (a command
// name from /proc, a line of a log) safe to print on one line: control
// characters and bytes that are not UTF-8 are shown escaped (\x1b, \r,
// \u009b, \xff: termtext.Escape), and it is cut at about 200 bytes.
func Clean(s string) string { return termtext.EscapeCut(s, 200) }

// CleanMessage is Clean for a whole message, as an event carries it: cut
// at about 2000 bytes.
func CleanMessage(s string) string { return termtext.EscapeCut(s, 2000) }

// Markdown renders the table for docs/troubleshooting.md: one row per mode, its
// message and fix as bm2 prints them for the example facts.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| Reason | When | What bm2 says | What to do | Read |\n")
	b.WriteString("|---|---|---|---|---|\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, m := range modes {
		e, _ := Explain(m.Reason, m.Example)
		msg, fix := e.Message, e.Fix
		if m.BunMessage != "" || m.BunFix != "" {
			bf := m.Example
			bf.Runtime = "bun"
			be, _ := Explain(m.Reason, bf)
			if m.BunMessage != "" {
				msg += "<br>Under Bun: " + be.Message
			}
			if m.BunFix != "" {
				fix += "<br>Under Bun: " + be.Fix
			}
		}
		if m.PreloadFix != "" || m.BunPreloadFix != "" {
			pf := m.Example
			pf.Preload = true
			if m.PreloadFix != "" {
				pe, _ := Explain(m.Reason, pf)
				fix += "<br>With `reuseport = \"preload\"` set: " + pe.Fix
			}
			if m.BunPreloadFix != "" {
				pf.Runtime = "bun"
				pe, _ := Explain(m.Reason, pf)
				fix += "<br>Under Bun, with `reuseport = \"preload\"` set: " + pe.Fix
			}
		}
		before := ""
		if m.Before {
			before = " `bm2 check` finds it before start."
		}
		fmt.Fprintf(&b, "| `%s` | %s.%s | %s | %s | %s |\n", m.Reason, cell(m.Case), before, cell(msg), cell(fix), m.Man)
	}
	return b.String()
}
