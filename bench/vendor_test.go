package main

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bench/vendor holds, beside the modules it needs, a copy of bm2's own
// packages it imports: go mod vendor copies the directory that go.mod's
// replace names. The copy must be the tree's: every file of it the same
// bytes as the tree's, and every Go file (tests aside) of a copied
// directory copied. bench/run refreshes it; a commit that changes one of
// those packages refreshes it with `cd bench && go mod vendor`.
func TestVendoredProductIsCurrent(t *testing.T) {
	const copied = "vendor/github.com/bm2dev/bm2"
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fix := " (run `cd bench && go mod vendor`)"
	err = filepath.WalkDir(copied, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(copied, p)
		if !d.IsDir() {
			mine, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			theirs, err := os.ReadFile(filepath.Join(repo, rel))
			if err != nil || !bytes.Equal(mine, theirs) {
				t.Errorf("bench/%s is not the tree's %s%s", p, rel, fix)
			}
			return nil
		}
		if !hasGo(t, p) {
			return nil // a directory on the way to a package, or embedded files
		}
		ents, err := os.ReadDir(filepath.Join(repo, rel))
		if err != nil {
			t.Errorf("bench/%s: the tree has no %s%s", p, rel, fix)
			return fs.SkipDir
		}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			if _, err := os.Stat(filepath.Join(p, n)); err != nil {
				t.Errorf("bench/%s lacks the tree's %s%s", p, filepath.Join(rel, n), fix)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hasGo says whether a directory holds a Go file: whether it is a package.
func hasGo(t *testing.T, dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !e.IsDir() && strings.HasSuffix(e.Name(), ".go") {
			return true
		}
	}
	return false
}
