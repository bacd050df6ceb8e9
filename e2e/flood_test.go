package e2e

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A project that floods the journal, at every priority its prefixes
// reach, spends its unit's rate limit: journald drops most of its lines.
// That must not cost bm2's own events about it (instance_crashed, which
// the exit hook logs from inside the flooding instance's unit) nor its
// neighbour's lines: bm2 leaves its events in a spool that the next
// start's probe (or the failure hook, or bm2-events.service) sends from a
// unit of its own, outside the instance.
func TestLogFloodKeepsEvents(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	cursor := b.cursor()
	b.app("/srv/calm", "log-calm.js", "server.js")
	b.write("/srv/calm/bm2.toml", "name = \"calm\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3480\n")
	b.must(0, "/srv/calm", "serve", "--timeout", "60s")
	b.eventually(20*time.Second, "calm's lines in the journal", `journalctl -u bm2@calm-0.service -o cat | grep -q '^calm 5$'`)

	b.app("/srv/storm", "log-storm.js", "server.js")
	b.write("/srv/storm/bm2.toml", `name = "storm"
script = "server.js"
runtime = "node"
exec_mode = "fork"
port = 3481
log_level_prefix = true
log_rate_limit_burst = 100
log_rate_limit_interval_ms = 1000
max_restarts = 50

[env]
STORM_SECONDS = "3"
`)
	// serve returns once storm-0 listens; it floods from then on and
	// crashes (exit 3) after 3 s, again after each restart.
	b.must(0, "/srv/storm", "serve", "--timeout", "60s")
	inv := b.show("bm2@storm-0.service", "InvocationID")

	// Each crash, while the unit's every rate limit is spent, is in bm2's
	// events, from bm2's own unit.
	es := b.waitEvents(60*time.Second, "instance_crashed", "storm", 2)
	if es[0].str("BM2_INVOCATION") != inv || es[0].str("BM2_EXIT_STATUS") != "3" {
		t.Errorf("first instance_crashed: %v (the run was %s)", es[0], inv)
	}
	// Sent from outside the flooding unit: by the probe of the next
	// start (as a rule), the failure hook, or the relay's timer service.
	senders := []string{"bm2-probe@storm-0.service", "bm2-failed@storm-0.service", "bm2-events.service"}
	for _, e := range es {
		if u, o := e.str("_SYSTEMD_UNIT"), e.str("OBJECT_SYSTEMD_UNIT"); !slices.Contains(senders, u) || o != "bm2@storm-0.service" || e.str("_UID") != "0" {
			t.Errorf("instance_crashed logged by %q (uid %s) about %q, want one of %q (outside the flooding unit) about bm2@storm-0.service", u, e.str("_UID"), o, senders)
		}
	}
	// journalctl -u of the instance still shows them.
	if out := b.sh(`journalctl --no-pager -o cat -u bm2@storm-0.service -t bm2`); !strings.Contains(out, "storm-0") {
		t.Errorf("journalctl -u bm2@storm-0 -t bm2 shows no event:\n%s", out)
	}
	// bm2 reads its state back from the journal: bm2 events shows the
	// crashes.
	if out := b.must(0, "/", "events", "storm").stdout; strings.Count(out, "instance_crashed") < 2 {
		t.Errorf("bm2 events storm:\n%s", out)
	}
	b.must(0, "/", "stop", "storm")
	b.eventually(10*time.Second, "the event spool drained", `test -z "$(ls -A /run/bm2/events)"`)

	// journald did drop the flood: the rate limit was spent.
	suppressed := regexp.MustCompile(`Suppressed ([0-9]+) messages from bm2@storm-0\.service`)
	dropped := 0
	for _, m := range suppressed.FindAllStringSubmatch(b.journalSince(cursor, "SYSLOG_IDENTIFIER=systemd-journald"), -1) {
		n, _ := strconv.Atoi(m[1])
		dropped += n
	}
	logged, _ := strconv.Atoi(strings.TrimSpace(b.sh(`journalctl --no-pager -o cat _SYSTEMD_UNIT=bm2@storm-0.service | grep -c 'storm line' || true`)))
	runs := len(es)
	t.Logf("storm: %d runs of 3 s, %d lines logged and %d suppressed by journald: %d lines/s taken", runs, logged, dropped, (logged+dropped)/(3*runs))
	if dropped == 0 {
		t.Errorf("journald suppressed none of storm's lines: the flood did not spend the rate limit")
	}

	// The neighbour lost no line meanwhile: its numbers are contiguous.
	b.sh(`sleep 1`)
	lines := strings.Fields(b.sh(`journalctl --no-pager -o cat -u bm2@calm-0.service | sed -n 's/^calm \([0-9]*\)$/\1/p'`))
	prev := -1
	for _, l := range lines {
		n, err := strconv.Atoi(l)
		if err != nil {
			t.Fatalf("calm line %q", l)
		}
		if n != prev+1 {
			t.Errorf("calm's lines jump from %d to %d: lines lost during the flood", prev, n)
		}
		prev = n
	}
	if prev < 100 {
		t.Errorf("calm logged %d lines, want the whole flood's time's worth", prev+1)
	}
}
