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
	rd := a.reader()
	for _, n := range names {
		if _, err := rd.Find(n); err != nil {
			return err
		}
	}
	tty, ok := terminalOf(a.Out)
	if !ok {
		return usageErr("top", "top: standard output is not a terminal: bm2 top is a live view; "+
			"`bm2 list` prints the same table once (--json for scripts)")
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	h := newTopHost(a, rd, names)
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

// topHost is what bm2 top's view reaches the host through: its readings
// (a view.Feed, and the figures of each), and bm2 reload and bm2 logs run
// with their output captured. Each call counts as running until it
// returns, so that close can wait for them.
type topHost struct {
	a       *App
	feed    *view.Feed
	figures func(context.Context, view.Snapshot) view.Figures

	mu     sync.Mutex
	closed bool
	calls  sync.WaitGroup
	left   string // what a reload that bm2 top's quitting interrupted printed
}

// newTopHost is the host of a view of the named projects (none: every
// registered one), read through rd.
func newTopHost(a *App, rd view.Reader, names []string) *topHost {
	return &topHost{a: a, feed: rd.Feed(names), figures: rd.Figures}
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
	h.feed.Close()
	return h.left
}

// errClosed answers a call made after bm2 top quit.
var errClosed = errors.New("bm2 top has quit")

// frame reads the projects as bm2 list does (view.Feed).
func (h *topHost) frame(ctx context.Context) top.Frame {
	if !h.begin() {
		return top.Frame{Time: h.a.c.Now()}
	}
	defer h.calls.Done()
	snap := h.feed.Read(ctx)
	return top.Frame{Time: snap.Now, Snapshot: snap, Figures: h.figures(ctx, snap)}
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
