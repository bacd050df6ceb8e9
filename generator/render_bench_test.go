package generator

import (
	"fmt"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
)

// BenchmarkProjectFiles renders the files of one project as bench/helper.go's
// genbench writes them (4 cluster-mode instances, one [env] variable).
func BenchmarkProjectFiles(b *testing.B) {
	p, err := config.Parse("/etc/bm2/p0042.toml", []byte(fmt.Sprintf("name = %q\nscript = \"app.js\"\ncwd = \"/srv/%s\"\nruntime = \"node\"\ninstances = 4\nport = %d\n\n[env]\nNODE_ENV = \"production\"\n",
		"p0042", "p0042", 10042)), config.Options{NumCPU: 2})
	if err != nil {
		b.Fatal(err)
	}
	opts := testOptions.withDefaults()
	b.ReportAllocs()
	for b.Loop() {
		ProjectFiles(p, opts)
	}
}

// BenchmarkProjectFilesShared is the same project rendered as Run's
// writers render them, into a buffer reused project after project.
func BenchmarkProjectFilesShared(b *testing.B) {
	p, err := config.Parse("/etc/bm2/p0042.toml", []byte(fmt.Sprintf("name = %q\nscript = \"app.js\"\ncwd = \"/srv/%s\"\nruntime = \"node\"\ninstances = 4\nport = %d\n\n[env]\nNODE_ENV = \"production\"\n",
		"p0042", "p0042", 10042)), config.Options{NumCPU: 2})
	if err != nil {
		b.Fatal(err)
	}
	opts := testOptions.withDefaults()
	r := &renderer{shared: true}
	b.ReportAllocs()
	for b.Loop() {
		r.reset()
		r.files(p, opts)
	}
}
