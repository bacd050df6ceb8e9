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

// A file a user wrote may have root restart its project at most once a
// minute: alice's bm2.toml with restart_schedule = "*:*:*" is refused by
// `sudo bm2 serve` and `bm2 check`, with the file, the line, the key and
// the fix, and nothing is registered; "*:*:00" she may ask for, and the
// operator's --trust-file lifts the floor. Root's own files keep every
// freedom: the same "*:*:*" in a project dir of root's passes bm2 check,
// and in /etc/bm2 the generator gives it its timer.
func TestRestartScheduleFloor(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.sh(`useradd -m -s /bin/sh alice && chmod 0755 /home/alice`)
	uid := strings.TrimSpace(b.sh(`id -u alice`))
	const app = "name = \"fast\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3600\n"
	alice := func(schedule string) {
		b.app("/home/alice/app", "node-server.js", "server.js")
		b.write("/home/alice/app/bm2.toml", app+"restart_schedule = \""+schedule+"\"\n")
		b.sh(`chown -R alice: /home/alice/app`)
	}

	alice("*:*:*")
	want := `/home/alice/app/bm2.toml:5: restart_schedule: "*:*:*" fires every second, and a file alice (uid ` + uid +
		`) wrote may have its project restarted at most once a minute (write one value for the seconds, like "*:*:00"; ` +
		`or, if you have read the file and mean it, run the command again with --trust-file)`
	if r := b.must(3, "/home/alice/app", "serve"); !strings.Contains(r.stderr, want) {
		t.Errorf("serve: stderr:\n%s\nwant %s", r.stderr, want)
	}
	b.noProject("fast")
	if r := b.must(3, "/home/alice/app", "check"); !strings.Contains(r.stdout, "refused: "+want) {
		t.Errorf("check:\n%s", r.stdout)
	}
	if r := b.must(0, "/home/alice/app", "check", "--trust-file"); strings.Contains(r.stdout, "refused:") {
		t.Errorf("check --trust-file:\n%s", r.stdout)
	}
	alice("*:*:00")
	if r := b.must(0, "/home/alice/app", "check"); strings.Contains(r.stdout, "refused:") ||
		!strings.Contains(r.stdout, "restart schedule: *:*:00, next run ") {
		t.Errorf("check of *:*:00:\n%s", r.stdout)
	}

	// Root's own.
	b.app("/srv/rfast", "node-server.js", "server.js")
	b.write("/srv/rfast/bm2.toml", "name = \"rfast\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3610\nrestart_schedule = \"*:*:*\"\n")
	if r := b.must(0, "/srv/rfast", "check"); strings.Contains(r.stdout, "refused:") || !strings.Contains(r.stdout, "restart schedule: *:*:*, next run ") {
		t.Errorf("check of root's *:*:*:\n%s", r.stdout)
	}
	b.nodeProject("efast", 1, 3620, "", `restart_schedule = "*:*:*"`)
	b.sh(`systemctl daemon-reload`)
	if cal := b.show("bm2-efast-restart.timer", "TimersCalendar"); !strings.Contains(cal, "OnCalendar=*-*-* *:*:*") {
		t.Errorf("bm2-efast-restart.timer: TimersCalendar=%s", cal)
	}
}
