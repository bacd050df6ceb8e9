package top

import (
	"strings"

	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
)

// column is one column of the table.
type column struct {
	title string
	// drop is the column's place in the order columns are dropped in
	// when the terminal is too narrow: the highest goes first; 0 is
	// never dropped.
	drop int
	// right aligns the cells to the right (figures).
	right bool
	// max caps the column's width (0: none); longer cells are cut with
	// "…" (a project's whole name is in the prompt and the log pane's
	// title, a whole reason in bm2 list --json).
	max int
	// flex lets the column take what width is left, down to its
	// title's, rather than be dropped.
	flex bool
	cell func(instance) string
}

// columns is the table, in the order shown. A column is one entry, its
// cell read from the frame (HEALTH: the Snapshot's view of the instance,
// as bm2 list's).
var columns = []column{
	{title: "PROJECT", max: 24, cell: cellProject},
	{title: "ID", cell: cellID},
	{title: "STATE", cell: cellState},
	{title: "REUSEPORT", drop: 3, cell: cellVerdict},
	{title: "HEALTH", drop: 4, cell: cellHealth},
	{title: "CPU%", drop: 1, right: true, cell: cellCPU},
	{title: "MEM", drop: 2, right: true, cell: cellMem},
	{title: "CONNS", drop: 6, right: true, cell: cellConns},
	{title: "QUEUE", drop: 7, right: true, cell: cellQueue},
	{title: "RESTARTS", drop: 8, right: true, cell: cellRestarts},
	{title: "UPTIME", drop: 5, right: true, cell: cellUptime},
	{title: "REASON", drop: 9, max: 40, flex: true, cell: cellReason},
}

const (
	gap    = 2 // spaces between columns
	marker = 2 // the selection mark before each row: "> " or "  "
	// minName is the narrowest the PROJECT column is cut to when even
	// the columns that stay do not fit: its title's width.
	minName = len("PROJECT")
)

// layout is which columns are shown, and how wide each is.
type layout struct {
	shown  []int // indexes into columns, in order
	widths []int // by index into columns; 0 for a dropped column
}

// layoutFor fits the columns to width: each as wide as its widest cell
// (or title), dropping columns in their drop order while the line is too
// wide, then cutting the flexible one and the project names. A terminal
// too narrow even for that gets lines cut at its edge (fit).
func layoutFor(rs []row, width int) layout {
	natural := make([]int, len(columns))
	for c, col := range columns {
		natural[c] = lipgloss.Width(col.title)
		for _, r := range rs {
			natural[c] = max(natural[c], lipgloss.Width(r.cells[c]))
		}
		if col.max > 0 {
			natural[c] = min(natural[c], col.max)
		}
	}
	kept := make([]bool, len(columns))
	for c := range kept {
		kept[c] = true
	}
	total := func() int {
		t := marker
		n := 0
		for c, k := range kept {
			if k {
				t += natural[c]
				n++
			}
		}
		return t + gap*max(n-1, 0)
	}
	for total() > width {
		// A flexible column that still fits at its title's width takes
		// the rest of the line.
		if c, ok := flexFit(kept, natural, total(), width); ok {
			natural[c] -= total() - width
			break
		}
		worst := -1
		for c, k := range kept {
			if k && columns[c].drop > 0 && (worst < 0 || columns[c].drop > columns[worst].drop) {
				worst = c
			}
		}
		if worst < 0 {
			break
		}
		kept[worst] = false
	}
	if over := total() - width; over > 0 {
		natural[0] = max(natural[0]-over, min(natural[0], minName))
	}
	l := layout{widths: make([]int, len(columns))}
	for c, k := range kept {
		if k {
			l.shown = append(l.shown, c)
			l.widths[c] = natural[c]
		}
	}
	return l
}

// flexFit finds a kept flexible column that can shrink enough for the
// line to fit, not narrower than its title.
func flexFit(kept []bool, natural []int, total, width int) (int, bool) {
	for c, k := range kept {
		if k && columns[c].flex && natural[c]-(total-width) >= lipgloss.Width(columns[c].title) {
			return c, true
		}
	}
	return 0, false
}

// line lays out cells (one per column) in l's columns.
func (l layout) line(cells []string) string {
	var b strings.Builder
	for n, c := range l.shown {
		if n > 0 {
			b.WriteString(strings.Repeat(" ", gap))
		}
		w := l.widths[c]
		s := cut(cells[c], w)
		pad := strings.Repeat(" ", max(w-lipgloss.Width(s), 0))
		if columns[c].right {
			b.WriteString(pad + s)
		} else if n == len(l.shown)-1 {
			b.WriteString(s) // no trailing blanks
		} else {
			b.WriteString(s + pad)
		}
	}
	return b.String()
}

// header is the columns' titles laid out.
func (l layout) header() string {
	titles := make([]string, len(columns))
	for c, col := range columns {
		titles[c] = col.title
	}
	return l.line(titles)
}

// cut shortens s to w columns, ending in "…" when it was longer.
func cut(s string, w int) string {
	if lipgloss.Width(s) <= w {
		return s
	}
	if w <= 0 {
		return ""
	}
	return ansi.Truncate(s, w, "…")
}

// fit cuts a line (styled or not) at the terminal's edge.
func fit(s string, width int) string {
	if lipgloss.Width(s) <= width {
		return s
	}
	return ansi.Truncate(s, max(width, 0), "")
}
