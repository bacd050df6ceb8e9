package testutil

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// Many callers at once fill an entry once; what an interrupted fill left
// is cleared first; a fill that makes no ready entry puts nothing there.
func TestFillCache(t *testing.T) {
	cache := t.TempDir()
	ready := func(dir string) bool { _, err := os.Stat(filepath.Join(dir, "done")); return err == nil }
	var fills atomic.Int32
	fill := func(tmp string) (string, error) {
		fills.Add(1)
		dir := filepath.Join(tmp, "entry")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", err
		}
		return dir, os.WriteFile(filepath.Join(dir, "done"), nil, 0o644)
	}
	// Left by an interrupted fill: a temporary dir, and an entry without "done".
	for _, d := range []string{".fill-k-123", "k"} {
		if err := os.MkdirAll(filepath.Join(cache, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = FillCache(t.Context(), cache, "k", ready, fill) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if n := fills.Load(); n != 1 {
		t.Errorf("%d fills, want 1", n)
	}
	if !ready(filepath.Join(cache, "k")) {
		t.Error("the entry is not in place")
	}
	if left, _ := filepath.Glob(filepath.Join(cache, ".fill-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	err := FillCache(t.Context(), cache, "bad", ready, func(tmp string) (string, error) { return tmp, nil })
	if err == nil || ready(filepath.Join(cache, "bad")) {
		t.Errorf("a fill without a ready entry: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cache, "bad")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("cache/bad: %v, want none", err)
	}
}
