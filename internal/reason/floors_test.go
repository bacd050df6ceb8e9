package reason_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/jsruntime"
	"github.com/bm2dev/bm2/internal/reason"
)

// The floors the fixes name are the ones jsruntime enforces.
func TestFixesNameTheFloors(t *testing.T) {
	node, _ := jsruntime.Floor(config.Node)
	bun, _ := jsruntime.Floor(config.Bun)
	want := fmt.Sprintf("install Node.js %s (or Bun %s) or newer", node, bun)
	for _, r := range []reason.Reason{reason.RuntimeMissing, reason.RuntimeBelowFloor} {
		e, ok := reason.Explain(r, reason.Facts{Project: "api"})
		if !ok || !strings.Contains(e.Fix, want) {
			t.Errorf("%s: the fix does not say %q: %s", r, want, e.Fix)
		}
	}
}
