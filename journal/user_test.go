package journal

import (
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
