package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
)

// pm2Version is the PM2 release the import is tested against.
const pm2Version = "pm2@7.0.4"

// shopEcosystem is the ecosystem file of the import test: a cluster app
// with env_production, and a fork app whose instances get PORT+i
// (increment_var).
const shopEcosystem = `module.exports = {
  apps: [
    {
      name: "shop",
      script: "server.js",
      instances: 2,
      exec_mode: "cluster",
      max_memory_restart: "300M",
      env: { PORT: 3100, NODE_ENV: "development", GREETING: "hello" },
      env_production: { NODE_ENV: "production", API_KEY: "s3cret" },
    },
    {
      name: "jobs",
      script: "server.js",
      instances: 2,
      increment_var: "PORT",
      env: { PORT: 3200, GREETING: "hi" },
    },
  ],
};
`

// answer is what e2e/apps/pm2-env-server.js says: its port and the
// variables the test compares.
type answer struct {
	Port int               `json:"port"`
	Env  map[string]string `json:"env"`
}

func (b *bed) answers(ports ...int) map[int]answer {
	b.t.Helper()
	out := map[int]answer{}
	for _, p := range ports {
		body := b.eventually(60*time.Second, fmt.Sprintf("port %d answers", p), fmt.Sprintf("curl -sf http://127.0.0.1:%d/", p))
		var a answer
		if err := json.Unmarshal([]byte(body), &a); err != nil {
			b.t.Fatalf("port %d: %v: %q", p, err, body)
		}
		out[p] = a
	}
	return out
}

// The daemon's environment that must not reach the app under bm2: what
// the shell that ran pm2 had exported.
var shellOnly = []string{"SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY"}

// "The same environment": every variable the app's ecosystem entry sets
// (env, env_production with --env production) has the same value, the
// port too, and nothing of the pm2 shell's own environment is there.
func sameEnv(t *testing.T, what string, pm2, bm2 map[int]answer) {
	t.Helper()
	for port, under := range pm2 {
		want := answer{Port: under.Port, Env: map[string]string{}}
		for k, v := range under.Env {
			want.Env[k] = v
		}
		got, ok := bm2[port]
		if !ok {
			t.Errorf("%s: nothing answers on port %d", what, port)
			continue
		}
		if got.Port != want.Port {
			t.Errorf("%s: port %d: app says port %d, under PM2 %d", what, port, got.Port, want.Port)
		}
		for _, k := range shellOnly {
			if want.Env[k] == "" {
				t.Fatalf("under PM2, port %d has no %s: the test's shell variable did not reach it", port, k)
			}
			if v, ok := got.Env[k]; ok {
				t.Errorf("%s: port %d has %s=%q from PM2's environment", what, port, k, v)
			}
			delete(want.Env, k)
		}
		if fmt.Sprint(got.Env) != fmt.Sprint(want.Env) {
			t.Errorf("%s: port %d: environment %v, under PM2 %v", what, port, got.Env, want.Env)
		}
	}
}

// TestImport runs an ecosystem file under the real PM2 and saves it; then
// in a fresh sandbox bm2 import of that dump.pm2, and of the ecosystem
// file, with --serve: the same apps answer on the same ports with the
// same environment.
func TestImport(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	mods, err := runtimes.Modules(ctx, pm2Version)
	if err != nil {
		t.Fatalf("%s: %v", pm2Version, err)
	}
	pm2 := filepath.Join(mods, ".bin", "pm2")

	// Under PM2, started from a shell with something to leak.
	p := newBed(t)
	p.app("/srv/shop", "pm2-env-server.js", "server.js")
	p.write("/srv/shop/ecosystem.config.js", shopEcosystem)
	p.sh(fmt.Sprintf(`cd /srv/shop && env -i HOME=/root PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
  SSH_AUTH_SOCK=/tmp/agent.sock AWS_SECRET_ACCESS_KEY=do-not-copy PM2_HOME=/root/.pm2 \
  %q start ecosystem.config.js --env production >/dev/null`, pm2))
	underPM2 := p.answers(3100, 3200, 3201)
	t.Logf("under PM2: %+v", underPM2)
	p.sh(fmt.Sprintf(`cd /srv/shop && PM2_HOME=/root/.pm2 %q save >/dev/null`, pm2))
	dump := p.sh(`cat /root/.pm2/dump.pm2`)
	p.sh(fmt.Sprintf(`PM2_HOME=/root/.pm2 %q kill >/dev/null`, pm2))

	b := newBed(t)
	b.app("/srv/shop", "pm2-env-server.js", "server.js")
	b.write("/srv/shop/ecosystem.config.js", shopEcosystem)
	b.write("/root/.pm2/dump.pm2", dump)

	t.Run("dump", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/srv/shop", "import", "/root/.pm2/dump.pm2", "--serve")
		t.Logf("bm2 import /root/.pm2/dump.pm2 --serve:\n%s", r.stdout)
		for _, want := range []string{
			"shop: 2 x cluster on port 3100, runtime node -> /srv/shop/bm2.shop.toml",
			"jobs: 2 x fork on port 3200~3201, runtime node -> /srv/shop/bm2.jobs.toml",
			"reusePort: true",
			"left out",
			"AWS_SECRET_ACCESS_KEY",
			"shop online and confirmed",
			"jobs online",
		} {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("output lacks %q", want)
			}
		}
		got := b.answers(3100, 3200, 3201)
		t.Logf("under bm2: %+v", got)
		sameEnv(t, "dump", underPM2, got)
		if out := b.sh(`cat /etc/bm2/private/shop.toml /srv/shop/bm2.shop.toml`); strings.Contains(out, "do-not-copy") {
			t.Errorf("the shell's secret was imported:\n%s", out)
		}
		b.must(0, "/", "delete", "shop")
		b.must(0, "/", "delete", "jobs")
		b.sh(`rm /srv/shop/bm2.shop.toml /srv/shop/bm2.jobs.toml`)
	})

	t.Run("ecosystem file", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/srv/shop", "import", "--env", "production", "--serve")
		t.Logf("bm2 import --env production --serve:\n%s", r.stdout)
		if !strings.Contains(r.stdout, "evaluated by /usr/local/bin/node v24.") || !strings.Contains(r.stdout, "as nobody") {
			t.Errorf("not evaluated as nobody by node 24:\n%s", r.stdout)
		}
		sameEnv(t, "ecosystem file", underPM2, b.answers(3100, 3200, 3201))

		// Again: nothing changes. A file edited since is kept and shown.
		r = b.must(0, "/srv/shop", "import", "--env", "production")
		if strings.Count(r.stdout, "is up to date") != 2 {
			t.Errorf("second import:\n%s", r.stdout)
		}
		b.sh(`sed -i 's/^instances = 2/instances = 3/' /srv/shop/bm2.jobs.toml`)
		r = b.must(1, "/srv/shop", "import", "--env", "production")
		if !strings.Contains(r.stdout, "-instances = 3") || !strings.Contains(r.stdout, "+instances = 2") {
			t.Errorf("import over an edited file:\n%s\n%s", r.stdout, r.stderr)
		}
		if got := b.sh(`grep '^instances' /srv/shop/bm2.jobs.toml`); strings.TrimSpace(got) != "instances = 3" {
			t.Errorf("edited file overwritten: %s", got)
		}
	})
}
