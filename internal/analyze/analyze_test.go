package analyze

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
)

// bm2 check's next run is systemd-analyze calendar's "Next elapse:";
// a refusal is a *CalendarRefused with what it said.
func TestAnalyzeCalendar(t *testing.T) {
	out := []byte("  Original form: Sun 04:00\nNormalized form: Sun *-*-* 04:00:00\n    Next elapse: Sun 2026-12-06 04:00:00 UTC\n       From now: 3 days left\n")
	if next, err := nextElapse(out); err != nil || next != "Sun 2026-12-06 04:00:00 UTC" {
		t.Fatalf("%q %v", next, err)
	}
	if _, err := nextElapse([]byte("Normalized form: x\n")); err == nil {
		t.Fatal("no next elapse accepted")
	}
	if _, err := testutil.LookCommand("systemd-analyze"); err != nil {
		testutil.Skip(t, testutil.Need{What: "no systemd-analyze", Fix: "sudo apt-get install systemd"}, err)
	}
	ctx := context.Background()
	if next, err := Calendar(ctx, "Sun 04:00"); err != nil || !strings.HasPrefix(next, "Sun ") || !strings.Contains(next, " 04:00:00 ") {
		t.Fatalf("%q %v", next, err)
	}
	if next, err := Calendar(ctx, "2020-01-01"); err != nil || next != Never {
		t.Fatalf("a past date: %q %v", next, err)
	}
	var refused *CalendarRefused
	if _, err := Calendar(ctx, "Sun 4am"); !errors.As(err, &refused) || !strings.Contains(refused.Msg, "Sun 4am") {
		t.Fatalf("%v", err)
	}
}
