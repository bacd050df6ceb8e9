package ecosystem

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/internal/pm2/convert"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/")

// nodeDirs is where the tests' Node.js 24 is: fetched into the test cache
// (skipped without it, unless CI=true).
func nodeDirs(t *testing.T) []string {
	t.Helper()
	return []string{filepath.Dir(runtimes.Require(t, runtimes.Node, runtimes.Node24Version))}
}

// fixtures are the ecosystem files of testdata/ (and their dump), each
// with the options its first line asks for ("// import: --env production").
func fixtures(t *testing.T) []string {
	var out []string
	for _, pat := range []string{"testdata/*.js", "testdata/*.mjs", "testdata/*.json", "testdata/*.json5", "testdata/*.yaml", "testdata/*.pm2", "testdata/*/package.json"} {
		m, _ := filepath.Glob(pat)
		out = append(out, m...)
	}
	if len(out) < 10 {
		t.Fatalf("only %d fixtures", len(out))
	}
	return out
}

func fixtureOptions(data []byte) convert.Options {
	opts := convert.Options{NumCPU: 2}
	first, _, _ := strings.Cut(string(data), "\n")
	args, ok := strings.CutPrefix(first, "// import: ")
	if !ok {
		return opts
	}
	f := strings.Fields(args)
	for i := 0; i+1 < len(f); i += 2 {
		switch f[i] {
		case "--env":
			opts.Env = f[i+1]
		case "--mode":
			opts.Fork = f[i+1] == "fork"
		}
	}
	return opts
}

// render is a fixture's golden text: every file bm2 import writes, the
// variables it left out, its refusals and its notes. The checkout's
// testdata directory reads as /srv/app.
func render(res convert.Result, testdata string) string {
	var b strings.Builder
	for _, p := range res.Projects {
		fmt.Fprintf(&b, "=== %s (%s; secrets %v)\n%s", p.File, p.Summary, p.Secrets, p.Data)
		if len(p.Dropped) > 0 {
			fmt.Fprintf(&b, "--- left out: %s\n", strings.Join(p.Dropped, " "))
		}
	}
	for _, r := range res.Refused {
		fmt.Fprintf(&b, "=== refused %s\n", r)
	}
	for _, n := range res.Notes {
		fmt.Fprintf(&b, "=== note %s\n", n)
	}
	return strings.ReplaceAll(b.String(), testdata, "/srv/app")
}

// TestGolden imports every fixture as bm2 import does (JavaScript through
// a real Node.js) and compares what it would write with
// testdata/golden/<fixture>.golden; -update rewrites them.
func TestGolden(t *testing.T) {
	dirs := nodeDirs(t)
	testdata, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range fixtures(t) {
		name := strings.ReplaceAll(strings.TrimPrefix(file, "testdata/"), "/", "-")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			src, _, err := Load(context.Background(), file, Options{Dirs: dirs})
			if err != nil {
				t.Fatal(err)
			}
			got := render(convert.Map(src, fixtureOptions(data)), testdata)
			golden := filepath.Join("testdata", "golden", name+".golden")
			if *update {
				os.MkdirAll(filepath.Dir(golden), 0o755)
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/pm2/ecosystem -run TestGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("import of %s differs from %s (go test ./internal/pm2/ecosystem -run TestGolden -update rewrites it):\n%s", file, golden, got)
			}
		})
	}
}
