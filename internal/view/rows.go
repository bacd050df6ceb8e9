package view

import (
	"fmt"

	"github.com/bm2dev/bm2/units"
)

// Row is one line of bm2 list (and of bm2 status's table); its JSON form
// is what bm2 list --json prints.
type Row struct {
	Project   string  `json:"project"`
	ID        *int    `json:"id"`              // null for an invalid project and for the surge
	Surge     bool    `json:"surge,omitempty"` // the surge instance of a reload (bm2@<name>-surge)
	Unit      string  `json:"unit"`
	Mode      string  `json:"mode"`
	State     string  `json:"state"`
	Reason    string  `json:"reason"`
	PID       uint32  `json:"pid"`
	Port      int     `json:"port"`
	Reuseport *string `json:"reuseport"` // cluster mode: the probe's verdict on the current run; null otherwise
	// Health is the HTTP health check's word for the current run (null
	// without health_path, or when not online); HealthFailures, of
	// HealthLimit, and HealthLast (the last result: "200", "timeout")
	// come with it when the run has been checked.
	Health         *string `json:"health"`
	HealthFailures *int    `json:"health_failures,omitempty"`
	HealthLimit    *int    `json:"health_limit,omitempty"`
	HealthLast     string  `json:"health_last,omitempty"`
	Restarts       uint32  `json:"restarts"`
	UptimeMS       int64   `json:"uptime_ms"`
	MemoryBytes    *uint64 `json:"memory_bytes"` // null when unknown
	CPUMS          *uint64 `json:"cpu_ms"`       // null when unknown
	Scope          string  `json:"scope"`        // "system" or "user": whose systemd runs it
	// Holder is who holds the port of an instance errored as
	// port_in_use (its mark, written by the exit hook).
	Holder string `json:"holder,omitempty"`
}

// Rows are a snapshot's rows, one per instance (one for an invalid
// project), and the warnings to print after them: a pure function of
// snap.
func Rows(snap Snapshot) ([]Row, []string) {
	var rows []Row
	for pi, ps := range snap.Projects {
		e := ps.Entry
		if e.Err != nil || e.Project == nil {
			r := Row{Project: e.Name, State: StateInvalid, Reason: InvalidReason(e)}
			if p := e.Project; p != nil {
				r.Mode, r.Port = string(p.Mode), p.Port
			}
			rows = append(rows, r)
			continue
		}
		for k := range ps.IDs {
			rows = append(rows, instanceRow(snap, pi, k))
		}
	}
	return rows, Warnings(snap)
}

// Warnings are what a snapshot says could not be read, and its invalid
// projects, in order.
func Warnings(snap Snapshot) []string {
	warnings := append([]string(nil), snap.Warnings...)
	if snap.Accounting != "" {
		warnings = append(warnings, snap.Accounting)
	}
	for _, ps := range snap.Projects {
		e := ps.Entry
		switch {
		case e.Err != nil || e.Project == nil:
			warnings = append(warnings, fmt.Sprintf("project %s is invalid: run `bm2 check %s` for details", e.Name, e.Path))
		case ps.Warning != "":
			warnings = append(warnings, ps.Warning)
		}
	}
	return warnings
}

// instanceRow is the row of the k-th instance of the pi-th project; its
// state, reason and verdict are the snapshot's view of it
// ([Snapshot.Instance]), as bm2 top shows them.
func instanceRow(snap Snapshot, pi, k int) Row {
	ps := snap.Projects[pi]
	p, i := ps.Entry.Project, ps.IDs[k]
	v := snap.Instance(pi, k)
	r := Row{
		Project: p.Name, Unit: units.Instance(p.Name, i), Mode: string(p.Mode),
		State: v.State, Reason: v.Reason, Holder: v.Holder, Port: p.InstancePort(i),
	}
	if i == units.Surge {
		r.Surge = true
	} else {
		id := i
		r.ID = &id
	}
	if v.Verdict != "" {
		verdict := v.Verdict
		r.Reuseport = &verdict
	}
	if v.Health != "" {
		h := v.Health
		r.Health = &h
		if e := v.HealthEntry; e != nil {
			f, l := e.Failures, e.Limit
			r.HealthFailures, r.HealthLimit, r.HealthLast = &f, &l, e.Last
		}
	}
	if u := v.Status; u != nil {
		r.PID = u.MainPID
		r.Restarts = u.NRestarts
		if st, _ := ProjectInstanceState(*u, p.MaxRestarts); st == StateOnline && !u.ActiveEnter.IsZero() {
			r.UptimeMS = max(snap.Now.Sub(u.ActiveEnter).Milliseconds(), 0)
		}
		if u.MemoryCurrent != Unknown {
			m := u.MemoryCurrent
			r.MemoryBytes = &m
		}
		if u.CPUUsageNSec != Unknown {
			c := u.CPUUsageNSec / 1e6
			r.CPUMS = &c
		}
	}
	return r
}
