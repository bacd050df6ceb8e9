package control

import (
	"errors"
	"testing"

	"github.com/bm2dev/bm2/internal/layout"
)

// The probe stopping a project while its start job waits cancels that job;
// that is the errored project's story, not a failure of its own.
func TestStartErrCanceledByProbe(t *testing.T) {
	l := layout.System()
	l.StateDir, l.RunStateDir = t.TempDir(), ""
	canceled := errors.New("start bm2-api.target: job canceled")
	if err := startErr(l, "api", canceled); err == nil {
		t.Fatal("a canceled start of a project that is not errored was ignored")
	}
	if _, err := l.State().SetErrored("api", "reuseport_missing"); err != nil {
		t.Fatal(err)
	}
	if err := startErr(l, "api", canceled); err != nil {
		t.Fatalf("startErr = %v for an errored project", err)
	}
	if err := startErr(l, "web", canceled); err == nil {
		t.Fatal("another project's errored mark hid the error")
	}
}
