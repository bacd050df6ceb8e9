package e2e

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// shownEscaped is how bm2 shows what apps/hostile-output.js prints.
var shownEscaped = []string{`term-start \x1b[2J\x1b]52;c;cHduZWQ=\x07ok\rFAKE \u009b31m end`, `term-bytes \xff\x9b end`}

// noControls fails unless out holds nothing a terminal acts on: no ESC,
// no CR, no other C0 but newline and tab, no DEL, no C1 (as UTF-8 or as
// a raw byte), only valid UTF-8.
func noControls(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8 (a raw byte reaches the terminal): %q", what, out)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			t.Errorf("%s: %U reaches the terminal:\n%q", what, r, out)
			return
		}
	}
}

// Finding 6 of issue 22: an app's control sequences reach root's
// terminal through bm2 logs raw. They reach the journal as they are
// (journalctl --all shows the ESC), and bm2 logs, and the log tail in the
// error of a serve whose app crashes, show them escaped and visible.
func TestLogsEscapeControls(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/term", "hostile-output.js", "server.js")
	b.write("/srv/term/bm2.toml", "name = \"term\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3400\n")
	b.must(0, "/srv/term", "serve", "--timeout", "60s")
	b.eventually(30*time.Second, "the app's lines in the journal", `journalctl -u bm2@term-0.service -o cat | grep -q term-listening`)
	if raw := b.sh(`journalctl -u bm2@term-0.service -o cat --all`); !strings.Contains(raw, "\x1b[2J\x1b]52;c;cHduZWQ=\x07ok\rFAKE") {
		t.Fatalf("the journal does not hold what the app printed:\n%q", raw)
	}

	t.Run("bm2 logs", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/", "logs", "term")
		noControls(t, "bm2 logs term", r.stdout+r.stderr)
		for _, s := range shownEscaped {
			if !strings.Contains(r.stdout, s) {
				t.Errorf("bm2 logs does not show %s:\n%s", s, r.stdout)
			}
		}
		r = b.must(0, "/", "logs", "term-0", "-n", "all")
		noControls(t, "bm2 logs term-0", r.stdout+r.stderr)
	})

	t.Run("a crashing app's log tail", func(t *testing.T) {
		b := b.in(t)
		b.app("/srv/termcrash", "hostile-output.js", "server.js")
		b.write("/srv/termcrash/bm2.toml", "name = \"termcrash\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3410\nmax_restarts = 1\n\n[env]\nCRASH = \"1\"\n")
		b.sh(`chmod 0600 /srv/termcrash/bm2.toml`)
		r := b.must(1, "/srv/termcrash", "serve", "--timeout", "60s")
		noControls(t, "bm2 serve (crashing)", r.stdout+r.stderr)
		if !strings.Contains(r.stderr, shownEscaped[0]) {
			t.Errorf("serve's error does not show the log tail escaped:\n%s", r.stderr)
		}
		r = b.must(0, "/", "status", "termcrash")
		noControls(t, "bm2 status termcrash", r.stdout+r.stderr)
		r = b.must(0, "/", "list")
		noControls(t, "bm2 list", r.stdout+r.stderr)
		r = b.must(0, "/", "events", "termcrash")
		noControls(t, "bm2 events termcrash", r.stdout+r.stderr)
	})
}
