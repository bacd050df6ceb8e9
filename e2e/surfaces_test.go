package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// attackTool builds e2e/testdata/attack (static) and installs it in the
// bed as /usr/local/bin/attack.
func (b *bed) attackTool() {
	b.t.Helper()
	out := filepath.Join(b.t.TempDir(), "attack")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "./e2e/testdata/attack")
	cmd.Dir = b.repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		b.t.Fatalf("build the attack tool: %v\n%s", err, msg)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		b.t.Fatal(err)
	}
	if err := b.WriteFile("/usr/local/bin/attack", data, 0o755); err != nil {
		b.t.Fatal(err)
	}
}

// An app whose instances share its account and user namespace with the
// health check's child (compat sandbox: no user namespace of their own)
// cannot drive that child: it is non-dumpable from its start (bm2-probe
// is installed 0711), so its /proc/PID/mem does not open for the app's
// user; and the check's unit may bind nothing, so whatever ran there
// could not take another project's port.
func TestHealthChildOutOfReach(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.attackTool()
	b.write("/srv/slowhc/server.js", `const http = require("node:http");
http.createServer((req, res) => {
  // The check's GET is answered after 3 s: its child lives that long.
  setTimeout(() => res.end("ok\n"), req.url === "/healthz" ? 3000 : 0);
}).listen({ port: Number(process.env.BM2_APP_PORT) });
`)
	b.write("/srv/slowhc/bm2.toml", `name = "slowhc"
script = "server.js"
runtime = "node"
exec_mode = "fork"
port = 3520
health_path = "/healthz"
health_interval_ms = 5000
health_timeout_ms = 4500

[sandbox]
mode = "compat"
`)
	b.must(0, "/srv/slowhc", "serve", "--timeout", "60s")
	if got := b.sh(`stat -c %a /usr/lib/bm2/bm2-probe`); strings.TrimSpace(got) != "711" {
		t.Errorf("bm2-probe is installed %s, want 711", got)
	}
	pid := b.show("bm2@slowhc-0.service", "MainPID")
	uid := strings.TrimSpace(b.sh(`awk '/^Uid:/ {print $2}' /proc/` + pid + `/status`))
	gid := strings.TrimSpace(b.sh(`awk '/^Gid:/ {print $2}' /proc/` + pid + `/status`))
	if uid == "" || uid == "0" {
		t.Fatalf("slowhc-0 runs as uid %q", uid)
	}

	// The app's user, in the initial user namespace as the compat
	// instance is, goes for the child's memory.
	out, err := b.try(`setpriv --reuid=` + uid + ` --regid=` + gid + ` --clear-groups --inh-caps=-all attack mem 15`)
	t.Logf("attack mem:\n%s", out)
	if err != nil || !strings.Contains(out, "found ") {
		t.Fatalf("no health-get child of uid %s seen in 15 s: %v", uid, err)
	}
	if !strings.Contains(out, "open EACCES") && !strings.Contains(out, "open EPERM") {
		t.Errorf("the app's user opened the health child's memory:\n%s", out)
	}

	// A process of the check's unit, as the app's user, binds nothing:
	// not the port of another project, not an ephemeral one.
	for _, port := range []string{"3999", "0"} {
		out := b.eventually(20*time.Second, "a bind from the health check's unit", `cg=$(systemctl show -P ControlGroup bm2-slowhc-health.service)
[ -n "$cg" ] || exit 1
mnt=$(findmnt -n -t cgroup2 -o TARGET | head -n 1)
attack bind "$mnt$cg" `+uid+` `+gid+` `+port)
		if !strings.Contains(out, "bind EPERM") {
			t.Errorf("port %s from the health check's unit: %s", port, out)
		}
	}
	// The check itself still works: the instance is healthy.
	if h := b.healthRows("slowhc")["bm2@slowhc-0.service"].Health; h == nil || *h != "healthy" {
		t.Errorf("slowhc-0's health: %v", h)
	}
}

// metricsSiege is a Node.js script, run as nobody: it holds 400
// connections to the metrics socket open without a word, and opens and
// closes others, 50 at a time, for SIEGE_SECONDS; then prints "done".
const metricsSiege = `const net = require("node:net");
const until = Date.now() + 1000 * Number(process.env.SIEGE_SECONDS);
const held = [];
for (let i = 0; i < 400; i++) { const s = net.connect(9615, "127.0.0.1"); s.on("error", () => {}); held.push(s); }
let churned = 0;
function one() {
  if (Date.now() > until) return;
  const s = net.connect(9615, "127.0.0.1");
  const end = () => { if (s.ended) return; s.ended = true; s.destroy(); churned++; setImmediate(one); };
  s.on("connect", end); s.on("error", end);
}
for (let i = 0; i < 50; i++) one();
setTimeout(() => { console.log("done", churned); held.forEach((s) => s.destroy()); }, 1000 * Number(process.env.SIEGE_SECONDS) + 500);
`

// Any local user can connect to the metrics endpoint; none can make it
// cost more: while nobody holds 400 connections open and churns others,
// scrapes still answer, systemd starts no service per connection (one
// bm2-metrics.service answers them all), and the socket stays up. The
// time another project's restart takes meanwhile is logged.
func TestMetricsEndpointUnderSiege(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/calm", "node-server.js", "server.js")
	b.write("/srv/calm/bm2.toml", "name = \"calm\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3530\n")
	b.must(0, "/srv/calm", "serve")
	b.sh("systemctl enable --now bm2-metrics.socket")
	b.eventually(30*time.Second, "a first scrape", `curl -sf --max-time 10 http://127.0.0.1:9615/metrics | grep -q '^bm2_instance_up{.*calm-0'`)
	b.noScrapeLeft()

	cursor := b.cursor()
	b.write("/tmp/siege.js", metricsSiege)
	b.sh(`systemd-run --unit=siege --uid=nobody --gid=nogroup -p CPUQuota=10% -p Type=exec -E SIEGE_SECONDS=20 /usr/local/bin/node /tmp/siege.js`)
	// The siege is under way: nobody holds connections to the socket (as
	// many as the service has not closed to make room for others).
	b.eventually(20*time.Second, "nobody's connections open", `systemctl is-active -q siege.service && test "$(ss -Htn state established '( dport = :9615 )' | wc -l)" -ge 50`)
	t.Logf("connections to 9615 established: %s", strings.TrimSpace(b.sh(`ss -Htn state established '( dport = :9615 )' | wc -l`)))

	// Scrapes answer, one after another, while the connections are held.
	for i := range 5 {
		start := time.Now()
		out, err := b.try(`curl -sS --max-time 5 http://127.0.0.1:9615/metrics`)
		if err != nil || !strings.Contains(out, "bm2_instance_up{") {
			t.Errorf("scrape %d under siege: %v\n%.300s", i, err, out)
		} else {
			t.Logf("scrape %d under siege: %v", i, time.Since(start).Round(time.Millisecond))
		}
	}
	start := time.Now()
	b.sh(`systemctl restart bm2@calm-0.service`)
	t.Logf("MEASURE systemctl restart of another project's instance under siege: %v", time.Since(start).Round(time.Millisecond))

	b.eventually(60*time.Second, "the siege over", `! systemctl is-active -q siege.service`)
	if out := b.sh(`journalctl -u siege.service -o cat --no-pager`); !strings.Contains(out, "done") {
		t.Errorf("the siege did not run through:\n%s", out)
	}
	if st := b.show("bm2-metrics.socket", "ActiveState") + " " + b.show("bm2-metrics.socket", "Result"); st != "active success" {
		t.Errorf("after the siege bm2-metrics.socket is %s", st)
	}
	// No service per connection: the first scrape after the idle start
	// started bm2-metrics.service, which answered everything.
	starts := strings.Count(b.journalSince(cursor, "_SYSTEMD_UNIT=init.scope UNIT=bm2-metrics.service"), "Started ")
	t.Logf("bm2-metrics.service started %d times during the siege", starts)
	if starts > 2 {
		t.Errorf("bm2-metrics.service started %d times during the siege, want 1 (2 if it went idle)", starts)
	}
	if n := strings.TrimSpace(b.sh(`systemctl list-units --all --no-legend --plain 'bm2-metrics@*' | wc -l`)); n != "0" {
		t.Errorf("%s per-connection scrape units", n)
	}
	b.eventually(20*time.Second, "a scrape after the siege", `curl -sf --max-time 5 http://127.0.0.1:9615/metrics | grep -q '^bm2_instance_up{'`)
	b.noScrapeLeft()
}
