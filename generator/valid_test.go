package generator

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// TestValidFixturesApply generates every project in
// ../testdata/valid/ — the edges of each rule that bm2 check accepts —
// and runs systemd-analyze verify on the result: whatever the parser calls
// valid, systemd loads and applies as written (verify prints a line for a
// value it refuses or ignores, and any output fails the test).
func TestValidFixturesApply(t *testing.T) {
	requireAnalyze(t)
	paths, _ := filepath.Glob("../testdata/valid/*.toml")
	if len(paths) == 0 {
		t.Fatal("no fixtures in ../testdata/valid/")
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			res := Generate([]config.Source{{Path: "/etc/bm2/" + filepath.Base(p), Data: data}}, testOptions)
			if len(res.Skipped) != 0 || len(res.Projects) != 1 {
				t.Fatalf("not accepted: %v", res.Skipped)
			}
			if out, err := verify(t, res); err != nil {
				t.Fatalf("systemd-analyze verify: %v\n%s", err, out)
			}
		})
	}
}
