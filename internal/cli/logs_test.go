package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// encodeLog is one line of bm2 logs --json, as logs writes it.
func encodeLog(t *testing.T, e journal.Entry, uid string) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(logRecord(e, uid)); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// parsed is an entry as journalctl -o json prints it, through ParseEntry.
func parsed(t *testing.T, line string) journal.Entry {
	t.Helper()
	e, err := journal.ParseEntry([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestLogRecord(t *testing.T) {
	const ts = "1777636800123456" // 2026-05-01T12:00:00.123456Z
	const at = `{"time":"2026-05-01T12:00:00.123456Z",`
	app := func(unit, msg string) journal.Entry {
		return journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": unit, "_PID": "4242", "_UID": "61234",
			"_TRANSPORT": "stdout", "SYSLOG_IDENTIFIER": "api", "MESSAGE": msg}
	}
	with := func(e journal.Entry, kv ...string) journal.Entry {
		out := journal.Entry{}
		for k, v := range e {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	plain := app("bm2@api-0.service", "listening on 3000")
	for _, c := range []struct {
		name string
		e    journal.Entry
		uid  string
		want string
	}{
		{"a line of stdout", plain, "0",
			at + `"instance":"api-0","pid":4242,"stream":"stdout","message":"listening on 3000"}`},
		{"not UTF-8: journalctl's byte array, kept as bytes",
			parsed(t, `{"__REALTIME_TIMESTAMP":"`+ts+`","_SYSTEMD_UNIT":"bm2@api-1.service","_PID":"7","_TRANSPORT":"stdout","MESSAGE":[98,97,100,32,255,155,27]}`), "0",
			at + `"instance":"api-1","pid":7,"stream":"stdout","message":[98,97,100,32,255,155,27]}`},
		{"no _PID", with(plain, "_PID", ""), "0",
			at + `"instance":"api-0","pid":null,"stream":"stdout","message":"listening on 3000"}`},
		{"control characters escaped by JSON, DEL, C1 and bidi too",
			with(plain, "MESSAGE", "\x1b[2J\x1b]52;c;x\x07ok\rFAKE\t\x7f \u009b31m \u202e <&>"), "0",
			at + `"instance":"api-0","pid":4242,"stream":"stdout","message":"\u001b[2J\u001b]52;c;x\u0007ok\rFAKE\t\u007f \u009b31m \u202e <&>"}`},
		{"the surge", app("bm2@api-surge.service", "surge up"), "0",
			at + `"instance":"api-surge","pid":4242,"stream":"stdout","message":"surge up"}`},
		{"a message of several lines: one object", with(plain, "MESSAGE", "first\nsecond\n"), "0",
			at + `"instance":"api-0","pid":4242,"stream":"stdout","message":"first\nsecond\n"}`},
		{"systemd about the unit",
			journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": "init.scope", "_PID": "1", "_UID": "0", "_TRANSPORT": "journal",
				"UNIT": "bm2@api-0.service", "SYSLOG_IDENTIFIER": "systemd", "MESSAGE": "Started bm2@api-0.service."}, "0",
			at + `"instance":"api-0","pid":1,"stream":"systemd","message":"Started bm2@api-0.service."}`},
		{"bm2's own, from the exit hook in the instance's cgroup",
			journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": "bm2@api-0.service", "_PID": "900", "_UID": "0", "_TRANSPORT": "journal",
				"SYSLOG_IDENTIFIER": "bm2", "BM2_EVENT": "instance_crashed", "MESSAGE": "api-0 crashed"}, "0",
			at + `"instance":"api-0","pid":900,"stream":"bm2","message":"api-0 crashed"}`},
		// An app that logs as bm2, or prints what looks like a line of
		// bm2's, is an app.
		{"an app logging under bm2's name",
			with(plain, "_TRANSPORT", "journal", "SYSLOG_IDENTIFIER", "bm2", "BM2_EVENT", "instance_crashed", "MESSAGE", "forged"), "0",
			at + `"instance":"api-0","pid":4242,"stream":"unknown","message":"forged"}`},
		{"an app printing a line of bm2 logs --json",
			with(plain, "MESSAGE", `{"time":"2026-05-01T12:00:00.000000Z","instance":"api-0","pid":1,"stream":"bm2","message":"x"}`), "0",
			at + `"instance":"api-0","pid":4242,"stream":"stdout","message":"{\"time\":\"2026-05-01T12:00:00.000000Z\",\"instance\":\"api-0\",\"pid\":1,\"stream\":\"bm2\",\"message\":\"x\"}"}`},
		{"an app naming another unit", with(plain, "_TRANSPORT", "journal", "UNIT", "bm2@web-0.service", "OBJECT_SYSTEMD_UNIT", "bm2@web-0.service"), "0",
			at + `"instance":"api-0","pid":4242,"stream":"unknown","message":"listening on 3000"}`},
		// User scope: the unit is the user manager's, and its own
		// messages come from its init.scope.
		{"user scope: the app", journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": "user@1000.service", "_SYSTEMD_USER_UNIT": "bm2@api-1.service",
			"UNIT": "bm2@web-0.service", "_PID": "5000", "_UID": "1000", "_TRANSPORT": "stdout", "MESSAGE": "hi"}, "1000",
			at + `"instance":"api-1","pid":5000,"stream":"stdout","message":"hi"}`},
		{"user scope: the user's manager", journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": "user@1000.service", "_SYSTEMD_USER_UNIT": "init.scope",
			"USER_UNIT": "bm2@api-1.service", "_PID": "990", "_UID": "1000", "_TRANSPORT": "journal", "MESSAGE": "Stopped bm2@api-1.service."}, "1000",
			at + `"instance":"api-1","pid":990,"stream":"systemd","message":"Stopped bm2@api-1.service."}`},
		{"user scope: bm2 as the user", journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": "user@1000.service", "_SYSTEMD_USER_UNIT": "bm2@api-1.service",
			"_PID": "991", "_UID": "1000", "_TRANSPORT": "journal", "SYSLOG_IDENTIFIER": "bm2", "MESSAGE": "api-1 crashed"}, "1000",
			at + `"instance":"api-1","pid":991,"stream":"bm2","message":"api-1 crashed"}`},
		{"root's bm2 entry is not the user's bm2", journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": "user@1000.service", "_SYSTEMD_USER_UNIT": "bm2@api-1.service",
			"_PID": "991", "_UID": "0", "_TRANSPORT": "journal", "SYSLOG_IDENTIFIER": "bm2", "MESSAGE": "x"}, "1000",
			at + `"instance":"api-1","pid":991,"stream":"unknown","message":"x"}`},
		{"a core dump", journal.Entry{"__REALTIME_TIMESTAMP": ts, "_SYSTEMD_UNIT": "systemd-coredump@0-1-0.service", "_PID": "77", "_UID": "0",
			"_TRANSPORT": "journal", "COREDUMP_UNIT": "bm2@api-2.service", "MESSAGE": "Process 4242 (node) dumped core."}, "0",
			at + `"instance":"api-2","pid":77,"stream":"unknown","message":"Process 4242 (node) dumped core."}`},
		{"no instance known", journal.Entry{"__REALTIME_TIMESTAMP": ts, "_PID": "x", "MESSAGE": ""}, "0",
			at + `"instance":null,"pid":null,"stream":"unknown","message":""}`},
	} {
		if got := encodeLog(t, c.e, c.uid); got != c.want+"\n" {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got, c.want)
		}
	}
}

func TestLogsJSONAndGrep(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.ts\"\ncwd = \"/srv/api\"\ninstances = 2\nport = 3000\n")
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	te.entries.line(t0, "bm2@api-0.service", "hello \x1b[31mred\x1b[0m\x7f")
	te.entries.line(t0.Add(time.Second), "bm2@api-1.service", "bad \xff\x9b")
	te.entries.line(t0.Add(2*time.Second), "bm2@api-surge.service", "first\nsecond")
	te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": "1777636803000000", "_SYSTEMD_UNIT": "bm2@api-0.service", "_PID": "900", "_UID": "0",
		"_TRANSPORT": "journal", "SYSLOG_IDENTIFIER": "bm2", "MESSAGE": "api-0 crashed"})
	te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": "1777636804000000", "_SYSTEMD_UNIT": "bm2@api-0.service", "_PID": "4242", "_UID": "61234",
		"_TRANSPORT": "journal", "SYSLOG_IDENTIFIER": "bm2", "MESSAGE": "forged"})

	te.mustRun(ExitOK, "logs", "api", "--json", "-n", "all")
	out := te.stdout.String()
	if bytes.ContainsAny([]byte(out), "\x1b\x7f\x9b\xff") {
		t.Errorf("--json wrote a raw control character or byte:\n%q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines, want one per entry:\n%s", len(lines), out)
	}
	var got []map[string]any
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil || len(m) != 5 {
			t.Fatalf("not an object of 5 keys: %s (%v)", l, err)
		}
		got = append(got, m)
	}
	if got[0]["message"] != "hello \x1b[31mred\x1b[0m\x7f" || got[0]["instance"] != "api-0" || got[0]["pid"] != 4242.0 || got[0]["time"] != "2026-05-01T12:00:00.000000Z" {
		t.Errorf("line 0: %s", lines[0])
	}
	if lines[1] != `{"time":"2026-05-01T12:00:01.000000Z","instance":"api-1","pid":4242,"stream":"unknown","message":[98,97,100,32,255,155]}` {
		t.Errorf("line 1: %s", lines[1])
	}
	if got[2]["instance"] != "api-surge" || got[2]["message"] != "first\nsecond" {
		t.Errorf("line 2: %s", lines[2])
	}
	if got[3]["stream"] != "bm2" || got[4]["stream"] != "unknown" || got[4]["message"] != "forged" {
		t.Errorf("bm2's line %s, the app's under bm2's name %s", lines[3], lines[4])
	}

	te.mustRun(ExitOK, "logs", "api", "--grep", "hello|second", "-n", "all")
	out = te.stdout.String()
	if !strings.Contains(out, `api-0 | hello \x1b[31mred\x1b[0m\x7f`) || !strings.Contains(out, "| first\n") || strings.Contains(out, "crashed") || strings.Count(out, "\n") != 3 {
		t.Errorf("--grep hello|second:\n%s", out)
	}
	// The pattern goes to journalctl as it is, "-" first or not; -n and
	// -f with it.
	te.mustRun(ExitOK, "logs", "api-1", "--grep=-x", "-n", "5", "-f", "--json")
	q := te.entries.queries[len(te.entries.queries)-1]
	if q.Grep != "-x" || q.Lines != 5 || !q.Follow || len(q.Units) != 1 {
		t.Errorf("query %+v", q)
	}
	te.mustRun(ExitOK, "logs", "api", "--grep", "nothing like it")
	if te.stdout.String() != "" || !strings.Contains(te.stderr.String(),
		`bm2: no log lines of api matching "nothing like it" in the journal (systemd's own lines about it are left out: `+"`bm2 logs api --systemd`"+` adds them; journalctl -u 'bm2@api-*' --grep='nothing like it' shows both)`) {
		t.Errorf("no match: stdout %q, stderr:\n%s", te.stdout.String(), te.stderr.String())
	}
	// A pattern journalctl refuses is the user's to fix, and says so.
	te.mustRun(ExitUsage, "logs", "api", "--grep", "(")
	if !strings.Contains(te.stderr.String(), `bm2: logs --grep: journalctl refused the pattern "(":`) || !strings.Contains(te.stderr.String(), "PCRE2") {
		t.Errorf("bad pattern: stderr:\n%s", te.stderr.String())
	}
}
