package journal

import (
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/reason"
)

func TestKindsHaveDistinctIDs(t *testing.T) {
	seen := map[string]Kind{}
	for _, info := range kinds {
		k := info.kind
		if len(info.id) != 32 {
			t.Errorf("%s: MESSAGE_ID %q is not 128 bits of hex", k, info.id)
		}
		if other, dup := seen[info.id]; dup {
			t.Errorf("%s and %s share MESSAGE_ID %s", k, other, info.id)
		}
		seen[info.id] = k
	}
	if len(Kinds()) != len(kinds) || Kind("nope").MessageID() != "" {
		t.Error("Kinds")
	}
	if ReuseportMissing.Level() != "error" || ReuseportConfirmed.Level() != "info" || ReuseportProbeStopped.Level() != "warning" {
		t.Error("levels do not follow priorities")
	}
}

func TestFields(t *testing.T) {
	f := Fields(Event{Kind: ReuseportMissing, Project: "api", Instance: "api-1", Reason: reason.ReuseportMissing, Detail: "d", Port: 3000})
	want := map[string]string{
		"SYSLOG_IDENTIFIER": "bm2", "BM2_EVENT": "reuseport_missing", "BM2_PROJECT": "api",
		"BM2_INSTANCE": "api-1", "BM2_REASON": "reuseport_missing", "MESSAGE_ID": "fef51d7506c045a3aca2d41b6586cc18",
		"BM2_LEVEL": "error", "BM2_DETAIL": "d", "BM2_PORT": "3000",
	}
	for k, v := range want {
		if f[k] != v {
			t.Errorf("%s = %q, want %q", k, f[k], v)
		}
	}
}

// Only root (or the kernel log) speaks for bm2: an app that logs bm2's
// fields under its own uid is not believed, whatever it writes.
func TestTrustedDecode(t *testing.T) {
	base := Entry{"SYSLOG_IDENTIFIER": "bm2", "BM2_EVENT": "reuseport_confirmed", "BM2_PROJECT": "api",
		"BM2_INSTANCE": "api-0", "BM2_PORT": "3000", "PRIORITY": "6", "__REALTIME_TIMESTAMP": "1764475200123456"}
	with := func(kv ...string) Entry {
		e := Entry{}
		for k, v := range base {
			e[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			e[kv[i]] = kv[i+1]
		}
		return e
	}
	for _, c := range []struct {
		e    Entry
		want bool
	}{
		{with("_UID", "0", "_TRANSPORT", "journal"), true},
		{with("_UID", "1000", "_TRANSPORT", "journal"), false},
		{with("_UID", "61234", "_TRANSPORT", "stdout"), false},
		{with(), false},
		{with("_TRANSPORT", "kernel"), true},
		{with("_UID", "0", "SYSLOG_IDENTIFIER", "bm2x"), false},
	} {
		ev, ok := Decode(c.e)
		if ok != c.want {
			t.Errorf("Decode(%v) ok=%v, want %v", c.e, ok, c.want)
		}
		if ok && (ev.Kind != ReuseportConfirmed || ev.Port != 3000 || ev.Level != "info" || !ev.Time.Equal(time.UnixMicro(1764475200123456))) {
			t.Errorf("decoded %+v", ev)
		}
	}
}

func TestQueryArgs(t *testing.T) {
	q := Query{Units: []string{"bm2@api-0.service", "bm2@api-1.service"}, Lines: 20, Follow: true, Since: "today"}
	want := "--no-pager -o json -u bm2@api-0.service -u bm2@api-1.service --since today -n 20 -f"
	if got := strings.Join(q.Args(), " "); got != want {
		t.Fatalf("%s", got)
	}
	q = EventQuery([]string{"api"}, ReuseportConfirmed)
	want = "--no-pager -o json SYSLOG_IDENTIFIER=bm2 _UID=0 BM2_PROJECT=api BM2_EVENT=reuseport_confirmed"
	if got := strings.Join(q.Args(), " "); got != want {
		t.Fatalf("%s", got)
	}
	q = Query{BM2: true, Generator: true}
	want = "--no-pager -o json SYSLOG_IDENTIFIER=bm2 _UID=0 + SYSLOG_IDENTIFIER=bm2 _TRANSPORT=kernel"
	if got := strings.Join(q.Args(), " "); got != want {
		t.Fatalf("%s", got)
	}
	if got := SinceTime(time.UnixMicro(1764475200_000042)); got != "@1764475200.000042" {
		t.Fatal(got)
	}
}

func TestParseEntry(t *testing.T) {
	line := `{"__REALTIME_TIMESTAMP":"1764475200123456","MESSAGE":[104,105,10],"BM2_EVENT":"reuseport_confirmed","_PID":["12","13"],"X":null}`
	e, err := ParseEntry([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if e["MESSAGE"] != "hi\n" || e["_PID"] != "12" || e["BM2_EVENT"] != "reuseport_confirmed" {
		t.Fatalf("%q", e)
	}
	if _, ok := e["X"]; ok {
		t.Fatalf("null field kept: %q", e)
	}
}

// NoManager selects a unit's entries as journalctl -u does, but for the
// service manager's own; Or adds alternatives ("+"), each with _UID in
// user scope.
func TestQueryArgsGroups(t *testing.T) {
	for _, c := range []struct {
		q    Query
		want string
	}{
		{Query{Units: []string{"bm2@api-0.service", "bm2@api-1.service"}, NoManager: true, Lines: 20},
			"--no-pager -o json -n 20 _SYSTEMD_UNIT=bm2@api-0.service _SYSTEMD_UNIT=bm2@api-1.service + " +
				"_UID=0 OBJECT_SYSTEMD_UNIT=bm2@api-0.service OBJECT_SYSTEMD_UNIT=bm2@api-1.service + " +
				"MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 _UID=0 COREDUMP_UNIT=bm2@api-0.service COREDUMP_UNIT=bm2@api-1.service"},
		{Query{Units: []string{"bm2@web-0.service"}, NoManager: true, User: "1001"},
			"--no-pager -o json _UID=1001 _SYSTEMD_USER_UNIT=bm2@web-0.service + _UID=1001 OBJECT_SYSTEMD_USER_UNIT=bm2@web-0.service"},
		{Query{Matches: []string{"_SYSTEMD_INVOCATION_ID=ab"}, Or: [][]string{{"_PID=12"}}, Since: "@1.000000"},
			"--no-pager -o json --since @1.000000 _SYSTEMD_INVOCATION_ID=ab + _PID=12"},
		{Query{Matches: []string{"_SYSTEMD_INVOCATION_ID=ab"}, Or: [][]string{{"_PID=12"}}, User: "1001"},
			"--no-pager -o json _UID=1001 _SYSTEMD_INVOCATION_ID=ab + _UID=1001 _PID=12"},
		{Query{Or: [][]string{{"_PID=12"}}}, "--no-pager -o json _PID=12"},
	} {
		if got := strings.Join(c.q.Args(), " "); got != c.want {
			t.Errorf("%+v:\n got %s\nwant %s", c.q, got, c.want)
		}
	}
}
