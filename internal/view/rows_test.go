package view

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/journal"
)

// Rows is a pure function of a snapshot: every column comes from it,
// with no systemd and no journal behind it.
func TestRowsFromSnapshot(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	online := func(inv string, pid uint32) UnitStatus {
		return UnitStatus{ActiveState: "active", SubState: "running", MainPID: pid, InvocationID: inv,
			ActiveEnter: now.Add(-90 * time.Second), NRestarts: 2, MemoryCurrent: 4 << 20, CPUUsageNSec: 1_500_000_000}
	}
	api := &config.Project{Name: "api", Mode: config.Cluster, Port: 3000, Instances: 2, MaxRestarts: 10}
	web := &config.Project{Name: "web", Mode: config.Fork, Port: 4000, Instances: 1, MaxRestarts: 10}
	box := &config.Project{Name: "box", Mode: config.Cluster, Port: 5000, Instances: 1, MaxRestarts: 10}
	snap := Snapshot{
		Now: now,
		Projects: []ProjectSnapshot{
			{Entry: config.Entry{Name: "api", Project: api}, IDs: []int{0, 1},
				Statuses: []UnitStatus{online("i0", 100), online("i1", 101)}},
			{Entry: config.Entry{Name: "web", Project: web}, IDs: []int{0},
				Statuses: []UnitStatus{{ActiveState: "failed", SubState: "failed", Result: "exit-code", MemoryCurrent: Unknown, CPUUsageNSec: Unknown}},
				Marks:    map[int]state.Mark{0: {Reason: "port_in_use", Detail: "nginx (pid 7)"}}},
			{Entry: config.Entry{Name: "box", Project: box}, IDs: []int{0}, Errored: true, Mark: string(reason.ReuseportMissing),
				Warning: "box: read errored state: permission denied"},
			{Entry: config.Entry{Name: "bad", Path: "/etc/bm2/bad.toml", Err: errors.New("bad.toml:1: unknown key")}},
		},
		Events:     []journal.Event{{Kind: journal.ReuseportConfirmed, Instance: "api-0", Invocation: "i0", Time: now.Add(-80 * time.Second)}},
		EventsRead: true,
		Warnings:   []string{"web: Units: connection reset"},
	}
	rows, warnings := Rows(snap)
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 5: %+v", len(rows), rows)
	}
	a0, a1, w0, b0, bad := rows[0], rows[1], rows[2], rows[3], rows[4]
	if a0.State != StateOnline || a0.PID != 100 || a0.UptimeMS != 90_000 || a0.Restarts != 2 ||
		*a0.MemoryBytes != 4<<20 || *a0.CPUMS != 1500 || a0.Port != 3000 || *a0.ID != 0 {
		t.Errorf("api-0 %+v", a0)
	}
	if a0.Reuseport == nil || *a0.Reuseport != "confirmed" {
		t.Errorf("api-0 verdict %v, want confirmed (its run's event)", a0.Reuseport)
	}
	if a1.Reuseport == nil || *a1.Reuseport != VerdictPending {
		t.Errorf("api-1 verdict %v, want pending (no event names its run)", a1.Reuseport)
	}
	if w0.State != StateErrored || w0.Reason != "port_in_use" || w0.Holder != "nginx (pid 7)" || w0.Reuseport != nil || w0.MemoryBytes != nil {
		t.Errorf("web-0 %+v", w0)
	}
	if b0.State != StateErrored || b0.Reason != "reuseport_missing" || b0.Reuseport == nil || *b0.Reuseport != VerdictMissing {
		t.Errorf("box-0 %+v", b0)
	}
	if bad.State != StateInvalid || bad.ID != nil {
		t.Errorf("bad %+v", bad)
	}
	// systemd's warnings first, then each project's, in order.
	if len(warnings) != 3 || warnings[0] != "web: Units: connection reset" || warnings[1] != "box: read errored state: permission denied" ||
		!strings.Contains(warnings[2], "bm2 check /etc/bm2/bad.toml") {
		t.Errorf("warnings %q", warnings)
	}

	// A probe that ended without a verdict on api-1's run: unprobed;
	// one still running, or one of another host's design (not loaded):
	// pending.
	gone := UnitStatus{LoadState: "loaded", ActiveState: "inactive", SubState: "dead"}
	for _, c := range []struct {
		probe UnitStatus
		want  string
	}{
		{gone, VerdictUnprobed},
		{UnitStatus{LoadState: "loaded", ActiveState: "activating", SubState: "start", JobPending: true}, VerdictPending},
		{UnitStatus{LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}, VerdictPending},
	} {
		snap.Projects[0].Probes = []UnitStatus{gone, c.probe}
		rows, _ := Rows(snap)
		if got := rows[1].Reuseport; got == nil || *got != c.want {
			t.Errorf("api-1 with its probe %s/%s: %v, want %s", c.probe.LoadState, c.probe.ActiveState, got, c.want)
		}
		if *rows[0].Reuseport != "confirmed" {
			t.Errorf("api-0 with a verdict: %s", *rows[0].Reuseport)
		}
	}
	snap.Projects[0].Probes = nil

	// Without the journal, no verdict is claimed.
	snap.EventsRead = false
	if rows, _ := Rows(snap); rows[0].Reuseport != nil {
		t.Errorf("a verdict without the journal: %v", *rows[0].Reuseport)
	}
}
