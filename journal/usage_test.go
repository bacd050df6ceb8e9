package journal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The oldest entry is the first journalctl prints (oldest first, no -n,
// only the fields asked for); the read stops there.
func TestOldest(t *testing.T) {
	calls := fakeJournalctl(t, `echo '{"__REALTIME_TIMESTAMP":"1764475200000000","_SYSTEMD_UNIT":"bm2@api-1.service"}'
echo '{"__REALTIME_TIMESTAMP":"1764475300000000","_SYSTEMD_UNIT":"bm2@api-0.service"}'
`)
	q := Query{Units: []string{"bm2@api-0.service", "bm2@api-1.service"}, Fields: []string{"_SYSTEMD_UNIT"}, Lines: 5}
	at, ok, err := Oldest(context.Background(), Read, q)
	if err != nil || !ok || !at.Equal(time.UnixMicro(1764475200000000)) {
		t.Fatalf("Oldest: %v %v %v", at, ok, err)
	}
	want := "--no-pager -o json -u bm2@api-0.service -u bm2@api-1.service --output-fields=_SYSTEMD_UNIT"
	if c := readCalls(t, calls); len(c) != 1 || c[0] != want {
		t.Fatalf("journalctl runs %q, want %q", c, want)
	}

	fakeJournalctl(t, `echo "-- No entries --"`)
	if at, ok, err := Oldest(context.Background(), Read, q); err != nil || ok || !at.IsZero() {
		t.Fatalf("no entries: %v %v %v", at, ok, err)
	}
	fakeJournalctl(t, `echo "Hint: You are currently not seeing messages from other users and the system." >&2`)
	if _, _, err := Oldest(context.Background(), Read, q); !errors.Is(err, ErrRestricted) {
		t.Fatalf("a reader outside adm: %v, want ErrRestricted", err)
	}
}

// --output-fields only where the entries need not be judged: a BM2 query
// reads SYSLOG_IDENTIFIER, _UID and _TRANSPORT of each entry.
func TestFieldsArgs(t *testing.T) {
	if a := strings.Join((Query{BM2: true, Fields: []string{"MESSAGE"}}).Args(), " "); strings.Contains(a, "--output-fields") {
		t.Errorf("BM2 query with --output-fields: %s", a)
	}
}

func TestDiskUsage(t *testing.T) {
	for _, c := range []struct {
		out  string
		want int64
	}{
		{"Archived and active journals take up 0B in the file system.\n", 0},
		{"Archived and active journals take up 512B in the file system.\n", 512},
		{"Archived and active journals take up 8.0M in the file system.\n", 8 << 20},
		{"Archived and active journals take up 1.5G in the file system.\n", 3 << 29},
	} {
		if got, err := ParseDiskUsage(c.out); err != nil || got != c.want {
			t.Errorf("%q: %d, %v; want %d", c.out, got, err, c.want)
		}
	}
	if _, err := ParseDiskUsage("No journal files were found.\n"); err == nil {
		t.Error("no figure, no error")
	}

	calls := fakeJournalctl(t, `echo "Archived and active journals take up 24.0M in the file system."`)
	if n, err := DiskUsage(context.Background(), false); err != nil || n != 24<<20 {
		t.Fatalf("DiskUsage: %d, %v", n, err)
	}
	if n, err := DiskUsage(context.Background(), true); err != nil || n != 24<<20 {
		t.Fatalf("DiskUsage --user: %d, %v", n, err)
	}
	if c := readCalls(t, calls); strings.Join(c, "\n") != "--no-pager --disk-usage\n--no-pager --user --disk-usage" {
		t.Fatalf("journalctl runs %q", c)
	}
	// Outside adm, journalctl counts the files it happens to open (the
	// reader's own): not the journal's size.
	fakeJournalctl(t, `echo "Hint: You are currently not seeing messages from other users and the system." >&2
echo "Archived and active journals take up 8.0M in the file system."`)
	if _, err := DiskUsage(context.Background(), false); !errors.Is(err, ErrRestricted) {
		t.Fatalf("outside adm: %v, want ErrRestricted", err)
	}
	fakeJournalctl(t, `echo "No journal files were opened due to insufficient permissions." >&2; exit 1`)
	if _, err := DiskUsage(context.Background(), false); !errors.Is(err, ErrRestricted) {
		t.Fatalf("no file readable: %v, want ErrRestricted", err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := DiskUsage(context.Background(), false); !errors.Is(err, ErrNoJournalctl) {
		t.Fatalf("no journalctl: %v", err)
	}
}

// A user's query keeps _UID, which Read checks of every entry.
func TestFieldsArgsUser(t *testing.T) {
	q := Query{Units: []string{"bm2@api-0.service"}, Fields: []string{FieldRealtime}, User: "1001"}
	want := "--no-pager -o json --user-unit bm2@api-0.service --output-fields=__REALTIME_TIMESTAMP,_UID"
	if got := strings.Join(q.Args(), " "); got != want {
		t.Fatalf("%s\nwant %s", got, want)
	}
	calls := fakeJournalctl(t, `echo '{"__REALTIME_TIMESTAMP":"1764475200000000","_UID":"1002"}'
echo '{"__REALTIME_TIMESTAMP":"1764475300000000","_UID":"1001"}'
`)
	at, ok, err := Oldest(context.Background(), Read, q)
	if err != nil || !ok || !at.Equal(time.UnixMicro(1764475300000000)) {
		t.Fatalf("Oldest as 1001: %v %v %v (runs %q)", at, ok, err, readCalls(t, calls))
	}
}
