package view

import (
	"testing"
	"time"

	"github.com/bm2dev/bm2/journal"
)

// The verdict belongs to the instance's current run: an event with the
// run's InvocationID, or without one, logged after the run came online.
func TestReuseportVerdict(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	u := UnitStatus{ActiveEnter: t0, InvocationID: "bbbb"}
	evs := []journal.Event{
		{Time: t0.Add(-time.Minute), Kind: journal.ReuseportConfirmed, Instance: "api-0"}, // an older run
		{Time: t0.Add(time.Second), Kind: journal.ReuseportConfirmed, Instance: "api-1"},  // another instance
	}
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != "" {
		t.Fatalf("verdict %q from an older run", v)
	}
	evs = append(evs, journal.Event{Time: t0.Add(time.Second), Kind: journal.ReuseportConfirmed, Instance: "api-0"})
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != VerdictConfirmed {
		t.Fatalf("verdict %q", v)
	}
	// An InvocationID, when the event has one, decides.
	evs[2].Invocation = "aaaa"
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != "" {
		t.Fatalf("verdict %q for another invocation", v)
	}
	evs = append(evs, journal.Event{Time: t0.Add(-time.Hour), Kind: journal.ReuseportProbeStopped, Instance: "api-0", Invocation: "bbbb"})
	if v, _ := ReuseportVerdict(u, "api-0", evs); v != VerdictNoListener {
		t.Fatalf("verdict %q", v)
	}
}
