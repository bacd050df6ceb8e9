package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An app's output cannot choose its priority: "<0>panic" is logged at
// info, prefix and all, not at emerg (which journald walls to every
// terminal), and "<3>" is no error; log_level_prefix = true gives the
// prefixes back.
func TestLogLevelPrefixIgnored(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/prefix", "log-prefix.js", "server.js")
	b.write("/srv/prefix/bm2.toml", "name = \"prefix\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3450\n")
	b.must(0, "/srv/prefix", "serve", "--timeout", "60s")
	b.eventually(30*time.Second, "the app's lines in the journal", `journalctl -u bm2@prefix-0.service -o cat | grep -q prefix-listening`)

	if got := b.show("bm2@prefix-0.service", "SyslogLevelPrefix"); got != "no" {
		t.Errorf("SyslogLevelPrefix=%s, want no", got)
	}
	// Neither line at emerg, alert or crit, nor "<3>" at err.
	if out := b.sh(`journalctl --no-pager -o cat -u bm2@prefix-0.service -p 0..2`); strings.Contains(out, "panic") || strings.Contains(out, "a normal line") {
		t.Errorf("journalctl -p 0..2 shows the app's lines:\n%s", out)
	}
	if out := b.sh(`journalctl --no-pager -o cat -u bm2@prefix-0.service -p 0..3`); strings.Contains(out, "not an error") {
		t.Errorf("journalctl -p 0..3 shows the app's <3> line:\n%s", out)
	}
	want := map[string]bool{"<0>panic": false, "<3>not an error": false, "a normal line": false}
	for _, e := range b.journal(`_SYSTEMD_UNIT=bm2@prefix-0.service`) {
		msg := e.str("MESSAGE")
		if _, ok := want[msg]; !ok {
			continue
		}
		want[msg] = true
		if p := e.str("PRIORITY"); p != "6" {
			t.Errorf("%q logged at priority %s, want 6 (info)", msg, p)
		}
	}
	for msg, seen := range want {
		if !seen {
			t.Errorf("no entry %q (the prefix kept in the message)", msg)
		}
	}

	t.Run("opt-in", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/prefixed", "log-prefix.js", "server.js")
		b.write("/srv/prefixed/bm2.toml", "name = \"prefixed\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3452\n"+
			"log_level_prefix = true\n\n[env]\nPREFIX_SAFE = \"1\"\n")
		b.must(0, "/srv/prefixed", "serve", "--timeout", "60s")
		b.eventually(30*time.Second, "the app's lines in the journal", `journalctl -u bm2@prefixed-0.service -o cat | grep -q prefix-listening`)
		if got := b.show("bm2@prefixed-0.service", "SyslogLevelPrefix"); got != "yes" {
			t.Errorf("SyslogLevelPrefix=%s, want yes", got)
		}
		found := false
		for _, e := range b.journal(`_SYSTEMD_UNIT=bm2@prefixed-0.service PRIORITY=3`) {
			found = found || e.str("MESSAGE") == "not an error"
		}
		if !found {
			t.Errorf("with log_level_prefix = true, no \"not an error\" at err:\n%s", b.sh(`journalctl --no-pager -o json -u bm2@prefixed-0.service | tail -20`))
		}
	})
}

// log_rate_limit_burst = 100 and log_rate_limit_interval_ms = 1000 reach
// the unit, and journald holds the instance to them: of 5,000 lines
// printed at once most are dropped, and journald says how many.
func TestLogRateLimit(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	cursor := b.cursor()
	b.app("/srv/flood", "log-flood.js", "server.js")
	b.write("/srv/flood/bm2.toml", "name = \"flood\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3451\n"+
		"log_rate_limit_burst = 100\nlog_rate_limit_interval_ms = 1000\n")
	b.must(0, "/srv/flood", "serve", "--timeout", "60s")

	if got := b.show("bm2@flood-0.service", "LogRateLimitBurst"); got != "100" {
		t.Errorf("LogRateLimitBurst=%s, want 100", got)
	}
	if got := b.show("bm2@flood-0.service", "LogRateLimitIntervalUSec"); got != "1s" {
		t.Errorf("LogRateLimitIntervalUSec=%s, want 1s", got)
	}
	b.eventually(30*time.Second, "the line after the flood", `journalctl -u bm2@flood-0.service -o cat | grep -q flood-after`)

	// journald's report comes with the first line of the next interval
	// (flood-after), from journald itself.
	suppressed := regexp.MustCompile(`^Suppressed ([0-9]+) messages from bm2@flood-0\.service$`)
	dropped := 0
	deadline := time.Now().Add(10 * time.Second)
	for dropped == 0 {
		for _, line := range strings.Split(b.journalSince(cursor, "SYSLOG_IDENTIFIER=systemd-journald _TRANSPORT=driver"), "\n") {
			if m := suppressed.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				dropped += n
			}
		}
		if dropped == 0 && time.Now().After(deadline) {
			t.Fatalf("journald logged no \"Suppressed N messages from bm2@flood-0.service\":\n%s",
				b.journalSince(cursor, "SYSLOG_IDENTIFIER=systemd-journald _TRANSPORT=driver"))
		}
		time.Sleep(200 * time.Millisecond)
	}
	logged, _ := strconv.Atoi(strings.TrimSpace(b.sh(`journalctl --no-pager -o cat _SYSTEMD_UNIT=bm2@flood-0.service | grep -c '^flood [0-9]' || true`)))
	// At least the burst passes (journald scales it up with free disk
	// space, at most 12 times); what it reports dropped is the rest, or
	// less when the flood reached into a second interval.
	if logged < 100 || logged >= 5000 || dropped > 5000-logged {
		t.Errorf("of 5,000 lines %d logged and %d reported dropped; want at least the burst of 100 logged and the rest mostly dropped", logged, dropped)
	}
	t.Logf("of 5,000 lines: %d logged, %d dropped", logged, dropped)
}
