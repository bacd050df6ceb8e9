package generator

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// benchProjectFiles writes n project files as bench/helper.go's genbench
// does (4 cluster-mode instances, distinct ports, one [env] variable) and
// returns their directory.
func benchProjectFiles(tb testing.TB, root string, n int) string {
	tb.Helper()
	dir := filepath.Join(root, fmt.Sprintf("cfg-%d", n))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	for i := range n {
		name := fmt.Sprintf("p%04d", i)
		f := fmt.Sprintf("name = %q\nscript = \"app.js\"\ncwd = \"/srv/%s\"\nruntime = \"node\"\ninstances = 4\nport = %d\n\n[env]\nNODE_ENV = \"production\"\n",
			name, name, 10000+i)
		if err := os.WriteFile(filepath.Join(dir, name+".toml"), []byte(f), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// tmpfsRoot is a scratch directory on a tmpfs where there is one
// (/dev/shm), like systemd's generator directories in /run.
func tmpfsRoot(tb testing.TB) string {
	tb.Helper()
	if _, err := os.Stat("/dev/shm"); err != nil {
		return tb.TempDir()
	}
	root, err := os.MkdirTemp("/dev/shm", "bm2-bench-")
	if err != nil {
		return tb.TempDir()
	}
	tb.Cleanup(func() { os.RemoveAll(root) })
	return root
}

type discardLog struct{}

func (discardLog) Log(int, string) {}

// BenchmarkRun is the whole generator as `make bench` times the binary
// (less fork and exec): N project files read from a tmpfs, their units
// written into a fresh, empty directory on a tmpfs, as systemd provides.
func BenchmarkRun(b *testing.B) {
	root := tmpfsRoot(b)
	for _, n := range []int{1, 10, 100, 1000} {
		cfg := benchProjectFiles(b, root, n)
		env := Env{
			Getenv: func(k string) string {
				if k == "BM2_CONFIG_PATH" {
					return cfg
				}
				return ""
			},
			Log: discardLog{}, NumCPU: 2, Helper: DefaultHelper, Layout: systemScope(),
		}
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			out := filepath.Join(root, "out")
			for b.Loop() {
				b.StopTimer()
				if err := os.RemoveAll(out); err != nil {
					b.Fatal(err)
				}
				if err := os.Mkdir(out, 0o755); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				if err := Run(context.Background(), []string{out}, env); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
