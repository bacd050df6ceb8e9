package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// catalogEntry returns the lines of the catalog entry for a MESSAGE_ID in
// the repository's packaging/catalog/bm2.catalog (headers, a blank line,
// the body), as journalctl -x shows them.
func catalogEntry(t *testing.T, repo, id string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repo, "packaging/catalog/bm2.catalog"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(data), "\n-- "+id+"\n")
	if !ok {
		t.Fatalf("bm2.catalog has no entry %s", id)
	}
	rest, _, _ = strings.Cut(rest, "\n-- ")
	return strings.Split(strings.TrimRight(rest, "\n"), "\n")
}

// explained checks that in journalctl -x output the event's line is
// followed by its catalog entry.
func explained(t *testing.T, out, message string, want []string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasSuffix(l, ": "+message) {
			continue
		}
		var got []string
		for _, c := range lines[i+1:] {
			c, ok := strings.CutPrefix(c, "░░")
			if !ok {
				break
			}
			got = append(got, strings.TrimSpace(c))
		}
		for j := range want {
			want[j] = strings.TrimSpace(want[j])
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("under %q journalctl -x shows:\n%s\nwant the catalog entry:\n%s", message, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		return
	}
	t.Errorf("journalctl -x -t bm2 has no line %q:\n%s", message, out)
}

// The catalog installed by make install-files explains real events in
// journalctl -x: a crash and the give-up after it (fork mode, exit 1),
// and a cluster project without reusePort.
func TestCatalogExplainsEvents(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.sh(`set -e
test -f /usr/lib/systemd/catalog/bm2.catalog
journalctl --list-catalog | grep -q '^f2094127a7e2480c9ce5c60d78d83fb2 bm2: '`)
	b.nodeProject("oops", 1, 3000, "CRASH_INSTANCE = \"0\"\nCRASH_AFTER_MS = \"200\"", "max_restarts = 1\nexec_mode = \"fork\"")
	b.nodeProject("solo", 1, 3100, `REUSE_PORT = "0"`, "")
	b.sh(`systemctl daemon-reload && systemctl start --no-block bm2-oops.target bm2-solo.target`)

	crashed := b.waitEvents(30*time.Second, "instance_crashed", "oops", 1)[0]
	errored := b.waitEvents(30*time.Second, "instance_errored", "oops", 1)[0]
	missing := b.waitEvents(30*time.Second, "reuseport_missing", "solo", 1)[0]
	if crashed.str("BM2_REASON") != "exited" || errored.str("BM2_REASON") != "restart_budget_exhausted" || missing.str("BM2_PORT") != "3100" {
		t.Fatalf("events: %v\n%v\n%v", crashed, errored, missing)
	}
	out := b.sh(`journalctl -x -t bm2 --no-pager`)
	for _, e := range []entry{crashed, errored, missing} {
		want := catalogEntry(t, b.repo, e.str("MESSAGE_ID"))
		explained(t, out, e.str("MESSAGE"), want)
	}
	// What an operator reads under each.
	for _, s := range []string{
		"░░ Subject: A bm2 instance crashed and is restarted",
		"░░ Subject: A bm2 instance gave up and is not restarted",
		"░░ run `bm2 start <name>-<i>`, which gives the instance a fresh budget.",
		"░░ Subject: A bm2 project was stopped: its port is bound without reusePort",
		"░░ Documentation: man:bm2(1) man:bm2.toml(5)",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("journalctl -x -t bm2 lacks %q:\n%s", s, out)
		}
	}
}
