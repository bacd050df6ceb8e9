package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// nodeProject writes a Node 24 cluster-mode project using e2e/apps/node-server.js.
func (b *bed) nodeProject(name string, instances, port int, env string, extra string) {
	b.t.Helper()
	b.app("/srv/"+name, "node-server.js", "server.js")
	b.write("/etc/bm2/"+name+".toml", fmt.Sprintf(`name = %q
script = "server.js"
cwd = "/srv/%s"
runtime = "node"
instances = %d
port = %d
stop_timeout_ms = 1000
%s
[env]
%s
`, name, name, instances, port, extra, env))
}

// listenedAt reads the app's "listening … at_ms=N" line of the units
// (a pattern such as bm2@solo-*: the first one that listened).
func (b *bed) listenedAt(units string) int64 {
	b.t.Helper()
	out := b.eventually(30*time.Second, units+" listening", fmt.Sprintf(`journalctl --no-pager -o cat -u %q | grep -o 'at_ms=[0-9]*' | sort | head -1 | grep .`, units))
	ms, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimSpace(out), "at_ms="), 10, 64)
	if err != nil {
		b.t.Fatalf("%s: %q", units, out)
	}
	return ms
}

// Apps that share their port are confirmed and left running; slow starters
// are fine; apps that never listen are left alone after 60 s; an instance
// killed with SIGKILL is restarted and probed again.
func TestProbeConfirms(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.nodeProject("share", 4, 3000, "", "")
	b.nodeProject("slow", 1, 3100, `LISTEN_DELAY_MS = "5000"`, "")
	b.nodeProject("quiet", 1, 3200, `NO_LISTEN = "1"`, "")
	b.nodeProject("late", 1, 3300, `LISTEN_DELAY_MS = "8000"`, "")
	b.sh(`systemctl daemon-reload && systemctl start bm2-share.target bm2-slow.target bm2-quiet.target`)

	t.Run("four instances confirmed", func(t *testing.T) {
		b := b.in(t)
		es := b.waitEvents(30*time.Second, "reuseport_confirmed", "share", 4)
		seen := map[string]bool{}
		for _, e := range es {
			inst := e.str("BM2_INSTANCE")
			seen[inst] = true
			if e.str("PRIORITY") != "6" || e.str("MESSAGE_ID") != "44f30fffb0214cdeb15b218ca0731307" {
				t.Errorf("confirmed event fields: %v", e)
			}
			// Its listening line is in the journal (listenedAt fails the
			// test otherwise); the latency is make bench's (figure probe).
			b.listenedAt("bm2@" + inst + ".service")
		}
		if len(seen) != 4 {
			t.Errorf("confirmed instances %v, want share-0..3", seen)
		}
		for i := 0; i < 4; i++ {
			if s := b.show(fmt.Sprintf("bm2@share-%d.service", i), "SubState"); s != "running" {
				t.Errorf("share-%d is %s after confirmation", i, s)
			}
			// The probe starts once its instance's process runs, not
			// beside the instance's own start (After=).
			started, _ := strconv.ParseInt(b.show(fmt.Sprintf("bm2@share-%d.service", i), "ActiveEnterTimestampMonotonic"), 10, 64)
			probed, _ := strconv.ParseInt(b.show(fmt.Sprintf("bm2-probe@share-%d.service", i), "InactiveExitTimestampMonotonic"), 10, 64)
			if started == 0 || probed < started {
				t.Errorf("share-%d: its probe began at %d µs, before its instance ran (%d µs)", i, probed, started)
			}
		}
		if out, _ := b.try(`test -e /var/lib/bm2/errored/share`); out != "" {
			t.Error(out)
		}
	})

	t.Run("slow starter confirmed, never stopped", func(t *testing.T) {
		b := b.in(t)
		es := b.waitEvents(30*time.Second, "reuseport_confirmed", "slow", 1)
		listened := b.listenedAt("bm2@slow-0.service")
		active := b.show("bm2@slow-0.service", "ActiveEnterTimestampMonotonic")
		t.Logf("slow: listened %d ms after epoch, confirmed at %d ms; active since monotonic %s", listened, es[0].usec("__REALTIME_TIMESTAMP")/1000, active)
		if s := b.show("bm2@slow-0.service", "SubState"); s != "running" {
			t.Errorf("slow-0 is %s", s)
		}
		if len(b.events("reuseport_missing", "slow")) != 0 {
			t.Error("slow starter judged exclusive")
		}
	})

	t.Run("killed instance is restarted and probed again", func(t *testing.T) {
		b := b.in(t)
		b.waitEvents(30*time.Second, "reuseport_confirmed", "share", 4)
		before := len(b.journal("-t bm2 BM2_EVENT=reuseport_confirmed BM2_INSTANCE=share-2"))
		c := b.cursor()
		run := b.show("bm2@share-2.service", "InvocationID")
		b.sh(`systemctl kill -s SIGKILL --kill-whom=main bm2@share-2.service`)
		// systemd's own restart (NRestarts is no witness: bm2-probe
		// resets it once the new run has lasted min_uptime_ms).
		b.loggedSince(20*time.Second, c, "-u bm2@share-2.service", "Scheduled restart job, restart counter is at 1")
		b.eventually(20*time.Second, "share-2 restarted", fmt.Sprintf(`test "$(systemctl show -P InvocationID bm2@share-2.service)" != %q && test "$(systemctl show -P SubState bm2@share-2.service)" = running`, run))
		deadline := time.Now().Add(20 * time.Second)
		for len(b.journal("-t bm2 BM2_EVENT=reuseport_confirmed BM2_INSTANCE=share-2")) <= before {
			if time.Now().After(deadline) {
				t.Fatalf("share-2 not probed again after its restart:\n%s", b.sh(`journalctl --no-pager -u bm2-probe@share-2 -o short-monotonic`))
			}
			time.Sleep(200 * time.Millisecond)
		}
		for _, i := range []int{0, 1, 3} {
			if n := b.show(fmt.Sprintf("bm2@share-%d.service", i), "NRestarts"); n != "0" {
				t.Errorf("share-%d restarted %s times; only share-2 was killed", i, n)
			}
		}
	})

	// A probe still waiting when its instance is stopped ends with it
	// (PartOf=): it is not left running for the next start to merge into,
	// which would leave that start unprobed. The next start gets a run of
	// its own, whose verdict is about the new run of the instance.
	t.Run("probe ends with its instance, the next start gets its own", func(t *testing.T) {
		b := b.in(t)
		b.sh(`systemctl start bm2-late.target`)
		b.eventually(20*time.Second, "late-0's probe waiting", `systemctl is-active -q bm2@late-0.service && test "$(systemctl show -P ActiveState bm2-probe@late-0.service)" = activating`)
		first := b.show("bm2-probe@late-0.service", "InvocationID")
		pid := b.show("bm2-probe@late-0.service", "MainPID")
		b.sh(`systemctl stop bm2@late-0.service`)
		b.eventually(10*time.Second, "late-0's probe ended", `test "$(systemctl show -P ActiveState bm2-probe@late-0.service)" = inactive`)
		// By its PID: journald may miss the unit fields of the last line a
		// process writes just before it exits.
		b.eventually(10*time.Second, "the waiting probe says it ended with its instance",
			`journalctl --no-pager -o cat SYSLOG_IDENTIFIER=bm2-probe _PID=`+pid+` | grep -E 'late-0( port 3300)?: stopped with its instance'`)
		if r := b.show("bm2-probe@late-0.service", "Result"); r != "success" {
			t.Errorf("probe unit result %s after the stop, want success", r)
		}
		b.sh(`systemctl start bm2@late-0.service`)
		es := b.waitEvents(30*time.Second, "reuseport_confirmed", "late", 1)
		if inv := b.show("bm2@late-0.service", "InvocationID"); es[0].str("BM2_INVOCATION") != inv {
			t.Errorf("confirmed run %s, instance runs %s", es[0].str("BM2_INVOCATION"), inv)
		}
		second, secondPID := b.show("bm2-probe@late-0.service", "InvocationID"), b.show("bm2-probe@late-0.service", "ExecMainPID")
		if second == first || secondPID == pid || es[0].str("_PID") != secondPID {
			t.Errorf("probe runs: first %s (pid %s), second %s (pid %s), verdict from pid %s", first, pid, second, secondPID, es[0].str("_PID"))
		}
	})

	t.Run("never listens: probe stops after 60 s, instance left alone", func(t *testing.T) {
		b := b.in(t)
		es := b.waitEvents(90*time.Second, "reuseport_probe_stopped", "quiet", 1)
		onlineUS, _ := strconv.ParseInt(b.show("bm2@quiet-0.service", "ActiveEnterTimestamp"+"Monotonic"), 10, 64)
		after := time.Duration(es[0].usec("__MONOTONIC_TIMESTAMP")-onlineUS) * time.Microsecond
		if after < 60*time.Second {
			t.Errorf("gave up %v after the instance came online, want 60 s", after)
		}
		t.Logf("probe stopped %v after the instance came online", after.Round(time.Millisecond))
		if s := b.show("bm2@quiet-0.service", "SubState"); s != "running" {
			t.Errorf("quiet-0 is %s, want running", s)
		}
	})
}

// An app without reusePort: the whole project is stopped within seconds,
// the reason is recorded everywhere, the webhook hears of it once, and the
// project stays down across daemon-reload and a boot until registered again.
func TestProbeStopsExclusive(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/hook", "webhook.js", "webhook.js")
	b.sh(`systemd-run -q --unit=hook -p Environment=OUT=/tmp/hook.jsonl -p Environment=PORT=9000 /usr/local/bin/node /srv/hook/webhook.js`)
	b.eventually(10*time.Second, "webhook up", `curl -s -o /dev/null -X POST http://127.0.0.1:9000/ready && rm -f /tmp/hook.jsonl`)
	b.nodeProject("solo", 2, 3000, `REUSE_PORT = "0"`, "[notify]\nwebhook = \"http://127.0.0.1:9000/bm2\"\nallow_local = true\n")
	b.nodeProject("one", 1, 3100, `REUSE_PORT = "0"`, "")
	b.nodeProject("local", 1, 3200, "HOST = \"127.0.0.1\"\nREUSE_PORT = \"0\"", "")
	b.nodeProject("localshare", 2, 3300, `HOST = "127.0.0.1"`, "")
	// --no-block: a probe that stops its project cancels the target's start job
	// ("Job for bm2-solo.target canceled"), which is what it is for.
	b.sh(`systemctl daemon-reload && systemctl start --no-block bm2-solo.target bm2-one.target bm2-local.target bm2-localshare.target`)

	t.Run("two instances without reusePort", func(t *testing.T) {
		b := b.in(t)
		es := b.waitEvents(30*time.Second, "reuseport_missing", "solo", 1)
		e := es[0]
		if e.str("PRIORITY") != "3" || e.str("BM2_REASON") != "reuseport_missing" || e.str("MESSAGE_ID") != "fef51d7506c045a3aca2d41b6586cc18" ||
			!strings.Contains(e.str("BM2_DETAIL"), "cluster mode needs reusePort") || !strings.HasPrefix(e.str("BM2_INSTANCE"), "solo-") {
			t.Errorf("reuseport_missing event: %v", e)
		}
		b.eventually(10*time.Second, "solo stopped", `for i in 0 1; do s=$(systemctl show -P ActiveState bm2@solo-$i.service); test "$s" = inactive -o "$s" = failed || exit 1; done`)
		for i := 0; i < 2; i++ {
			log := b.sh(fmt.Sprintf(`cat /var/log/bm2/solo/solo-%d.crash.log`, i))
			if !regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\dT[0-9:.]+Z reason=reuseport_missing detail=".*cluster mode needs reusePort`).MatchString(log) {
				t.Errorf("solo-%d crash.log: %q", i, log)
			}
		}
		if got := strings.TrimSpace(b.sh(`cat /var/lib/bm2/errored/solo`)); got != "reuseport_missing" {
			t.Errorf("errored mark %q", got)
		}
		if n := len(b.events("reuseport_missing", "solo")); n != 1 {
			t.Errorf("%d reuseport_missing events, want 1", n)
		}
		// Delivered by bm2-notify.service, from the spool.
		b.eventually(30*time.Second, "the webhook heard of it", `grep -q reuseport_missing /tmp/hook.jsonl`)
		time.Sleep(3 * time.Second) // let any late probe run (it must not post again)
		hooks := b.sh(`cat /tmp/hook.jsonl`)
		if n := strings.Count(hooks, "\n"); n != 1 || !strings.Contains(hooks, `\"event\":\"reuseport_missing\"`) || !strings.Contains(hooks, `\"project\":\"solo\"`) {
			t.Errorf("webhook received %d posts, want exactly 1:\n%s", n, hooks)
		}
		// The probes ended cleanly: the one that asked for the stop saw it
		// through, the others were stopped with their instances.
		for i := 0; i < 2; i++ {
			if r := b.show(fmt.Sprintf("bm2-probe@solo-%d.service", i), "Result"); r != "success" {
				t.Errorf("bm2-probe@solo-%d result %s", i, r)
			}
		}
	})

	t.Run("errored survives daemon-reload and boot", func(t *testing.T) {
		b := b.in(t)
		b.waitEvents(30*time.Second, "reuseport_missing", "solo", 1)
		b.sh(`systemctl daemon-reload && systemctl start multi-user.target`)
		time.Sleep(2 * time.Second)
		for i := 0; i < 2; i++ {
			if s := b.show(fmt.Sprintf("bm2@solo-%d.service", i), "SubState"); s == "running" {
				t.Errorf("solo-%d started again while errored", i)
			}
		}
		if !strings.Contains(b.sh(`systemctl status --no-pager bm2@solo-0.service || true`), "ConditionPathExists=!/var/lib/bm2/errored/solo") {
			t.Error("systemctl status does not say why solo-0 stays down")
		}
		b.sh(`test -f /etc/bm2/solo.toml`) // the project stays registered, its file untouched
	})

	t.Run("one instance in cluster mode is probed too", func(t *testing.T) {
		b := b.in(t)
		b.waitEvents(30*time.Second, "reuseport_missing", "one", 1)
		b.eventually(10*time.Second, "one stopped", `! systemctl is-active -q bm2@one-0.service`)
	})

	t.Run("listening on 127.0.0.1 only", func(t *testing.T) {
		b := b.in(t)
		// The seed: the probe binds 0.0.0.0, so an app on loopback only "may
		// be judged exclusive". On Linux it is exactly when the app lacks
		// reusePort: a reusePort listener on 127.0.0.1 still lets a
		// same-user SO_REUSEPORT socket bind 0.0.0.0, so it is confirmed —
		// rightly, since its instances do share the loopback port. The
		// listener's address (sock_diag) makes the one without reusePort
		// loopback_only.
		if es := b.waitEvents(30*time.Second, "reuseport_missing", "local", 1); es[0].str("BM2_REASON") != "loopback_only" {
			t.Errorf("reason %q, want loopback_only", es[0].str("BM2_REASON"))
		}
		b.eventually(10*time.Second, "local stopped", `! systemctl is-active -q bm2@local-0.service`)
		b.waitEvents(30*time.Second, "reuseport_confirmed", "localshare", 2)
		if len(b.events("reuseport_missing", "localshare")) != 0 {
			t.Error("a reusePort app on 127.0.0.1 was judged exclusive")
		}
		b.waitActive(5*time.Second, "bm2@localshare-0.service", "bm2@localshare-1.service")
	})
}
