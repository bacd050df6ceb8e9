package probehelper

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/journal"
)

// discard is a sink that keeps nothing.
type discard struct{}

func (discard) Emit(journal.Event) error { return nil }

// A drain never fails the stop: even a command line it cannot read is
// said and exit status 0. add's are usage errors.
func TestSteerCommandLine(t *testing.T) {
	ctx := context.Background()
	sys := layout.System()
	var out strings.Builder
	if err := steerCommand(ctx, []string{"drain", "nonsense"}, &out, discard{}, sys); err != nil || !strings.Contains(out.String(), "is not an instance name") {
		t.Errorf("drain nonsense: %v, %q", err, out.String())
	}
	for _, args := range [][]string{nil, {"add"}, {"remove", "api-0"}, {"add", "api-0", "extra"}} {
		if err := steerCommand(ctx, args, io.Discard, discard{}, sys); err == nil || !strings.HasPrefix(err.Error(), "usage: bm2-probe steer") {
			t.Errorf("%q: %v, want the usage", args, err)
		}
	}
	if err := steerCommand(ctx, []string{"add", "api"}, io.Discard, discard{}, sys); err == nil {
		t.Error("add api: no error")
	}
	// User scope: nothing, and no error.
	out.Reset()
	user := layout.User(1001, "alice", "/home/alice")
	if err := steerCommand(ctx, []string{"add", "api-0"}, &out, discard{}, user); err != nil || !strings.Contains(out.String(), "keeps the kernel's hash") {
		t.Errorf("user scope add: %v %q", err, out.String())
	}
	if err := steerCommand(ctx, []string{"drain", "api-0"}, &out, discard{}, user); err != nil {
		t.Errorf("user scope drain: %v", err)
	}
}
