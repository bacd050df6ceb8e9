package portfence

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/journal"
)

// A fence that cannot be attached on a host that can fence marks the
// instance errored, so that the run wrapper refuses to start it.
func TestFailedMarksTheInstance(t *testing.T) {
	dir := t.TempDir()
	old := Marks
	Marks = state.Dir{Path: dir, Run: dir}
	t.Cleanup(func() { Marks = old })
	err := failed("api-0", errors.New("attach bind4: no memory"), nil)
	if err == nil || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("err %v", err)
	}
	m, ok, rerr := Marks.InstanceErrored("api-0")
	if rerr != nil || !ok || m.Reason != "port_fence_failed" || !strings.Contains(m.Detail, "no memory") {
		t.Fatalf("mark %+v %v %v", m, ok, rerr)
	}
}

type sink struct{ got []journal.Event }

func (s *sink) Emit(e journal.Event) error { s.got = append(s.got, e); return nil }

// A mark that cannot be written (a full /run; here a file where its
// directory must be, ENOTDIR as root too) is said: without it the run
// wrapper has nothing to refuse for.
func TestFailedMarkUnwritable(t *testing.T) {
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := Marks
	Marks = state.Dir{Path: t.TempDir(), Run: filepath.Join(f, "run")}
	t.Cleanup(func() { Marks = old })
	ev := &sink{}
	err := failed("api-0", errors.New("attach bind4: no memory"), ev)
	if err == nil || !strings.Contains(err.Error(), "could not be marked errored, and starts without its fence") {
		t.Fatalf("err %v", err)
	}
	if len(ev.got) != 1 {
		t.Fatalf("events %+v", ev.got)
	}
	e := ev.got[0]
	if e.Kind != journal.StateWriteFailed || e.Project != "api" || e.Instance != "api-0" || e.Path != Marks.InstanceErroredPath("api-0") ||
		e.Errno != "ENOTDIR" || !strings.Contains(e.Message, "starts without its port fence") {
		t.Errorf("state_write_failed %+v", e)
	}
}
