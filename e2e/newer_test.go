package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/roots"
	"github.com/bm2dev/bm2/e2e/sandbox"
)

// bm2 under the systemd that Debian 13 ships (257), booted from a root
// file system of that release, where the host has 252. What differs from
// 252 and matters to bm2:
//   - from 254 on, a service on its way to an automatic restart passes
//     through the failed state and starts its OnFailure= units, unless it
//     says RestartMode=direct: the generator writes that line, so a crash
//     restarts at once, records the crash through the exit hook, and
//     leaves bm2-failed@ (the unit that records an instance giving up)
//     for when the restart budget is spent;
//   - from 255 on, a socket takes at most 150 connections per 2 s from
//     its queue (PollLimitBurst=) while systemd watches it: bm2-metrics.socket
//     hands its whole queue to one service (Accept=no), so a flood of
//     connections stops stalling scrapes once it ends;
//   - the units bm2 ships and generates pass systemd-analyze verify, and a
//     user's own manager runs a user's projects as 252's does.
func TestNewerSystemd(t *testing.T) {
	t.Parallel()
	root := roots.Require(t, roots.Trixie)
	b := newBedWith(t, sandbox.Options{Root: root})
	// The systemd that booted is the root's, and new enough for
	// everything below (RestartMode= 254, PollLimitBurst= 255).
	want, err := roots.SystemdVersion(root)
	if err != nil {
		t.Fatal(err)
	}
	v, err := strconv.Atoi(strings.Fields(b.sh(`systemctl --version | head -1`) + " x x")[1])
	if err != nil || v != want || v < 255 {
		t.Fatalf("the Debian %s sandbox runs systemd %d (%v), want its root's %d, 255 or later", roots.Trixie, v, err, want)
	}
	t.Logf("systemd %d", v)

	b.nodeProject("nw", 2, 3900, "", "")
	b.nodeProject("nwc", 1, 3950, `CRASH_INSTANCE = "0"`+"\n"+`CRASH_AFTER_MS = "300"`, "exec_mode = \"fork\"\nmax_restarts = 2")
	b.sh(`systemctl daemon-reload && systemctl start bm2-nw.target`)
	b.waitEvents(60*time.Second, "reuseport_confirmed", "nw", 2)

	t.Run("every unit loads without a warning", func(t *testing.T) {
		b := b.in(t)
		units := "bm2@nw-0.service bm2-nw.target bm2-nw.slice bm2-probe@nw-0.service bm2-steer@nw-0.service bm2-failed@nw-0.service " +
			"bm2@nwc-0.service bm2-metrics.socket bm2-metrics.service bm2-events.timer bm2-events.service bm2-notify.path bm2-notify.service bm2.slice"
		if out, err := b.try(`systemd-analyze verify --man=no --generators=yes ` + units + ` 2>&1`); err != nil || strings.TrimSpace(out) != "" {
			t.Errorf("systemd-analyze verify (%v):\n%s", err, out)
		}
		if out := b.sh(`journalctl -b --no-pager -o cat -u init.scope | grep -iE "unknown (key|section)|bm2.*(ignoring|deprecated)" || true`); strings.TrimSpace(out) != "" {
			t.Errorf("systemd warned while loading bm2's units:\n%s", out)
		}
	})

	t.Run("a crash restarts directly, without the failure hook", func(t *testing.T) {
		b := b.in(t)
		if got := b.show("bm2@nw-0.service", "RestartMode"); got != "direct" {
			t.Fatalf("bm2@nw-0 RestartMode=%q, want direct", got)
		}
		c := b.cursor()
		pid := b.show("bm2@nw-0.service", "MainPID")
		b.sh(`kill -9 ` + pid)
		b.eventually(30*time.Second, "nw-0 back", fmt.Sprintf(`p=$(systemctl show -P MainPID bm2@nw-0.service); [ "$p" != 0 ] && [ "$p" != %s ] && systemctl is-active -q bm2@nw-0.service`, pid))
		b.waitEvents(30*time.Second, "instance_crashed", "nw", 1)
		if log := b.sh(`cat /var/log/bm2/nw/nw-0.crash.log`); !strings.Contains(log, "reason=") {
			t.Errorf("nw-0's crash.log has no line:\n%s", log)
		}
		b.loggedSince(30*time.Second, c, "-t bm2 BM2_EVENT=reuseport_confirmed BM2_INSTANCE=nw-0", "")
		if j := b.journalSince(c, "-u bm2@nw-0.service -u bm2-failed@nw-0.service"); strings.Contains(j, "OnFailure=") || strings.Contains(j, "bm2-failed@") {
			t.Errorf("the crash went through the failed state:\n%s", j)
		}
		// systemd's own restart, not a start job from elsewhere. (Not
		// NRestarts: bm2-probe resets it once the new run has lasted
		// min_uptime_ms, which on a loaded host is before this look.)
		b.loggedSince(30*time.Second, c, "-u bm2@nw-0.service", "Scheduled restart job, restart counter is at 1")
	})

	// What the generator's line prevents, on this systemd: without it,
	// every crash starts bm2-failed@ beside the restart.
	t.Run("without RestartMode=direct every crash runs the failure hook", func(t *testing.T) {
		b := b.in(t)
		t.Cleanup(func() { b.sh(`rm -rf /run/systemd/system/bm2@nw-1.service.d && systemctl daemon-reload`) })
		b.write("/run/systemd/system/bm2@nw-1.service.d/60-normal.conf", "[Service]\nRestartMode=normal\n")
		b.sh(`systemctl daemon-reload`)
		c := b.cursor()
		pid := b.show("bm2@nw-1.service", "MainPID")
		b.sh(`kill -9 ` + pid)
		b.loggedSince(30*time.Second, c, "-u bm2@nw-1.service", "Triggering OnFailure=")
		b.eventually(30*time.Second, "nw-1 back", fmt.Sprintf(`p=$(systemctl show -P MainPID bm2@nw-1.service); [ "$p" != 0 ] && [ "$p" != %s ] && systemctl is-active -q bm2@nw-1.service`, pid))
	})

	t.Run("the restart budget still ends in errored", func(t *testing.T) {
		b := b.in(t)
		b.sh(`systemctl start bm2-nwc.target`)
		b.eventually(60*time.Second, "nwc-0 failed", `test "$(systemctl show -P ActiveState bm2@nwc-0.service)" = failed`)
		es := b.waitEvents(30*time.Second, "instance_errored", "nwc", 1)
		if es[0].str("BM2_REASON") != "restart_budget_exhausted" {
			t.Errorf("instance_errored: %v", es[0])
		}
		n, _ := strconv.Atoi(strings.TrimSpace(b.sh(`journalctl --no-pager -o cat -u bm2@nwc-0.service | grep -c 'listening on 3950' || true`)))
		if n != 3 {
			t.Errorf("nwc-0 started %d times, want 3 (the first start and exactly 2 restarts)", n)
		}
		if log := b.sh(`cat /var/log/bm2/nwc/nwc-0.crash.log`); strings.Count(log, "reason=exited code=1") != 3 || !strings.Contains(log, "reason=restart_budget_exhausted") {
			t.Errorf("nwc-0's crash.log:\n%s", log)
		}
		if rows := b.listJSON("nwc"); len(rows) != 1 || rows[0].State != "errored" {
			t.Errorf("bm2 list nwc: %+v, want one errored instance", rows)
		}
	})

	t.Run("a reload goes through", func(t *testing.T) {
		b := b.in(t)
		before := b.pids("nw", 2)
		b.must(0, "/", "reload", "nw")
		b.restartedAll("nw", before)
		b.confirmedNow("nw", 2)
	})

	t.Run("a user serves a project on their own systemd", func(t *testing.T) {
		b := b.in(t)
		b.sh(`useradd -m -s /bin/bash alice && loginctl enable-linger alice`)
		uid := strings.TrimSpace(b.sh("id -u alice"))
		b.eventually(30*time.Second, "alice's manager", fmt.Sprintf(`systemctl is-active user@%s.service && test -S /run/user/%s/systemd/private`, uid, uid))
		b.write("/home/alice/web/server.js", userNodeApp)
		b.write("/home/alice/web/bm2.toml", "name = \"web\"\nscript = \"server.js\"\ninstances = 2\nport = 8300\n")
		b.sh("chown -R alice: /home/alice")
		if out := b.mustAs(0, "alice", "cd ~/web && bm2 serve").stdout; !strings.Contains(out, "web online and confirmed") {
			t.Errorf("serve as alice:\n%s", out)
		}
		if got := b.sh("curl -sf http://127.0.0.1:8300/"); !strings.HasPrefix(got, "web ") || !strings.HasSuffix(strings.TrimSpace(got), " "+uid) {
			t.Errorf("port 8300 answers %q, want alice's (uid %s)", got, uid)
		}
		for _, row := range b.userListJSON("alice") {
			if row.State != "online" {
				t.Errorf("as alice: %s is %s", row.Unit, row.State)
			}
		}
		// Debian 13 makes home directories 0700: root serving a project
		// there on its own account is told who can enter it.
		b.write("/home/alice/api/server.js", userNodeApp)
		b.write("/home/alice/api/bm2.toml", "name = \"hapi\"\nscript = \"server.js\"\nport = 8400\n")
		b.sh("chown -R alice: /home/alice/api")
		if mode := strings.TrimSpace(b.sh("stat -c %a /home/alice")); mode != "700" {
			t.Logf("useradd made /home/alice %s", mode)
		}
		r := b.must(3, "/home/alice/api", "check")
		if want := "; alice, who owns it, can: `user = \"alice\"` in bm2.toml runs the app as alice"; !strings.Contains(r.stdout+r.stderr, want) {
			t.Errorf("bm2 check of a project in alice's home lacks %q:\n%s%s", want, r.stdout, r.stderr)
		}
	})

	// 3,000 connections, 300 at a time, each closed at once. systemd 255
	// and later take 150 of them from a socket's queue per 2 s; when each
	// connection was a service of its own (Accept=yes), scrapes waited
	// 40 s after the flood.
	t.Run("the metrics socket answers soon after a flood", func(t *testing.T) {
		b := b.in(t)
		b.sh(`systemctl start bm2-metrics.socket`)
		b.eventually(30*time.Second, "a first scrape", `curl -sf --max-time 10 http://127.0.0.1:9615/metrics | grep -q '^bm2_instance_up{'`)
		b.floodMetrics()
		b.eventually(10*time.Second, "a scrape after the flood", `curl -sf --max-time 5 http://127.0.0.1:9615/metrics | grep -q '^bm2_instance_up{'`)
		b.noScrapeLeft()
	})
}

// loggedSince waits until the journal entries args select after cursor
// hold a message containing text (any message, for "").
func (b *bed) loggedSince(timeout time.Duration, cursor, args, text string) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		j := b.journalSince(cursor, args)
		if j != "" && strings.Contains(j, text) {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("no %q in the journal (%s) after %v:\n%s", text, args, timeout, j)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
