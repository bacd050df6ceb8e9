package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// row is one line of bm2 list; its JSON form is what --json prints.
type row struct {
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

// maxReason is how much of a reason the table shows; --json has it all.
const maxReason = 40

// list is `bm2 list [name...]`.
func (a *App) list(ctx context.Context, names []string, asJSON bool) error {
	entries, found, err := a.selected(names)
	if err != nil {
		return err
	}
	rows, warnings := listRows(a.readSnapshot(ctx, entries, func(w string) { fmt.Fprintf(a.Err, "bm2: warning: %s\n", w) }))
	for i := range rows {
		rows[i].Scope = string(a.c.Scope().Layout().Kind)
	}

	if asJSON {
		if rows == nil {
			rows = []row{}
		}
		enc := json.NewEncoder(a.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return fmt.Errorf("write JSON: %w", err)
		}
	} else if err := a.table(rows); err != nil {
		return err
	}

	for _, w := range warnings {
		fmt.Fprintf(a.Err, "bm2: warning: %s\n", w)
	}
	for _, err := range found.Errors {
		if len(names) == 0 {
			fmt.Fprintf(a.Err, "bm2: warning: %s\n", strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	if len(entries) == 0 && len(names) == 0 {
		where := strings.Join(a.c.SearchPath(), ":")
		if a.c.Scope().IsUser() {
			where = a.c.Scope().Layout().Short(where) + " (" + a.c.Scope().Layout().Describe() + ")"
		}
		fmt.Fprintf(a.Err, "bm2: no projects registered in %s; `bm2 serve` in a project dir registers one\n", where)
	}
	if a.c.Scope().IsUser() && len(names) == 0 {
		if n := scope.SystemProjects(a.c.SystemSearchPath); n > 0 {
			fmt.Fprintf(a.Err, "bm2: %s: these are your own projects; the system has %d more: `bm2 --system list`\n", a.c.Scope().Layout().Describe(), n)
		}
	}
	return nil
}

// selected is what bm2 list and bm2 metrics show: the named projects, in
// name order, or every registered one when none is named; and what the
// search path holds.
func (a *App) selected(names []string) ([]entry, config.Loaded, error) {
	entries, found := a.c.Registry()
	if len(names) > 0 {
		var picked []entry
		seen := map[string]bool{}
		for _, n := range names {
			if seen[n] {
				continue // named twice: shown once
			}
			seen[n] = true
			e, err := a.c.FindProject(n)
			if err != nil {
				return nil, found, err
			}
			picked = append(picked, e)
		}
		entries = picked
		sortEntries(entries)
	}
	return entries, found, nil
}

// readSnapshot reads the state of entries; systemd out of reach makes
// every instance's state unknown, which warn says.
func (a *App) readSnapshot(ctx context.Context, entries []entry, warn func(string)) view.Snapshot {
	snap, _ := a.readSnapshotWith(ctx, entries, warn, false)
	return snap
}

// readSnapshotFigures is readSnapshot with the instances' figures
// (control.Client.SnapshotFigures).
func (a *App) readSnapshotFigures(ctx context.Context, entries []entry, warn func(string)) (view.Snapshot, view.Figures) {
	return a.readSnapshotWith(ctx, entries, warn, true)
}

func (a *App) readSnapshotWith(ctx context.Context, entries []entry, warn func(string), figures bool) (view.Snapshot, view.Figures) {
	var sd Systemd
	if len(entries) > 0 {
		var err error
		sd, err = a.c.Connect(ctx)
		if err != nil {
			warn(fmt.Sprintf("%v; instance states are unknown", err))
			sd = nil
		} else {
			defer sd.Close()
		}
	}
	if figures {
		return a.c.SnapshotFigures(ctx, entries, sd)
	}
	return a.c.Snapshot(ctx, entries, sd), view.Figures{}
}

// listRows renders a snapshot as the list's rows, and the warnings to print
// after them: a pure function (see [view.Snapshot]).
func listRows(snap view.Snapshot) ([]row, []string) {
	var rows []row
	for pi, ps := range snap.Projects {
		e := ps.Entry
		if e.Err != nil || e.Project == nil {
			r := row{Project: e.Name, State: view.StateInvalid, Reason: view.InvalidReason(e)}
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
	return rows, snapshotWarnings(snap)
}

// snapshotWarnings are what a snapshot says could not be read, and its
// invalid projects, in order.
func snapshotWarnings(snap view.Snapshot) []string {
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
// ([view.Snapshot.Instance]), as bm2 top shows them.
func instanceRow(snap view.Snapshot, pi, k int) row {
	ps := snap.Projects[pi]
	p, i := ps.Entry.Project, ps.IDs[k]
	v := snap.Instance(pi, k)
	r := row{
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
		if st, _ := view.ProjectInstanceState(*u, p.MaxRestarts); st == view.StateOnline && !u.ActiveEnter.IsZero() {
			r.UptimeMS = max(snap.Now.Sub(u.ActiveEnter).Milliseconds(), 0)
		}
		if u.MemoryCurrent != view.Unknown {
			m := u.MemoryCurrent
			r.MemoryBytes = &m
		}
		if u.CPUUsageNSec != view.Unknown {
			c := u.CPUUsageNSec / 1e6
			r.CPUMS = &c
		}
	}
	return r
}

// cells is a row as the table shows it: "-" for what is not known.
type cells struct {
	id, pid, port, reuseport, health, restarts, uptime, mem, cpu string
}

func (r row) cells() cells {
	c := cells{"-", "-", "-", "-", "-", "-", "-", "-", "-"}
	if r.Reuseport != nil {
		c.reuseport = *r.Reuseport
	}
	if r.Health != nil {
		c.health = termtext.EscapeField(view.HealthCell(*r.Health, r.HealthFailures, r.HealthLimit))
	}
	if r.ID != nil {
		c.id = strconv.Itoa(*r.ID)
		c.restarts = strconv.FormatUint(uint64(r.Restarts), 10)
	}
	if r.Surge {
		c.id = units.SurgeName
		c.restarts = strconv.FormatUint(uint64(r.Restarts), 10)
	}
	if r.PID != 0 {
		c.pid = strconv.FormatUint(uint64(r.PID), 10)
	}
	if r.Port != 0 {
		c.port = strconv.Itoa(r.Port)
	}
	if r.State == view.StateOnline && r.UptimeMS > 0 {
		c.uptime = wording.FormatUptime(wording.MsDuration(r.UptimeMS))
	}
	if r.MemoryBytes != nil {
		c.mem = view.FormatMem(*r.MemoryBytes)
	}
	if r.CPUMS != nil {
		c.cpu = formatCPU(*r.CPUMS * 1e6)
	}
	return c
}

// table prints rows aligned.
func (a *App) table(rows []row) error {
	tw := tabwriter.NewWriter(a.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tID\tMODE\tSTATE\tREASON\tPID\tPORT\tREUSEPORT\tHEALTH\tRESTARTS\tUPTIME\tMEM\tCPU")
	for _, r := range rows {
		c := r.cells()
		reason := r.Reason
		if r.Holder != "" {
			reason += ": " + r.Holder
		}
		esc := termtext.EscapeField
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			esc(r.Project), c.id, esc(orDash(r.Mode)), esc(r.State), orDash(truncate(esc(reason), maxReason)),
			c.pid, c.port, c.reuseport, c.health, c.restarts, c.uptime, c.mem, c.cpu)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write table: %w", err)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// truncate shortens s to n runes, ending in "…" when cut.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
