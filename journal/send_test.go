package journal

import (
	"context"
	"errors"
	"testing"
	"time"

	sdjournal "github.com/coreos/go-systemd/v22/journal"
)

// Send hands the entry over as it is, and a bounded Send returns when its
// context ends even if journald never takes the entry.
func TestSend(t *testing.T) {
	defer func(orig func(string, sdjournal.Priority, map[string]string) error) { sendEntry = orig }(sendEntry)
	var got []string
	sendEntry = func(msg string, p sdjournal.Priority, vars map[string]string) error {
		if p != sdjournal.PriWarning || vars[FieldIdentifier] != Identifier {
			t.Errorf("entry %q: priority %d, fields %v", msg, p, vars)
		}
		got = append(got, msg)
		return nil
	}
	vars := map[string]string{FieldIdentifier: Identifier}
	if err := Send(context.Background(), "m", 4, vars); err != nil || len(got) != 1 || got[0] != "m" {
		t.Fatalf("Send = %v, sent %q", err, got)
	}

	stuck := make(chan struct{})
	defer close(stuck)
	sendEntry = func(string, sdjournal.Priority, map[string]string) error { <-stuck; return nil }
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// Unbounded, this Send would never return: the test's own deadline is
	// the bound, not a timed assertion.
	if err := Send(ctx, "m", 4, vars); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Send to a journald that takes nothing = %v", err)
	}
}
