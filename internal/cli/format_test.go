package cli

import (
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/control"
)

func TestFormats(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 45 * time.Second: "45s", 3*time.Minute + 12*time.Second: "3m12s",
		2*time.Hour + 5*time.Minute + 9*time.Second: "2h5m", 76 * time.Hour: "3d4h", -time.Second: "0s",
	} {
		if got := control.FormatUptime(d); got != want {
			t.Errorf("control.FormatUptime(%v) = %q, want %q", d, got, want)
		}
	}
	for b, want := range map[uint64]string{
		0: "0B", 512: "512B", 1024: "1.0K", 43201331: "41.2M", 3 << 30: "3.0G", control.Unknown: "-",
	} {
		if got := control.FormatMem(b); got != want {
			t.Errorf("control.FormatMem(%d) = %q, want %q", b, got, want)
		}
	}
	for ns, want := range map[uint64]string{
		0: "0.0s", 1_300_000_000: "1.3s", 400_000_000: "0.4s", 192 * 1e9: "3m12s", control.Unknown: "-",
	} {
		if got := formatCPU(ns); got != want {
			t.Errorf("formatCPU(%d) = %q, want %q", ns, got, want)
		}
	}
	if got := truncate("abcdef", 4); got != "abc…" {
		t.Errorf("truncate = %q", got)
	}
}
