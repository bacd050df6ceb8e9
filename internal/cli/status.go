package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/explain"
	"github.com/bm2dev/bm2/internal/history"
	"github.com/bm2dev/bm2/internal/steer"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// status is `bm2 status <name>`.
func (a *App) status(ctx context.Context, name string) error {
	e, err := a.reader().Find(name)
	if err != nil {
		return err
	}
	w := a.Out
	// What a project's file, its app or the journal say is shown escaped
	// (package termtext): it reaches root's terminal.
	esc := termtext.Escape
	fmt.Fprintf(w, "%s: %s\n", esc(e.Name), esc(e.Path))
	if e.Err != nil {
		fmt.Fprintf(w, "  invalid: %s\n", esc(wording.OneLine(e.Err)))
		_, err := control.Usable(e)
		return err
	}
	p := e.Project
	a.statusHead(ctx, p)
	sd, err := a.c.Connect(ctx)
	if err != nil {
		fmt.Fprintf(a.Err, "bm2: warning: %v; instance states are unknown\n", err)
		sd = nil
	} else {
		defer sd.Close()
	}
	a.statusHost(ctx, sd, p)
	rows, warnings := view.Rows(a.c.Snapshot(ctx, []entry{e}, sd))
	if err := a.statusTable(rows); err != nil {
		return err
	}
	a.statusTroubles(ctx, sd, p)
	fmt.Fprintf(w, "\nmore: %s status %s 'bm2@%s-*'\n", a.c.Scope().Layout().Systemctl, units.Target(p.Name), p.Name)
	fmt.Fprintf(w, "      bm2 logs %s -f\n", p.Name)
	fmt.Fprintf(w, "      bm2 events %s\n", p.Name)
	for _, warn := range warnings {
		fmt.Fprintf(a.Err, "bm2: warning: %s\n", esc(warn))
	}
	return nil
}

// statusHead is what status says of a valid project before it asks
// systemd anything: its shape, how it runs, and its errored mark.
func (a *App) statusHead(ctx context.Context, p *config.Project) {
	w, esc := a.Out, termtext.Escape
	fmt.Fprintf(w, "  %s, runtime %s (%s), user %s\n",
		view.ShapeText(p), p.Runtime, esc(p.RuntimeCommand()), esc(a.userText(p)))
	fmt.Fprintf(w, "  script %s in %s\n", esc(p.Script), esc(p.Cwd))
	if reason, errored, _ := a.c.Scope().Layout().State().ErroredMark(p.Name); errored {
		fmt.Fprintf(w, "  errored: %s (`bm2 start %s` or `bm2 serve` in %s clears it)\n", esc(reason), p.Name, esc(p.Cwd))
		if e, _, ok := explain.Errored(ctx, a.c.Explainer(), p, reason, explain.Again(p, "start")); ok {
			fmt.Fprintf(w, "  why: %s\n  %s\n", esc(e.Message), esc(e.FixLine()))
		}
	}
}

// statusHost is what status says of the project on this host: a surge
// left running, its sandbox, fence, steering, needs, schedule and
// journal (sd is nil without systemd).
func (a *App) statusHost(ctx context.Context, sd Systemd, p *config.Project) {
	w, esc := a.Out, termtext.Escape
	if sd != nil {
		if u, left := a.c.LeftSurge(ctx, sd, p); left {
			fmt.Fprintf(w, "  %s runs (pid %d), left by a reload that did not finish: it serves beside the instances; "+
				"the next bm2 start, restart, reload or serve of %s retires it once the instances are online\n",
				units.InstanceID(p.Name, units.Surge), u.MainPID, p.Name)
		}
	}
	if score, err := a.c.Security(ctx, units.Instance(p.Name, 0)); err == nil {
		fmt.Fprintf(w, "  sandbox: %s, exposure %s (%s security %s)\n", p.Sandbox.Mode, score, a.c.Scope().Layout().Analyze, units.Instance(p.Name, 0))
	}
	var fenced []UnitStatus
	if sd != nil {
		fenced, _ = sd.Units(ctx, view.InstanceNames(p))
	}
	fmt.Fprintf(w, "  %s\n", a.fenceLine(p, fenced))
	if p.Preload() {
		fmt.Fprintf(w, "  %s\n", reusePortSupplied)
	}
	if !a.c.Scope().IsUser() {
		if line := steer.PortLine(steer.ScopeStore(a.c.SteerPins, a.c.Scope().Layout()), p); line != "" {
			fmt.Fprintf(w, "  %s\n", esc(line))
		}
	}
	if needs := p.Needs(); len(needs) > 0 {
		fmt.Fprintf(w, "  needs: %s\n", esc(needsText(ctx, sd, needs)))
	}
	if p.RestartSchedule != "" {
		var st []UnitStatus
		if sd != nil {
			st, _ = sd.Units(ctx, []string{units.RestartTimer(p.Name), units.RestartService(p.Name)})
		}
		for _, line := range scheduleLines(p, st, a.c.Scope().Layout().JournalUnit) {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
	rd := a.reader()
	fmt.Fprintf(w, "  %s\n", journalLine(p.Name, history.UseOf(ctx, rd.Journal, rd.DiskUsage, p), a.c.Scope().IsUser()))
}

// statusTable is status's table of the instances, after a blank line.
func (a *App) statusTable(rows []view.Row) error {
	fmt.Fprintln(a.Out)
	tw := tabwriter.NewWriter(a.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  ID\tUNIT\tSTATE\tREASON\tPID\tPORT\tREUSEPORT\tRESTARTS\tUPTIME\tMEM\tCPU")
	for _, r := range rows {
		c := cellsOf(r)
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			c.id, termtext.EscapeField(r.Unit), termtext.EscapeField(r.State), termtext.EscapeField(orDash(r.Reason)), c.pid, c.port, c.reuseport, c.restarts, c.uptime, c.mem, c.cpu)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

// statusTroubles is what status says is wrong below the table: stale
// instances, why an instance gave up, the files bm2 could not write, and
// what keeps the next start from working (sd is nil without systemd).
func (a *App) statusTroubles(ctx context.Context, sd Systemd, p *config.Project) {
	w, esc := a.Out, termtext.Escape
	if sd != nil {
		if statuses, err := sd.Units(ctx, view.InstanceNames(p)); err == nil {
			for _, line := range a.staleLines(p, statuses) {
				fmt.Fprintln(w, line)
			}
			// Why an instance gave up, and what to do.
			for i, u := range statuses {
				st, reason := explain.InstanceState(a.c.Explainer(), p, i, u)
				if st != view.StateErrored {
					continue
				}
				if e, ok := explain.Instance(ctx, a.c.Explainer(), p, i, u, reason, explain.Again(p, "start")); ok {
					fmt.Fprintf(w, "  %s: %s: %s\n  %s\n", units.InstanceID(p.Name, i), esc(string(e.Reason)), esc(e.Message), esc(e.FixLine()))
				}
			}
		}
	}
	// Files of the project that bm2 could not write (a full disk): what
	// its crash.logs and marks miss.
	if evs, err := history.WriteFailures(ctx, a.reader().Journal, a.scopeUID(), p.Name, a.c.Now()); err == nil {
		for _, line := range writeFailureLines(evs, a.c.Now()) {
			fmt.Fprintln(w, line)
		}
	}
	// What keeps the next start from working.
	found, _ := explain.PreflightDefinite(ctx, a.c.Explainer(), p, "")
	for _, e := range found {
		e.Fix = strings.ReplaceAll(e.Fix, "`bm2 serve`", "`bm2 start "+p.Name+"`")
		fmt.Fprintf(w, "  problem: %s: %s\n  %s\n", esc(string(e.Reason)), esc(e.Message), esc(e.FixLine()))
	}
}

// scheduleLines are status's lines about a project's restart schedule,
// from its timer's and its service's states (st; nil without systemd):
//
//	restart schedule: Sun 04:00, next 2026-12-06 04:00:00 UTC (bm2-api-restart.timer)
//
// and, while a scheduled reload runs or when the last one failed, a line
// that says so and where its output is.
func scheduleLines(p *config.Project, st []UnitStatus, journalUnit string) []string {
	timer, service := units.RestartTimer(p.Name), units.RestartService(p.Name)
	line := "restart schedule: " + p.RestartSchedule
	switch {
	case len(st) != 2:
		line += ", next run unknown (systemd not reachable)"
	case st[0].LoadState != "loaded":
		line += ", not loaded by systemd yet (`bm2 serve` or daemon-reload loads it)"
	case st[0].ActiveState != "active":
		line += fmt.Sprintf(", timer %s: it runs while %s is active (`bm2 start %s`)", st[0].ActiveState, units.Target(p.Name), p.Name)
	case st[0].NextElapse.IsZero():
		line += ", next never (the schedule does not come again)"
	default:
		line += ", next " + st[0].NextElapse.Local().Format(timeLayout+" MST")
	}
	out := []string{line + " (" + timer + ")"}
	if len(st) != 2 {
		return out
	}
	switch u := st[1]; u.ActiveState {
	case "activating":
		out = append(out, fmt.Sprintf("a scheduled reload is running: `%s %s -f` follows it", journalUnit, service))
	case "failed":
		how, at := control.ExitText(u), ""
		if how != "" {
			how = " (" + how + ")"
		}
		if !u.InactiveEnter.IsZero() {
			at = " at " + u.InactiveEnter.Local().Format(timeLayout+" MST")
		}
		out = append(out, fmt.Sprintf("the last scheduled reload failed%s%s: `%s %s` says why", how, at, journalUnit, service))
	}
	return out
}

// writeFailureLines are status's lines for a project's state_write_failed
// events (evs, oldest first; now says which are of today): one per file,
// the newest, with how many times, in the order of their last failure:
//
//	! /var/log/bm2/api/api-0.crash.log could not be written (ENOSPC, no space left on device) at 12:03:04, 3 times since 11:58:10
func writeFailureLines(evs []journal.Event, now time.Time) []string {
	type file struct {
		first, last journal.Event
		n           int
	}
	byPath := map[string]*file{}
	var order []*file
	for _, ev := range evs {
		if ev.Kind != journal.StateWriteFailed || ev.Path == "" {
			continue
		}
		f := byPath[ev.Path]
		if f == nil {
			f = &file{first: ev}
			byPath[ev.Path] = f
		}
		f.last = ev
		f.n++
		order = slices.DeleteFunc(order, func(o *file) bool { return o == f })
		order = append(order, f)
	}
	at := func(t time.Time) string {
		t, today := t.Local(), now.Local()
		if t.YearDay() == today.YearDay() && t.Year() == today.Year() {
			return t.Format("15:04:05")
		}
		return t.Format(timeLayout)
	}
	esc := termtext.Escape
	out := make([]string, 0, len(order))
	for _, f := range order {
		ev := f.last
		why := ""
		switch {
		case ev.Errno != "":
			why = " (" + ev.Errno + ", " + journal.ErrnoText(ev.Errno) + ")"
		case ev.Detail != "":
			why = " (" + ev.Detail + ")"
		}
		line := fmt.Sprintf("  ! %s could not be written%s at %s", esc(ev.Path), esc(why), at(ev.Time))
		if f.n > 1 {
			line += fmt.Sprintf(", %d times since %s", f.n, at(f.first.Time))
		}
		out = append(out, line)
	}
	return out
}

// journalLine is status's line about the project's journal: how far back
// its entries go, and what the journal takes in all, said to be that,
// since journald keeps no size per project:
//
//	journal: api's entries since 2026-11-30 04:00:00; all journal files take 1.1 GiB (journalctl --disk-usage; journald keeps no size per project)
//
// A journal this user cannot read is a note, not an error.
func journalLine(name string, u history.Use, user bool) string {
	switch {
	case errors.Is(u.Err, journal.ErrRestricted):
		return "journal: not readable as this user (" + journal.RestrictedHint + ")"
	case errors.Is(u.Err, journal.ErrUserVolatile):
		return "journal: not readable as you: this host keeps its journal in memory only, and your services' entries are in the system journal (`bm2 logs " + name + "` says what to do)"
	case u.Err != nil:
		return "journal: not read (" + termtext.Escape(wording.OneLine(u.Err)) + ")"
	}
	line := "journal: no entries of " + name
	if !u.Oldest.IsZero() {
		line = "journal: " + name + "'s entries since " + u.Oldest.Local().Format(timeLayout)
	}
	if u.Total >= 0 {
		if user {
			line += "; your journal files take " + iecBytes(u.Total) + " (journalctl --user --disk-usage; journald keeps no size per project)"
		} else {
			line += "; all journal files take " + iecBytes(u.Total) + " (journalctl --disk-usage; journald keeps no size per project)"
		}
	}
	return line
}

// iecBytes renders a size in bytes with binary units, one decimal:
// "512 B", "24.0 MiB", "1.1 GiB".
func iecBytes(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v := float64(n)
	unit := ""
	for _, u := range []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"} {
		v /= 1024
		unit = u
		if v < 1024 {
			break
		}
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// needsText is the units a project needs, each with the key that names it
// and its state in systemd:
// "postgresql.service (wants) active, redis-server.service (requires) inactive".
// A unit systemd has no file for says so ("not-found", "masked"); without
// systemd, the states are unknown.
func needsText(ctx context.Context, sd Systemd, needs []config.Need) string {
	names := make([]string, len(needs))
	for i, n := range needs {
		names[i] = n.Unit
	}
	var statuses []UnitStatus
	if sd != nil {
		statuses, _ = sd.Units(ctx, names)
	}
	parts := make([]string, len(needs))
	for i, n := range needs {
		state := view.StateUnknown
		if len(statuses) == len(needs) {
			u := statuses[i]
			switch {
			case u.LoadState != "" && u.LoadState != "loaded":
				state = u.LoadState
			case u.ActiveState != "":
				state = u.ActiveState
			}
		}
		parts[i] = fmt.Sprintf("%s (%s) %s", n.Unit, n.How, state)
	}
	return strings.Join(parts, ", ")
}

// userText names who a project runs as.
func (a *App) userText(p *config.Project) string {
	if a.c.Scope().IsUser() {
		return a.c.Scope().Layout().Name + " (user scope: every project runs as you)"
	}
	if p.OwnAccount() {
		return p.Account() + " (its own account)"
	}
	return p.User
}

// staleLines says which running instances run with settings older than
// their unit (view.StaleOf).
func (a *App) staleLines(p *config.Project, statuses []UnitStatus) []string {
	st := view.StaleOf(p, statuses)
	var out []string
	if len(st.Reload) > 0 {
		out = append(out, fmt.Sprintf("  %s: unit files changed since systemd read them: `%s daemon-reload`, then `bm2 reload %s`",
			strings.Join(st.Reload, ", "), a.c.Scope().Layout().Systemctl, p.Name))
	}
	if len(st.Restart) > 0 {
		why := fmt.Sprintf("%s changed %s", st.File, st.At.Local().Format(timeLayout))
		out = append(out, fmt.Sprintf("  %s: running with settings older than the unit (%s): needs a restart, `bm2 reload %s` applies them",
			strings.Join(st.Restart, ", "), why, p.Name))
	}
	return out
}

// scopeUID is the UID of user scope, "" in system scope: whose journal
// entries a query of user scope reads.
func (a *App) scopeUID() string {
	if !a.c.Scope().IsUser() {
		return ""
	}
	return strconv.Itoa(a.c.Scope().Layout().UID)
}
