package config

import (
	"fmt"
	"testing"
)

// BenchmarkParse is one project file as bench/helper.go's genbench writes
// them (4 cluster-mode instances, one [env] variable), parsed and
// validated: the generator does this for every file at each
// daemon-reload.
func BenchmarkParse(b *testing.B) {
	src := Source{
		Path: "/etc/bm2/p0042.toml",
		Data: []byte(fmt.Sprintf("name = %q\nscript = \"app.js\"\ncwd = \"/srv/%s\"\nruntime = \"node\"\ninstances = 4\nport = %d\n\n[env]\nNODE_ENV = \"production\"\n",
			"p0042", "p0042", 10042)),
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseSource(src, Options{NumCPU: 2}); err != nil {
			b.Fatal(err)
		}
	}
}
