package top

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/lipgloss"

	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/view"
)

// styles are the view's looks, made by the terminal's renderer (colours
// only where it has them). Nothing depends on them to be understood: the
// selected rows carry a mark, states their words.
type styles struct {
	header, colhead, selected, help, prompt, failed lipgloss.Style
	states                                          map[string]lipgloss.Style
}

func newStyles(r *lipgloss.Renderer) styles {
	color := func(c string) lipgloss.Style { return r.NewStyle().Foreground(lipgloss.Color(c)) }
	return styles{
		header:   r.NewStyle().Bold(true),
		colhead:  r.NewStyle().Bold(true),
		selected: r.NewStyle().Reverse(true),
		help:     r.NewStyle().Faint(true),
		prompt:   color("3").Bold(true),
		failed:   color("1"),
		states: map[string]lipgloss.Style{
			view.StateOnline:    color("2"),
			view.StateLaunching: color("3"),
			view.StateWaiting:   color("3"),
			view.StateStopping:  color("3"),
			view.StateErrored:   color("1").Bold(true),
			view.StateInvalid:   color("1").Bold(true),
			view.StateStopped:   r.NewStyle().Faint(true),
			view.StateUnknown:   r.NewStyle().Faint(true),
		},
	}
}

const helpLine = "q quit  ↑↓ select  r reload  l logs"

// View renders the Model: a pure function of its fields.
func (m Model) View() string {
	var lines []string
	if m.mode == modeLogs {
		lines = m.logView()
	} else {
		lines = m.tableView()
	}
	if len(lines) > m.height && m.height > 0 {
		lines = lines[:m.height]
	}
	for i, l := range lines {
		lines[i] = fit(l, m.width)
	}
	return strings.Join(lines, "\n")
}

// tableView is the table's lines: the header, the columns' titles, the
// rows in view, the first warning, the status line and the keys.
func (m Model) tableView() []string {
	head := "bm2 top"
	if m.cfg.Title != "" {
		head += " · " + m.cfg.Title
	}
	if m.cur != nil {
		head += " · " + m.cur.Time.Local().Format("15:04:05")
	}
	rs := rows(m.cur, m.prev)
	body := m.bodyRows()
	off := m.window()
	if len(rs) > body {
		head += fmt.Sprintf(" · rows %d-%d of %d", off+1, min(off+body, len(rs)), len(rs))
	}
	lines := []string{m.styles.header.Render(fit(head, m.width))}
	switch {
	case m.cur == nil:
		lines = append(lines, "", "reading the state of the projects…")
	case len(rs) == 0:
		lines = append(lines, "", "no projects")
	default:
		l := layoutFor(rs, m.width)
		lines = append(lines, m.styles.colhead.Render(fit(strings.Repeat(" ", marker)+l.header(), m.width)))
		for _, r := range rs[off:min(off+body, len(rs))] {
			lines = append(lines, m.rowLine(l, r))
		}
	}
	for len(lines) < 2+body && m.height > 0 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer()...)
	return lines
}

// rowLine is one row laid out: the selected project's rows marked and
// highlighted, the others with their state's colour.
func (m Model) rowLine(l layout, r row) string {
	if r.project == m.selIdx {
		return m.styles.selected.Render(fit("> "+l.line(r.cells), m.width))
	}
	cells := append([]string(nil), r.cells...)
	const state = 2 // the STATE column
	if st, ok := m.styles.states[r.state]; ok && l.widths[state] > 0 {
		// Cut before it is styled; the layout pads it by its visible
		// width.
		cells[state] = st.Render(cut(cells[state], l.widths[state]))
	}
	return fit("  "+l.line(cells), m.width)
}

// footer is the lines under the table: the first warning, the status line
// (the reload prompt, or what the last action did), the keys.
func (m Model) footer() []string {
	var out []string
	if ws := warnings(m.cur); len(ws) > 0 {
		w := "warning: " + ws[0]
		if len(ws) > 1 {
			w += fmt.Sprintf(" (%d more)", len(ws)-1)
		}
		out = append(out, m.styles.failed.Render(fit(w, m.width)))
	}
	switch {
	case m.mode == modeConfirm:
		out = append(out, m.styles.prompt.Render(fit("reload "+termtext.Escape(m.confirm)+"? [y/N]", m.width)))
	case m.status != "" && m.failed:
		out = append(out, m.styles.failed.Render(fit(m.status, m.width)))
	case m.status != "":
		out = append(out, fit(m.status, m.width))
	}
	return append(out, m.styles.help.Render(fit(helpLine, m.width)))
}

// bodyRows is how many rows of the table fit under the header and the
// columns' titles, over the footer.
func (m Model) bodyRows() int {
	return max(m.height-2-len(m.footer()), 1)
}

// window is the first row shown: the offset kept from the last view,
// moved as little as puts the selected project's rows in view (its first
// ones, when they are more than fit).
func (m Model) window() int {
	first, n, total := m.span()
	body := m.bodyRows()
	off := m.offset
	switch {
	case n >= body || first < off:
		off = first
	case first+n > off+body:
		off = first + n - body
	}
	return min(max(off, 0), max(total-body, 0))
}

// span is where the selected project's rows are among the table's: its
// first row, how many, and how many rows there are.
func (m Model) span() (first, n, total int) {
	if m.cur == nil {
		return 0, 0, 0
	}
	for p, ps := range m.cur.Snapshot.Projects {
		k := 1
		if ps.Entry.Err == nil && ps.Entry.Project != nil {
			k = len(ps.IDs)
		}
		if p == m.selIdx {
			first, n = total, k
		}
		total += k
	}
	return first, n, total
}

// logView is the log pane: a title, then the last lines that fit (or the
// ones scrolled back to).
func (m Model) logView() []string {
	title := fmt.Sprintf("logs of %s, the last %d lines · esc, l or q: back · ↑↓ scroll", termtext.Escape(m.logs.name), logLines)
	lines := []string{m.styles.header.Render(fit(title, m.width))}
	switch {
	case m.logs.loading:
		lines = append(lines, "reading the journal…")
	case m.logs.err != "":
		lines = append(lines, m.styles.failed.Render(fit("bm2 logs "+termtext.Escape(m.logs.name)+": "+m.logs.err, m.width)))
	case len(m.logs.lines) == 0:
		lines = append(lines, "no log lines")
	}
	n := m.logRows() - (len(lines) - 1)
	end := max(len(m.logs.lines)-m.logs.scroll, 0)
	for _, l := range m.logs.lines[max(end-n, 0):end] {
		lines = append(lines, fit(l, m.width))
	}
	return lines
}

// logRows is how many log lines the pane shows at once.
func (m Model) logRows() int { return max(m.height-1, 1) }
