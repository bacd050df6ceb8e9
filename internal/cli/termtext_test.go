package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/journal"
)

// hostile is what an app prints to take over root's terminal: clear the
// screen, set the clipboard (OSC 52), rewrite the line, a C1 CSI (as
// UTF-8 and as a raw byte), bytes that are not UTF-8.
const hostile = "\x1b[2J\x1b]52;c;cHduZWQ=\x07ok\rFAKE \u009b31m \x9b \xff"

// hostileShown is how bm2 shows it: every escape visible.
var hostileShown = []string{`\x1b[2J`, `\x1b]52;c;cHduZWQ=\x07`, `ok\rFAKE`, `\u009b31m`, `\x9b`, `\xff`}

// inert fails unless out holds nothing a terminal acts on: no C0 but
// newline and tab, no DEL, no C1 in either form, valid UTF-8.
func inert(t *testing.T, what, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s: not UTF-8: %q", what, out)
	}
	for _, r := range out {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r < 0xa0 {
			t.Errorf("%s: %U reaches the terminal: %q", what, r, out)
			return
		}
	}
}

// runBare runs a command without Main's last line of defence (the
// escaping writer around stdout and stderr): what the renderer alone
// prints.
func (te *testEnv) runBare(args ...string) error {
	te.stdout.Reset()
	te.stderr.Reset()
	return te.app().Run(context.Background(), args)
}

// bm2 logs shows an app's control sequences escaped, each line of a
// message of several on a line of its own; the same with and without
// Main's writer.
func TestLogsEscapeControls(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.ts\"\ncwd = \"/srv/api\"\nport = 3000\n")
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	te.entries.line(t0, "bm2@api-0.service", hostile)
	te.entries.line(t0.Add(time.Second), "bm2@api-0.service", "first\nsecond\tline\n")
	for _, bare := range []bool{true, false} {
		if bare {
			if err := te.runBare("logs", "api"); err != nil {
				t.Fatal(err)
			}
		} else {
			te.mustRun(ExitOK, "logs", "api")
		}
		out := te.stdout.String()
		inert(t, "bm2 logs", out)
		for _, s := range hostileShown {
			if !strings.Contains(out, s) {
				t.Errorf("bm2 logs does not show %s:\n%s", s, out)
			}
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if len(lines) != 3 || !strings.HasSuffix(lines[1], "| first") || !strings.HasSuffix(lines[2], "| second\tline") {
			t.Errorf("lines %q, want the message of two lines on two, its tab kept", lines)
		}
	}
}

// bm2 events shows a message and fields escaped, on one line; --json keeps
// the exact bytes: a JSON string when UTF-8, its bytes when not.
func TestEventsEscapeControls(t *testing.T) {
	te := newTestEnv(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	te.entries.event(t0, journal.InstanceCrashed, "api", "api-0", "crashed", "crash: "+hostile)
	te.entries.entries[0]["BM2_DETAIL"] = "detail\x1b[31m\nnext"
	te.entries.event(t0.Add(time.Second), journal.InstanceCrashed, "api", "api-0", "crashed", "valid \x1b]52;c;x\x07 text")
	if err := te.runBare("events", "api"); err != nil {
		t.Fatal(err)
	}
	out := te.stdout.String()
	inert(t, "bm2 events", out)
	for _, s := range hostileShown {
		if !strings.Contains(out, s) {
			t.Errorf("bm2 events does not show %s:\n%s", s, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 3 {
		t.Errorf("%d lines, want a header and one per event:\n%s", n, out)
	}

	te.mustRun(ExitOK, "events", "api", "--json")
	var got []map[string]any
	dec := json.NewDecoder(bytes.NewReader(te.stdout.Bytes()))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("%v:\n%s", err, te.stdout.String())
		}
		got = append(got, m)
	}
	if len(got) != 2 {
		t.Fatalf("%d events:\n%s", len(got), te.stdout.String())
	}
	// Not UTF-8: the bytes, exactly.
	raw, ok := got[0]["message"].([]any)
	var b []byte
	for _, v := range raw {
		b = append(b, byte(v.(float64)))
	}
	if !ok || string(b) != "crash: "+hostile {
		t.Errorf("message %v, want the bytes of %q", got[0]["message"], "crash: "+hostile)
	}
	if got[0]["detail"] != "detail\x1b[31m\nnext" || got[1]["message"] != "valid \x1b]52;c;x\x07 text" {
		t.Errorf("detail %q, message %q: not the exact text", got[0]["detail"], got[1]["message"])
	}
	if bytes.ContainsAny(te.stdout.Bytes(), "\x1b\r\a") {
		t.Errorf("--json wrote a raw control character:\n%q", te.stdout.String())
	}
}

// bm2 list and bm2 status show a reason escaped, on its row (a tab
// escaped too: it would shift the columns).
func TestListStatusEscapeControls(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.ts\"\ncwd = \"/srv/api\"\nport = 3000\n")
	mark := (state.Dir{Path: te.paths.StateDir}).ErroredPath("api")
	os.MkdirAll(filepath.Dir(mark), 0o755)
	os.WriteFile(mark, []byte("x\x1b[2J\ty\u009b\n"), 0o644)
	for _, cmd := range [][]string{{"list"}, {"status", "api"}} {
		if err := te.runBare(cmd...); err != nil {
			t.Fatal(err)
		}
		out := te.stdout.String()
		inert(t, cmd[0], out)
		if !strings.Contains(out, `x\x1b[2J\ty\u009b`) {
			t.Errorf("bm2 %s does not show the reason escaped:\n%s", cmd[0], out)
		}
	}
}
