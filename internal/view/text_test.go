package view

import "testing"

func TestFormatMem(t *testing.T) {
	for b, want := range map[uint64]string{
		0: "0B", 512: "512B", 1024: "1.0K", 43201331: "41.2M", 3 << 30: "3.0G", Unknown: "-",
	} {
		if got := FormatMem(b); got != want {
			t.Errorf("FormatMem(%d) = %q, want %q", b, got, want)
		}
	}
}
