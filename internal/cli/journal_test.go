package cli

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/journal"
)

func TestEvents(t *testing.T) {
	te := newTestEnv(t)
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	te.entries.event(t0, journal.ReuseportConfirmed, "api", "api-0", "", "api-0: port 3000 is shared with SO_REUSEPORT: cluster mode confirmed")
	te.entries.event(t0.Add(time.Second), journal.ReuseportMissing, "web", "web-1", "reuseport_missing", "web-1: port 4000 is bound exclusively")
	te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": "1777636802000000", "SYSLOG_IDENTIFIER": "bm2", "PRIORITY": "4",
		"_TRANSPORT": "kernel", "MESSAGE": "skipped bad: /etc/bm2/bad.toml:4: port: must be an integer, got a string"})
	// What an app logs under bm2's name is not bm2's: never shown.
	te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": "1777636803000000", "SYSLOG_IDENTIFIER": "bm2", "PRIORITY": "6",
		"_UID": "61234", "_TRANSPORT": "journal", "BM2_EVENT": "reuseport_confirmed", "BM2_PROJECT": "web", "MESSAGE": "forged"})
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.ts\"\ncwd = \"/srv/api\"\ninstances = 2\nport = 3000\n")

	te.mustRun(ExitOK, "events", "--json", "-n", "all")
	lines := strings.Split(strings.TrimSpace(te.stdout.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	if lines[0] != `{"time":"2026-05-01T12:00:00.000000Z","event":"reuseport_confirmed","project":"api","instance":"api-0","reason":null,"level":"info","message":"api-0: port 3000 is shared with SO_REUSEPORT: cluster mode confirmed","detail":null,"message_id":"44f30fffb0214cdeb15b218ca0731307"}` {
		t.Fatalf("line 0: %s", lines[0])
	}
	var generator map[string]any
	if err := json.Unmarshal([]byte(lines[2]), &generator); err != nil || generator["event"] != nil || generator["level"] != "warning" || len(generator) != 9 {
		t.Fatalf("line 2: %s (%v)", lines[2], err)
	}

	te.mustRun(ExitOK, "events", "web")
	out := te.stdout.String()
	if !strings.HasPrefix(out, "TIME                 PROJECT     INSTANCE      EVENT                    REASON             MESSAGE\n") ||
		!strings.Contains(out, "  web         web-1         reuseport_missing        reuseport_missing  web-1: port 4000 is bound exclusively\n") ||
		strings.Contains(out, "api") || strings.Contains(out, "forged") {
		t.Fatalf("stdout:\n%s", out)
	}
	q := te.entries.queries[len(te.entries.queries)-1]
	if !reflect.DeepEqual(q.Matches, []string{"BM2_PROJECT=web"}) || !q.BM2 || q.Generator || q.Lines != 20 {
		t.Fatalf("query %+v", q)
	}

	te.mustRun(ExitOK, "events", "api-0", "-n", "5", "--since", "today")
	q = te.entries.queries[len(te.entries.queries)-1]
	if !reflect.DeepEqual(q.Matches, []string{"BM2_PROJECT=api", "BM2_INSTANCE=api-0"}) || !q.BM2 || q.Lines != 5 || q.Since != "today" {
		t.Fatalf("query %+v", q)
	}

	te.mustRun(ExitOK, "events", "gone")
	if te.stdout.String() != "" || !strings.Contains(te.stderr.String(), "bm2: no events of gone in the journal (journalctl -t bm2 shows the same)") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.mustRun(ExitUsage, "events", "-n", "x")
}

func TestLogs(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.ts\"\ncwd = \"/srv/api\"\ninstances = 12\nport = 3000\n")
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	te.entries.line(t0, "bm2@api-0.service", "instance 0 listening on 3000")
	te.entries.line(t0.Add(time.Second), "bm2@api-11.service", "instance 11 listening on 3000")
	te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": "1777636803000000", "_SYSTEMD_UNIT": "init.scope", "_PID": "1",
		"UNIT": "bm2@api-0.service", "SYSLOG_IDENTIFIER": "systemd", "MESSAGE": "Stopping bm2@api-0.service - bm2 api instance 0..."})
	te.entries.line(t0.Add(time.Second), "bm2@web-0.service", "not api")

	te.mustRun(ExitOK, "logs", "api")
	local := func(s string) string {
		tm, _ := time.Parse("2006-01-02 15:04:05", s)
		return tm.Local().Format(timeLayout)
	}
	// systemd's own lines only when asked for: a crash loop's would
	// crowd the app's out of the last 20.
	want := local("2026-05-01 12:00:00") + " api-0  | instance 0 listening on 3000\n" +
		local("2026-05-01 12:00:01") + " api-11 | instance 11 listening on 3000\n"
	if got := te.stdout.String(); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
	q := te.entries.queries[len(te.entries.queries)-1]
	// The instances and the surge (what it served during reloads).
	if len(q.Units) != 13 || q.Units[11] != "bm2@api-11.service" || q.Units[12] != "bm2@api-surge.service" || q.Lines != 20 || q.Follow || !q.NoManager {
		t.Fatalf("query %+v", q)
	}
	te.mustRun(ExitOK, "logs", "api", "--systemd")
	want += local("2026-05-01 12:00:03") + " api-0  | systemd: Stopping bm2@api-0.service - bm2 api instance 0...\n"
	if got := te.stdout.String(); got != want {
		t.Fatalf("--systemd: stdout:\n%s\nwant:\n%s", got, want)
	}
	if q := te.entries.queries[len(te.entries.queries)-1]; q.NoManager {
		t.Fatalf("--systemd: query %+v", q)
	}

	te.mustRun(ExitOK, "logs", "api-11", "-n", "all", "-f")
	q = te.entries.queries[len(te.entries.queries)-1]
	if !reflect.DeepEqual(q.Units, []string{"bm2@api-11.service"}) || q.Lines != 0 || !q.Follow {
		t.Fatalf("query %+v", q)
	}
	if got := te.stdout.String(); got != local("2026-05-01 12:00:01")+" api-11 | instance 11 listening on 3000\n" {
		t.Fatalf("stdout:\n%s", got)
	}

	te.mustRun(ExitOK, "logs", "api-5")
	if !strings.Contains(te.stderr.String(), "bm2: no log lines of api-5 in the journal (systemd's own lines about it are left out: `bm2 logs api-5 --systemd` adds them; journalctl -u bm2@api-5.service shows both)") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.mustRun(ExitOK, "logs", "api-5", "--systemd")
	if !strings.Contains(te.stderr.String(), "bm2: no log lines of api-5 in the journal (journalctl -u bm2@api-5.service shows the same)") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.mustRun(ExitNoProject, "logs", "nope")
	te.mustRun(ExitNoProject, "logs", "api-12")
	te.mustRun(ExitUsage, "logs", "api", "-n", "-3")

	// A user who cannot read the system journal is told so.
	te2 := newTestEnv(t)
	te2.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.ts\"\ncwd = \"/srv/api\"\nport = 3000\n")
	app := te2.app()
	app.c.ReadJournal = func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error {
		return journal.ErrRestricted
	}
	if code := app.Main(context.Background(), []string{"logs", "api"}); code != ExitFailure ||
		!strings.Contains(te2.stderr.String(), "bm2: no log lines of api: this user cannot read the system journal\nbm2: run it as root, or add yourself to the adm or systemd-journal group\n") {
		t.Fatalf("exit %d\n%s", code, te2.stderr.String())
	}
}
