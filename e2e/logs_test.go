package e2e

import (
	"encoding/json"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// logLine is one line of bm2 logs --json, every key of it.
type logLine map[string]any

// logLines parses bm2 logs --json's output: a JSON object a line, with
// exactly its five keys.
func logLines(t *testing.T, out string) []logLine {
	t.Helper()
	var lines []logLine
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		var m logLine
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON object: %q: %v", l, err)
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !reflect.DeepEqual(keys, []string{"instance", "message", "pid", "stream", "time"}) {
			t.Fatalf("keys %v in %s", keys, l)
		}
		tm, err := time.Parse(time.RFC3339Nano, m["time"].(string))
		if err != nil || !strings.HasSuffix(m["time"].(string), "Z") || len(m["time"].(string)) != len("2006-01-02T15:04:05.000000Z") ||
			time.Since(tm) > time.Hour || time.Until(tm) > time.Minute {
			t.Fatalf("time %v in %s: want RFC 3339, UTC, microseconds, now (%v)", m["time"], l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// messageBytes is the text of a message: a JSON string, or its bytes.
func messageBytes(v any) (string, bool) {
	switch m := v.(type) {
	case string:
		return m, true
	case []any:
		var b []byte
		for _, x := range m {
			n, ok := x.(float64)
			if !ok || n < 0 || n > 255 {
				return "", false
			}
			b = append(b, byte(n))
		}
		return string(b), true
	}
	return "", false
}

// bm2 logs --json: a JSON object per line, the app's exact text, escaped
// by JSON, with its instance, pid and stream; --grep: only the matching
// lines, -n counting matches, with -f too.
func TestLogsJSONAndGrep(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/lines", "log-lines.js", "server.js")
	b.write("/srv/lines/bm2.toml", "name = \"lines\"\nscript = \"server.js\"\nruntime = \"node\"\nexec_mode = \"fork\"\nport = 3440\n")
	b.must(0, "/srv/lines", "serve", "--timeout", "60s")
	b.eventually(30*time.Second, "the app's lines in the journal", `journalctl -u bm2@lines-0.service -o cat | grep -q lines-listening`)
	pid, err := strconv.Atoi(b.show("bm2@lines-0.service", "MainPID"))
	if err != nil || pid <= 0 {
		t.Fatalf("MainPID: %v", err)
	}

	t.Run("json", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/", "logs", "--json", "--systemd", "lines", "-n", "all")
		noControls(t, "bm2 logs --json", r.stdout)
		if strings.Contains(r.stdout, "\x1b") || !strings.Contains(r.stdout, `\u001b[31m`) {
			t.Errorf("ESC not escaped as \\u001b:\n%s", r.stdout)
		}
		byMessage := map[string]logLine{}
		systemd := 0
		for _, l := range logLines(t, r.stdout) {
			msg, ok := messageBytes(l["message"])
			if !ok {
				t.Errorf("message neither a string nor bytes: %v", l)
			}
			byMessage[msg] = l
			if l["stream"] == "systemd" && l["instance"] == "lines-0" && strings.HasPrefix(msg, "Started ") {
				systemd++
			}
		}
		for msg, stream := range map[string]string{
			"hello plain":              "stdout",
			"hello \x1b[31mred\x1b[0m": "stdout",
			"bytes \xff\xfe end":       "stdout",
			"to stderr":                "stdout", // journald does not tell the two apart
			"lines-listening":          "stdout",
		} {
			l, ok := byMessage[msg]
			if !ok {
				t.Errorf("no line %q:\n%s", msg, r.stdout)
				continue
			}
			if l["instance"] != "lines-0" || l["pid"] != float64(pid) || l["stream"] != stream {
				t.Errorf("%q: %v, want instance lines-0, pid %d, stream %s", msg, l, pid, stream)
			}
		}
		// Not UTF-8: its bytes, as journalctl -o json has them.
		if l := byMessage["bytes \xff\xfe end"]; l != nil {
			if _, isString := l["message"].(string); isString {
				t.Errorf("a message that is not UTF-8 came out as a string: %v", l)
			}
		}
		if systemd == 0 {
			t.Errorf("no systemd line (Started ...):\n%s", r.stdout)
		}
	})

	t.Run("grep", func(t *testing.T) {
		b := b.in(t)
		r := b.must(0, "/", "logs", "--grep", "hello", "lines", "-n", "all")
		noControls(t, "bm2 logs --grep", r.stdout+r.stderr)
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if len(lines) != 2 || !strings.HasSuffix(lines[0], "lines-0 | hello plain") || !strings.HasSuffix(lines[1], `lines-0 | hello \x1b[31mred\x1b[0m`) {
			t.Errorf("bm2 logs --grep hello, want the two hello lines only:\n%s", r.stdout)
		}
		// -n counts matches: the last one, not the matches among the
		// last entry (the app's lines-listening, or systemd's).
		r = b.must(0, "/", "logs", "--json", "--grep", "hello", "-n", "1", "lines")
		if l := logLines(t, r.stdout); len(l) != 1 || l[0]["message"] != "hello \x1b[31mred\x1b[0m" {
			t.Errorf("--grep hello -n 1:\n%s", r.stdout)
		}
		// A pattern that starts with "-" is a pattern; one that matches
		// nothing is no error.
		r = b.must(0, "/", "logs", "--grep=-hello", "lines")
		if r.stdout != "" || !strings.Contains(r.stderr, `no log lines of lines matching "-hello"`) {
			t.Errorf("--grep=-hello: stdout %q, stderr %q", r.stdout, r.stderr)
		}
		r = b.must(2, "/", "logs", "--grep", "(", "lines")
		if !strings.Contains(r.stderr, "logs --grep") {
			t.Errorf("a bad pattern does not name --grep:\n%s", r.stderr)
		}
	})

	// -f with --grep and -n: the last match, then the new ones, each once.
	t.Run("follow", func(t *testing.T) {
		b := b.in(t)
		out := b.sh(`(timeout --preserve-status -s INT 10 bm2 logs lines --json --grep hello -n 1 -f > /tmp/follow.out; echo "exit=$?" >> /tmp/follow.out) &
sleep 3
bm2 restart lines-0 >/dev/null
wait
cat /tmp/follow.out`)
		if !strings.HasSuffix(out, "exit=0\n") {
			t.Fatalf("bm2 logs -f --grep, interrupted:\n%s", out)
		}
		var got []string
		for _, l := range logLines(t, strings.TrimSuffix(out, "exit=0\n")) {
			msg, _ := messageBytes(l["message"])
			got = append(got, msg)
		}
		want := []string{"hello \x1b[31mred\x1b[0m", "hello plain", "hello \x1b[31mred\x1b[0m"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("bm2 logs -f --grep hello -n 1 across a restart: %q, want %q", got, want)
		}
	})
}
