package journal

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// User scope believes the user's own entries, and only theirs; system
// scope believes only root's (and the kernel's).
func TestTrustedFromUser(t *testing.T) {
	mine := Entry{FieldIdentifier: Identifier, FieldUID: "1001", FieldEvent: "reuseport_confirmed", FieldProject: "web"}
	bobs := Entry{FieldIdentifier: Identifier, FieldUID: "1002", FieldEvent: "reuseport_confirmed", FieldProject: "web"}
	roots := Entry{FieldIdentifier: Identifier, FieldUID: "0", FieldEvent: "reuseport_confirmed", FieldProject: "web"}
	kernel := Entry{FieldIdentifier: Identifier, FieldTransport: "kernel", FieldUID: "0"}
	cases := []struct {
		e    Entry
		uid  string
		want bool
	}{
		{mine, "1001", true}, {bobs, "1001", false}, {roots, "1001", false}, {kernel, "1001", false},
		{mine, "0", false}, {roots, "0", true}, {kernel, "0", true},
		{Entry{FieldIdentifier: "node", FieldUID: "1001"}, "1001", false},
	}
	for i, c := range cases {
		if got := TrustedFrom(c.e, c.uid); got != c.want {
			t.Errorf("case %d: TrustedFrom(%v, %s) = %v, want %v", i, c.e, c.uid, got, c.want)
		}
	}
	if _, ok := DecodeFrom(mine, "1001"); !ok {
		t.Error("the user's own event does not decode in user scope")
	}
	if _, ok := Decode(mine); ok {
		t.Error("a user's event decodes as a system event")
	}
}

func TestUserQueryArgs(t *testing.T) {
	q := Query{Units: []string{"bm2@web-0.service"}, Lines: 5, User: "1001"}
	args := strings.Join(q.Args(), " ")
	if !strings.Contains(args, "--user-unit bm2@web-0.service") || strings.Contains(args, " -u ") {
		t.Errorf("user unit query: %s", args)
	}
	q = Query{BM2: true, Generator: true, User: "1001", Matches: []string{"BM2_PROJECT=web"}}
	a := q.Args()
	if !slices.Contains(a, "_UID=1001") || slices.Contains(a, "_UID=0") || slices.Contains(a, "_TRANSPORT=kernel") {
		t.Errorf("user event query: %v", a)
	}
	q = Query{Matches: []string{"_SYSTEMD_USER_UNIT=bm2@web-0.service"}, User: "1001"}
	if !slices.Contains(q.Args(), "_UID=1001") {
		t.Errorf("a user's match query must carry _UID: %v", q.Args())
	}
}

// Read keeps only the user's own entries in user scope, whatever
// journalctl hands it (a user in systemd-journal can read everyone's).
func TestReadKeepsTheUsersOwn(t *testing.T) {
	dir := t.TempDir()
	script := `#!/bin/sh
echo '{"SYSLOG_IDENTIFIER":"bm2","_UID":"1001","MESSAGE":"alice","BM2_EVENT":"reuseport_confirmed","__REALTIME_TIMESTAMP":"1"}'
echo '{"SYSLOG_IDENTIFIER":"bm2","_UID":"1002","MESSAGE":"bob","BM2_EVENT":"reuseport_confirmed","__REALTIME_TIMESTAMP":"2"}'
echo '{"SYSLOG_IDENTIFIER":"bm2","_UID":"0","MESSAGE":"root","BM2_EVENT":"reuseport_confirmed","__REALTIME_TIMESTAMP":"3"}'
`
	if err := os.WriteFile(filepath.Join(dir, "journalctl"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+":"+os.Getenv("PATH"))
	read := func(q Query) []string {
		var got []string
		if err := Read(context.Background(), q, func(e Entry) error { got = append(got, e["MESSAGE"]); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if got := read(Query{User: "1001"}); strings.Join(got, ",") != "alice" {
		t.Errorf("user scope read %v, want alice's only", got)
	}
	if got := read(Query{User: "1001", BM2: true}); strings.Join(got, ",") != "alice" {
		t.Errorf("user scope events %v, want alice's only", got)
	}
	if got := read(Query{BM2: true}); strings.Join(got, ",") != "root" {
		t.Errorf("system scope events %v, want root's only", got)
	}
}

func TestJournaldStorage(t *testing.T) {
	dir := t.TempDir()
	main := filepath.Join(dir, "journald.conf")
	drop := filepath.Join(dir, "50-x.conf")
	os.WriteFile(main, []byte("[Journal]\n#Storage=auto\nStorage=persistent\n"), 0o644)
	files := func() []string { return []string{main, drop} }
	if got := storage(files); got != "persistent" {
		t.Errorf("storage = %q, want persistent", got)
	}
	os.WriteFile(drop, []byte("[Journal]\nStorage=volatile\n"), 0o644)
	if got := storage(files); got != "volatile" {
		t.Errorf("a drop-in's Storage= does not win: %q", got)
	}
	os.WriteFile(drop, []byte("[Other]\nStorage=none\n"), 0o644)
	if got := storage(files); got != "persistent" {
		t.Errorf("Storage= outside [Journal] counted: %q", got)
	}
	if got := storage(func() []string { return nil }); got != "auto" {
		t.Errorf("no files: %q", got)
	}
}
