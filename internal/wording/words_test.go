package wording

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestFormatUptime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 45 * time.Second: "45s", 3*time.Minute + 12*time.Second: "3m12s",
		2*time.Hour + 5*time.Minute + 9*time.Second: "2h5m", 76 * time.Hour: "3d4h", -time.Second: "0s",
	} {
		if got := FormatUptime(d); got != want {
			t.Errorf("FormatUptime(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestWords(t *testing.T) {
	if got := Plural(1, "instance", "instances"); got != "1 instance" {
		t.Errorf("Plural(1) = %q", got)
	}
	if got := Plural(0, "instance", "instances"); got != "0 instances" {
		t.Errorf("Plural(0) = %q", got)
	}
	for ws, want := range map[string]string{"": "", "a": "a", "a b": "a and b", "a b c": "a, b and c"} {
		var in []string
		if ws != "" {
			in = strings.Fields(ws)
		}
		if got := JoinWords(in); got != want {
			t.Errorf("JoinWords(%q) = %q, want %q", in, got, want)
		}
	}
	if got := OneLine(errors.New("a\nb")); got != "a; b" {
		t.Errorf("OneLine = %q", got)
	}
	if OneLine(nil) != "" {
		t.Error("OneLine(nil) is not empty")
	}
}
