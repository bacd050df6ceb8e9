package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// healthRow is the health part of a bm2 list --json row.
type healthRow struct {
	Unit           string  `json:"unit"`
	State          string  `json:"state"`
	Health         *string `json:"health"`
	HealthFailures *int    `json:"health_failures"`
}

func (b *bed) healthRows(name string) map[string]healthRow {
	b.t.Helper()
	r := b.must(0, "/", "list", "--json", name)
	var rows []healthRow
	if err := json.Unmarshal([]byte(r.stdout), &rows); err != nil {
		b.t.Fatalf("bm2 list --json: %v\n%s", err, r.stdout)
	}
	out := map[string]healthRow{}
	for _, row := range rows {
		out[row.Unit] = row
	}
	return out
}

// A hung event loop that still holds its port: the health check finds it
// (health_failures checks in a row, every health_interval_ms), says so
// (instance_unhealthy) and restarts that instance only, within
// interval x failures + 5 s, while its neighbour keeps answering. serve
// returns once the instances answer healthy, and bm2 list says so.
func TestHealthHungLoop(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/hc", "health-server.js", "server.js")
	b.write("/srv/hc/bm2.toml", `name = "hc"
script = "server.js"
runtime = "node"
instances = 2
port = 3300
health_path = "/healthz"
health_interval_ms = 1000
health_timeout_ms = 500
health_failures = 3
health_port = 3400
`)
	b.sh(`systemctl daemon-reload`)
	r := b.must(0, "/srv/hc", "serve")
	t.Logf("serve:\n%s%s", r.stdout, r.stderr)
	// Online means healthy: serve waited for the first healthy answers.
	rows := b.healthRows("hc")
	for _, u := range []string{"bm2@hc-0.service", "bm2@hc-1.service"} {
		if h := rows[u].Health; rows[u].State != "online" || h == nil || *h != "healthy" {
			t.Fatalf("after serve, %s: %+v (health %v)", u, rows[u], h)
		}
	}
	if out := b.sh(`bm2 list hc`); !strings.Contains(out, "HEALTH") || strings.Count(out, "healthy") != 2 {
		t.Errorf("bm2 list:\n%s", out)
	}
	inv0, inv1 := b.show("bm2@hc-0.service", "InvocationID"), b.show("bm2@hc-1.service", "InvocationID")

	// The neighbour answers all along: a watcher asks hc-0's own health
	// port every 100 ms (the shared port would send some requests to the
	// hung instance until it is restarted) and counts what fails.
	b.sh(`systemd-run --unit=hc-watch --property=Type=exec /bin/sh -c 'while :; do
  if curl -sf --max-time 1 http://127.0.0.1:3400/healthz >/dev/null; then echo ok; else echo FAIL; fi >> /run/hc-watch.log
  sleep 0.1
done'`)
	b.eventually(10*time.Second, "the watcher runs", `grep -q ok /run/hc-watch.log`)

	hungAt := time.Now()
	if out := b.sh(`curl -sf --max-time 2 http://127.0.0.1:3401/hang`); strings.TrimSpace(out) != "hanging" {
		t.Fatalf("hc-1 /hang answered %q", out)
	}
	// Within interval x failures + 5 s.
	limit := 3*time.Second + 5*time.Second
	b.eventually(limit, "hc-1 restarted by its health check",
		fmt.Sprintf(`test "$(systemctl show -P InvocationID bm2@hc-1.service)" != %q && test "$(systemctl show -P SubState bm2@hc-1.service)" = running`, inv1))
	t.Logf("hc-1 restarted %v after it hung", time.Since(hungAt).Round(100*time.Millisecond))
	if got := b.show("bm2@hc-0.service", "InvocationID"); got != inv0 {
		t.Errorf("hc-0 was restarted too (%s, was %s)", got, inv0)
	}

	es := b.waitEvents(5*time.Second, "instance_unhealthy", "hc", 1)
	if len(es) != 1 {
		t.Errorf("%d instance_unhealthy events, want 1", len(es))
	}
	ev := es[0]
	if ev.str("BM2_INSTANCE") != "hc-1" || ev.str("PRIORITY") != "4" || ev.str("BM2_INVOCATION") != inv1 ||
		!strings.Contains(ev.str("MESSAGE"), "GET /healthz on port 3401") {
		t.Errorf("instance_unhealthy: %v", ev)
	}
	// bm2's event comes from bm2's own unit, outside the instance.
	if u := ev.str("_SYSTEMD_UNIT"); u != "bm2-hc-health.service" {
		t.Errorf("instance_unhealthy logged by %q", u)
	}

	// The new run turns healthy, and the neighbour never failed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		row := b.healthRows("hc")["bm2@hc-1.service"]
		if row.Health != nil && *row.Health == "healthy" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("hc-1 not healthy again after 30s: %+v (health %v)\n%s", row, row.Health, b.sh(`bm2 list hc; cat /run/bm2/health/hc/state`))
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.sh(`systemctl stop hc-watch.service`)
	watch := b.sh(`cat /run/hc-watch.log`)
	if n := strings.Count(watch, "FAIL"); n != 0 || strings.Count(watch, "ok") < 10 {
		t.Errorf("hc-0 failed %d of %d checks while hc-1 hung", n, strings.Count(watch, "\n"))
	}
	if out := b.sh(`curl -sf --max-time 2 http://127.0.0.1:3300/`); !strings.HasPrefix(out, "instance ") {
		t.Errorf("the port answered %q", out)
	}

	// A deploy whose new runs never answer healthy: the reload stops at
	// its surge, and the instances keep serving the version they run.
	inv0, inv1 = b.show("bm2@hc-0.service", "InvocationID"), b.show("bm2@hc-1.service", "InvocationID")
	b.sh(`touch /srv/hc/unhealthy`)
	r = b.bm2("/", "reload", "hc", "--timeout", "8s")
	t.Logf("reload of a sick version (exit %d):\n%s%s", r.code, r.stdout, r.stderr)
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "health check") {
		t.Errorf("the reload of a version that never turns healthy exited %d", r.code)
	}
	if a, b1 := b.show("bm2@hc-0.service", "InvocationID"), b.show("bm2@hc-1.service", "InvocationID"); a != inv0 || b1 != inv1 {
		t.Errorf("an instance was restarted into the sick version")
	}
	if st := b.show("bm2@hc-surge.service", "ActiveState"); st == "active" || st == "activating" {
		t.Errorf("the sick surge is left %s", st)
	}
	for i := 0; i < 20; i++ {
		if out, err := b.try(`curl -sf --max-time 2 http://127.0.0.1:3300/`); err != nil || !strings.HasPrefix(out, "instance ") {
			t.Fatalf("request %d after the stopped reload: %q %v", i, out, err)
		}
	}
}
