package top

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"
	"github.com/muesli/termenv"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// online is a running instance's unit: cpu nanoseconds used so far.
func online(inv string, cpu uint64) view.UnitStatus {
	return view.UnitStatus{ActiveState: "active", SubState: "running", MainPID: 100, InvocationID: inv,
		ActiveEnter: t0.Add(-90 * time.Second), NRestarts: 2, MemoryCurrent: 4 << 20, CPUUsageNSec: cpu}
}

func project(name string, mode config.ExecMode, n int) *config.Project {
	return &config.Project{Name: name, Mode: mode, Port: 3000, Instances: n, MaxRestarts: 10}
}

// frame is a reading at t: api (cluster, 2 instances: api-0 has used
// cpu0 ns, api-1 cpu1 ns in run inv1), web (fork, failed), a project
// file that is invalid.
func frame(t time.Time, cpu0, cpu1 uint64, inv1 string) Frame {
	snap := view.Snapshot{
		Now: t,
		Projects: []view.ProjectSnapshot{
			{Entry: config.Entry{Name: "api", Project: project("api", config.Cluster, 2)}, IDs: []int{0, 1},
				Statuses: []view.UnitStatus{online("i0", cpu0), online(inv1, cpu1)}},
			{Entry: config.Entry{Name: "web", Project: project("web", config.Fork, 1)}, IDs: []int{0},
				Statuses: []view.UnitStatus{{ActiveState: "failed", SubState: "failed", Result: "exit-code",
					MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown}}},
			{Entry: config.Entry{Name: "bad", Path: "/etc/bm2/bad.toml", Err: errors.New("/etc/bm2/bad.toml:3: unknown key \"prot\"")}},
		},
		Events:     []journal.Event{{Kind: journal.ReuseportConfirmed, Instance: "api-0", Invocation: "i0", Time: t0.Add(-80 * time.Second)}},
		EventsRead: true,
	}
	figs := view.Figures{Projects: [][]view.InstanceFigures{
		{{Connections: 7, AcceptQueued: 3, AcceptLimit: 128}, view.UnknownFigures},
		{view.UnknownFigures},
		nil,
	}}
	return Frame{Time: t, Snapshot: snap, Figures: figs}
}

type env struct {
	frames  atomic.Int32
	reloads atomic.Int32
	reload  func(name string) (string, error)
	logs    func(name string, n int) ([]string, error)
}

func newModel(t *testing.T, e *env, r *lipgloss.Renderer) Model {
	t.Helper()
	return New(context.Background(), Config{
		Frames: func(context.Context) Frame {
			e.frames.Add(1)
			return frame(t0, 1e9, 1e9, "i1")
		},
		Reload: func(_ context.Context, name string) (string, error) {
			e.reloads.Add(1)
			if e.reload == nil {
				return name + " reloaded: 2 instances in 2.0s, online and confirmed\n", nil
			}
			return e.reload(name)
		},
		Logs: func(_ context.Context, name string, n int) ([]string, error) {
			if e.logs == nil {
				return nil, nil
			}
			return e.logs(name, n)
		},
		Title:    "system scope",
		Interval: time.Millisecond,
		Renderer: r,
	})
}

// update feeds msgs to m in order and returns the model and the last
// command.
func update(t *testing.T, m Model, msgs ...tea.Msg) (Model, tea.Cmd) {
	t.Helper()
	var cmd tea.Cmd
	for _, msg := range msgs {
		var next tea.Model
		next, cmd = m.Update(msg)
		m = next.(Model)
	}
	return m, cmd
}

func key(s string) tea.KeyMsg {
	switch s {
	case "up":
		return tea.KeyMsg{Type: tea.KeyUp}
	case "down":
		return tea.KeyMsg{Type: tea.KeyDown}
	case "esc":
		return tea.KeyMsg{Type: tea.KeyEsc}
	case "ctrl+c":
		return tea.KeyMsg{Type: tea.KeyCtrlC}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)}
}

// run runs a command and the commands of a batch, and returns the
// messages they send.
func run(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, run(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

func size(w, h int) tea.WindowSizeMsg { return tea.WindowSizeMsg{Width: w, Height: h} }

// rowOf is the view's line for an instance ("api 0"), or "".
func rowOf(view, project, id string) string {
	for _, l := range strings.Split(view, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, ">"))
		if len(f) >= 2 && f[0] == project && f[1] == id {
			return l
		}
	}
	return ""
}

// field is the cell of column title in line, by the header's words: the
// tests' cells hold no blanks.
func field(t *testing.T, view, line, title string) string {
	t.Helper()
	lines := strings.Split(view, "\n")
	head := strings.Fields(lines[1])
	cells := strings.Fields(strings.TrimPrefix(line, ">"))
	for i, h := range head {
		if h == title {
			if i >= len(cells) {
				t.Fatalf("no %s cell in %q", title, line)
			}
			return cells[i]
		}
	}
	t.Fatalf("no %s column in %q", title, lines[1])
	return ""
}

// The figures come from the frames, and the CPU column from two of them:
// what the instance used between them over the wall clock between them.
func TestFiguresFromFrames(t *testing.T) {
	e := &env{}
	m, _ := update(t, newModel(t, e, nil), size(160, 30), frameMsg(frame(t0, 1e9, 5e9, "i1")))
	v := m.View()
	api0, api1, web0 := rowOf(v, "api", "0"), rowOf(v, "api", "1"), rowOf(v, "web", "0")
	if api0 == "" || api1 == "" || web0 == "" || !strings.Contains(v, "bad") {
		t.Fatalf("rows missing:\n%s", v)
	}
	for title, want := range map[string]string{
		"STATE": "online", "REUSEPORT": "confirmed", "CPU%": "-", "MEM": "4.0M", "CONNS": "7", "QUEUE": "3/128",
		"RESTARTS": "2", "UPTIME": "1m30s",
	} {
		if got := field(t, v, api0, title); got != want {
			t.Errorf("api-0 %s = %q, want %q (one frame: no CPU%% yet)\n%s", title, got, want, v)
		}
	}
	// Unknown figures are "-", never 0; a verdict still to come is pending.
	for title, want := range map[string]string{"CONNS": "-", "QUEUE": "-", "REUSEPORT": "pending"} {
		if got := field(t, v, api1, title); got != want {
			t.Errorf("api-1 %s = %q, want %q", title, got, want)
		}
	}
	for title, want := range map[string]string{"STATE": "errored", "REUSEPORT": "-", "MEM": "-", "CPU%": "-", "UPTIME": "-"} {
		if got := field(t, v, web0, title); got != want {
			t.Errorf("web-0 %s = %q, want %q", title, got, want)
		}
	}

	// Two seconds later api-0 has used one more second (50% of a CPU);
	// api-1 none (0.0%, known); then api-1 restarted (another run: its
	// counter began again, so no figure).
	m, _ = update(t, m, frameMsg(frame(t0.Add(2*time.Second), 2e9, 5e9, "i1")))
	v = m.View()
	if got := field(t, v, rowOf(v, "api", "0"), "CPU%"); got != "50.0%" {
		t.Errorf("api-0 CPU%% = %q, want 50.0%%\n%s", got, v)
	}
	if got := field(t, v, rowOf(v, "api", "1"), "CPU%"); got != "0.0%" {
		t.Errorf("api-1 CPU%% = %q, want 0.0%%", got)
	}
	m, _ = update(t, m, frameMsg(frame(t0.Add(3*time.Second), 2.25e9, 1e6, "i1-again")))
	v = m.View()
	if got := field(t, v, rowOf(v, "api", "0"), "CPU%"); got != "25.0%" {
		t.Errorf("api-0 CPU%% = %q, want 25.0%% (the last two frames)", got)
	}
	if got := field(t, v, rowOf(v, "api", "1"), "CPU%"); got != "-" {
		t.Errorf("api-1 CPU%% after a restart = %q, want -", got)
	}
}

// The instance's state and verdict are bm2 list's: control's view of the
// snapshot, whatever it decides.
func TestStateIsControlsView(t *testing.T) {
	f := frame(t0, 1e9, 1e9, "i1")
	f.Snapshot.Projects[0].Errored, f.Snapshot.Projects[0].Mark = true, "reuseport_missing"
	e := &env{}
	m, _ := update(t, newModel(t, e, nil), size(160, 30), frameMsg(f))
	v := m.View()
	for p := range f.Snapshot.Projects[:2] {
		for k, id := range f.Snapshot.Projects[p].IDs {
			want := f.Snapshot.Instance(p, k)
			line := rowOf(v, f.Snapshot.Projects[p].Entry.Name, fmt.Sprint(id))
			if got := field(t, v, line, "STATE"); got != want.State {
				t.Errorf("%d/%d state %q, want %q", p, k, got, want.State)
			}
			if got := field(t, v, line, "REUSEPORT"); got != orDash(want.Verdict) {
				t.Errorf("%d/%d verdict %q, want %q", p, k, got, want.Verdict)
			}
		}
	}
	if got := field(t, v, rowOf(v, "api", "0"), "STATE"); got != "errored" {
		t.Errorf("api-0 of an errored project: %q", got)
	}
}

// HEALTH is bm2 list's: control's word for the current run, with the
// count of an unhealthy one, "-" without a health check.
func TestHealthColumn(t *testing.T) {
	f := frame(t0, 1e9, 1e9, "i1")
	api := &f.Snapshot.Projects[0]
	api.Entry.Project.Health = config.Health{Path: "/healthz", Interval: 5 * time.Second, Timeout: 2 * time.Second, Failures: 3, Port: 3100}
	api.Health = &health.State{Project: "api", Instances: []health.Entry{
		{Instance: "api-0", Invocation: "i0", Status: health.Healthy, Limit: 3, Checked: t0.Add(-time.Second)},
		{Instance: "api-1", Invocation: "i1", Status: health.Unhealthy, Failures: 2, Limit: 3, Checked: t0.Add(-time.Second)},
	}}
	m, _ := update(t, newModel(t, &env{}, nil), size(160, 30), frameMsg(f))
	v := m.View()
	if got := field(t, v, rowOf(v, "api", "0"), "HEALTH"); got != "healthy" {
		t.Errorf("api-0 HEALTH %q\n%s", got, v)
	}
	if !strings.Contains(rowOf(v, "api", "1"), " unhealthy 2/3 ") {
		t.Errorf("api-1:\n%s", v)
	}
	if got := field(t, v, rowOf(v, "web", "0"), "HEALTH"); got != "-" {
		t.Errorf("web-0 HEALTH %q", got)
	}
}

func TestSelectionMoves(t *testing.T) {
	e := &env{}
	m, _ := update(t, newModel(t, e, nil), size(120, 30), frameMsg(frame(t0, 1e9, 1e9, "i1")))
	selected := func(m Model) []string {
		var out []string
		for _, l := range strings.Split(m.View(), "\n") {
			if strings.HasPrefix(l, "> ") {
				f := strings.Fields(l[2:])
				out = append(out, f[0]+"-"+f[1])
			}
		}
		return out
	}
	if got := strings.Join(selected(m), " "); got != "api-0 api-1" {
		t.Fatalf("selected at first: %q\n%s", got, m.View())
	}
	for _, c := range []struct{ key, want string }{
		{"down", "web-0"}, {"j", "bad--"}, {"down", "bad--"}, {"up", "web-0"}, {"k", "api-0 api-1"}, {"up", "api-0 api-1"},
	} {
		m, _ = update(t, m, key(c.key))
		if got := strings.Join(selected(m), " "); got != c.want {
			t.Errorf("after %s: selected %q, want %q", c.key, got, c.want)
		}
	}
	// The selection follows its project when the projects change.
	m, _ = update(t, m, key("down"))
	f := frame(t0.Add(time.Second), 1e9, 1e9, "i1")
	f.Snapshot.Projects = f.Snapshot.Projects[1:]
	m, _ = update(t, m, frameMsg(f))
	if got := strings.Join(selected(m), " "); got != "web-0" {
		t.Errorf("web selected, api gone: %q", got)
	}
}

// r asks first; only y reloads, once, and the outcome (escaped) is on the
// status line, not the reload's output under the view.
func TestReloadAsksFirst(t *testing.T) {
	e := &env{}
	m, _ := update(t, newModel(t, e, nil), size(120, 30), frameMsg(frame(t0, 1e9, 1e9, "i1")), key("down"))
	m, cmd := update(t, m, key("r"))
	if cmd != nil || !strings.Contains(m.View(), "reload web? [y/N]") {
		t.Fatalf("r: %v\n%s", cmd, m.View())
	}
	m, cmd = update(t, m, key("n"))
	run(cmd)
	if e.reloads.Load() != 0 || strings.Contains(m.View(), "[y/N]") || !strings.Contains(m.View(), "not reloaded") {
		t.Fatalf("r n: %d reloads\n%s", e.reloads.Load(), m.View())
	}
	m, cmd = update(t, m, key("r"), key("x"))
	run(cmd)
	if e.reloads.Load() != 0 {
		t.Fatalf("r x reloaded")
	}

	e.reload = func(name string) (string, error) {
		return "reloading web: 1 x fork on port 3000, one instance\nweb-0 restarting… online\n\x1b[2Jweb reloaded: 1 instance in 1.0s\n", nil
	}
	m, cmd = update(t, m, key("r"), key("y"))
	if !strings.Contains(m.View(), "reloading web…") {
		t.Errorf("no word of the reload running:\n%s", m.View())
	}
	msgs := run(cmd)
	if e.reloads.Load() != 1 || len(msgs) != 1 {
		t.Fatalf("r y: %d reloads, %d messages", e.reloads.Load(), len(msgs))
	}
	// Another r while it runs does not ask.
	if m2, _ := update(t, m, key("r")); strings.Contains(m2.View(), "[y/N]") {
		t.Errorf("asked for a second reload while one runs")
	}
	m, _ = update(t, m, msgs[0])
	v := m.View()
	if !strings.Contains(v, `reload web: \x1b[2Jweb reloaded: 1 instance in 1.0s`) || strings.Contains(v, "restarting") {
		t.Errorf("status line after the reload:\n%s", v)
	}
	if strings.ContainsRune(v, 0x1b) {
		t.Errorf("a raw ESC in the view: %q", v)
	}

	e.reload = func(string) (string, error) {
		return "", errors.New("project web is not running: there is nothing to reload\nmore")
	}
	m, cmd = update(t, m, key("r"), key("y"))
	m, _ = update(t, m, run(cmd)...)
	if v := m.View(); !strings.Contains(v, "reload web failed: project web is not running: there is nothing to reload") || strings.Contains(v, "more") {
		t.Errorf("status line after a failed reload:\n%s", v)
	}
	if e.reloads.Load() != 2 {
		t.Errorf("%d reloads, want 2", e.reloads.Load())
	}
}

// l shows the selected project's last log lines, escaped: an app's escape
// sequences are shown, never sent to the terminal.
func TestLogsPaneEscapes(t *testing.T) {
	e := &env{logs: func(name string, n int) ([]string, error) {
		return []string{
			fmt.Sprintf("%s-0 | asked for %d", name, n),
			"api-0 | \x1b[2J\x1b]52;c;aGk=\x07cleared\rforged",
			"api-1 | two\nlines \u202e\u009b\x9b",
		}, nil
	}}
	m, _ := update(t, newModel(t, e, nil), size(100, 20), frameMsg(frame(t0, 1e9, 1e9, "i1")))
	m, cmd := update(t, m, key("l"))
	if v := m.View(); !strings.Contains(v, "logs of api") || !strings.Contains(v, "reading the journal") {
		t.Fatalf("l:\n%s", v)
	}
	m, _ = update(t, m, run(cmd)...)
	v := m.View()
	for _, want := range []string{
		"api-0 | asked for 200",
		`api-0 | \x1b[2J\x1b]52;c;aGk=\x07cleared\rforged`,
		"api-1 | two", `lines \u202e\u009b\x9b`,
	} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in the pane:\n%s", want, v)
		}
	}
	for _, c := range []rune{0x1b, 0x07, '\r', 0x9b, 0x202e} {
		if strings.ContainsRune(v, c) {
			t.Errorf("%U reaches the terminal: %q", c, v)
		}
	}
	if strings.Contains(v, "\x9b") {
		t.Errorf("a raw 0x9b byte reaches the terminal: %q", v)
	}
	if rowOf(v, "api", "0") != "" {
		t.Errorf("the table under the pane:\n%s", v)
	}
	// esc, l and q each leave the pane, back to the table; q there does
	// not quit.
	for _, k := range []string{"esc", "l", "q"} {
		m2, cmd := update(t, m, key(k))
		if cmd != nil || rowOf(m2.View(), "api", "0") == "" {
			t.Errorf("%s in the pane: cmd %v\n%s", k, cmd, m2.View())
		}
	}
	// What the journal could not say is said.
	e.logs = func(string, int) ([]string, error) { return nil, errors.New("no log lines: \x1b[31mrestricted") }
	m, _ = update(t, m, key("esc"))
	m, cmd = update(t, m, key("l"))
	m, _ = update(t, m, run(cmd)...)
	if v := m.View(); !strings.Contains(v, `bm2 logs api: no log lines: \x1b[31mrestricted`) || strings.ContainsRune(v, 0x1b) {
		t.Errorf("an error in the pane:\n%q", v)
	}
}

// A long-winded frame: a long project name, long reasons, many projects.
func wideFrame(n int) Frame {
	f := frame(t0, 1e9, 1e9, "i1")
	long := "a-project-with-a-rather-long-name"
	f.Snapshot.Projects = append(f.Snapshot.Projects, view.ProjectSnapshot{
		Entry: config.Entry{Name: long, Project: project(long, config.Cluster, 1)}, IDs: []int{0, units.Surge},
		Statuses: []view.UnitStatus{
			{ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", MemoryCurrent: view.Unknown, CPUUsageNSec: view.Unknown},
			online("s", 3e9),
		}})
	for i := range n {
		name := fmt.Sprintf("svc%02d", i)
		f.Snapshot.Projects = append(f.Snapshot.Projects, view.ProjectSnapshot{
			Entry: config.Entry{Name: name, Project: project(name, config.Fork, 2)}, IDs: []int{0, 1},
			Statuses: []view.UnitStatus{online("a", 1e9), online("b", 1e9)}})
	}
	return f
}

// Every line fits the terminal, at any width; columns go in their fixed
// order, and PROJECT, ID and STATE stay.
func TestWidths(t *testing.T) {
	color := lipgloss.NewRenderer(io.Discard)
	color.SetColorProfile(termenv.TrueColor)
	next := wideFrame(3)
	next.Time = t0.Add(time.Second)
	for _, r := range []*lipgloss.Renderer{nil, color} {
		for _, c := range []struct {
			width  int
			titles string
		}{
			{40, "PROJECT ID STATE"},
			{80, "PROJECT ID STATE REUSEPORT CPU% MEM"},
			{160, "PROJECT ID STATE REUSEPORT HEALTH CPU% MEM CONNS QUEUE RESTARTS UPTIME REASON"},
		} {
			e := &env{}
			m, _ := update(t, newModel(t, e, r), size(c.width, 40), frameMsg(wideFrame(3)), frameMsg(next))
			for _, mode := range []string{"table", "confirm", "logs"} {
				m := m
				e.logs = func(string, int) ([]string, error) {
					return []string{strings.Repeat("a long log line, ", 20), "宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符宽字符"}, nil
				}
				switch mode {
				case "confirm":
					m, _ = update(t, m, key("r"))
				case "logs":
					var cmd tea.Cmd
					m, cmd = update(t, m, key("l"))
					m, _ = update(t, m, run(cmd)...)
				}
				v := m.View()
				for i, l := range strings.Split(v, "\n") {
					if w := lipgloss.Width(l); w > c.width {
						t.Errorf("width %d, %s: line %d is %d wide: %q", c.width, mode, i, w, l)
					}
				}
				if mode != "table" {
					continue
				}
				if got := strings.Join(strings.Fields(ansi.Strip(strings.Split(v, "\n")[1])), " "); got != c.titles {
					t.Errorf("width %d: columns %q, want %q", c.width, got, c.titles)
				}
				if r == color && !strings.Contains(v, "\x1b[") {
					t.Errorf("width %d: no styles with a colour renderer", c.width)
				}
			}
		}
	}
	// From 33 columns (the ones that stay, and a project's name cut to
	// the title's width) to 200: every line fits, and a wider terminal
	// shows the columns of a narrower one and more, the ones it adds in
	// the reverse of the drop order.
	var before []string
	for w := 33; w <= 200; w++ {
		m, _ := update(t, newModel(t, &env{}, nil), size(w, 40), frameMsg(wideFrame(3)))
		v := m.View()
		for _, l := range strings.Split(v, "\n") {
			if lipgloss.Width(l) > w {
				t.Fatalf("width %d: %q", w, l)
			}
		}
		titles := strings.Fields(strings.Split(v, "\n")[1])
		if before != nil && !subset(before, titles) {
			t.Errorf("width %d shows %q, width %d showed %q", w, titles, w-1, before)
		}
		before = titles
	}
	if len(before) != len(columns) {
		t.Errorf("at 200 columns: %q", before)
	}

	// Narrower than even the columns that stay: lines are cut.
	m, _ := update(t, newModel(t, &env{}, nil), size(12, 10), frameMsg(wideFrame(1)))
	for _, l := range strings.Split(m.View(), "\n") {
		if lipgloss.Width(l) > 12 {
			t.Errorf("width 12: %q", l)
		}
	}
}

// Rows beyond the height scroll with the selection.
func TestHeightScrolls(t *testing.T) {
	e := &env{}
	m, _ := update(t, newModel(t, e, nil), size(100, 12), frameMsg(wideFrame(20)))
	check := func(what, project string) {
		t.Helper()
		v := m.View()
		lines := strings.Split(v, "\n")
		if len(lines) > 12 {
			t.Errorf("%s: %d lines in a terminal of 12", what, len(lines))
		}
		if rowOf(v, project, "0") == "" || rowOf(v, project, "1") == "" {
			t.Errorf("%s: %s's rows not in view:\n%s", what, project, v)
		}
		if !strings.HasPrefix(rowOf(v, project, "0"), "> ") {
			t.Errorf("%s: %s not selected:\n%s", what, project, v)
		}
	}
	check("at first", "api")
	for range 23 {
		m, _ = update(t, m, key("down"))
	}
	check("at the end", "svc19")
	if v := m.View(); rowOf(v, "api", "0") != "" || !strings.Contains(v, "rows ") {
		t.Errorf("the first rows still shown at the end:\n%s", v)
	}
	for range 10 {
		m, _ = update(t, m, key("up"))
	}
	check("back up", "svc09")
	// A frame or a resize keeps the selection in view.
	m, _ = update(t, m, size(100, 8))
	check("smaller", "svc09")
	m, _ = update(t, m, frameMsg(wideFrame(20)))
	check("a new frame", "svc09")
}

func TestQuit(t *testing.T) {
	m, _ := update(t, newModel(t, &env{}, nil), size(80, 24), frameMsg(frame(t0, 1e9, 1e9, "i1")))
	quits := func(m Model, k string) bool {
		_, cmd := update(t, m, key(k))
		if cmd == nil {
			return false
		}
		_, ok := cmd().(tea.QuitMsg)
		return ok
	}
	if !quits(m, "q") || !quits(m, "ctrl+c") {
		t.Errorf("q or ctrl+c does not quit")
	}
	if quits(m, "x") {
		t.Errorf("x quits")
	}
	logs, _ := update(t, m, key("l"))
	if quits(logs, "q") || !quits(logs, "ctrl+c") {
		t.Errorf("in the log pane: q leaves it, ctrl+c quits")
	}
	ask, _ := update(t, m, key("r"))
	if !quits(ask, "ctrl+c") {
		t.Errorf("ctrl+c at the prompt does not quit")
	}
}

// A slow reading is never asked for again while it runs: ticks go on,
// readings wait for the one in flight.
func TestOneReadingInFlight(t *testing.T) {
	e := &env{}
	m := newModel(t, e, nil)
	msgs := run(m.Init())
	if e.frames.Load() != 1 || len(msgs) != 2 {
		t.Fatalf("Init: %d readings, %d messages", e.frames.Load(), len(msgs))
	}
	var frameM, tick tea.Msg
	for _, msg := range msgs {
		switch msg.(type) {
		case frameMsg:
			frameM = msg
		case tickMsg:
			tick = msg
		}
	}
	// Ticks while the first reading is out: no second one.
	for range 3 {
		var cmd tea.Cmd
		m, cmd = update(t, m, tick)
		got := run(cmd)
		if len(got) != 1 {
			t.Fatalf("a tick sent %d messages", len(got))
		}
		tick = got[0]
	}
	if n := e.frames.Load(); n != 1 {
		t.Fatalf("%d readings while one was in flight", n)
	}
	// Once it is in, the next tick reads again.
	m, _ = update(t, m, frameM)
	_, cmd := update(t, m, tick)
	run(cmd)
	if n := e.frames.Load(); n != 2 {
		t.Fatalf("%d readings after the first came in and a tick, want 2", n)
	}
}

// subset tells whether every title of a is in b, and those b adds are
// dropped before a's.
func subset(a, b []string) bool {
	drop := map[string]int{}
	for _, c := range columns {
		drop[c.title] = c.drop
	}
	least := 1 << 30 // the lowest drop rank a lacks
	in := map[string]bool{}
	for _, t := range a {
		in[t] = true
	}
	for _, c := range columns {
		if !in[c.title] && c.drop > 0 {
			least = min(least, c.drop)
		}
	}
	inB := map[string]bool{}
	for _, t := range b {
		inB[t] = true
	}
	for _, t := range a {
		if !inB[t] {
			return false
		}
	}
	for _, t := range b {
		if !in[t] && drop[t] < least {
			return false
		}
	}
	return true
}

// A worker (no port) has no verdict, no connections and no accept queue:
// its row says "-" for each, never 0, whatever columns the table has
// (a worker's health check still has its column).
func TestWorkerRow(t *testing.T) {
	f := frame(t0, 1e9, 1e9, "i1")
	q := &config.Project{Name: "queue", Mode: config.Worker, Instances: 2, MaxRestarts: 10,
		Health: config.Health{Path: "/healthz", Interval: 5 * time.Second, Timeout: 2 * time.Second, Failures: 3, Port: 3500}}
	f.Snapshot.Projects = append(f.Snapshot.Projects, view.ProjectSnapshot{
		Entry: config.Entry{Name: "queue", Project: q}, IDs: []int{0, 1},
		Statuses: []view.UnitStatus{online("q0", 1e9), online("q1", 1e9)},
		Health: &health.State{Project: "queue", Instances: []health.Entry{
			{Instance: "queue-0", Invocation: "q0", Status: health.Healthy, Limit: 3, Checked: t0.Add(-time.Second)},
		}},
	})
	// What view.Figures reads of a worker: nothing, no port to ask
	// the kernel about.
	f.Figures.Projects = append(f.Figures.Projects, []view.InstanceFigures{view.UnknownFigures, view.UnknownFigures})
	m, _ := update(t, newModel(t, &env{}, nil), size(200, 30), frameMsg(f))
	v := m.View()
	head := strings.Fields(strings.Split(v, "\n")[1])
	for _, id := range []string{"0", "1"} {
		line := rowOf(v, "queue", id)
		if line == "" {
			t.Fatalf("no row queue %s:\n%s", id, v)
		}
		for title, want := range map[string]string{"STATE": "online", "REUSEPORT": "-", "CONNS": "-", "QUEUE": "-", "MEM": "4.0M"} {
			if got := field(t, v, line, title); got != want {
				t.Errorf("queue-%s %s = %q, want %q\n%s", id, title, got, want, v)
			}
		}
		for _, title := range head {
			got := field(t, v, line, title)
			switch {
			case title == "ID":
			case title == "MODE" && got != "worker", title == "PORT" && got != "-", got == "0":
				t.Errorf("queue-%s %s = %q", id, title, got)
			}
		}
	}
	if got := field(t, v, rowOf(v, "queue", "0"), "HEALTH"); got != "healthy" {
		t.Errorf("queue-0 HEALTH %q\n%s", got, v)
	}
}
