package cli

import (
	"strings"
	"testing"
)

// import shows how a bm2.toml it does not overwrite differs, line by line.
func TestLineDiff(t *testing.T) {
	d := lineDiff("old", "new", []byte("a\nb\n"), []byte("a\nc\n"))
	if !strings.Contains(d, "-b\n+c\n") || !strings.Contains(d, "old") || !strings.Contains(d, "new") {
		t.Errorf("diff:\n%s", d)
	}
	if d := lineDiff("old", "new", []byte("a\n"), []byte("a\n")); strings.Contains(d, "-a") || strings.Contains(d, "+a") {
		t.Errorf("equal files differ:\n%s", d)
	}
}
