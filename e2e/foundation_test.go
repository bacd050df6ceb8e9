package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A Bun app with Bun.serve({reusePort: true}), 4 instances in cluster mode:
// all four instances run, share port 3000, and fresh connections reach more
// than one of them. The same bed checks what systemctl shows, and a project
// whose name contains "-".
func TestClusterBun(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/api", "bun-reuseport.ts", "index.ts")
	b.write("/etc/bm2/api.toml", `name = "api"
script = "index.ts"
cwd = "/srv/api"
runtime = "bun"
instances = 4
port = 3000

[env]
NODE_ENV = "production"
`)
	b.app("/srv/my-api", "bun-reuseport.ts", "index.ts")
	b.write("/etc/bm2/my-api.toml", `name = "my-api"
script = "index.ts"
cwd = "/srv/my-api"
instances = 2
port = 3100
`)
	b.sh(`systemctl daemon-reload && systemctl start bm2-api.target bm2-my-api.target`)
	b.waitActive(30*time.Second, "bm2@api-0.service", "bm2@api-1.service", "bm2@api-2.service", "bm2@api-3.service",
		"bm2@my-api-0.service", "bm2@my-api-1.service")

	t.Run("connections spread over instances", func(t *testing.T) {
		b := b.in(t)
		// Wait until all four listen, then open fresh connections.
		seen := map[string]bool{}
		deadline := time.Now().Add(20 * time.Second)
		for len(seen) < 2 && time.Now().Before(deadline) {
			out, err := b.try(`for i in $(seq 40); do curl -s --max-time 2 http://127.0.0.1:3000/; done`)
			if err != nil {
				continue
			}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
				if f := strings.Fields(line); len(f) == 3 && f[0] == "api" {
					seen[f[1]] = true
				}
			}
		}
		if len(seen) < 2 {
			t.Fatalf("fresh connections reached instances %v, want more than one", seen)
		}
		t.Logf("instances answering: %v", seen)
	})

	t.Run("systemctl status and cat show the generated settings", func(t *testing.T) {
		b := b.in(t)
		status := b.sh(`systemctl status --no-pager bm2@api-0.service || true`)
		for _, want := range []string{"Active: active (running)", "50-bm2.conf", "bm2 api instance 0", "bm2-api.slice"} {
			if !strings.Contains(status, want) {
				t.Errorf("systemctl status lacks %q:\n%s", want, status)
			}
		}
		cat := b.sh(`systemctl cat --no-pager bm2@api-0.service`)
		for _, want := range []string{
			"/lib/systemd/system/bm2@.service", // /lib is /usr/lib on Debian
			"# /run/systemd/generator/bm2@api-0.service.d/50-bm2.conf",
			`Environment="BM2_APP_PORT=3000"`,
			`Environment="BM2_APP_INSTANCE=0"`,
			"EnvironmentFile=/run/systemd/generator/bm2-private/api.env",
			"ExecStart=/usr/lib/bm2/bm2-probe run bun -- bun index.ts",
			"WorkingDirectory=/srv/api",
			"User=bm2-api",
			"DynamicUser=yes",
			"RestartSec=100ms",
			"TimeoutStopSec=1600ms",
			"Slice=bm2-api.slice",
			"SourcePath=/etc/bm2/api.toml",
		} {
			if !strings.Contains(cat, want) {
				t.Errorf("systemctl cat lacks %q:\n%s", want, cat)
			}
		}
		if strings.Contains(cat, "production") {
			t.Errorf("[env]'s value shows in systemctl cat:\n%s", cat)
		}
		show := b.sh(`systemctl show -p User,Slice,RestartUSec,TimeoutStopUSec,StartLimitBurst,NRestarts bm2@api-3.service`)
		for _, want := range []string{"User=bm2-api", "Slice=bm2-api.slice", "RestartUSec=100ms", "TimeoutStopUSec=1.600000s", "StartLimitBurst=17"} {
			if !strings.Contains(show, want) {
				t.Errorf("systemctl show lacks %q:\n%s", want, show)
			}
		}
		// Enabled at boot through multi-user.target.
		if out := b.sh(`systemctl show -p WantedBy bm2-api.target`); !strings.Contains(out, "multi-user.target") {
			t.Errorf("bm2-api.target is not wanted by multi-user.target: %s", out)
		}
		// The app really runs as the project's own account, and still gets
		// its [env].
		if out := b.sh(`ps -o user= -p "$(systemctl show -P MainPID bm2@api-1.service)"`); strings.TrimSpace(out) != "bm2-api" {
			t.Errorf("instance runs as %q, want bm2-api", out)
		}
		if out := b.sh(`tr '\0' '\n' < /proc/"$(systemctl show -P MainPID bm2@api-1.service)"/environ`); !strings.Contains(out, "\nNODE_ENV=production\n") {
			t.Errorf("the app lacks NODE_ENV:\n%s", out)
		}
	})

	t.Run("a name with a dash", func(t *testing.T) {
		b := b.in(t)
		show := b.sh(`systemctl show -p Slice,ControlGroup bm2@my-api-1.service`)
		if !strings.Contains(show, `Slice=bm2-my\x2dapi.slice`) ||
			!strings.Contains(show, `ControlGroup=/bm2.slice/bm2-my\x2dapi.slice/bm2@my-api-1.service`) {
			t.Errorf("my-api's instance is not in its own slice under bm2.slice:\n%s", show)
		}
		out := b.eventually(10*time.Second, "my-api answers", `curl -sf --max-time 2 http://127.0.0.1:3100/`)
		if !strings.HasPrefix(out, "my-api ") {
			t.Errorf("port 3100 answered %q", out)
		}
		// Stopping the project's target stops its instances, not api's.
		b.sh(`systemctl stop bm2-my-api.target`)
		b.eventually(10*time.Second, "my-api stopped", `! systemctl is-active -q bm2@my-api-0.service bm2@my-api-1.service`)
		b.waitActive(5*time.Second, "bm2@api-0.service")
	})
}

// A Node 24 app in fork mode: instance i listens on port+i.
func TestForkNode(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/web", "node-server.js", "server.js")
	b.write("/etc/bm2/web.toml", `name = "web"
script = "server.js"
cwd = "/srv/web"
exec_mode = "fork"
instances = 3
port = 4000
[env]
REUSE_PORT = "0"
`)
	b.sh(`systemctl daemon-reload && systemctl start bm2-web.target`)
	b.waitActive(30*time.Second, "bm2@web-0.service", "bm2@web-1.service", "bm2@web-2.service")
	for i := 0; i < 3; i++ {
		out := b.eventually(15*time.Second, fmt.Sprintf("port %d answers", 4000+i),
			fmt.Sprintf(`curl -sf --max-time 2 http://127.0.0.1:%d/`, 4000+i))
		if f := strings.Fields(out); len(f) != 3 || f[0] != "web" || f[1] != fmt.Sprint(i) {
			t.Errorf("port %d answered %q, want instance %d", 4000+i, out, i)
		}
	}
	if out := b.sh(`/usr/local/bin/node --version`); !strings.HasPrefix(out, "v24.") {
		t.Errorf("node in the sandbox is %s", out)
	}
}

// A broken project file next to good ones: the good ones run, the journal
// names the broken file and line, and the generator exits non-zero. Two
// projects with overlapping ranges: the one whose name sorts later is
// refused with the seed's message; the other runs.
func TestBrokenAndConflicting(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/good", "node-server.js", "server.js")
	good := `name = "%s"
script = "server.js"
cwd = "/srv/good"
exec_mode = "fork"
instances = %d
port = %d
`
	b.write("/etc/bm2/good.toml", fmt.Sprintf(good, "good", 1, 5000))
	// A unique name, so no other sandbox's kernel log line can satisfy us.
	broken := fmt.Sprintf("broken%d", time.Now().UnixNano()%1e9)
	b.write("/etc/bm2/"+broken+".toml", fmt.Sprintf(`name = "%s"
script = "server.js"
cwd = "/srv/good"
port = "5100"
`, broken))
	b.write("/etc/bm2/api.toml", fmt.Sprintf(good, "api", 4, 3000))
	b.write("/etc/bm2/web.toml", fmt.Sprintf(good, "web", 1, 3000))

	cur := b.cursor()
	b.sh(`systemctl daemon-reload`)
	b.sh(`systemctl start bm2-good.target bm2-api.target`)
	b.waitActive(30*time.Second, "bm2@good-0.service", "bm2@api-0.service", "bm2@api-3.service")

	log := b.eventually(10*time.Second, "generator messages in the journal",
		fmt.Sprintf(`journalctl --no-pager -o cat -t bm2 --cursor=%q | grep %s`, cur, broken))
	want := fmt.Sprintf("/etc/bm2/%s.toml:4: port: must be an integer, got a string", broken)
	if !strings.Contains(log, want) {
		t.Errorf("journal lacks %q:\n%s", want, log)
	}
	all := b.journalSince(cur, "-t bm2")
	if !strings.Contains(all, "port conflict: web port range 3000~3000 overlaps api 3000~3003") {
		t.Errorf("journal lacks the conflict message:\n%s", all)
	}
	// The refused project has no units; the broken one neither.
	for _, u := range []string{"bm2-web.target", "bm2-" + broken + ".target"} {
		if out := b.sh(`systemctl show -P LoadState ` + u); strings.TrimSpace(out) != "not-found" {
			t.Errorf("%s LoadState = %s, want not-found", u, out)
		}
	}
	// Active is not listening yet: on a busy host Node.js takes seconds.
	if out := b.eventually(30*time.Second, "port 3000 answers", `curl -sf --max-time 2 http://127.0.0.1:3000/`); !strings.HasPrefix(out, "api ") {
		t.Errorf("port 3000 answered %q, want api", out)
	}
	// Run by hand, the generator says the same and exits non-zero, while
	// still writing every valid project.
	out, err := b.try(`/usr/lib/systemd/system-generators/bm2-generator /tmp/gen 2>&1; echo "exit=$?"; ls /tmp/gen`)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`exit=1\b`).MatchString(out) || !strings.Contains(out, "bm2-good.target") || !strings.Contains(out, "bm2-api.target") || strings.Contains(out, "bm2-web.target") {
		t.Errorf("generator run by hand:\n%s", out)
	}
}
