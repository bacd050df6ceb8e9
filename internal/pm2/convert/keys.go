package convert

import "fmt"

// rule is one PM2 app key: what bm2 import does with it. Mapped keys are
// handled by the mapper (map.go) and documented by To; the others get the
// note Note makes (one line, saying what to do instead). Default is the
// value PM2 itself writes into every dump.pm2 when the app did not set the
// key (as compact JSON): a dump's key at that value is not worth a note.
type rule struct {
	Key     string
	Aliases []string
	To      string // the bm2.toml key (or what the key becomes), for mapped keys
	Note    func(app string, v any) string
	Default string
	// Number: PM2's schema types the key as a number (or a number or
	// something else), so a string that is a number is that number
	// (numbers).
	Number bool
}

// Mapped tells whether the key becomes part of bm2.toml.
func (r rule) Mapped() bool { return r.Note == nil }

func silent(string, any) string { return "" }

// whenTrue makes a note only when the key is set to something true.
func whenTrue(f func(app string, v any) string) func(string, any) string {
	return func(app string, v any) string {
		if !truthy(v) {
			return ""
		}
		return f(app, v)
	}
}

func fixed(format string) func(string, any) string {
	return func(app string, v any) string { return fmt.Sprintf(format, app) }
}

func journalNote(key string) func(string, any) string {
	return func(app string, v any) string {
		return fmt.Sprintf("%s: %s ignored: the journal keeps the output of every instance, with times (`bm2 logs %s`, `journalctl -u 'bm2@%s-*'`)", app, key, app, app)
	}
}

func monitoringNote(key string) func(string, any) string {
	return func(app string, v any) string {
		return fmt.Sprintf("%s: %s ignored: PM2's monitoring has no bm2 counterpart (`bm2 list`, `bm2 status %s` and `bm2 events` show what systemd knows)", app, key, app)
	}
}

// rules is every key of PM2 7's ecosystem schema (lib/API/schema.json),
// with its aliases, in the schema's order; an alias that comes first is
// taken first.
var rules = []rule{
	{Key: "name", To: "name (lowercased; characters other than a-z 0-9 - _ become -); an app without one is named as PM2 names it, after its script's file name without the extension (server for src/server.js), with a note"},
	// cmd and command are script's aliases in lib/Common.js (verifyConfs),
	// taken before the schema's exec.
	{Key: "script", Aliases: []string{"cmd", "command", "exec"}, To: "script (relative to cwd); a command such as npm or yarn is refused"},
	{Key: "name_prefix", Note: func(app string, v any) string {
		return fmt.Sprintf("%s: name_prefix ignored: the project is named %s", app, app)
	}},
	{Key: "filter_env", Note: func(app string, v any) string {
		if list, ok := v.([]any); ok && len(list) == 0 || !truthy(v) {
			return "" // what PM2 writes into a dump: filters nothing
		}
		return fmt.Sprintf("%s: filter_env ignored: bm2 never passes its own environment to an app; [env] is all it gets", app)
	}},
	{Key: "namespace", Default: `"default"`, Note: func(app string, v any) string {
		return fmt.Sprintf("%s: namespace %s ignored: bm2 has no namespaces (every project has its own units)", app, describe(v))
	}},
	{Key: "install_url", Note: monitoringNote("install_url")},
	{Key: "cwd", To: "cwd (relative to the ecosystem file's directory); bm2.toml is written there"},
	{Key: "args", To: "args (a string is split as PM2 splits it); --port N, --port=N, -p N or -p=N there is the port when env has none"},
	{Key: "exec_interpreter", Aliases: []string{"interpreter"}, Default: `"node"`, To: "runtime (node or bun) and runtime_path (an absolute path); PM2's nvm syntax node@VERSION: runtime node, with a note on runtime_path; anything else is refused"},
	{Key: "node_args", Aliases: []string{"interpreter_args", "interpreterArgs"}, Default: `[]`, To: "runtime_args"},
	{Key: "out_file", Aliases: []string{"out", "output", "out_log"}, Note: journalNote("out_file")},
	{Key: "error_file", Aliases: []string{"error", "err", "err_file", "err_log"}, Note: journalNote("error_file")},
	{Key: "log_file", Aliases: []string{"log"}, Note: journalNote("log_file")},
	{Key: "disable_logs", Note: journalNote("disable_logs")},
	{Key: "log_type", Note: journalNote("log_type")},
	{Key: "log_date_format", Note: journalNote("log_date_format")},
	{Key: "time", Note: whenTrue(journalNote("time"))},
	{Key: "env", To: "[env], with env_<NAME> over it for --env NAME; PORT and NODE_PORT go to port and port_env"},
	{Key: "env_*", To: "[env] with --env NAME (env_NAME over env, as PM2 merges them); the others are listed as not used"},
	{Key: "max_memory_restart", Number: true, To: "memory_restart (an instance above it is reloaded gracefully, checked every 5 s)"},
	{Key: "pid_file", Aliases: []string{"pid"}, Note: func(app string, v any) string {
		return fmt.Sprintf("%s: pid_file ignored: systemd tracks every instance's PID (`systemctl show -P MainPID bm2@%s-0`)", app, app)
	}},
	{Key: "restart_delay", Number: true, To: "restart_delay_ms"},
	{Key: "exp_backoff_restart_delay", Number: true, To: "restart_delay_ms, the first delay (unless restart_delay is set: it stays the first), and restart_delay_max_ms = 15000, PM2's cap; " +
		"systemd 254 and later grow the delay to it, before 254 only the first delay applies"},
	{Key: "source_map_support", Note: whenTrue(func(app string, v any) string {
		return fmt.Sprintf("%s: source_map_support ignored: add \"--enable-source-maps\" to runtime_args for Node.js", app)
	})},
	{Key: "disable_source_map_support", Note: whenTrue(fixed("%s: disable_source_map_support ignored: bm2 adds no source map support"))},
	{Key: "wait_ready", Note: whenTrue(fixed("%s: wait_ready ignored: bm2 needs no process.send('ready'): serve, start and reload wait until the instance listens on its port (and, in cluster mode, the probe confirms it)"))},
	{Key: "instances", Number: true, To: "instances (N, \"N\"; \"max\" and 0: \"max\"; -N: the CPUs of this host less N)"},
	{Key: "kill_timeout", Number: true, Default: "1600", To: "stop_timeout_ms"},
	{Key: "shutdown_with_message", Note: whenTrue(fixed("%s: shutdown_with_message ignored: bm2 stops an instance with SIGTERM (then SIGKILL after stop_timeout_ms): handle process.on(\"SIGTERM\") instead of the \"shutdown\" message"))},
	{Key: "listen_timeout", Number: true, Note: fixed("%s: listen_timeout ignored: bm2 serve, start and reload wait for the port for --timeout (default 60s)")},
	{Key: "cron_restart", Number: true, Aliases: []string{"cron"}, To: "restart_schedule, the cron expression (5 fields, or 6 with the seconds first; lists, ranges, steps, names, @daily and the like) as a systemd calendar expression (\"0 4 * * 0\": \"Sun *-*-* 04:00:00\"): a timer runs `bm2 reload` then; a day of the month and a weekday both set (cron's \"or\"), or L, W, #, are left out with a note"},
	{Key: "merge_logs", Aliases: []string{"combine_logs"}, Note: journalNote("merge_logs")},
	{Key: "vizion", Default: "true", Note: monitoringNote("vizion")},
	{Key: "autostart", Default: "true", Note: func(app string, v any) string {
		if truthy(v) {
			return ""
		}
		return fmt.Sprintf("%s: autostart false ignored: `bm2 serve` starts the project and it starts at boot; `bm2 stop %s` keeps it stopped until the next boot", app, app)
	}},
	{Key: "autorestart", Default: "true", Note: func(app string, v any) string {
		if truthy(v) {
			return ""
		}
		return fmt.Sprintf("%s: autorestart false ignored: systemd restarts every crashed instance, at most max_restarts times in a row (max_restarts = 0 gives up after the first crash)", app)
	}},
	{Key: "stop_exit_codes", Number: true, Note: fixed("%s: stop_exit_codes ignored: every abnormal exit is restarted within the restart budget; an app that is done should exit 0")},
	{Key: "watch_delay", Number: true, Note: fixed("%s: watch_delay ignored: bm2 does not watch files")},
	{Key: "watch", Note: whenTrue(func(app string, v any) string {
		return fmt.Sprintf("%s: watch ignored: bm2 does not restart on file changes; run `bm2 reload %s` after a deploy (or a systemd .path unit that does)", app, app)
	})},
	{Key: "ignore_watch", Note: fixed("%s: ignore_watch ignored: bm2 does not watch files")},
	{Key: "watch_options", Note: fixed("%s: watch_options ignored: bm2 does not watch files")},
	{Key: "min_uptime", Number: true, To: "min_uptime_ms (bm2 counts it from when the instance listens)"},
	{Key: "max_restarts", Number: true, To: "max_restarts (consecutive crashes before the instance is given up on)"},
	{Key: "execute_command", Note: whenTrue(fixed("%s: execute_command ignored: bm2 runs a script with node or bun"))},
	{Key: "exec_mode", To: "exec_mode (cluster, cluster_mode: cluster, with reuseport = \"preload\": bm2 supplies reusePort, which node:cluster's master made unneeded; fork, fork_mode: fork)"},
	{Key: "force", Note: whenTrue(fixed("%s: force ignored: a project runs once; instances sets how many"))},
	{Key: "append_env_to_name", Note: whenTrue(fixed("%s: append_env_to_name ignored: the project keeps the app's name"))},
	{Key: "post_update", Note: monitoringNote("post_update")},
	{Key: "trace", Note: whenTrue(monitoringNote("trace"))},
	{Key: "disable_trace", Note: whenTrue(monitoringNote("disable_trace"))},
	{Key: "v8", Note: whenTrue(monitoringNote("v8"))},
	{Key: "event_loop_inspector", Note: whenTrue(monitoringNote("event_loop_inspector"))},
	{Key: "deep_monitoring", Note: whenTrue(monitoringNote("deep_monitoring"))},
	{Key: "increment_var", To: "fork mode and port_env when it names the port variable (instance i gets port+i); another variable gets a note: read BM2_APP_INSTANCE"},
	{Key: "instance_var", Default: `"NODE_APP_INSTANCE"`, To: "instance_var (NODE_APP_INSTANCE, as PM2, unless it names another)"},
	{Key: "pmx", Default: "true", Note: monitoringNote("pmx")},
	{Key: "automation", Default: "true", Note: monitoringNote("automation")},
	{Key: "treekill", Default: "true", Note: func(app string, v any) string {
		if truthy(v) {
			return ""
		}
		return fmt.Sprintf("%s: treekill false ignored: stopping an instance ends every process it started (its cgroup)", app)
	}},
	{Key: "port", Number: true, To: "port, and PORT in port_env (PM2 sets env.PORT from it)"},
	{Key: "username", To: "nothing: PM2 records who ran pm2; uid (user) says whom the app runs as", Note: silent},
	{Key: "uid", Number: true, Aliases: []string{"user"}, To: "user"},
	{Key: "gid", Number: true, To: "group"},
	{Key: "windowsHide", Default: "true", To: "nothing (Windows only)", Note: silent},
	{Key: "kill_retry_time", Number: true, Default: "100", Note: fixed("%s: kill_retry_time ignored: bm2 sends SIGKILL once, stop_timeout_ms after SIGTERM")},
	{Key: "write", Note: whenTrue(monitoringNote("write"))},
	{Key: "io", Note: monitoringNote("io")},
}

// ruleFor finds a key's rule: by name, alias, or env_<NAME>.
func ruleFor(key string) (rule, bool) {
	for _, r := range rules {
		if r.Key == key {
			return r, true
		}
		for _, a := range r.Aliases {
			if a == key {
				return r, true
			}
		}
	}
	if len(key) > 4 && key[:4] == "env_" {
		r, _ := ruleFor0("env_*")
		return r, true
	}
	return rule{}, false
}

func ruleFor0(key string) (rule, bool) {
	for _, r := range rules {
		if r.Key == key {
			return r, true
		}
	}
	return rule{}, false
}

// Keys is every PM2 key bm2 import knows, with its aliases, and what
// becomes of it: the table of bm2-import(1).
func Keys() []KeyDoc {
	var out []KeyDoc
	for _, r := range rules {
		d := KeyDoc{Key: r.Key, Aliases: r.Aliases, Mapped: r.Mapped(), To: r.To}
		if !r.Mapped() && d.To == "" {
			d.To = noteText(r)
		}
		out = append(out, d)
	}
	return out
}

// KeyDoc is one row of the mapping table.
type KeyDoc struct {
	Key     string
	Aliases []string
	Mapped  bool
	To      string // the bm2.toml key, or the note (with APP for the app's name)
}

// noteText is a rule's note for an app called APP, with a value that
// makes it speak.
func noteText(r rule) string {
	for _, v := range []any{"VALUE", true, false} {
		if s := r.Note("APP", v); s != "" {
			return s
		}
	}
	return ""
}
