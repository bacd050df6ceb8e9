package cli

import (
	"testing"

	"github.com/bm2dev/bm2/internal/view"
)

func TestFormats(t *testing.T) {
	for ns, want := range map[uint64]string{
		0: "0.0s", 1_300_000_000: "1.3s", 400_000_000: "0.4s", 192 * 1e9: "3m12s", view.Unknown: "-",
	} {
		if got := formatCPU(ns); got != want {
			t.Errorf("formatCPU(%d) = %q, want %q", ns, got, want)
		}
	}
	if got := truncate("abcdef", 4); got != "abc…" {
		t.Errorf("truncate = %q", got)
	}
}
