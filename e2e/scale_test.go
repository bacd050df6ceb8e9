package e2e

import (
	"strings"
	"testing"
	"time"
)

const scaleToml = `name = "sc"
script = "server.js"
runtime = "node"
instances = 2
port = 3000
min_uptime_ms = 500
`

// bm2 scale on the real systemd, under steady load (wrk, HTTP
// keep-alive): a 2-instance cluster project goes to 4, then to 1. Not
// one request fails; the instances that stay keep running (same main
// PIDs, nothing restarted); the new ones are online and confirmed by
// the reusePort probe; the ones that go are stopped and their units
// gone. Asked for the count it has, scale changes nothing, and a serve
// from the project's directory says it sets the count back.
func TestScale(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/sc", "graceful-server.js", "server.js")
	b.write("/srv/sc/bm2.toml", scaleToml)
	b.must(0, "/srv/sc", "serve")
	b.eventually(10*time.Second, "sc answers", `curl -sf --max-time 2 http://127.0.0.1:3000/`)
	b.settledProject("sc", 2)
	before := b.pids("sc", 2)

	// Up: 2 to 4.
	res, out, took := b.reloadCmdUnderLoad("bm2 scale sc 4", 3000, true)
	t.Logf("scale to 4 took %v:\n%s", took, out)
	if res.errors() != 0 {
		t.Errorf("%v while scaling up", res)
	}
	if res.requests < 1000 {
		t.Errorf("only %d requests: the load was not steady", res.requests)
	}
	if !strings.Contains(out, "scaled sc from 2 to 4 instances: sc-2, sc-3 online and confirmed\n") {
		t.Errorf("scale's output:\n%s", out)
	}
	if strings.Contains(out, "restart") {
		t.Errorf("scale up restarted something:\n%s", out)
	}
	up := b.pids("sc", 4)
	for i := range before {
		if up[i] != before[i] {
			t.Errorf("sc-%d was restarted by the scale up: pid %s, was %s", i, up[i], before[i])
		}
	}
	b.settledProject("sc", 4)
	if reg := b.sh(`cat /etc/bm2/sc.toml`); !strings.Contains(reg, "\ninstances = 4\n") {
		t.Errorf("/etc/bm2/sc.toml:\n%s", reg)
	}
	if wants := b.show("bm2-sc.target", "Wants"); strings.Count(wants, "bm2@sc-") != 4 {
		t.Errorf("bm2-sc.target wants %s", wants)
	}
	for _, u := range []string{"bm2@sc-0.service", "bm2@sc-1.service"} {
		if n := b.show(u, "NRestarts"); n != "0" {
			t.Errorf("%s: NRestarts=%s", u, n)
		}
	}

	// Down: 4 to 1, the highest first, each drained.
	res, out, took = b.reloadCmdUnderLoad("bm2 scale sc 1", 3000, true)
	t.Logf("scale to 1 took %v:\n%s", took, out)
	if res.errors() != 0 {
		t.Errorf("%v while scaling down", res)
	}
	if !strings.Contains(out, "stopped sc-3\nstopped sc-2\nstopped sc-1\n") ||
		!strings.Contains(out, "scaled sc from 4 to 1 instance: stopped sc-1, sc-2, sc-3\n") {
		t.Errorf("scale's output:\n%s", out)
	}
	if got := b.pids("sc", 1); got[0] != before[0] {
		t.Errorf("sc-0 was restarted by the scale down: pid %s, was %s", got[0], before[0])
	}
	b.settledProject("sc", 1)
	for _, u := range []string{"bm2@sc-1.service", "bm2@sc-2.service", "bm2@sc-3.service"} {
		if st := b.show(u, "ActiveState"); st != "inactive" {
			t.Errorf("%s is %s after the scale down", u, st)
		}
	}
	if rows := b.listJSON("sc"); len(rows) != 1 {
		t.Errorf("bm2 list shows %d instances: %s", len(rows), rowsText(rows))
	}

	// The same count: nothing changes.
	r := b.must(0, "/", "scale", "sc", "1")
	if r.stdout != "sc already has 1 instance\n" {
		t.Errorf("scale to the same count:\n%s", r.stdout)
	}
	if got := b.pids("sc", 1); got[0] != before[0] {
		t.Errorf("sc-0 was restarted by a scale to the same count")
	}

	// serve in the project's directory sets bm2.toml's count back, and
	// says so.
	r = b.must(0, "/srv/sc", "serve")
	if !strings.Contains(r.stdout, "note: /etc/bm2/sc.toml has 1 instance (as `bm2 scale` may have set), /srv/sc/bm2.toml says 2: serving sets 2") {
		t.Errorf("serve after scale:\n%s", r.stdout)
	}
	b.settledProject("sc", 2)
}
