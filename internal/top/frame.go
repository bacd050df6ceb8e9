package top

import (
	"fmt"
	"time"

	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/units"
)

// Frame is one reading of the host: a Snapshot and its Figures (one
// InstanceFigures per instance of the Snapshot, in its order), taken at
// Time, the wall clock the CPU column divides by.
type Frame struct {
	Time     time.Time
	Snapshot view.Snapshot
	Figures  view.Figures
}

// instance is what a cell is rendered from: the k-th instance of the p-th
// project of the current frame (k is -1 for an invalid project's row),
// and the frame before it (nil when there is none).
type instance struct {
	cur, prev *Frame
	p, k      int
	view      view.InstanceView
	fig       view.InstanceFigures
}

// row is one row of the table: its project's index in the frame, its
// cells by column (escaped, one line each) and its state, for its style.
type row struct {
	project int
	cells   []string
	state   string
}

// rows renders the current frame as the table's rows, every column's
// cell included (the layout drops columns afterwards).
func rows(cur, prev *Frame) []row {
	if cur == nil {
		return nil
	}
	var out []row
	for p, ps := range cur.Snapshot.Projects {
		e := ps.Entry
		if e.Err != nil || e.Project == nil {
			in := instance{cur: cur, prev: prev, p: p, k: -1, view: view.InstanceView{
				State: view.StateInvalid, Reason: view.InvalidReason(e),
			}, fig: view.UnknownFigures}
			out = append(out, render(in))
			continue
		}
		for k := range ps.IDs {
			in := instance{cur: cur, prev: prev, p: p, k: k, view: cur.Snapshot.Instance(p, k), fig: figuresOf(cur.Figures, p, k)}
			out = append(out, render(in))
		}
	}
	return out
}

func render(in instance) row {
	r := row{project: in.p, state: in.view.State, cells: make([]string, len(columns))}
	for c, col := range columns {
		r.cells[c] = col.cell(in)
	}
	return r
}

// figuresOf is the figures of the k-th instance of the p-th project, or
// UnknownFigures when the reading has none for it.
func figuresOf(f view.Figures, p, k int) view.InstanceFigures {
	if p < len(f.Projects) && k >= 0 && k < len(f.Projects[p]) {
		return f.Projects[p][k]
	}
	return view.UnknownFigures
}

// name is the project's name.
func (in instance) name() string { return in.cur.Snapshot.Projects[in.p].Entry.Name }

// id is the instance's ID: its number, or units.Surge.
func (in instance) id() (int, bool) {
	if in.k < 0 {
		return 0, false
	}
	return in.cur.Snapshot.Projects[in.p].IDs[in.k], true
}

// status is the instance's unit, nil when systemd did not say.
func (in instance) status() *view.UnitStatus { return in.view.Status }

// cpuPercent is the CPU the instance used between the previous frame and
// this one, over the wall clock between them (100 is one CPU); false when
// that is not known: no previous frame, a counter systemd does not know,
// or another run (the counter began again).
func (in instance) cpuPercent() (float64, bool) {
	u := in.status()
	id, ok := in.id()
	if u == nil || !ok || u.CPUUsageNSec == view.Unknown || in.prev == nil {
		return 0, false
	}
	dt := in.cur.Time.Sub(in.prev.Time)
	if dt <= 0 {
		return 0, false
	}
	before := previous(in.prev.Snapshot, in.name(), id)
	if before == nil || before.CPUUsageNSec == view.Unknown || before.CPUUsageNSec > u.CPUUsageNSec ||
		before.InvocationID != u.InvocationID {
		return 0, false
	}
	return float64(u.CPUUsageNSec-before.CPUUsageNSec) / float64(dt.Nanoseconds()) * 100, true
}

// previous finds instance id of project name in an earlier snapshot: by
// name and ID, not by position, since projects come and go between frames
// and a surge instance joins and leaves.
func previous(s view.Snapshot, name string, id int) *view.UnitStatus {
	for _, ps := range s.Projects {
		if ps.Entry.Name != name || ps.Statuses == nil {
			continue
		}
		for k, i := range ps.IDs {
			if i == id && k < len(ps.Statuses) {
				u := ps.Statuses[k]
				return &u
			}
		}
	}
	return nil
}

// The cells. Each is text on one line, escaped when it is not bm2's own.

func cellProject(in instance) string { return termtext.Escape(in.name()) }

func cellID(in instance) string {
	id, ok := in.id()
	switch {
	case !ok:
		return "-"
	case id == units.Surge:
		return units.SurgeName
	}
	return fmt.Sprint(id)
}

func cellState(in instance) string { return termtext.Escape(in.view.State) }

func cellVerdict(in instance) string { return orDash(termtext.Escape(in.view.Verdict)) }

func cellHealth(in instance) string {
	if in.view.Health == "" {
		return "-"
	}
	var failures, limit *int
	if e := in.view.HealthEntry; e != nil {
		failures, limit = &e.Failures, &e.Limit
	}
	return termtext.Escape(view.HealthCell(in.view.Health, failures, limit))
}

func cellCPU(in instance) string {
	if pct, ok := in.cpuPercent(); ok {
		return fmt.Sprintf("%.1f%%", pct)
	}
	return "-"
}

func cellMem(in instance) string {
	if u := in.status(); u != nil {
		return view.FormatMem(u.MemoryCurrent)
	}
	return "-"
}

func cellConns(in instance) string { return count(in.fig.Connections) }

func cellQueue(in instance) string {
	if in.fig.AcceptQueued < 0 && in.fig.AcceptLimit < 0 {
		return "-"
	}
	return count(in.fig.AcceptQueued) + "/" + count(in.fig.AcceptLimit)
}

func cellRestarts(in instance) string {
	if u := in.status(); u != nil {
		return fmt.Sprint(u.NRestarts)
	}
	return "-"
}

func cellUptime(in instance) string {
	u := in.status()
	if u == nil || in.view.State != view.StateOnline || u.ActiveEnter.IsZero() {
		return "-"
	}
	return wording.FormatUptime(in.cur.Snapshot.Now.Sub(u.ActiveEnter))
}

func cellReason(in instance) string {
	r := in.view.Reason
	if in.view.Holder != "" {
		r += ": " + in.view.Holder
	}
	return orDash(termtext.Escape(r))
}

// count is a figure of Figures: -1 is unknown.
func count(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// warnings are what the frame could not read, one line each, escaped.
func warnings(f *Frame) []string {
	if f == nil {
		return nil
	}
	var out []string
	out = append(out, f.Snapshot.Warnings...)
	for _, ps := range f.Snapshot.Projects {
		if ps.Warning != "" {
			out = append(out, ps.Warning)
		}
	}
	out = append(out, f.Figures.Warnings...)
	for i, w := range out {
		out[i] = termtext.Escape(w)
	}
	return out
}
