package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse: never panics; every error names the file and wraps a class;
// whatever is accepted satisfies the invariants the generator relies on.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../../testdata/projects/*.toml")
	for _, p := range seeds {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("name = \"fuzz\"\nscript = \"a.js\"\ncwd = \"/srv\"\nport = 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("/etc/bm2/fuzz.toml", data, Options{NumCPU: 4})
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error is not config.Errors: %v", err)
			}
			for _, e := range es {
				if e.File != "/etc/bm2/fuzz.toml" || e.Err == nil || !strings.HasPrefix(e.Error(), "/etc/bm2/fuzz.toml") {
					t.Fatalf("bad error %#v", e)
				}
			}
			return
		}
		if p.Name != "fuzz" || p.Instances < 1 || p.Port < 1 || p.Ports().Hi > 65535 || p.Cwd == "" || p.Script == "" {
			t.Fatalf("accepted an invalid project: %+v", p)
		}
	})
}
