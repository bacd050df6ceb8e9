package runtimes

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/sandbox"
	"github.com/bm2dev/bm2/internal/testutil"
)

// TestFetchStandard fetches every standard runtime and checks that it runs,
// and the frameworks the tests build apps with. fetch.sh runs just this
// test.
func TestFetchStandard(t *testing.T) {
	t.Run("frameworks", func(t *testing.T) {
		mods, err := Modules(context.Background(), Frameworks...)
		if err != nil {
			testutil.Skip(t, testutil.Need{What: "no npm modules for the test apps", Fix: "make test-deps (npm fetches them)"}, err)
		}
		for _, m := range []string{"express", "fastify"} {
			if _, err := os.Stat(filepath.Join(mods, m, "package.json")); err != nil {
				t.Error(err)
			}
		}
	})
	for _, r := range Standard {
		t.Run(r.String(), func(t *testing.T) {
			start := time.Now()
			exe := Require(t, r.Name, r.Version)
			took := time.Since(start)
			out, err := exec.Command(exe, "--version").Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimPrefix(strings.TrimSpace(string(out)), "v"); got != r.Version {
				t.Errorf("%s --version = %q, want %s", exe, got, r.Version)
			}
			fi, err := os.Stat(exe)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %s, %d MiB, ready in %v", r, exe, fi.Size()>>20, took.Round(time.Millisecond))
		})
	}
}

// TestInSandbox runs Bun and Node.js inside a sandbox, from a shell and as
// systemd services, one of them as an unprivileged dynamic user.
func TestInSandbox(t *testing.T) {
	bun := Require(t, Bun, BunVersion)
	node := Require(t, Node, Node24Version)
	m := sandbox.New(t, sandbox.Options{Binds: []string{CacheDir() + ":ro"}})

	if got := m.MustSh(t, bun+" -e 'console.log(Bun.version)'"); strings.TrimSpace(got) != BunVersion {
		t.Errorf("bun in sandbox says %q", got)
	}
	if got := m.MustSh(t, node+" -e 'console.log(process.version)'"); strings.TrimSpace(got) != "v"+Node24Version {
		t.Errorf("node in sandbox says %q", got)
	}
	for exe, script := range map[string]string{
		bun:  "console.log(require('os').hostname(), process.getuid() !== 0)",
		node: "console.log(require('os').hostname(), process.getuid() !== 0)",
	} {
		got := m.MustSh(t, fmt.Sprintf("systemd-run --quiet --wait --pipe -p DynamicUser=yes -p Slice=bm2-rt.slice %s -e %q", exe, script))
		if want := m.ID() + " true"; strings.TrimSpace(got) != want {
			t.Errorf("%s as a service printed %q, want %q", filepath.Base(exe), got, want)
		}
	}
	// The cache is read-only inside.
	if _, err := m.Sh(context.Background(), "touch "+filepath.Join(CacheDir(), "x")); err == nil {
		t.Error("runtime cache writable inside the sandbox")
	}
}

// TestConcurrentFetch fetches one runtime into an empty cache from several
// goroutines at once (flock serialises separate opens even within one
// process), over the remains of a crashed earlier fetch.
func TestConcurrentFetch(t *testing.T) {
	if testing.Short() {
		testutil.Skip(t, testutil.Need{What: "-short (it downloads ~50 MB)", Fix: "go test without -short"})
	}
	testutil.Command(t, "npm", "sudo apt-get install npm")
	npmName, bin, err := pkg(Bun)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	key := cacheKey(npmName, Bun13)
	// A crashed fetch's temporary dir, and a cache dir without an
	// executable.
	for _, d := range []string{".fill-" + key + "-123", key} {
		if err := os.MkdirAll(filepath.Join(cache, d, "junk"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), fetchTimeout)
	defer cancel()
	const n = 3
	paths := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { paths[i], errs[i] = pathIn(ctx, cache, npmName, Bun13, bin) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			if strings.Contains(errs[i].Error(), "npm") {
				testutil.Skip(t, testutil.Need{What: "npm registry not reachable", Fix: "a host that reaches the npm registry"}, errs[i])
			}
			t.Fatal(errs[i])
		}
		if paths[i] != filepath.Join(cache, key, bin) {
			t.Errorf("path %d = %s", i, paths[i])
		}
	}
	ents, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := []string{"." + key + ".lock", key}; strings.Join(names, " ") != strings.Join(want, " ") {
		t.Errorf("cache holds %q, want %q", names, want)
	}
	if _, err := os.Stat(filepath.Join(cache, key, "junk")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stale cache dir content survived: %v", err)
	}
}

func TestPathErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := Path(ctx, "deno", "2.0.0"); err == nil {
		t.Error("unknown runtime accepted")
	}
	if _, err := Path(ctx, Bun, "../x"); err == nil {
		t.Error("bad version accepted")
	}
	if _, err := Path(ctx, Bun, ""); err == nil {
		t.Error("empty version accepted")
	}
}

func TestCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "")
	if got := CacheDir(); got != DefaultCacheDir {
		t.Errorf("CacheDir() = %s", got)
	}
	t.Setenv(CacheEnv, "/somewhere/else")
	if got := CacheDir(); got != "/somewhere/else" {
		t.Errorf("CacheDir() = %s", got)
	}
	if got := cacheKey("@oven/bun-linux-x64", "1.4.4"); got != "oven-bun-linux-x64-1.4.4" {
		t.Errorf("cacheKey = %s", got)
	}
}
