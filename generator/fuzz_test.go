package generator

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/config"
)

// FuzzGenerate feeds arbitrary project files through the parser and the
// generator. Whatever the parser accepts must generate deterministically,
// render only well-formed unit file lines, and pass systemd-analyze verify.
func FuzzGenerate(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/*.toml")
	more, _ := filepath.Glob("testdata/*/*.toml")
	for _, p := range append(seeds, more...) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		// Seeds are renamed to "fuzz" so the name-matches-file rule lets
		// the mutator explore the rest of the file.
		f.Add(bytes.Replace(data, []byte("name = \""+strings.TrimSuffix(filepath.Base(p), ".toml")+"\""), []byte(`name = "fuzz"`), 1))
	}
	// systemd-analyze costs ~70 ms a call: always on the seed corpus (as in
	// `make test`), while fuzzing only with BM2_FUZZ_VERIFY=1.
	_, analyzeErr := lookAnalyze()
	if fl := flag.Lookup("test.fuzz"); fl != nil && fl.Value.String() != "" && os.Getenv("BM2_FUZZ_VERIFY") != "1" {
		analyzeErr = errors.New("off while fuzzing")
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		src := []config.Source{{Path: "/etc/bm2/fuzz.toml", Data: data}}
		res := Generate(src, testOptions)
		if len(res.Projects)+len(res.Skipped) != 1 {
			t.Fatalf("one file gave %d projects and %d skipped", len(res.Projects), len(res.Skipped))
		}
		for _, d := range res.Skipped {
			if !strings.Contains(d.String(), "/etc/bm2/fuzz.toml") {
				t.Fatalf("diagnostic does not name the file: %s", d)
			}
		}
		if len(res.Projects) == 0 {
			return
		}
		if !bytes.Equal(render(res), render(Generate(src, testOptions))) {
			t.Fatal("output is not deterministic")
		}
		for _, file := range res.Files {
			if file.Link != "" {
				continue
			}
			for _, line := range strings.Split(strings.TrimSuffix(string(file.Data), "\n"), "\n") {
				if !wellFormed(line) {
					t.Fatalf("%s: malformed line %q", file.Path, line)
				}
			}
		}
		if analyzeErr == nil {
			if out, err := verify(t, res); err != nil {
				t.Fatalf("systemd-analyze verify rejects what the parser accepted: %v\n%s\ninput:\n%s", err, out, data)
			}
		}
	})
}

func wellFormed(line string) bool {
	switch {
	case line == "", strings.HasPrefix(line, "# "):
		return !strings.ContainsAny(line, "\r\x00")
	case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
		return true
	}
	k, v, ok := strings.Cut(line, "=")
	return ok && k != "" && !strings.ContainsAny(k, " \t") &&
		!strings.ContainsAny(v, "\r\n\x00") && !strings.HasSuffix(v, `\`)
}
