package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/term"

	"github.com/bm2dev/bm2/internal/control"
	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/top"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/internal/wording"
)

// top is `bm2 top [name...]`: package top's view, live, on the terminal
// bm2 was started on, fed by a topHost.
func (a *App) top(ctx context.Context, names []string) error {
	for _, n := range names {
		if _, err := a.c.FindProject(n); err != nil {
			return err
		}
	}
	tty, ok := terminalOf(a.Out)
	if !ok {
		return usageErr("top", "top: standard output is not a terminal: bm2 top is a live view; "+
			"`bm2 list` prints the same table once (--json for scripts)")
	}
	sockets := a.c.Sockets // the figures of each frame's instances (view.ReadFigures)
	figures := func(ctx context.Context, snap view.Snapshot) view.Figures {
		return view.ReadFigures(ctx, sockets, snap)
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := &topHost{a: a, names: names, figures: figures}
	m := top.New(ctx, top.Config{
		Frames: h.frame, Reload: h.reload, Logs: h.logs,
		Title:    a.c.Scope().Layout().Describe(),
		Renderer: lipgloss.NewRenderer(tty),
	})
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithOutput(tty), tea.WithAltScreen())
	_, err := p.Run()
	cancel()
	left := h.close()
	if left != "" {
		fmt.Fprintf(a.Err, "bm2: bm2 top quit while a reload ran; what it printed:\n%s", left)
	}
	switch {
	case err == nil, errors.Is(err, tea.ErrInterrupted), errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil:
		return nil
	}
	return fmt.Errorf("top: %w", err)
}

// terminalOf is the terminal w writes to: w itself or, under the
// termtext.Writer that Main puts around the command's output, the file it
// writes to; false when that is no terminal. bm2 top writes there
// directly: its view is escape sequences of its own, and every text in it
// that bm2 did not write is escaped by package top.
func terminalOf(w io.Writer) (*os.File, bool) {
	if tw, ok := w.(*termtext.Writer); ok {
		w = tw.W
	}
	f, ok := w.(*os.File)
	return f, ok && term.IsTerminal(f.Fd())
}

// topHost is what bm2 top's view reaches the host through: its readings,
// and bm2 reload and bm2 logs run with their output captured. Each call
// counts as running until it returns, so that close can wait for them.
type topHost struct {
	a       *App
	names   []string // the projects shown; none: every registered one
	figures func(context.Context, view.Snapshot) view.Figures

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
	sd     Systemd // connected at the first frame; again after a failure
	left   string  // what a reload that bm2 top's quitting interrupted printed
}

// begin counts a call as running, unless the host is closed.
func (h *topHost) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	h.calls.Add(1)
	return true
}

// close waits for the calls still running (their context is cancelled)
// and disconnects; it returns what an interrupted reload printed.
func (h *topHost) close() string {
	h.mu.Lock()
	h.closed = true
	h.mu.Unlock()
	h.calls.Wait()
	if h.sd != nil {
		h.sd.Close()
		h.sd = nil
	}
	return h.left
}

// errClosed answers a call made after bm2 top quit.
var errClosed = errors.New("bm2 top has quit")

// frame reads the projects as bm2 list does.
func (h *topHost) frame(ctx context.Context) top.Frame {
	if !h.begin() {
		return top.Frame{Time: h.a.c.Now()}
	}
	defer h.calls.Done()
	entries, found := h.a.c.Registry()
	var warnings []string
	if len(h.names) > 0 {
		entries, warnings = pickEntries(entries, h.names)
	} else {
		for _, err := range found.Errors {
			warnings = append(warnings, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
	}
	// Frames are read one at a time: the connection is this goroutine's.
	if h.sd == nil && len(entries) > 0 {
		sd, err := h.a.c.Connect(ctx)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("%v; instance states are unknown", err))
		} else {
			h.sd = sd
		}
	}
	snap := h.a.c.Snapshot(ctx, entries, h.sd)
	if len(snap.Warnings) > 0 && h.sd != nil {
		// systemd did not answer: connect again for the next frame (it
		// may have been restarted).
		h.sd.Close()
		h.sd = nil
	}
	snap.Warnings = append(warnings, snap.Warnings...)
	return top.Frame{Time: snap.Now, Snapshot: snap, Figures: h.figures(ctx, snap)}
}

// pickEntries keeps the named projects of entries, in entries' order, and
// says which names are not registered (any more).
func pickEntries(entries []entry, names []string) ([]entry, []string) {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []entry
	for _, e := range entries {
		if want[e.Name] {
			out = append(out, e)
			delete(want, e.Name)
		}
	}
	var warnings []string
	for _, n := range names {
		if want[n] {
			warnings = append(warnings, fmt.Sprintf("no project %s is registered", n))
			delete(want, n)
		}
	}
	return out, warnings
}

// capture is a copy of the app whose output goes to a buffer: bm2 top's
// terminal shows the view, and nothing a command prints may land under it.
func (h *topHost) capture() (*App, *lockedBuffer) {
	var buf lockedBuffer
	c := *h.a.c
	sub := newApp(Stdio{In: strings.NewReader(""), Out: &buf, Err: &buf}, &c)
	c.Report = render{sub}
	return sub, &buf
}

// reload runs bm2 reload NAME and returns what it printed, its error
// reported as bm2 reload reports it ("bm2: ..." and the hint).
func (h *topHost) reload(ctx context.Context, name string) (string, error) {
	if !h.begin() {
		return "", errClosed
	}
	defer h.calls.Done()
	sub, buf := h.capture()
	err := sub.c.Reload(ctx, name, control.DefaultTimeout)
	if err != nil {
		sub.report(err)
	}
	out := buf.String()
	if ctx.Err() != nil {
		h.mu.Lock()
		h.left += out
		h.mu.Unlock()
	}
	return out, err
}

// logs returns a project's last n log lines as bm2 logs -n N prints them,
// then what it said on stderr (that there are none, a warning).
func (h *topHost) logs(ctx context.Context, name string, n int) ([]string, error) {
	if !h.begin() {
		return nil, errClosed
	}
	defer h.calls.Done()
	sub, out := h.capture()
	var notes lockedBuffer
	sub.Err = &notes
	err := sub.logs(ctx, name, logsOptions{lines: strconv.Itoa(n)})
	lines := append(outputLines(out.String()), outputLines(notes.String())...)
	if err != nil {
		if h := hint(err); h != "" {
			err = fmt.Errorf("%s; %s", wording.OneLine(err), h)
		}
	}
	return lines, err
}

// outputLines splits text into its lines, without the last newline.
func outputLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// lockedBuffer is a bytes.Buffer that goroutines can write to at once.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
