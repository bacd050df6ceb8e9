package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/bm2dev/bm2/internal/termtext"
	"github.com/bm2dev/bm2/internal/top"
	"github.com/bm2dev/bm2/internal/view"
)

// bm2 top is a live view: without a terminal it refuses, as a usage
// error, after the names it is given are checked.
func TestTopNeedsATerminal(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.mustRun(ExitUsage, "top")
	if !strings.Contains(te.stderr.String(), "bm2: top: standard output is not a terminal") ||
		!strings.Contains(te.stderr.String(), "bm2 list") || te.stdout.String() != "" {
		t.Errorf("stdout %q, stderr:\n%s", te.stdout.String(), te.stderr.String())
	}
	te.mustRun(ExitUsage, "top", "api")
	te.mustRun(ExitNoProject, "top", "api", "nope")

	// A file is no terminal, under Main's escaping writer or not.
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, w := range []io.Writer{f, termtext.NewWriter(f), &te.stdout} {
		if _, ok := terminalOf(w); ok {
			t.Errorf("%T taken for a terminal", w)
		}
	}
}

// The view's host: frames as bm2 list reads them, bm2 reload and bm2 logs
// with every byte they print captured, none on the command's output.
func TestTopHost(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	t0 := te.now
	te.entries.line(t0, "bm2@api-0.service", "hello \x1b[31mred\x1b[0m")
	ctx := context.Background()
	te.stdout.Reset()
	te.stderr.Reset()
	h := testTopHost(te)

	f := h.frame(ctx)
	rows, _ := view.Rows(f.Snapshot)
	if len(f.Snapshot.Projects) != 1 || len(rows) != 4 || f.Time != f.Snapshot.Now {
		t.Fatalf("frame: %d projects, %d rows", len(f.Snapshot.Projects), len(rows))
	}
	for k, r := range rows {
		if v := f.Snapshot.Instance(0, k); v.State != view.StateOnline || r.State != v.State || v.Verdict != "confirmed" {
			t.Errorf("instance %d: %+v, list says %s", k, v, r.State)
		}
		if got := f.Figures.Projects[0][k]; got != view.UnknownFigures {
			t.Errorf("instance %d figures %+v, want unknown", k, got)
		}
	}

	// Named projects: one gone is a warning, not a failure.
	h.feed.Close()
	h.feed = h.a.reader().Feed([]string{"api", "gone"})
	if f := h.frame(ctx); len(f.Snapshot.Projects) != 1 || strings.Join(f.Snapshot.Warnings, "|") != "no project gone is registered" {
		t.Errorf("api and gone: %d projects, warnings %q", len(f.Snapshot.Projects), f.Snapshot.Warnings)
	}

	te.sd.Calls()
	out, err := h.reload(ctx, "api")
	if err != nil || !strings.Contains(out, "reloading api: 4 x cluster") || !strings.HasSuffix(out, "api reloaded: 4 instances in 5.0s, online and confirmed\n") {
		t.Errorf("reload: %v\n%s", err, out)
	}
	if calls := te.sd.Calls(); len(calls) != 11 { // surge and 4 instances: reset-failed, restart; the surge's stop
		t.Errorf("reload made %d calls: %q", len(calls), calls)
	}
	out, err = h.reload(ctx, "nope")
	if ExitCode(err) != ExitNoProject || !strings.Contains(out, "bm2: no such project: nope") {
		t.Errorf("reload nope: %v\n%s", err, out)
	}

	lines, err := h.logs(ctx, "api", 7)
	if err != nil || len(lines) != 1 || !strings.HasSuffix(lines[0], `api-0 | hello \x1b[31mred\x1b[0m`) {
		t.Errorf("logs: %v %q", err, lines)
	}
	if q := te.entries.queries[len(te.entries.queries)-1]; q.Lines != 7 || q.Follow || len(q.Units) != 5 {
		t.Errorf("logs query %+v", q)
	}
	te.entries.err = errors.New("journalctl: exit status 1")
	if lines, err := h.logs(ctx, "api", 7); err == nil || len(lines) != 0 {
		t.Errorf("logs of an unreadable journal: %v %q", err, lines)
	}
	te.entries.err = nil
	if te.stdout.Len() != 0 || te.stderr.Len() != 0 {
		t.Errorf("the commands wrote to the terminal:\nstdout %q\nstderr %q", te.stdout.String(), te.stderr.String())
	}

	// Closed: nothing runs any more.
	if left := h.close(); left != "" {
		t.Errorf("left %q", left)
	}
	if _, err := h.reload(ctx, "api"); !errors.Is(err, errClosed) || len(te.sd.Calls()) != 0 {
		t.Errorf("a reload after close: %v", err)
	}
}

// A reload that bm2 top's quitting interrupts leaves what it printed for
// the command to show once the view is gone.
func TestTopReloadInterrupted(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	h := testTopHost(te)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := h.reload(ctx, "api")
	if err == nil {
		t.Fatalf("an interrupted reload succeeded:\n%s", out)
	}
	if left := h.close(); left != out || left == "" {
		t.Errorf("left %q, reload printed %q", left, out)
	}
}

// The view on the host: package top's model fed by a topHost shows what
// bm2 list shows.
func TestTopViewOnHost(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	h := testTopHost(te)
	defer h.close()
	m := top.New(context.Background(), top.Config{Frames: h.frame, Reload: h.reload, Logs: h.logs, Interval: time.Millisecond})
	next, _ := m.Update(tea.WindowSizeMsg{Width: 100, Height: 20})
	for _, msg := range runCmd(m.Init()) {
		next, _ = next.Update(msg)
	}
	v := next.View()
	for _, want := range []string{"> api", "online", "confirmed"} {
		if !strings.Contains(v, want) {
			t.Errorf("no %q in the view:\n%s", want, v)
		}
	}
	if strings.Count(v, "\n> api") != 4 {
		t.Errorf("not 4 rows of api:\n%s", v)
	}
}

// testTopHost is the host of a view of every project of te, whose
// figures are unknown.
func testTopHost(te *testEnv) *topHost {
	a := te.app()
	h := newTopHost(a, a.reader(), nil)
	h.figures = unknownFigures
	return h
}

// runCmd runs a command and the commands of a batch, and returns the
// messages they send.
func runCmd(cmd tea.Cmd) []tea.Msg {
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		var out []tea.Msg
		for _, c := range b {
			out = append(out, runCmd(c)...)
		}
		return out
	}
	return []tea.Msg{msg}
}

// unknownFigures are a Snapshot's figures when nothing can be read of
// them: view.UnknownFigures for each instance.
func unknownFigures(_ context.Context, snap view.Snapshot) view.Figures {
	f := view.Figures{Projects: make([][]view.InstanceFigures, len(snap.Projects))}
	for p, ps := range snap.Projects {
		if ps.Entry.Err != nil || ps.Entry.Project == nil || ps.Statuses == nil {
			continue
		}
		f.Projects[p] = make([]view.InstanceFigures, len(ps.IDs))
		for k := range ps.IDs {
			f.Projects[p][k] = view.UnknownFigures
		}
	}
	return f
}
