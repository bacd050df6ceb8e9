package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// maxReason is how much of a reason the table shows; --json has it all.
const maxReason = 40

// list is `bm2 list [name...]`.
func (a *App) list(ctx context.Context, names []string, asJSON bool) error {
	rd := a.reader()
	entries, found, err := rd.Select(names)
	if err != nil {
		return err
	}
	rows, warnings := view.Rows(rd.Snapshot(ctx, entries, func(w string) { fmt.Fprintf(a.Err, "bm2: warning: %s\n", w) }))
	for i := range rows {
		rows[i].Scope = string(a.c.Scope().Layout().Kind)
	}

	if asJSON {
		if rows == nil {
			rows = []view.Row{}
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
		where := strings.Join(a.c.Projects().SearchPath, ":")
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

// cells is a row as the table shows it: "-" for what is not known.
type cells struct {
	id, pid, port, reuseport, health, restarts, uptime, mem, cpu string
}

// cellsOf is a row as the table shows it.
func cellsOf(r view.Row) cells {
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
func (a *App) table(rows []view.Row) error {
	tw := tabwriter.NewWriter(a.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PROJECT\tID\tMODE\tSTATE\tREASON\tPID\tPORT\tREUSEPORT\tHEALTH\tRESTARTS\tUPTIME\tMEM\tCPU")
	for _, r := range rows {
		c := cellsOf(r)
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
