package e2e

import (
	"fmt"
	"strings"
	"testing"
)

// clusterEcosystem is the ecosystem file of a PM2 user with two typical
// cluster apps, neither of which sets reusePort: Express 5 on
// process.env.PORT || 3000, and node:http's listen(port, "0.0.0.0", cb).
const clusterEcosystem = `module.exports = {
  apps: [
    { name: "web", script: "web.js", instances: 2, exec_mode: "cluster", env: { PORT: 3300, NODE_ENV: "production" } },
    { name: "api", script: "api.js", instances: 2, exec_mode: "cluster", env: { PORT: 3310 } },
  ],
};
`

// answeredBy asks port, a new connection each time, until every one of
// pids has answered (the apps answer "<name> <pid>"), and fails the test
// if one has not after 200 requests.
func (b *bed) answeredBy(port int, pids []string) {
	b.t.Helper()
	out := b.sh(fmt.Sprintf(`for i in $(seq 200); do curl -sf --max-time 2 -H 'Connection: close' http://127.0.0.1:%d/ || echo FAILED; done | sort | uniq -c`, port))
	if strings.Contains(out, "FAILED") {
		b.t.Errorf("port %d: requests failed:\n%s", port, out)
	}
	for _, pid := range pids {
		if !strings.Contains(out, " "+pid+"\n") {
			b.t.Errorf("port %d: instance with pid %s answered none of 200 requests:\n%s", port, pid, out)
		}
	}
}

// TestImportClusterApps: PM2 cluster apps run unchanged. bm2 import
// --serve of the ecosystem file above gives two projects with
// reuseport = "preload", both online and confirmed, without a change to
// the apps; both instances of each answer, and a reload under paced load
// loses no request.
func TestImportClusterApps(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	mods := b.frameworks()
	b.app("/srv/app", "pm2-express.js", "web.js")
	b.app("/srv/app", "pm2-http.js", "api.js")
	b.sh(fmt.Sprintf(`ln -s %s /srv/app/node_modules`, mods))
	b.write("/srv/app/ecosystem.config.js", clusterEcosystem)

	r := b.must(0, "/srv/app", "import", "ecosystem.config.js", "--serve")
	t.Logf("bm2 import ecosystem.config.js --serve:\n%s%s", r.stdout, r.stderr)
	for _, want := range []string{
		"web: 2 x cluster on port 3300, runtime node -> /srv/app/bm2.web.toml",
		"api: 2 x cluster on port 3310, runtime node -> /srv/app/bm2.api.toml",
		`web: cluster mode: every instance listens on port 3300 itself (there is no node:cluster master), so bm2 adds reusePort: true to the app's listen on it (reuseport = "preload"): no code change`,
		`api: cluster mode: every instance listens on port 3310 itself`,
		"web-0 confirmed (reusePort)\n", "web-1 confirmed (reusePort)\n",
		"api-0 confirmed (reusePort)\n", "api-1 confirmed (reusePort)\n",
		"\nweb online and confirmed: 2 x cluster on port 3300, runtime node (",
		"\napi online and confirmed: 2 x cluster on port 3310, runtime node (",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("import's output lacks %q", want)
		}
	}
	if strings.Contains(r.stdout+r.stderr, "reuseport_missing") {
		t.Errorf("import --serve found reusePort missing:\n%s%s", r.stdout, r.stderr)
	}
	for _, name := range []string{"web", "api"} {
		if out := b.sh(`grep -x 'reuseport = "preload"' /etc/bm2/` + name + `.toml || true`); strings.TrimSpace(out) == "" {
			t.Errorf("/etc/bm2/%s.toml has no reuseport = \"preload\":\n%s", name, b.sh(`cat /etc/bm2/`+name+`.toml`))
		}
		b.confirmedNow(name, 2)
	}
	if cmd := b.show("bm2@web-0.service", "ExecStart"); !strings.Contains(cmd, " --require /usr/lib/bm2/reuseport.cjs web.js ") {
		t.Errorf("web-0's ExecStart does not load the preload: %s", cmd)
	}
	if out := b.sh(`stat -c '%a %U' /usr/lib/bm2/reuseport.cjs`); strings.TrimSpace(out) != "644 root" {
		t.Errorf("/usr/lib/bm2/reuseport.cjs: %s, want 644 root", out)
	}

	t.Run("both instances answer", func(t *testing.T) {
		b := b.in(t)
		b.answeredBy(3300, b.pids("web", 2))
		b.answeredBy(3310, b.pids("api", 2))
	})

	t.Run("status and check", func(t *testing.T) {
		b := b.in(t)
		if out := b.must(0, "/", "status", "web").stdout; !strings.Contains(out, "\n  reusePort supplied by bm2 (preload)\n") {
			t.Errorf("bm2 status web:\n%s", out)
		}
		want := "\nreusePort supplied by bm2 (reuseport = \"preload\"): node loads reuseport.cjs with --require, " +
			"which adds reusePort: true to the app's listen on port 3310; the probe checks every start\n"
		if out := b.must(0, "/", "check", "api").stdout; !strings.Contains(out, want) {
			t.Errorf("bm2 check api:\n%s\nwant %q", out, want)
		}
	})

	// The apps close their listener on SIGTERM (server.close()), which
	// loses nothing when each request has a connection of its own (see
	// TestReloadOneInstance).
	for _, c := range []struct {
		name string
		port int
	}{{"web", 3300}, {"api", 3310}} {
		t.Run("reload "+c.name+" under load", func(t *testing.T) {
			b := b.in(t)
			before := b.pids(c.name, 2)
			res, out, _ := b.reloadUnderLoad(c.name, c.port, false)
			if res.errors() != 0 {
				t.Errorf("%v during the reload; reload said:\n%s", res, out)
			}
			if res.requests < 1000 {
				t.Errorf("only %d requests: the load was not steady", res.requests)
			}
			if !strings.Contains(out, c.name+" reloaded: 2 instances in ") {
				t.Errorf("reload's output:\n%s", out)
			}
			after := b.pids(c.name, 2)
			for i := range after {
				if after[i] == before[i] {
					t.Errorf("%s-%d was not restarted (pid %s)", c.name, i, after[i])
				}
			}
			b.confirmedNow(c.name, 2)
		})
	}
}

// TestPreloadJudgedByProbe: with reuseport = "preload" a Bun app that
// calls Bun.serve without reusePort is confirmed; the probe still judges
// what the preload cannot reach: Express on Bun (Bun's node:http ignores
// reusePort), and a Node.js app whose listener is a forked child process
// (the preload does not reach it). Both end errored as they would
// without the preload, with today's reasons and hints.
func TestPreloadJudgedByProbe(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	mods := b.frameworks()
	project := func(dir, name, script, runtime string, port int) {
		b.write(dir+"/bm2.toml", fmt.Sprintf(`name = %q
script = %q
runtime = %q
instances = 2
port = %d
port_env = ["PORT"]
reuseport = "preload"
stop_timeout_ms = 1000
`, name, script, runtime, port))
	}
	b.app("/srv/bunserve", "bun-serve.ts", "index.ts")
	project("/srv/bunserve", "bunserve", "index.ts", "bun", 3500)
	b.app("/srv/bunexpress", "pm2-express.js", "web.js")
	b.sh(fmt.Sprintf(`ln -s %s /srv/bunexpress/node_modules`, mods))
	project("/srv/bunexpress", "bunexpress", "web.js", "bun", 3510)
	b.app("/srv/child", "child-listener.js", "server.js")
	project("/srv/child", "child", "server.js", "node", 3520)

	t.Run("Bun.serve without reusePort is confirmed", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/srv/bunserve", "serve")
		for _, want := range []string{"bunserve-0 confirmed (reusePort)\n", "bunserve-1 confirmed (reusePort)\n", "\nbunserve online and confirmed: 2 x cluster on port 3500, runtime bun ("} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("serve's output lacks %q:\n%s", want, r.stdout)
			}
		}
		if cmd := b.show("bm2@bunserve-0.service", "ExecStart"); !strings.Contains(cmd, " --preload /usr/lib/bm2/reuseport.cjs index.ts ") {
			t.Errorf("bunserve-0's ExecStart does not load the preload: %s", cmd)
		}
		b.confirmedNow("bunserve", 2)
		b.answeredBy(3500, b.pids("bunserve", 2))
	})

	t.Run("Express on Bun stays a probe failure", func(t *testing.T) {
		b := b.in(t)
		r := b.must(1, "/srv/bunexpress", "serve")
		for _, want := range []string{
			"bm2: bunexpress is errored: reuseport_missing: bunexpress-",
			"or the app listens through node:http (Express, Fastify, Koa, ...), whose reusePort Bun ignores",
			"bm2: fix: `reuseport = \"preload\"` is set, and it reaches Bun.serve only: an app on node:http cannot share a port under Bun, preload or not: set `exec_mode = \"fork\"` (or `runtime = \"node\"`) in bm2.toml",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("serve's error lacks %q:\n%s", want, r.stderr)
			}
		}
		b.sh(`test "$(cat /var/lib/bm2/errored/bunexpress)" = reuseport_missing`)
	})

	t.Run("a listener in a child process stays a probe failure", func(t *testing.T) {
		b := b.in(t)
		r := b.must(1, "/srv/child", "serve")
		for _, want := range []string{
			"bm2: child is errored: reuseport_missing: child-",
			"holds port 3520 alone (no SO_REUSEPORT)",
			"bm2: fix: `reuseport = \"preload\"` is set, so the port is held by a listener the preload does not reach (a child process,",
		} {
			if !strings.Contains(r.stderr, want) {
				t.Errorf("serve's error lacks %q:\n%s", want, r.stderr)
			}
		}
		b.sh(`test "$(cat /var/lib/bm2/errored/child)" = reuseport_missing`)
	})
}
