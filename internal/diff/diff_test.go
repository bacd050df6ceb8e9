package diff

import (
	"strings"
	"testing"
)

// import shows how a bm2.toml it does not overwrite differs, line by line.
func TestLines(t *testing.T) {
	d := Lines("old", "new", []byte("a\nb\n"), []byte("a\nc\n"))
	if !strings.Contains(d, "-b\n+c\n") || !strings.Contains(d, "old") || !strings.Contains(d, "new") {
		t.Errorf("diff:\n%s", d)
	}
	if d := Lines("old", "new", []byte("a\n"), []byte("a\n")); strings.Contains(d, "-a") || strings.Contains(d, "+a") {
		t.Errorf("equal files differ:\n%s", d)
	}
}
