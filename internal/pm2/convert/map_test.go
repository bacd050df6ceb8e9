package convert

import (
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// schemaKeys is every key of PM2 7.0.4's lib/API/schema.json (env_* for
// ^env_\S*$), with their aliases, and the aliases lib/Common.js adds.
var schemaKeys = strings.Fields(`script exec name name_prefix filter_env namespace install_url cwd args
exec_interpreter interpreter node_args interpreter_args interpreterArgs out_file out output out_log
error_file error err err_file err_log log_file log disable_logs log_type log_date_format time env
env_* max_memory_restart pid_file pid restart_delay exp_backoff_restart_delay source_map_support
disable_source_map_support wait_ready instances kill_timeout shutdown_with_message listen_timeout
cron_restart cron merge_logs combine_logs vizion autostart autorestart stop_exit_codes watch_delay
watch ignore_watch watch_options min_uptime max_restarts execute_command exec_mode force
append_env_to_name post_update trace disable_trace v8 event_loop_inspector deep_monitoring
increment_var instance_var pmx automation treekill port username uid user gid windowsHide
kill_retry_time write io` +
	// and script's aliases of lib/Common.js (verifyConfs)
	` cmd command`)

func TestEverySchemaKeyHasARule(t *testing.T) {
	for _, k := range schemaKeys {
		if _, ok := ruleFor(k); !ok {
			t.Errorf("PM2 key %q has no rule", k)
		}
	}
	n := 0
	for _, r := range rules {
		n += 1 + len(r.Aliases)
	}
	if n != len(schemaKeys) {
		t.Errorf("%d keys and aliases in the rules, %d in PM2's schema", n, len(schemaKeys))
	}
}

// app decodes one app from JSON.
func app(t *testing.T, js string) *Object {
	t.Helper()
	v, err := DecodeJSON([]byte(js))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*Object)
}

func importOne(t *testing.T, js string, opts Options) Result {
	t.Helper()
	if opts.NumCPU == 0 {
		opts.NumCPU = 4
	}
	return Map(Source{File: "/srv/app/ecosystem.config.js", Apps: []*Object{app(t, js)}}, opts)
}

// Every key that is not mapped gets its one-line note when it is set (and
// a boolean one only when true), naming the key and the app.
func TestEveryIgnoredKeyNotes(t *testing.T) {
	for _, r := range rules {
		if r.Mapped() || r.Key == "username" || r.Key == "windowsHide" {
			continue
		}
		for _, k := range append([]string{r.Key}, r.Aliases...) {
			val := `true`
			if r.Key == "autostart" || r.Key == "autorestart" || r.Key == "treekill" {
				val = `false`
			}
			res := importOne(t, `{"name":"a","script":"a.js","env":{"PORT":3000},"`+k+`":`+val+`}`, Options{})
			if len(res.Projects) != 1 {
				t.Fatalf("%s: %+v", k, res)
			}
			notes := strings.Join(res.Projects[0].Notes, "\n")
			if !strings.Contains(notes, "a: "+r.Key) || strings.Count(notes, r.Key) == 0 {
				t.Errorf("%s: true gives no note on %s:\n%s", k, r.Key, notes)
			}
			if strings.Contains(string(res.Projects[0].Data), "\n"+k+" =") {
				t.Errorf("%s made it into bm2.toml", k)
			}
		}
	}
	// Off means nothing to say.
	for _, k := range []string{"watch", "wait_ready", "time", "force", "trace"} {
		res := importOne(t, `{"name":"a","script":"a.js","env":{"PORT":3000},"`+k+`":false}`, Options{})
		for _, n := range res.Projects[0].Notes {
			if strings.Contains(n, k) {
				t.Errorf("%s false: %s", k, n)
			}
		}
	}
	res := importOne(t, `{"name":"a","script":"a.js","env":{"PORT":3000},"made_up":1}`, Options{})
	if !strings.Contains(strings.Join(res.Projects[0].Notes, "\n"), `unknown PM2 key "made_up"`) {
		t.Errorf("unknown key: %v", res.Projects[0].Notes)
	}
}

// Each mapped key, by what it becomes.
func TestMappings(t *testing.T) {
	cases := []struct {
		name, app string
		opts      Options
		toml      []string // lines bm2.toml must have
		notes     []string // texts the notes must have
		refused   string   // the refusal, when refused
		absent    []string // texts bm2.toml must not have
	}{
		{name: "minimal", app: `{"name":"api","script":"./index.js","env":{"PORT":3000}}`,
			toml: []string{`name = "api"`, `script = "index.js"`, `cwd = "/srv/app"`, `runtime = "node"`, `instances = 1`, `port = 3000`, `exec_mode = "fork"`, `port_env = ["PORT"]`}},
		{name: "name lowercased", app: `{"name":"My API","script":"a.js","port":3000}`,
			toml: []string{`name = "my-api"`}, notes: []string{`named "my-api"`}},
		{name: "exec alias", app: `{"name":"a","exec":"a.js","port":3000}`, toml: []string{`script = "a.js"`}},
		{name: "cmd alias", app: `{"name":"a","cmd":"a.js","port":3000}`, toml: []string{`script = "a.js"`}},
		{name: "command alias", app: `{"name":"a","command":"./dist/a.js","port":3000}`, toml: []string{`script = "dist/a.js"`}},
		{name: "cmd before exec", app: `{"name":"a","exec":"b.js","cmd":"a.js","port":3000}`, toml: []string{`script = "a.js"`}, notes: []string{"a: exec ignored: cmd is the script, as for PM2"}},
		{name: "script before cmd", app: `{"name":"a","script":"b.js","cmd":"a.js","port":3000}`, toml: []string{`script = "b.js"`}, notes: []string{"a: cmd ignored: script is the script, as for PM2"}},
		{name: "no name, cmd", app: `{"cmd":"cmdapp.js","port":3000}`, toml: []string{`name = "cmdapp"`, `script = "cmdapp.js"`}},
		{name: "script absolute in cwd", app: `{"name":"a","script":"/srv/x/dist/a.js","cwd":"/srv/x","port":3000}`,
			toml: []string{`script = "dist/a.js"`, `cwd = "/srv/x"`}},
		{name: "cwd relative to the file", app: `{"name":"a","script":"a.js","cwd":"packages/api","port":3000}`,
			toml: []string{`cwd = "/srv/app/packages/api"`}},
		{name: "args string", app: `{"name":"a","script":"a.js","port":3000,"args":"--x=\"1 2\" 'y z' w"}`,
			toml: []string{`args = ["--x=\"1 2\"", "y z", "w"]`}},
		{name: "args array", app: `{"name":"a","script":"a.js","port":3000,"args":["-p", 8]}`, toml: []string{`args = ["-p", "8"]`, `port = 3000`},
			notes: []string{"a: port 3000 is env.PORT; its args pass -p 8 too: if the app listens on 8, import it with --port 8 --only a"}},
		// The port only in args: the app listens there.
		{name: "port in args", app: `{"name":"a","script":"a.js","args":"--host 0.0.0.0 --port 8080","instances":2}`,
			toml:   []string{`port = 8080`, `exec_mode = "cluster"`, `reuseport = "preload"`},
			notes:  []string{"a: port 8080 is the one its args pass (--port 8080): the app takes its port from there, so no variable gets it"},
			absent: []string{"\nport_env", "3000"}},
		{name: "port in args, next start", app: `{"name":"web","script":"node_modules/next/dist/bin/next","args":"start -p 3005"}`,
			toml: []string{`port = 3005`}, notes: []string{"(-p 3005)"}, absent: []string{"\nport_env"}},
		{name: "port in args, --port=", app: `{"name":"a","script":"a.js","args":["--port=9000"]}`, toml: []string{`port = 9000`}},
		{name: "port in args, --port flag", app: `{"name":"a","script":"a.js","args":"-p 9000"}`, opts: Options{Port: 9100},
			toml: []string{`port = 9100`}, notes: []string{"its args still pass -p 9000: the app listens on 9000, not on 9100 (--port), unless args change too"}},
		{name: "port in args, fork", app: `{"name":"a","script":"a.js","args":"-p 9000","instances":2,"exec_mode":"fork"}`,
			refused: "its args pass -p 9000 to every instance, and fork mode gives instance i port 9000+i"},
		{name: "port in args, not a port", app: `{"name":"a","script":"a.js","args":"-p high"}`, absent: []string{"\nport =", "exec_mode"}, notes: []string{"a worker (no port)"}},
		{name: "interpreter bun", app: `{"name":"a","script":"a.js","port":3000,"interpreter":"bun"}`, toml: []string{`runtime = "bun"`}},
		{name: "interpreter path", app: `{"name":"a","script":"a.js","port":3000,"exec_interpreter":"/home/al/.nvm/versions/node/v24.1.0/bin/node"}`,
			toml: []string{`runtime = "node"`, `runtime_path = "/home/al/.nvm/versions/node/v24.1.0/bin/node"`}},
		{name: "interpreter node@20", app: `{"name":"a","script":"a.js","port":3000,"interpreter":"node@20"}`,
			toml: []string{`runtime = "node"`}, absent: []string{"\nruntime_path ="},
			notes: []string{`a: interpreter "node@20" is PM2's nvm syntax: PM2 ran $NVM_DIR/versions/node/v20/bin/node; Node.js 20 is below bm2's floor, 24.0.0, so the app runs on the node systemd finds (`,
				"to pin a node, set runtime_path to a Node.js 24 or newer"}},
		{name: "interpreter node@24.1.0", app: `{"name":"a","script":"a.js","port":3000,"exec_interpreter":"node@24.1.0"}`,
			toml: []string{`runtime = "node"`}, absent: []string{"\nruntime_path ="},
			notes: []string{`a: exec_interpreter "node@24.1.0" is PM2's nvm syntax`, "set runtime_path to its absolute path ($NVM_DIR/versions/node/v24.1.0/bin/node, ~/.nvm by default)"}},
		{name: "interpreter python", app: `{"name":"a","script":"a.js","port":3000,"interpreter":"python3"}`, refused: `interpreter "python3": bm2 runs Node.js (node) and Bun (bun) only`},
		{name: "interpreter_args", app: `{"name":"a","script":"a.js","port":3000,"interpreter_args":"--inspect --trace-warnings"}`,
			toml: []string{`runtime_args = ["--inspect", "--trace-warnings"]`}},
		{name: "node_args array", app: `{"name":"a","script":"a.js","port":3000,"node_args":["--smol"]}`, toml: []string{`runtime_args = ["--smol"]`}},
		{name: "instances N", app: `{"name":"a","script":"a.js","port":3000,"instances":3}`, toml: []string{`instances = 3`, `exec_mode = "cluster"`, `reuseport = "preload"`},
			notes: []string{"bm2 adds reusePort: true to the app's listen on it (reuseport = \"preload\"): no code change", "--mode fork"}},
		{name: "cluster on bun", app: `{"name":"a","script":"a.ts","port":3000,"instances":2,"interpreter":"bun"}`, toml: []string{`exec_mode = "cluster"`, `reuseport = "preload"`},
			notes: []string{"bm2 gives Bun.serve reusePort: true", "Bun's node:http (Express, Fastify, Koa) ignores reusePort", "or run it with node"}},
		{name: "instances string", app: `{"name":"a","script":"a.js","port":3000,"instances":"2","exec_mode":"fork"}`, toml: []string{`instances = 2`, `exec_mode = "fork"`}, notes: []string{"3000+i"}},
		{name: "instances max", app: `{"name":"a","script":"a.js","port":3000,"instances":"max"}`, toml: []string{`instances = "max"`}},
		{name: "instances 0", app: `{"name":"a","script":"a.js","port":3000,"instances":0}`, toml: []string{`instances = "max"`}},
		{name: "instances -1", app: `{"name":"a","script":"a.js","port":3000,"instances":-1}`, toml: []string{`instances = 3`}, notes: []string{"every CPU but 1"}},
		{name: "instances bad", app: `{"name":"a","script":"a.js","port":3000,"instances":"many"}`, refused: `instances must be a number or "max"`},
		{name: "cluster_mode", app: `{"name":"a","script":"a.js","port":3000,"exec_mode":"cluster_mode"}`, toml: []string{`exec_mode = "cluster"`}},
		{name: "fork_mode", app: `{"name":"a","script":"a.js","port":3000,"exec_mode":"fork_mode","instances":1}`, toml: []string{`exec_mode = "fork"`}},
		{name: "--mode fork", app: `{"name":"a","script":"a.js","port":3000,"instances":2,"exec_mode":"cluster"}`, opts: Options{Fork: true},
			toml: []string{`exec_mode = "fork"`}, notes: []string{"fork mode (--mode fork)"}, absent: []string{"reuseport"}},
		{name: "env and env_production", app: `{"name":"a","script":"a.js","env":{"PORT":3000,"A":"1","B":true},"env_production":{"A":"2","PORT":3001}}`, opts: Options{Env: "production"},
			toml: []string{`port = 3001`, `A = "2"`, `B = "true"`}},
		{name: "env_staging not used", app: `{"name":"a","script":"a.js","env":{"PORT":3000},"env_staging":{"A":"1"}}`, notes: []string{"env_staging not used"}},
		{name: "NODE_PORT", app: `{"name":"a","script":"a.js","env":{"NODE_PORT":"4000"}}`, toml: []string{`port = 4000`, `port_env = ["NODE_PORT"]`}},
		{name: "PORT and NODE_PORT agree", app: `{"name":"a","script":"a.js","env":{"PORT":4000,"NODE_PORT":"4000"}}`, toml: []string{`port_env = ["PORT", "NODE_PORT"]`}},
		{name: "ports disagree", app: `{"name":"a","script":"a.js","env":{"PORT":4000,"NODE_PORT":4001}}`, refused: `env.PORT is "4000" and env.NODE_PORT is "4001"`},
		{name: "ports disagree, --port", app: `{"name":"a","script":"a.js","env":{"PORT":4000,"NODE_PORT":4001}}`, opts: Options{Port: 4000},
			toml: []string{`port = 4000`}, notes: []string{`env.NODE_PORT was "4001"`}},
		{name: "no port", app: `{"name":"a","script":"a.js","instances":2,"exec_mode":"cluster"}`, absent: []string{"\nport =", "exec_mode", "port_env", "reuseport"},
			toml: []string{"instances = 2"}, notes: []string{"a: a worker (no port): ", "import it with --port N --only a"}},
		{name: "no port, increment_var", app: `{"name":"a","script":"a.js","increment_var":"PORT"}`, absent: []string{"\nport ="}, notes: []string{"a worker (no port)", "increment_var PORT ignored"}},
		{name: "no port, --port", app: `{"name":"a","script":"a.js"}`, opts: Options{Port: 5000}, toml: []string{`port = 5000`, `port_env = ["PORT"]`}},
		{name: "privileged", app: `{"name":"a","script":"a.js","port":80}`, notes: []string{"port 80 is privileged", "CAP_NET_BIND_SERVICE"}},
		{name: "increment_var PORT", app: `{"name":"a","script":"a.js","instances":4,"increment_var":"PORT","env":{"PORT":3000}}`,
			toml: []string{`exec_mode = "fork"`}, notes: []string{"increment_var PORT"}},
		{name: "increment_var other", app: `{"name":"a","script":"a.js","port":3000,"increment_var":"WORKER"}`, notes: []string{"read BM2_APP_INSTANCE"}},
		{name: "instance_var", app: `{"name":"a","script":"a.js","port":3000,"instance_var":"INSTANCE_ID"}`, toml: []string{`instance_var = "INSTANCE_ID"`}},
		{name: "instance_var default", app: `{"name":"a","script":"a.js","port":3000,"instance_var":"NODE_APP_INSTANCE"}`, absent: []string{"instance_var"}},
		{name: "instance_var bm2's", app: `{"name":"a","script":"a.js","port":3000,"instance_var":"BM2_X"}`, absent: []string{"instance_var ="}, notes: []string{"instance_var BM2_X dropped"}},
		{name: "timings", app: `{"name":"a","script":"a.js","port":3000,"restart_delay":250,"min_uptime":"5s","kill_timeout":8000,"max_restarts":3}`,
			toml: []string{`restart_delay_ms = 250`, `min_uptime_ms = 5000`, `stop_timeout_ms = 8000`, `max_restarts = 3`}},
		{name: "exp_backoff_restart_delay", app: `{"name":"a","script":"a.js","port":3000,"exp_backoff_restart_delay":200}`,
			toml:  []string{`restart_delay_ms = 200`, `restart_delay_max_ms = 15000`},
			notes: []string{"a: exp_backoff_restart_delay 200 is restart_delay_ms = 200, the first delay, and restart_delay_max_ms = 15000 (PM2's cap) the longest", "before 254 only the first delay applies"}},
		{name: "exp_backoff_restart_delay and restart_delay", app: `{"name":"a","script":"a.js","port":3000,"exp_backoff_restart_delay":"1s","restart_delay":300}`,
			toml:  []string{`restart_delay_ms = 300`, `restart_delay_max_ms = 15000`},
			notes: []string{"a: exp_backoff_restart_delay 1000 with restart_delay 300: restart_delay_ms = 300 stays the first delay (PM2 would wait 1000 ms first)", "before 254 only the first delay applies"}},
		{name: "exp_backoff_restart_delay at the cap", app: `{"name":"a","script":"a.js","port":3000,"exp_backoff_restart_delay":20000}`,
			toml: []string{`restart_delay_ms = 20000`}, notes: []string{"no backoff: that is PM2's cap of 15000 ms already"}, absent: []string{"\nrestart_delay_max_ms"}},
		{name: "exp_backoff_restart_delay from restart_delay 0", app: `{"name":"a","script":"a.js","port":3000,"exp_backoff_restart_delay":100,"restart_delay":0}`,
			toml: []string{`restart_delay_ms = 0`}, notes: []string{"no backoff: it cannot grow from 0"}, absent: []string{"\nrestart_delay_max_ms"}},
		{name: "exp_backoff_restart_delay 0", app: `{"name":"a","script":"a.js","port":3000,"exp_backoff_restart_delay":0}`,
			absent: []string{"restart_delay", "exp_backoff"}},
		{name: "exp_backoff_restart_delay bad", app: `{"name":"a","script":"a.js","port":3000,"exp_backoff_restart_delay":"soon"}`,
			refused: "exp_backoff_restart_delay: must be milliseconds"},
		{name: "numbers as strings", app: `{"name":"a","script":"a.js","port":" 8080 ","instances":"2","max_restarts":"400","restart_delay":"500","kill_timeout":"1e3","min_uptime":"2000","max_memory_restart":"200M","exp_backoff_restart_delay":"150","uid":"1001"}`,
			toml: []string{`port = 8080`, `instances = 2`, `max_restarts = 400`, `restart_delay_ms = 500`, `restart_delay_max_ms = 15000`, `stop_timeout_ms = 1000`, `min_uptime_ms = 2000`, `memory_restart = "200M"`, `user = "1001"`}},
		{name: "max_restarts not a number", app: `{"name":"a","script":"a.js","port":3000,"max_restarts":"0x10"}`, refused: `max_restarts must be a whole number from 0 to 10000, got "0x10"`},
		{name: "max_restarts fraction", app: `{"name":"a","script":"a.js","port":3000,"max_restarts":"1.5"}`, refused: `max_restarts must be a whole number from 0 to 10000, got the number 1.5`},
		{name: "cron_restart \"0\"", app: `{"name":"a","script":"a.js","port":3000,"cron_restart":"0"}`, absent: []string{"restart_schedule", "cron"}},
		{name: "min_uptime minutes", app: `{"name":"a","script":"a.js","port":3000,"min_uptime":"1m"}`, toml: []string{`min_uptime_ms = 60000`}},
		{name: "max_memory_restart", app: `{"name":"a","script":"a.js","port":3000,"max_memory_restart":"512M"}`, toml: []string{`memory_restart = "512M"`}, notes: []string{"reloaded gracefully, as PM2 did"}},
		{name: "max_memory_restart bytes", app: `{"name":"a","script":"a.js","port":3000,"max_memory_restart":1073741824}`, toml: []string{`memory_restart = "1G"`}},
		{name: "max_memory_restart too low", app: `{"name":"a","script":"a.js","port":3000,"max_memory_restart":"10M"}`, toml: []string{`port = 3000`}, notes: []string{`max_memory_restart "10M" is not imported`}},
		{name: "user and gid", app: `{"name":"a","script":"a.js","port":3000,"user":"www-data","gid":"www-data"}`, toml: []string{`user = "www-data"`, `group = "www-data"`}},
		{name: "uid number", app: `{"name":"a","script":"a.js","port":3000,"uid":1001}`, toml: []string{`user = "1001"`}},
		{name: "owner of cwd", app: `{"name":"a","script":"a.js","port":3000,"cwd":"/home/al/app"}`, opts: Options{Owner: func(d string) string { return "al" }},
			toml: []string{`user = "al"`}, notes: []string{"the owner of /home/al/app"}},
		{name: "BM2_ env", app: `{"name":"a","script":"a.js","env":{"PORT":1000,"BM2_APP_PORT":"1"}}`, notes: []string{"BM2_* variables are bm2's own"}},
		{name: "no name", app: `{"script":"./src/server.js","port":3000}`, toml: []string{`name = "server"`, `script = "src/server.js"`},
			notes: []string{`server: the app has no name: named after its script, as PM2 names it; add name: "server"`}},
		{name: "no name, dotted script", app: `{"script":"app.config.js","port":3000}`, toml: []string{`name = "app-config"`},
			notes: []string{`app-config: the app has no name: named after its script, as PM2 names it ("app.config" there`}},
		{name: "no name, no script", app: `{"port":3000}`, refused: "no name and no script"},
		{name: "npm", app: `{"name":"a","script":"npm","args":"start","port":3000}`, refused: `script "npm" is a command`},
		{name: "shell script", app: `{"name":"a","script":"run.sh","port":3000}`, refused: `not JavaScript or TypeScript (.sh)`},
		{name: "interpreter none", app: `{"name":"a","script":"./srv","interpreter":"none","port":3000}`, refused: `"none" runs the script as a program`},
		{name: "serve", app: `{"name":"a","script":"serve","port":3000}`, refused: "static file server"},
		{name: "extensionless script path", app: `{"name":"a","script":"./bin/www","port":3000}`, toml: []string{`script = "bin/www"`}},
		{name: "cron_restart", app: `{"name":"a","script":"a.js","port":3000,"cron_restart":"0 4 * * 0"}`,
			toml:  []string{`restart_schedule = "Sun *-*-* 04:00:00"`},
			notes: []string{"a: cron_restart \"0 4 * * 0\" is restart_schedule = \"Sun *-*-* 04:00:00\": at those times a systemd timer runs `bm2 reload a`"}},
		{name: "cron alias", app: `{"name":"a","script":"a.js","port":3000,"cron":"*/15 * * * *"}`,
			toml: []string{`restart_schedule = "*-*-* *:00/15:00"`}, notes: []string{"a: cron \"*/15 * * * *\" is restart_schedule"}},
		{name: "cron_restart with seconds", app: `{"name":"a","script":"a.js","port":3000,"cron_restart":"30 0 4 * * *"}`,
			toml: []string{`restart_schedule = "*-*-* 04:00:30"`}},
		{name: "cron_restart day or weekday", app: `{"name":"a","script":"a.js","port":3000,"cron_restart":"0 4 1 * 1"}`,
			notes: []string{"a: cron_restart \"0 4 1 * 1\" not imported: cron restarts on the days of the month it names or on the weekdays it names",
				`"*-*-01 04:00:00" for the days of the month, "Mon *-*-* 04:00:00" for the weekdays, or "Mon *-*-01 04:00:00" for the days that are both`},
			absent: []string{"\nrestart_schedule ="}},
		{name: "cron_restart L", app: `{"name":"a","script":"a.js","port":3000,"cron_restart":"0 0 L * *"}`,
			notes: []string{`a: cron_restart "0 0 L * *" not imported: the day of the month "L" uses cron's L, W or #`}, absent: []string{"\nrestart_schedule ="}},
		{name: "cron_restart 0", app: `{"name":"a","script":"a.js","port":3000,"cron_restart":0}`, absent: []string{"restart_schedule", "cron"}},
		{name: "cron_restart not a string", app: `{"name":"a","script":"a.js","port":3000,"cron_restart":true}`,
			notes: []string{"a: cron_restart a boolean not imported: it must be a cron expression"}, absent: []string{"\nrestart_schedule ="}},
		{name: "runtime below floor", app: `{"name":"a","script":"a.js","port":3000}`,
			opts: Options{Runtime: func(config.Runtime, string) string { return "/usr/bin/node is Node.js v20.1.0, below the floor 24.0.0" }}, refused: "below the floor"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := importOne(t, c.app, c.opts)
			if c.refused != "" {
				if len(res.Refused) != 1 || !strings.Contains(res.Refused[0].Reason, c.refused) {
					t.Fatalf("refused %v, want %q", res.Refused, c.refused)
				}
				return
			}
			if len(res.Projects) != 1 {
				t.Fatalf("not imported: %v", res.Refused)
			}
			p := res.Projects[0]
			lines := strings.Split(string(p.Data), "\n")
			for _, want := range c.toml {
				found := false
				for _, l := range lines {
					found = found || l == want
				}
				if !found {
					t.Errorf("no line %s in:\n%s", want, p.Data)
				}
			}
			for _, text := range c.absent {
				if strings.Contains(string(p.Data), text) {
					t.Errorf("%q in:\n%s", text, p.Data)
				}
			}
			notes := strings.Join(p.Notes, "\n")
			for _, want := range c.notes {
				if !strings.Contains(notes, want) {
					t.Errorf("no note %q in:\n%s", want, notes)
				}
			}
		})
	}
}

// PM2 reads a string that is a number as that number for every key its
// schema types as a number (checked with pm2 7.0.4: max_restarts "400" is
// 400, port " 8090 " is 8090, kill_timeout "1e3" is 1000); the source is
// not changed.
func TestNumbersAsStrings(t *testing.T) {
	n := 0
	for _, r := range rules {
		if r.Number {
			n++
		}
	}
	if n != 15 {
		t.Errorf("%d keys read as numbers, PM2 7.0.4's schema has 15", n)
	}
	a := app(t, `{"max_restarts":"400","cron":" 5 ","port":"+8080","instances":"max","max_memory_restart":"200M","user":"1e3","name":"7","min_uptime":"","kill_timeout":"Infinity"}`)
	got := numbers(a)
	for k, want := range map[string]any{
		"max_restarts": jsonNumber("400"), "cron": jsonNumber("5"), "port": jsonNumber("8080"), "user": jsonNumber("1000"),
		"instances": "max", "max_memory_restart": "200M", "name": "7", "min_uptime": "", "kill_timeout": "Infinity",
	} {
		if got.Values[k] != want {
			t.Errorf("%s: %#v, want %#v", k, got.Values[k], want)
		}
	}
	if a.Values["max_restarts"] != "400" {
		t.Error("the source was changed")
	}
}

func TestOwnEnv(t *testing.T) {
	proc := app(t, `{"name":"web","instance_var":"NODE_APP_INSTANCE",
	 "env":{"HOME":"/root","SSH_AUTH_SOCK":"/tmp/a","NODE_ENV":"production","NUM":7,"PM2_USAGE":"CLI","PM2_JSON_PROCESSING":"true",
	        "PORT":3000,"GREETING":"hi","web":"{}","API_KEY":"k","unique_id":"u","NODE_APP_INSTANCE":0},
	 "env_production":{"NODE_ENV":"production","API_KEY":"k"}}`)
	own, dropped, ok := OwnEnv(proc)
	if !ok {
		t.Error("marker not found")
	}
	if got := strings.Join(own.Keys, " "); got != "NODE_ENV NUM PORT GREETING API_KEY" {
		t.Errorf("kept %s", got)
	}
	if got := strings.Join(dropped, " "); got != "HOME SSH_AUTH_SOCK" {
		t.Errorf("dropped %s", got)
	}
	// Without the mark (pm2 start app.js): only what PM2 shows the app set.
	proc = app(t, `{"name":"x","env":{"HOME":"/root","PORT":3000,"A":"1"}}`)
	own, dropped, ok = OwnEnv(proc)
	if ok || strings.Join(own.Keys, " ") != "PORT" || strings.Join(dropped, " ") != "A HOME" {
		t.Errorf("unmarked: kept %v dropped %v ok %v", own.Keys, dropped, ok)
	}
}

// `PORT=8005 pm2 start http.js -i 2; pm2 save` (pm2 7.0.4) writes a dump
// whose env holds PORT among the shell's variables, and the variable
// named after the app as an object: the port is read from there, the
// object is PM2's.
func TestDumpPortFromTheShell(t *testing.T) {
	proc := `{"name":"http","pm_exec_path":"/srv/http/http.js","pm_cwd":"/srv/http","exec_mode":"cluster_mode","filter_env":[],
	  "env":{"PORT":"8005","HOME":"/root","PM2_USAGE":"CLI","http":{},"unique_id":"u"}}`
	src := Source{File: "/root/.pm2/dump.pm2", Dump: true, Apps: []*Object{app(t, proc), app(t, proc)}}
	res := Map(src, Options{NumCPU: 2})
	if len(res.Projects) != 1 {
		t.Fatalf("%+v", res)
	}
	p := res.Projects[0]
	for _, want := range []string{"\nport = 8005\n", "\ninstances = 2\n", `port_env = ["PORT"]`} {
		if !strings.Contains(string(p.Data), want) {
			t.Errorf("no %q in:\n%s", want, p.Data)
		}
	}
	if strings.Contains(string(p.Data), "[env]") || strings.Contains(string(p.Data), "filter_env") {
		t.Errorf("PM2's own in:\n%s", p.Data)
	}
	if got := strings.Join(p.Dropped, " "); got != "HOME" {
		t.Errorf("left out %s", got)
	}
	if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "port 8005 is env.PORT of the dump: PM2 ran the app with it") {
		t.Errorf("notes:\n%s", notes)
	}
	if notes := strings.Join(res.Notes, "\n"); !strings.Contains(notes, "kept only those PM2 shows it set (0) and env.PORT for the port, left out 1") {
		t.Errorf("notes:\n%s", notes)
	}
	res = Map(src, Options{NumCPU: 2, Port: 9000})
	if len(res.Projects) != 1 || !strings.Contains(string(res.Projects[0].Data), "\nport = 9000\n") ||
		!strings.Contains(strings.Join(res.Projects[0].Notes, "\n"), `env.PORT was "8005": it is the port 9000 now (--port)`) {
		t.Errorf("--port: %+v", res)
	}
}

func TestSplitArgs(t *testing.T) {
	for in, want := range map[string]string{
		`a b  c`:            "a|b|c",
		`--x="1 2" 'y z'`:   `--x="1 2"|y z`,
		`"quoted" 'single'`: "quoted|single",
		``:                  "",
	} {
		if got := strings.Join(SplitArgs(in), "|"); got != want {
			t.Errorf("SplitArgs(%q) = %q, want %q", in, got, want)
		}
	}
}

// An app without a name is named as PM2 names it (lib/Common.js,
// renderApplicationName, checked with pm2 7.0.4): its script's file name
// without the last extension. PM2 runs two such apps under one name; bm2
// refuses the second, and --only picks an app by that name.
func TestNameFromScript(t *testing.T) {
	for script, want := range map[string]string{
		"server.js": "server", "./sub/server.js": "server", "npm": "npm", "bin/www": "www",
		"app.config.js": "app.config", ".hidden": ".hidden", "/srv/a/dist/main.mjs": "main",
	} {
		a := app(t, `{"script":"`+script+`"}`)
		if got, derived := PM2Name(a); got != want || !derived {
			t.Errorf("script %q: named %q (derived %v), want %q", script, got, derived, want)
		}
	}
	if got, derived := PM2Name(app(t, `{"name":"api","script":"server.js"}`)); got != "api" || derived {
		t.Errorf("named app: %q %v", got, derived)
	}
	src := Source{File: "/srv/app/ecosystem.config.js", Apps: []*Object{
		app(t, `{"script":"server.js","port":3000}`),
		app(t, `{"script":"sub/server.js","port":3001}`),
		app(t, `{"script":"npm","args":"start","port":3002}`),
	}}
	res := Map(src, Options{NumCPU: 2})
	if len(res.Projects) != 1 || res.Projects[0].Name != "server" || len(res.Refused) != 2 {
		t.Fatalf("%+v", res)
	}
	if r := res.Refused[0]; r.App != "server" || !strings.Contains(r.Reason, `the one PM2 gives it after its script, "server", is taken by app "server"`) {
		t.Errorf("duplicate: %v", r)
	}
	if r := res.Refused[1]; r.App != "npm" || !strings.Contains(r.Reason, `script "npm" is a command`) {
		t.Errorf("npm: %v", r)
	}
	if got := strings.Join(Names(src), " "); got != "server npm" {
		t.Errorf("Names: %s", got)
	}
	res = Map(src, Options{NumCPU: 2, Only: []string{"npm"}})
	if len(res.Projects) != 0 || len(res.Refused) != 1 || res.Refused[0].App != "npm" {
		t.Errorf("--only npm: %+v", res)
	}
}

// Apps that share a directory get bm2.<name>.toml; --out gets <name>.toml.
func TestFileNames(t *testing.T) {
	src := Source{File: "/srv/app/ecosystem.config.js", Apps: []*Object{
		app(t, `{"name":"a","script":"a.js","port":3000}`),
		app(t, `{"name":"b","script":"b.js","port":3001}`),
		app(t, `{"name":"c","script":"c.js","port":3002,"cwd":"c"}`),
	}}
	res := Map(src, Options{NumCPU: 2})
	var files []string
	for _, p := range res.Projects {
		files = append(files, p.File)
	}
	if got := strings.Join(files, " "); got != "/srv/app/bm2.a.toml /srv/app/bm2.b.toml /srv/app/c/bm2.toml" {
		t.Errorf("files %s", got)
	}
	// --only changes no name.
	res = Map(src, Options{NumCPU: 2, Only: []string{"a", "zz"}})
	if len(res.Projects) != 1 || res.Projects[0].File != "/srv/app/bm2.a.toml" || len(res.Refused) != 1 || !strings.Contains(res.Refused[0].Reason, "no app of that name") {
		t.Errorf("--only: %+v", res)
	}
	res = Map(src, Options{NumCPU: 2, Out: "/tmp/out"})
	if res.Projects[2].File != "/tmp/out/c.toml" {
		t.Errorf("--out: %s", res.Projects[2].File)
	}
}

func TestYAML(t *testing.T) {
	v, err := DecodeYAML([]byte("defaults: &d\n  script: a.js\napps:\n  - <<: *d\n    name: x\n    port: 3000\n    env: {A: 1.5, B: null, C: yes}\n"))
	if err != nil {
		t.Fatal(err)
	}
	src, err := FromValue("/srv/e.yaml", v)
	if err != nil {
		t.Fatal(err)
	}
	res := Map(src, Options{NumCPU: 2})
	if len(res.Projects) != 1 {
		t.Fatalf("%+v", res)
	}
	for _, want := range []string{`script = "a.js"`, `A = "1.5"`, `C = "yes"`} {
		if !strings.Contains(string(res.Projects[0].Data), want) {
			t.Errorf("no %s:\n%s", want, res.Projects[0].Data)
		}
	}
	if _, err := DecodeYAML([]byte("a: &a [*a, *a]\n")); err == nil {
		t.Log("recursive alias accepted") // yaml.v3 refuses it itself
	}
}
