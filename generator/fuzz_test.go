package generator

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/envfile"
)

// FuzzGenerate feeds arbitrary project files through the parser and the
// generator. Whatever the parser accepts must generate deterministically,
// render only well-formed unit file lines, and pass systemd-analyze verify.
func FuzzGenerate(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join(sharedProjects, "*.toml"))
	more, _ := filepath.Glob("testdata/*/*.toml")
	valid, _ := filepath.Glob("../testdata/valid/*.toml")
	invalid, _ := filepath.Glob("../testdata/invalid/*.toml")
	for _, p := range slices.Concat(seeds, more, valid, invalid) {
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
			if strings.HasPrefix(file.Path, PrivateDir+"/") {
				// [env] for EnvironmentFile=: systemd's parser gives back
				// every value exactly.
				var got []config.EnvVar
				for _, v := range envfile.Parse(file.Data) {
					got = append(got, config.EnvVar{Name: v.Name, Value: v.Value})
				}
				if !reflect.DeepEqual(got, res.Projects[0].Env) {
					t.Fatalf("%s reads back as %q, want %q", file.Path, got, res.Projects[0].Env)
				}
				continue
			}
			for _, line := range strings.Split(strings.TrimSuffix(string(file.Data), "\n"), "\n") {
				if !wellFormed(line) {
					t.Fatalf("%s: malformed line %q", file.Path, line)
				}
			}
		}
		// The writing edge takes whatever was generated, and writes all of it.
		dir := t.TempDir()
		if err := Write(dir, res.Files); err != nil {
			t.Fatalf("Write: %v", err)
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

// FuzzWriteNames: a project name of any shape the parser accepts, next to
// a good project, never costs the good one its files (issue: one long name
// used to abort a whole worker's writes).
func FuzzWriteNames(f *testing.F) {
	f.Add("a"+strings.Repeat("-", 62)+"b", 4)
	f.Add("api", 1)
	f.Add("x_y-1", 1024)
	f.Fuzz(func(t *testing.T, name string, instances int) {
		instances = 1 + int(uint(instances)%8)
		doc := func(n string, port int) []byte {
			return []byte(fmt.Sprintf("name = %q\nscript = \"a.js\"\ncwd = \"/srv\"\nport = %d\ninstances = %d\n[env]\nK = \"v\"\n", n, port, instances))
		}
		srcs := []config.Source{
			{Path: "/etc/bm2/" + name + ".toml", Data: doc(name, 1000)},
			{Path: "/etc/bm2/good.toml", Data: doc("good", 20000)},
		}
		res := Generate(srcs, testOptions)
		dir := t.TempDir()
		err := Write(dir, res.Files)
		var we *WriteError
		if err != nil && !errors.As(err, &we) {
			t.Fatalf("Write: %v", err)
		}
		if we != nil && we.Failed["good"] != nil {
			t.Fatalf("good project lost: %v", err)
		}
		for _, file := range res.Files {
			if file.Project != "good" {
				continue
			}
			if _, err := os.Lstat(filepath.Join(dir, file.Path)); err != nil {
				t.Fatalf("good project's %s missing: %v", file.Path, err)
			}
		}
	})
}
