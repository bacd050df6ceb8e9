package probehelper

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/layout"
)

// A drain never fails the stop: even a command line it cannot read is
// said and exit status 0. add's are usage errors.
func TestSteerCommandLine(t *testing.T) {
	ctx := context.Background()
	sys := layout.System()
	var out strings.Builder
	if err := steerCommand(ctx, &env{stdout: &out, scope: sys}, []string{"drain", "nonsense"}); err != nil || !strings.Contains(out.String(), "is not an instance name") {
		t.Errorf("drain nonsense: %v, %q", err, out.String())
	}
	for _, args := range [][]string{nil, {"add"}, {"remove", "api-0"}, {"add", "api-0", "extra"}} {
		if err := steerCommand(ctx, &env{stdout: io.Discard, scope: sys}, args); err == nil || !strings.HasPrefix(err.Error(), "usage: bm2-probe steer") {
			t.Errorf("%q: %v, want the usage", args, err)
		}
	}
	if err := steerCommand(ctx, &env{stdout: io.Discard, scope: sys}, []string{"add", "api"}); err == nil {
		t.Error("add api: no error")
	}
	// User scope: nothing, and no error.
	out.Reset()
	user := layout.User(1001, "alice", "/home/alice")
	if err := steerCommand(ctx, &env{stdout: &out, scope: user}, []string{"add", "api-0"}); err != nil || !strings.Contains(out.String(), "keeps the kernel's hash") {
		t.Errorf("user scope add: %v %q", err, out.String())
	}
	if err := steerCommand(ctx, &env{stdout: &out, scope: user}, []string{"drain", "api-0"}); err != nil {
		t.Errorf("user scope drain: %v", err)
	}
}
