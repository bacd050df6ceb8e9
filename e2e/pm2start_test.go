package e2e

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// A PM2 user's first commands, unchanged: `bm2 start app.js -i 2` in a
// directory with nothing but the app (which reads PORT || 3000 and
// knows nothing of reusePort) ends with both instances confirmed on the
// port the code names; `bm2 start ecosystem.config.js` with a web app and
// a worker (no port) ends with both running, the worker fenced.
func TestStartAsPM2Does(t *testing.T) {
	t.Parallel()
	b := newBed(t)

	t.Run("start app.js -i 2", func(t *testing.T) {
		b := b.in(t)
		b.write("/srv/plain/app.js", `const http = require("node:http");
const port = process.env.PORT || 3610;
http.createServer((req, res) => res.end("plain " + process.env.NODE_APP_INSTANCE + "\n")).listen(port);
`)
		r := b.must(0, "/srv/plain", "start", "app.js", "-i", "2")
		t.Logf("bm2 start app.js -i 2:\n%s%s", r.stdout, r.stderr)
		for _, want := range []string{"port 3610: app.js reads", "writes /srv/plain/bm2.toml", "app-0 confirmed (reusePort)", "app-1 confirmed (reusePort)"} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("bm2 start lacks %q", want)
			}
		}
		seen := map[string]bool{}
		for i := 0; i < 40 && len(seen) < 2; i++ {
			seen[strings.TrimSpace(b.sh(`curl -sf --max-time 5 http://127.0.0.1:3610/`))] = true
		}
		if !seen["plain 0"] || !seen["plain 1"] {
			t.Errorf("answers from the shared port: %v (want both instances, by NODE_APP_INSTANCE)", seen)
		}
	})

	t.Run("start ecosystem.config.js with a worker", func(t *testing.T) {
		b := b.in(t)
		b.write("/srv/eco/web.js", `require("node:http").createServer((req, res) => res.end("web\n")).listen(process.env.PORT);
`)
		// The worker tries a port of its own once: the fence says no.
		b.write("/srv/eco/jobs.js", `const net = require("node:net");
net.createServer().listen(3699).on("error", (e) => console.log("jobs bind " + e.code));
setInterval(() => console.log("jobs tick " + process.env.NODE_APP_INSTANCE), 1000);
`)
		b.write("/srv/eco/ecosystem.config.js", `module.exports = { apps: [
  { name: "eco-web", script: "web.js", env: { PORT: 3620 } },
  { script: "jobs.js", instances: 2, exec_mode: "cluster" },
] };
`)
		r := b.must(0, "/srv/eco", "start", "ecosystem.config.js")
		t.Logf("bm2 start ecosystem.config.js:\n%s%s", r.stdout, r.stderr)
		if !strings.Contains(r.stdout, "jobs: a worker (no port)") || !strings.Contains(r.stdout, "jobs: 2 x worker (no port), runtime node") || !strings.Contains(r.stdout, "jobs-1 online") {
			t.Errorf("the worker was not imported and served as one")
		}
		if out := b.sh(`curl -sf --max-time 5 http://127.0.0.1:3620/`); strings.TrimSpace(out) != "web" {
			t.Errorf("eco-web answered %q", out)
		}
		var rows []listRow
		if err := json.Unmarshal([]byte(b.must(0, "/", "list", "--json", "jobs").stdout), &rows); err != nil || len(rows) != 2 {
			t.Fatalf("bm2 list --json jobs: %v %v", rows, err)
		}
		for _, row := range rows {
			if row.Mode != "worker" || row.State != "online" {
				t.Errorf("jobs row: %+v", row)
			}
		}
		b.eventually(20*time.Second, "the worker's denied bind", `journalctl -u bm2@jobs-0.service -o cat | grep -q '^jobs bind EPERM$'`)
		b.eventually(20*time.Second, "the worker runs", `journalctl -u bm2@jobs-1.service -o cat | grep -q '^jobs tick 1$'`)
		if out := b.sh(`systemctl show -P Environment bm2@jobs-0.service`); strings.Contains(out, "BM2_APP_PORT") || !strings.Contains(out, "BM2_EXEC_MODE=worker") {
			t.Errorf("jobs-0's environment: %s", out)
		}
	})
}

// The commonest app shape, listening on process.env.PORT || 3000, in a
// project that says port = 8085 and no port_env: the fence denies its
// bind, and bm2 says which port it tried and what to write.
func TestDeniedBindNamesTheFix(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.write("/srv/p3k/server.js", `require("node:http").createServer((q, s) => s.end("ok\n")).listen(process.env.PORT || 3000);
`)
	b.write("/srv/p3k/bm2.toml", "name = \"p3k\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 8085\nmax_restarts = 2\nrestart_delay_ms = 100\n")
	r := b.bm2("/srv/p3k", "serve", "--timeout", "40s")
	t.Logf("serve (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	if r.code == 0 {
		t.Fatal("serve of an app that cannot listen succeeded")
	}
	crash := b.sh(`cat /var/log/bm2/p3k/p3k-0.crash.log`)
	if !strings.Contains(crash, "its bind to port 3000 was denied: bm2 gives it port 8085") || !strings.Contains(crash, `port_env = [\"PORT\"]`) {
		t.Errorf("crash.log:\n%s", crash)
	}
	if out := r.stdout + r.stderr; !strings.Contains(out, "port 3000 was denied") || !strings.Contains(out, "port_env") {
		t.Errorf("serve does not say which port the app tried and what to write")
	}
	if out := b.must(0, "/", "status", "p3k").stdout; !strings.Contains(out, "port 3000 was denied") {
		t.Errorf("bm2 status p3k:\n%s", out)
	}
	// The fix works.
	b.write("/srv/p3k/bm2.toml", "name = \"p3k\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 8085\nport_env = [\"PORT\"]\n")
	b.must(0, "/srv/p3k", "serve", "--timeout", "40s")
	if out := b.sh(`curl -sf --max-time 5 http://127.0.0.1:8085/`); strings.TrimSpace(out) != "ok" {
		t.Errorf("after the fix, 8085 answered %q", out)
	}
}
