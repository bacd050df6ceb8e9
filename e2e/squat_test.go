package e2e

import (
	"strings"
	"testing"
	"time"
)

// Finding 5 of issue 22: any local user who listens on the port of one
// instance of a fork project while it restarts must not stop the project.
// The squatted instance alone is errored (port_in_use), its mark lives
// under /run (a reboot tries again) and names the holder; the neighbour
// keeps serving and restarting; `bm2 start` of the instance brings it
// back once the port is free.
func TestSquatterErrorsOneInstance(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.nodeProject("squat", 2, 3600, "", "exec_mode = \"fork\"\nrestart_delay_ms = 1000")
	b.sh(`systemctl daemon-reload && systemctl start bm2-squat.target`)
	b.eventually(30*time.Second, "both instances serve", `curl -sf --max-time 1 http://127.0.0.1:3600/ && curl -sf --max-time 1 http://127.0.0.1:3601/`)
	// Finding 7.5: the project's slice has a default TasksMax= (512 per
	// instance and one for the surge).
	if got := b.show("bm2-squat.slice", "TasksMax"); got != "1536" {
		t.Errorf("bm2-squat.slice TasksMax=%s, want 1536", got)
	}

	// A local user waits for port 3601 to be free, then listens on it.
	b.sh(`useradd -r -M -s /usr/sbin/nologin porthog && systemd-run -q --unit=squatter -p User=porthog /bin/sh -c 'until /usr/bin/python3 -m http.server 3601 --bind 0.0.0.0 2>/dev/null; do sleep 0.05; done'`)
	b.sh(`systemctl kill -s SIGKILL bm2@squat-1.service`)
	b.eventually(30*time.Second, "squat-1 marked errored", `grep -qx port_in_use /run/bm2/errored/squat-1`)
	mark := b.sh(`cat /run/bm2/errored/squat-1`)
	if !strings.Contains(mark, "python3 (pid ") || !strings.Contains(mark, "(porthog)") {
		t.Errorf("mark of squat-1 does not name the holder:\n%s", mark)
	}
	b.eventually(30*time.Second, "squat-1 down", `test "$(systemctl show -P ActiveState bm2@squat-1.service)" = inactive`)
	if out := b.sh(`ls /var/lib/bm2/errored/ 2>/dev/null || true`); strings.TrimSpace(out) != "" {
		t.Errorf("a persistent errored mark: %s", out)
	}
	if _, err := b.try(`test -e /run/bm2/errored/squat-0`); err == nil {
		t.Error("the neighbour squat-0 is marked too")
	}

	// The neighbour restarts and serves, by systemctl and by bm2.
	pid := b.show("bm2@squat-0.service", "MainPID")
	b.sh(`systemctl restart bm2@squat-0.service`)
	b.eventually(30*time.Second, "squat-0 back after systemctl restart",
		`test "$(systemctl show -P MainPID bm2@squat-0.service)" != `+pid+` && curl -sf --max-time 1 http://127.0.0.1:3600/ | grep -q '^squat 0 '`)
	b.must(0, "/", "restart", "squat-0")
	b.eventually(30*time.Second, "squat-0 serves after bm2 restart", `curl -sf --max-time 1 http://127.0.0.1:3600/ | grep -q '^squat 0 '`)

	for _, row := range b.listJSON("squat") {
		want, reason := "online", ""
		if row.Unit == "bm2@squat-1.service" {
			want, reason = "errored", "port_in_use"
		}
		if row.State != want || row.Reason != reason || (reason != "") != strings.Contains(row.Holder, "(porthog)") {
			t.Errorf("bm2 list: %s %s %q (holder %q), want %s %q", row.Unit, row.State, row.Reason, row.Holder, want, reason)
		}
	}
	st := b.must(0, "/", "status", "squat")
	if strings.Contains(st.stdout, "  errored: ") || !strings.Contains(st.stdout, "  squat-1: port_in_use: port 3601 is held by python3 (pid ") ||
		!strings.Contains(st.stdout, "(porthog), not by squat") {
		t.Errorf("bm2 status:\n%s", st.stdout)
	}
	es := b.waitEvents(10*time.Second, "instance_errored", "squat", 1)
	if es[0].str("BM2_INSTANCE") != "squat-1" || es[0].str("BM2_REASON") != "port_in_use" || es[0].str("_UID") != "0" {
		t.Errorf("instance_errored: %v", es[0])
	}

	// systemd keeps it down while marked...
	b.sh(`systemctl start bm2@squat-1.service`)
	if got := b.show("bm2@squat-1.service", "ConditionResult"); got != "no" {
		t.Errorf("squat-1 started while marked (ConditionResult=%s)", got)
	}
	// ...until bm2 start, once the port is free again.
	b.sh(`systemctl stop squatter`)
	r := b.must(0, "/", "start", "squat-1")
	if !strings.Contains(r.stdout, "cleared errored state of squat-1 (was: port_in_use)") {
		t.Errorf("bm2 start squat-1:\n%s", r.stdout)
	}
	b.eventually(30*time.Second, "squat-1 serves again", `curl -sf --max-time 1 http://127.0.0.1:3601/ | grep -q '^squat 1 '`)
	if _, err := b.try(`test -e /run/bm2/errored/squat-1`); err == nil {
		t.Error("the mark is still there")
	}
}
