package generator

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// benchSources makes n cluster-mode projects of 4 instances on distinct ports.
func benchSources(n int) []config.Source {
	srcs := make([]config.Source, n)
	for i := range srcs {
		srcs[i] = config.Source{
			Path: fmt.Sprintf("/etc/bm2/p%d.toml", i),
			Data: []byte(fmt.Sprintf("name = \"p%d\"\nscript = \"index.js\"\ncwd = \"/srv/p%d\"\ninstances = 4\nport = %d\n", i, i, 10000+i)),
		}
	}
	return srcs
}

// BenchmarkGenerate is the pure part: parse, resolve conflicts, render.
// `make bench` measures the whole binary; this splits out where time goes.
func BenchmarkGenerate(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000} {
		srcs := benchSources(n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				Generate(srcs, testOptions)
			}
		})
	}
}

// BenchmarkWrite is the I/O part, into a tmpfs like /run/systemd/generator.
func BenchmarkWrite(b *testing.B) {
	root := "/dev/shm"
	if _, err := os.Stat(root); err != nil {
		root = b.TempDir()
	}
	for _, n := range []int{1, 10, 100, 1000} {
		res := Generate(benchSources(n), testOptions)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			i := 0
			for b.Loop() {
				dir := filepath.Join(root, fmt.Sprintf("bm2-bench-%d-%d", os.Getpid(), i))
				i++
				if err := Write(dir, res.Files); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				os.RemoveAll(dir)
				b.StartTimer()
			}
		})
	}
}
