package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// Every failure mode of package reason that can be provoked for real,
// in one sandbox: bm2 serve (or start) ends with the reason, its message
// and its fix; the journal and the errored mark carry the same reason.
func TestReasons(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	mods := b.frameworks()

	// serve runs `bm2 serve` in dir and wants it to fail (exit code) with
	// every one of wants in its error output.
	serve := func(b *bed, dir string, code int, wants ...string) run {
		b.t.Helper()
		r := b.must(code, dir, "serve")
		for _, w := range wants {
			if !strings.Contains(r.stderr, w) {
				b.t.Errorf("serve's error lacks %q:\nstdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
			}
		}
		return r
	}
	project := func(dir, name, body string) {
		b.write(dir+"/bm2.toml", fmt.Sprintf("name = %q\nscript = \"server.js\"\nstop_timeout_ms = 1000\n%s", name, body))
	}
	errored := func(b *bed, name, want string) {
		b.t.Helper()
		if got := strings.TrimSpace(b.sh(`cat /var/lib/bm2/errored/` + name + ` 2>/dev/null || true`)); got != want {
			b.t.Errorf("errored mark of %s: %q, want %q", name, got, want)
		}
	}

	t.Run("Node cluster without reusePort", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/nrp", "node-server.js", "server.js")
		project("/srv/nrp", "nrp", "runtime = \"node\"\ninstances = 2\nport = 3500\n[env]\nREUSE_PORT = \"0\"\n")
		serve(b, "/srv/nrp", 1,
			"bm2: nrp is errored: reuseport_missing: nrp-",
			"holds port 3500 alone (no SO_REUSEPORT): cluster mode needs every instance to share the port, so bm2 stopped nrp",
			"bm2: fix: set `reuseport = \"preload\"` in bm2.toml: bm2 adds reusePort: true to the app's listen (node:http, Express, Fastify, ...), no code change; "+
				"or listen with `server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })` (Node.js >= 24); or set `exec_mode = \"fork\"` in bm2.toml; then `bm2 serve`")
		errored(b, "nrp", "reuseport_missing")
		if r := b.must(0, "/", "status", "nrp"); !strings.Contains(r.stdout, "  why: nrp-") || !strings.Contains(r.stdout, "  fix: set `reuseport = \"preload\"` in bm2.toml") {
			t.Errorf("status does not name the failure:\n%s", r.stdout)
		}
	})

	t.Run("Express 5 under Bun", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/expbun", "express-server.js", "server.js")
		b.sh(fmt.Sprintf(`ln -s %s /srv/expbun/node_modules`, mods))
		project("/srv/expbun", "expbun", "runtime = \"bun\"\ninstances = 2\nport = 3502\n")
		r := serve(b, "/srv/expbun", 1,
			"bm2: expbun is errored: reuseport_missing: expbun-",
			"holds port 3502 alone (no SO_REUSEPORT): under Bun either Bun.serve is called without reusePort, or the app listens through node:http (Express, Fastify, Koa, ...), whose reusePort Bun ignores",
			"bm2: fix: with Bun.serve, set `reuseport = \"preload\"` in bm2.toml: bm2 gives Bun.serve reusePort: true, no code change; or pass `Bun.serve({ port: Number(process.env.BM2_APP_PORT), reusePort: true })`; "+
				"an app on node:http cannot share a port under Bun, preload or not: set `exec_mode = \"fork\"`")
		if strings.Contains(r.stderr, "stopped: exit status") {
			t.Errorf("serve ended with a raw exit status:\n%s", r.stderr)
		}
		errored(b, "expbun", "reuseport_missing")
	})

	for _, lo := range []struct{ name, host, shown string }{{"lo4", "127.0.0.1", "127.0.0.1"}, {"lo6", "::1", "::1"}} {
		t.Run("Node on "+lo.host+" only", func(t *testing.T) {
			b := b.in(t)
			port := map[string]int{"lo4": 3504, "lo6": 3506}[lo.name]
			b.app("/srv/"+lo.name, "node-server.js", "server.js")
			project("/srv/"+lo.name, lo.name, fmt.Sprintf("runtime = \"node\"\ninstances = 2\nport = %d\n[env]\nREUSE_PORT = \"0\"\nHOST = %q\n", port, lo.host))
			start := time.Now()
			serve(b, "/srv/"+lo.name, 1,
				"bm2: "+lo.name+" is errored: loopback_only: "+lo.name+"-",
				fmt.Sprintf("listens on port %d only on %s, alone (no SO_REUSEPORT): no other instance can join it and nothing outside this host reaches it (`host: \"localhost\"` binds one loopback address), so bm2 stopped %s\n", port, lo.shown, lo.name),
				"bm2: fix: leave out the host (or listen on \"0.0.0.0\" or \"::\") and listen with `server.listen(")
			// Found at once, not after the probe's 60 s window.
			if d := time.Since(start); d > 30*time.Second {
				t.Errorf("loopback_only took %v", d)
			}
			errored(b, lo.name, "loopback_only")
			for _, row := range b.listJSON(lo.name) {
				if row.Reason != "loopback_only" || row.Reuseport == nil || *row.Reuseport != "missing" {
					t.Errorf("bm2 list: %+v", row)
				}
			}
			es := b.events("reuseport_missing", lo.name)
			if len(es) != 1 || es[0].str("BM2_REASON") != "loopback_only" || es[0].str("_UID") != "0" {
				t.Errorf("events %v", es)
			}
		})
	}

	t.Run("port held by another account", func(t *testing.T) {
		b := b.in(t)
		// Not nobody: a project's own account is checked as nobody before
		// systemd allocates it.
		b.sh(`useradd -r -M -s /usr/sbin/nologin porthog && systemd-run -q --unit=holder -p User=porthog /usr/bin/python3 -m http.server 3508 --bind 0.0.0.0`)
		b.eventually(20*time.Second, "the holder listens", `ss -Hltn 'sport = :3508' | grep -q LISTEN`)
		b.app("/srv/held", "node-server.js", "server.js")
		project("/srv/held", "held", "runtime = \"node\"\ninstances = 2\nport = 3508\n")
		// bm2 check names it before start...
		r := b.must(3, "/srv/held", "check")
		if out := r.stdout + r.stderr; !strings.Contains(out, "port_in_use: port 3508 is held by python3 (pid ") ||
			!strings.Contains(out, " (porthog), not by held") || !strings.Contains(out, "fix: stop that program, or give held another `port =`") {
			t.Errorf("check:\n%s", out)
		}
		// ...serve refuses it alike, before writing anything...
		serve(b, "/srv/held", 3,
			"bm2: port_in_use: port 3508 is held by python3 (pid ",
			"; `bm2 serve --force` serves it anyway")
		b.sh(`test ! -e /etc/bm2/held.toml`)
		// ...and with --force ends with it, never as reuseport_missing:
		// SO_REUSEPORT joins only sockets of one user. Each instance is
		// errored on its own (one listener does not stop a project), until
		// the next boot.
		r = b.must(1, "/srv/held", "serve", "--force")
		for _, w := range []string{
			"bm2: instance held-",
			" errored: port_in_use: port 3508 is held by python3 (pid ",
			" (porthog), not by held: its instances cannot listen there (SO_REUSEPORT joins only sockets of the same user); held-",
			"bm2: fix: stop that program, or give held another `port =` in bm2.toml; then `bm2 serve`"} {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("serve --force's error lacks %q:\nstdout:\n%s\nstderr:\n%s", w, r.stdout, r.stderr)
			}
		}
		if strings.Contains(r.stderr, "reuseport_missing") {
			t.Errorf("reported as reuseport_missing:\n%s", r.stderr)
		}
		errored(b, "held", "")
		b.eventually(30*time.Second, "both instances marked", `grep -qx port_in_use /run/bm2/errored/held-0 && grep -qx port_in_use /run/bm2/errored/held-1`)
		es := b.waitEvents(10*time.Second, "instance_errored", "held", 2)
		for _, e := range es {
			if e.str("BM2_REASON") != "port_in_use" || e.str("_UID") != "0" {
				t.Errorf("event %v", e)
			}
		}
		if es := b.events("reuseport_missing", "held"); len(es) != 0 {
			t.Errorf("reuseport_missing events %v", es)
		}
		b.sh(`systemctl stop holder`)
	})

	t.Run("missing runtime", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/nort", "node-server.js", "server.js")
		project("/srv/nort", "nort", "runtime = \"node\"\nruntime_path = \"/opt/nort/node\"\nport = 3510\nexec_mode = \"fork\"\n")
		serve(b, "/srv/nort", 3,
			"bm2: runtime_missing: nort-0 not started: runtime /opt/nort/node",
			"bm2: fix: install Node.js 24.0.0 (or Bun 1.4.0) or newer where the app's user can run it, or set `runtime_path =` in bm2.toml")
		// There, but not executable by the app's user.
		b.sh(`install -D -m 0750 /usr/local/bin/node /opt/rt750/node`)
		b.write("/srv/nort/bm2.toml", strings.Replace(b.sh(`cat /srv/nort/bm2.toml`), "/opt/nort/node", "/opt/rt750/node", 1))
		serve(b, "/srv/nort", 3,
			"bm2: runtime_missing: nort-0 not started: runtime /opt/rt750/node cannot be run by the app's user (fork/exec /opt/rt750/node: permission denied)",
			"bm2: fix: install Node.js 24.0.0")
		b.write("/srv/nort/bm2.toml", strings.Replace(b.sh(`cat /srv/nort/bm2.toml`), "/opt/rt750/node", "/opt/nort/node", 1))
		// Gone after registration: the run wrapper refuses at start.
		b.sh(`install -D -m 0755 /usr/local/bin/node /opt/nort/node`)
		b.must(0, "/srv/nort", "serve")
		b.sh(`rm /opt/nort/node`)
		r := b.must(1, "/", "restart", "nort")
		for _, want := range []string{"runtime_missing: nort-0 not started: runtime /opt/nort/node", "fix: install Node.js 24.0.0"} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("restart lacks %q:\n%s", want, r.stderr)
			}
		}
	})

	t.Run("missing script", func(t *testing.T) {
		b := b.in(t)
		b.sh(`install -d -m 0755 /srv/nosc`)
		project("/srv/nosc", "nosc", "runtime = \"node\"\nport = 3512\nexec_mode = \"fork\"\nmax_restarts = 1\nrestart_delay_ms = 100\n")
		serve(b, "/srv/nosc", 3,
			"bm2: script_missing: nosc-0 cannot start: script /srv/nosc/server.js: no such file or directory",
			"bm2: fix: put the script there and make it readable by the app's user (and its directories enterable), or fix `script =` in bm2.toml; then `bm2 serve`")
		// Unreadable by the app's own account: a warning, as the check cannot
		// see every group the account may have.
		b.app("/srv/nosc", "node-server.js", "server.js")
		b.sh(`chmod 0600 /srv/nosc/server.js`)
		r := b.bm2("/srv/nosc", "check")
		if out := r.stdout + r.stderr; !strings.Contains(out, "script_missing: nosc-0 cannot start: script /srv/nosc/server.js: permission denied (as user ") {
			t.Errorf("check of an unreadable script:\n%s", out)
		}
		// Gone after registration: the crash loop is explained by what caused it.
		b.sh(`chmod 0644 /srv/nosc/server.js`)
		b.must(0, "/srv/nosc", "serve")
		b.sh(`rm /srv/nosc/server.js`)
		r = b.must(1, "/", "restart", "nosc")
		for _, want := range []string{
			"bm2: instance nosc-0 errored: script_missing: nosc-0 cannot start: script /srv/nosc/server.js: no such file or directory\n",
			"bm2: fix: put the script there and make it readable by the app's user (and its directories enterable), or fix `script =` in bm2.toml; then `bm2 start nosc`",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("restart lacks %q:\n%s", want, r.stderr)
			}
		}
	})

	t.Run("missing cwd", func(t *testing.T) {
		b := b.in(t)
		b.write("/etc/bm2/nocwd.toml", "name = \"nocwd\"\nscript = \"server.js\"\ncwd = \"/srv/nocwd-gone\"\nruntime = \"node\"\nport = 3514\nexec_mode = \"fork\"\n")
		r := b.must(3, "/", "check", "nocwd")
		if out := r.stdout + r.stderr; !strings.Contains(out, "cwd_missing: nocwd-0 cannot start: working directory /srv/nocwd-gone: no such file or directory") {
			t.Errorf("check:\n%s", out)
		}
		// Registered by hand: systemd cannot enter it (200/CHDIR), and start says so.
		b.sh(`systemctl daemon-reload`)
		r = b.must(1, "/", "start", "nocwd")
		for _, want := range []string{
			"bm2: instance nocwd-0 errored: cwd_missing: nocwd-0 cannot start: working directory /srv/nocwd-gone does not exist or cannot be entered by the app's user (systemd: exit status 200/CHDIR)",
			"bm2: fix: create it and let the app's user enter it, or fix `cwd =` in bm2.toml; then `bm2 start nocwd`",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("start lacks %q:\n%s", want, r.stderr)
			}
		}
		if n := b.show("bm2@nocwd-0.service", "NRestarts"); n != "0" {
			t.Errorf("restarted %s times", n)
		}
	})

	t.Run("crash loop", func(t *testing.T) {
		b := b.in(t)
		b.write("/srv/loop/server.js", "console.error('cannot read config: /srv/loop/config.json');\nprocess.exit(3);\n")
		project("/srv/loop", "loop", "runtime = \"node\"\nport = 3516\nexec_mode = \"fork\"\nmax_restarts = 2\nrestart_delay_ms = 100\n")
		r := serve(b, "/srv/loop", 1,
			"bm2: instance loop-0 errored: restart_budget_exhausted: loop-0 crashed again and again and gave up (restart budget exhausted); last exit: ",
			" reason=exited code=3",
			"cannot read config: /srv/loop/config.json",
			"bm2: fix: `bm2 logs loop` shows why it crashes; fix the app (or give it more `max_restarts =` in bm2.toml)")
		// No line of it looks like an error: the crash.log line of its
		// last run says how it ended.
		last := strings.TrimSpace(b.sh(`grep -v restart_budget_exhausted /var/log/bm2/loop/loop-0.crash.log | tail -1`))
		if !strings.Contains(r.stderr, "last exit: "+last+"\n") {
			t.Errorf("serve does not quote the last run's crash.log line %q:\n%s", last, r.stderr)
		}
	})

	t.Run("non-existent user", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/ghost", "node-server.js", "server.js")
		project("/srv/ghost", "ghost", "runtime = \"node\"\nport = 3518\nexec_mode = \"fork\"\nuser = \"ghostuser\"\n")
		serve(b, "/srv/ghost", 3,
			"bm2: user_missing: ghost-0 cannot start: user ghostuser does not exist",
			"bm2: fix: create the account (`useradd --system ghostuser`), or fix `user =` in bm2.toml")
		if out := b.sh(`ls /etc/bm2/ghost.toml 2>&1 || true`); !strings.Contains(out, "No such file") {
			t.Errorf("registered anyway: %s", out)
		}
	})
}
