package portfence

import (
	"errors"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/state"
)

// A fence that cannot be attached on a host that can fence marks the
// instance errored, so that the run wrapper refuses to start it.
func TestFailedMarksTheInstance(t *testing.T) {
	dir := t.TempDir()
	old := Marks
	Marks = state.Dir{Path: dir, Run: dir}
	t.Cleanup(func() { Marks = old })
	err := failed("api-0", errors.New("attach bind4: no memory"))
	if err == nil || !strings.Contains(err.Error(), "does not start") {
		t.Fatalf("err %v", err)
	}
	m, ok, rerr := Marks.InstanceErrored("api-0")
	if rerr != nil || !ok || m.Reason != "port_fence_failed" || !strings.Contains(m.Detail, "no memory") {
		t.Fatalf("mark %+v %v %v", m, ok, rerr)
	}
}
