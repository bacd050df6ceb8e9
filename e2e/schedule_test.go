package e2e

import (
	"strings"
	"testing"
	"time"
)

// restart_schedule on the real systemd: the generated timer is active
// with its project, its next run is the one bm2 status shows, and its
// service, run by hand as the timer would (systemctl start), is a rolling
// reload: every instance restarted, not one request of a steady wrk load
// failed.
func TestRestartSchedule(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/sch", "graceful-server.js", "server.js")
	b.write("/srv/sch/bm2.toml", "name = \"sch\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3000\nmin_uptime_ms = 500\nrestart_schedule = \"Sun 04:00\"\n")
	b.must(0, "/srv/sch", "serve")
	b.settledProject("sch", 2)

	timer, svc := "bm2-sch-restart.timer", "bm2-sch-restart.service"
	b.eventually(10*time.Second, timer+" active", "systemctl is-active -q "+timer)
	if cal := b.show(timer, "TimersCalendar"); !strings.Contains(cal, "OnCalendar=Sun *-*-* 04:00:00") {
		t.Errorf("%s: TimersCalendar=%s", timer, cal)
	}
	// "Sun 2026-12-06 04:00:00 UTC": its date.
	next := strings.Fields(b.show(timer, "NextElapseUSecRealtime"))
	st := b.must(0, "/", "status", "sch").stdout
	if !strings.Contains(st, "restart schedule: Sun 04:00") || !strings.Contains(st, timer) {
		t.Errorf("bm2 status does not show the schedule:\n%s", st)
	}
	if len(next) < 2 || !strings.Contains(st, next[1]) {
		t.Errorf("bm2 status does not show the next run (%v):\n%s", next, st)
	}

	before := b.pids("sch", 2)
	res, out, took := b.reloadCmdUnderLoad("systemctl start "+svc, 3000, true)
	t.Logf("the scheduled reload took %v:\n%s", took, out)
	if res.errors() != 0 || res.requests < 500 {
		t.Errorf("%v during the scheduled reload", res)
	}
	if r := b.show(svc, "Result"); r != "success" {
		log, _ := b.try("journalctl -u " + svc + " -n 40 --no-pager")
		t.Fatalf("%s: Result=%s\n%s", svc, r, log)
	}
	after := b.pids("sch", 2)
	for i := range before {
		if after[i] == before[i] {
			t.Errorf("sch-%d was not restarted by the scheduled reload (pid %s)", i, after[i])
		}
	}
	b.settledProject("sch", 2)

	// The timer stops with its project.
	b.must(0, "/", "stop", "sch")
	b.eventually(10*time.Second, timer+" stopped with the project", "! systemctl is-active -q "+timer)
}
