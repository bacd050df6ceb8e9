package view

import (
	"testing"

	"github.com/bm2dev/bm2/internal/reason"
)

func TestInstanceState(t *testing.T) {
	for _, tc := range []struct {
		active, sub, load, result string
		state, why                string
	}{
		{"active", "running", "loaded", "success", StateOnline, ""},
		{"reloading", "reload", "loaded", "success", StateOnline, ""},
		{"activating", "start", "loaded", "success", StateLaunching, ""},
		{"activating", "start-pre", "loaded", "success", StateLaunching, ""},
		{"activating", "auto-restart", "loaded", "exit-code", StateWaiting, "exit-code"},
		{"activating", "auto-restart", "loaded", "signal", StateWaiting, "signal"},
		{"deactivating", "stop-sigterm", "loaded", "success", StateStopping, ""},
		{"failed", "failed", "loaded", "start-limit-hit", StateErrored, string(reason.Budget)},
		{"failed", "failed", "loaded", "exit-code", StateErrored, "exit-code"},
		{"failed", "failed", "loaded", "signal", StateErrored, "signal"},
		{"failed", "failed", "loaded", "core-dump", StateErrored, "core-dump"},
		{"failed", "failed", "loaded", "timeout", StateErrored, "timeout"},
		{"failed", "failed", "loaded", "", StateErrored, "failed"},
		{"inactive", "dead", "loaded", "success", StateStopped, ""},
		{"inactive", "dead", "not-found", "", StateStopped, ReasonNotLoaded},
		{"", "", "", "", StateUnknown, ""},
	} {
		st, why := InstanceState(UnitStatus{ActiveState: tc.active, SubState: tc.sub, LoadState: tc.load, Result: tc.result})
		if st != tc.state || why != tc.why {
			t.Errorf("%s/%s (%s, %s) = %q %q, want %q %q", tc.active, tc.sub, tc.load, tc.result, st, why, tc.state, tc.why)
		}
	}
}

func TestBudgetExhaustedOnSystemd252(t *testing.T) {
	// systemd 252 reports the last crash's result, not start-limit-hit,
	// when automatic restarts use up the start limit.
	u := UnitStatus{ActiveState: "failed", SubState: "failed", LoadState: "loaded", Result: "exit-code", NRestarts: 17}
	if st, r := ProjectInstanceState(u, 16); st != StateErrored || r != string(reason.Budget) {
		t.Fatalf("%s %s", st, r)
	}
	u.NRestarts = 3
	if st, r := ProjectInstanceState(u, 16); st != StateErrored || r != "exit-code" {
		t.Fatalf("%s %s", st, r)
	}
	u.ActiveState, u.SubState, u.NRestarts = "activating", "auto-restart", 40
	if st, r := ProjectInstanceState(u, 16); st != StateWaiting || r != "exit-code" {
		t.Fatalf("%s %s", st, r)
	}
}
