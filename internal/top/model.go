package top

import (
	"context"
	"io"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/bm2dev/bm2/internal/termtext"
)

// Config is what a Model reaches the host through, and how it looks. The
// callbacks run as tea.Cmds, off the terminal's goroutine, with the
// Model's context.
type Config struct {
	// Frames reads the host once. The Model calls it again a second after
	// the last call began, or when it returns if that took longer: never
	// twice at once.
	Frames func(ctx context.Context) Frame
	// Reload reloads a project as bm2 reload does and returns what it
	// printed; nothing of it may reach the terminal.
	Reload func(ctx context.Context, name string) (string, error)
	// Logs returns a project's last n log lines, as bm2 logs -n N prints
	// them.
	Logs func(ctx context.Context, name string, n int) ([]string, error)
	// Title says whose projects these are ("system scope"); bm2's own
	// words, not escaped.
	Title string
	// Interval is the time between two readings; a second when zero.
	Interval time.Duration
	// Renderer styles the view for the terminal it is shown on; nil
	// means no styles (the view's text only).
	Renderer *lipgloss.Renderer
}

// logLines is how many log lines `l` asks for; the pane shows the last
// that fit and scrolls back through the rest.
const logLines = 200

// mode is what the view shows.
type mode int

const (
	modeTable   mode = iota
	modeConfirm      // the table, and "reload NAME? [y/N]" on the status line
	modeLogs         // a project's last log lines
)

// Model is bm2 top's bubbletea model. Its View is a pure function of its
// fields: the last two frames, the selected project, the terminal's size
// and the mode; Update changes nothing else.
type Model struct {
	ctx    context.Context
	cfg    Config
	styles styles

	cur, prev *Frame
	fetching  bool // a call of Frames is in flight

	width, height int

	// sel is the selected project's name, selIdx its index in cur (kept
	// to select a neighbour when the project goes away); offset is the
	// first row of the table shown.
	sel    string
	selIdx int
	offset int

	mode      mode
	confirm   string // the project the reload prompt asks about
	reloading string // the project a reload runs for
	status    string // the status line: escaped, one line
	failed    bool   // the status line tells of a failure

	logs logPane
}

// logPane is the log pane's content.
type logPane struct {
	name    string
	seq     int // which `l` the lines answer
	loading bool
	lines   []string // escaped
	err     string   // escaped
	scroll  int      // lines scrolled back from the end
}

// The messages the Model's commands send it.
type (
	frameMsg  Frame
	tickMsg   time.Time
	reloadMsg struct {
		name, out string
		err       error
	}
	logsMsg struct {
		name  string
		seq   int
		lines []string
		err   error
	}
)

// New is a Model reading through cfg under ctx. Its Init reads the first
// frame at once.
func New(ctx context.Context, cfg Config) Model {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	r := cfg.Renderer
	if r == nil {
		r = lipgloss.NewRenderer(io.Discard)
	}
	// Init's first reading is in flight from the start (Init cannot
	// change the Model).
	return Model{ctx: ctx, cfg: cfg, styles: newStyles(r), fetching: true, width: 80, height: 24}
}

// Init reads the first frame and starts the ticks.
func (m Model) Init() tea.Cmd { return tea.Batch(m.fetch(), m.tick()) }

func (m Model) fetch() tea.Cmd {
	ctx, frames := m.ctx, m.cfg.Frames
	return func() tea.Msg { return frameMsg(frames(ctx)) }
}

func (m Model) tick() tea.Cmd {
	return tea.Tick(m.cfg.Interval, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Update handles a message: a key, a new size, a frame, a tick, what a
// callback returned.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case tickMsg:
		cmd = m.tick()
		if !m.fetching {
			m.fetching = true
			cmd = tea.Batch(cmd, m.fetch())
		}
	case frameMsg:
		f := Frame(msg)
		m.prev, m.cur, m.fetching = m.cur, &f, false
		m.reselect()
	case reloadMsg:
		m.reloading = ""
		m.status, m.failed = reloadOutcome(msg), msg.err != nil
	case logsMsg:
		if m.mode == modeLogs && msg.seq == m.logs.seq {
			m.logs.loading = false
			for _, l := range msg.lines {
				// A log line of several lines is shown as several.
				m.logs.lines = append(m.logs.lines, strings.Split(termtext.EscapeLines(l), "\n")...)
			}
			if msg.err != nil {
				m.logs.err = oneLine(msg.err.Error())
			}
		}
	case tea.KeyMsg:
		var quit bool
		m, cmd, quit = m.key(msg)
		if quit {
			return m, tea.Quit
		}
	}
	m.offset = m.window()
	return m, cmd
}

// key handles a key press.
func (m Model) key(k tea.KeyMsg) (Model, tea.Cmd, bool) {
	key := k.String()
	if key == "ctrl+c" {
		return m, nil, true
	}
	switch m.mode {
	case modeConfirm:
		name := m.confirm
		m.mode, m.confirm = modeTable, ""
		if key != "y" {
			m.status, m.failed = "not reloaded", false
			return m, nil, false
		}
		m.reloading = name
		m.status, m.failed = "reloading "+termtext.Escape(name)+"…", false
		ctx, reload := m.ctx, m.cfg.Reload
		return m, func() tea.Msg {
			out, err := reload(ctx, name)
			return reloadMsg{name: name, out: out, err: err}
		}, false
	case modeLogs:
		switch key {
		case "esc", "l", "q":
			m.mode = modeTable
		case "up", "k":
			m.logs.scroll = min(m.logs.scroll+1, max(len(m.logs.lines)-m.logRows(), 0))
		case "down", "j":
			m.logs.scroll = max(m.logs.scroll-1, 0)
		case "pgup":
			m.logs.scroll = min(m.logs.scroll+m.logRows(), max(len(m.logs.lines)-m.logRows(), 0))
		case "pgdown":
			m.logs.scroll = max(m.logs.scroll-m.logRows(), 0)
		}
		return m, nil, false
	}
	switch key {
	case "q":
		return m, nil, true
	case "up", "k":
		m.move(-1)
	case "down", "j":
		m.move(+1)
	case "r":
		switch name, ok := m.selected(); {
		case !ok:
		case m.reloading != "":
			m.status, m.failed = "a reload of "+termtext.Escape(m.reloading)+" is running", true
		default:
			m.mode, m.confirm = modeConfirm, name
		}
	case "l":
		if name, ok := m.selected(); ok {
			m.mode = modeLogs
			m.logs = logPane{name: name, seq: m.logs.seq + 1, loading: true}
			ctx, logs, seq := m.ctx, m.cfg.Logs, m.logs.seq
			return m, func() tea.Msg {
				lines, err := logs(ctx, name, logLines)
				return logsMsg{name: name, seq: seq, lines: lines, err: err}
			}, false
		}
	}
	return m, nil, false
}

// selected is the selected project's name, if there is a project.
func (m Model) selected() (string, bool) {
	if m.cur == nil || len(m.cur.Snapshot.Projects) == 0 {
		return "", false
	}
	return m.cur.Snapshot.Projects[m.selIdx].Entry.Name, true
}

// move selects the project d places down (up when negative).
func (m *Model) move(d int) {
	if m.cur == nil || len(m.cur.Snapshot.Projects) == 0 {
		return
	}
	m.selIdx = min(max(m.selIdx+d, 0), len(m.cur.Snapshot.Projects)-1)
	m.sel = m.cur.Snapshot.Projects[m.selIdx].Entry.Name
}

// reselect finds the selected project in a new frame: by name, or the one
// now at its place when it went away.
func (m *Model) reselect() {
	ps := m.cur.Snapshot.Projects
	for i, p := range ps {
		if p.Entry.Name == m.sel {
			m.selIdx = i
			return
		}
	}
	if len(ps) == 0 {
		m.selIdx, m.sel = 0, ""
		return
	}
	m.selIdx = min(m.selIdx, len(ps)-1)
	m.sel = ps[m.selIdx].Entry.Name
}

// reloadOutcome is the status line after a reload: its last line on
// success (bm2 reload's summary), its error's first line on failure.
func reloadOutcome(msg reloadMsg) string {
	name := termtext.Escape(msg.name)
	if msg.err != nil {
		return "reload " + name + " failed: " + oneLine(msg.err.Error())
	}
	last := ""
	for _, l := range strings.Split(strings.TrimRight(msg.out, "\n"), "\n") {
		if strings.TrimSpace(l) != "" {
			last = l
		}
	}
	if last == "" {
		return "reloaded " + name
	}
	return "reload " + name + ": " + oneLine(last)
}

// oneLine is the first line of s, escaped.
func oneLine(s string) string {
	first, _, _ := strings.Cut(strings.TrimLeft(s, "\n"), "\n")
	return termtext.Escape(first)
}
