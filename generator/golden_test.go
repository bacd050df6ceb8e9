package generator

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sharedProjects holds the single-file fixtures, which package config's
// tests read too; see ../testdata/README.md.
const sharedProjects = "../testdata/projects"

// testOptions pins the host facts so golden output is the same everywhere:
// systemd 252, Debian 12's, which has no restart backoff.
var testOptions = Options{NumCPU: 2, Helper: DefaultHelper, SystemdVersion: 252}

// userLayout is the user scope of the fixtures named user-*: alice's.
var userLayout = layout.User(1001, "alice", "/home/alice")

// optionsFor are the options of a fixture: user scope for user-* ones,
// systemd 254 (BackoffVersion) for *-254 ones.
func optionsFor(name string) Options {
	o := testOptions
	if strings.HasSuffix(name, "-254") {
		o.SystemdVersion = 254
	}
	if strings.HasPrefix(name, "user-") {
		o.Layout, o.MinPort = userLayout, 1024
		o.OutDir = userLayout.GeneratorDir
	}
	return o
}

// fixture is one golden case: a single ../testdata/projects/<name>.toml
// (sharedProjects), or every *.toml in testdata/<name>/; either way its
// output is testdata/<name>.golden, which only this package reads. Project
// files are presented to the generator as if they sat in /etc/bm2, so
// output does not depend on the checkout.
type fixture struct {
	name    string
	sources []config.Source
	golden  string
}

func loadFixtures(t *testing.T) []fixture {
	t.Helper()
	entries, err := os.ReadDir("testdata")
	if err != nil {
		t.Fatal(err)
	}
	var out []fixture
	read := func(p string) config.Source {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dir := "/etc/bm2/"
		if strings.HasPrefix(filepath.Base(p), "user-") || strings.HasPrefix(filepath.Base(filepath.Dir(p)), "user-") {
			dir = userLayout.ConfigDir + "/" // user scope: the user's own projects
		}
		return config.Source{Path: dir + filepath.Base(p), Data: data}
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		files, _ := filepath.Glob(filepath.Join("testdata", e.Name(), "*.toml"))
		sort.Strings(files)
		f := fixture{name: e.Name(), golden: filepath.Join("testdata", e.Name()+".golden")}
		for _, p := range files {
			f.sources = append(f.sources, read(p))
		}
		out = append(out, f)
	}
	singles, _ := filepath.Glob(filepath.Join(sharedProjects, "*.toml"))
	if len(out) == 0 || len(singles) == 0 {
		t.Fatalf("no fixtures in testdata/ or %s", sharedProjects)
	}
	for _, p := range singles {
		name := strings.TrimSuffix(filepath.Base(p), ".toml")
		out = append(out, fixture{
			name:    name,
			sources: []config.Source{read(p)},
			golden:  filepath.Join("testdata", name+".golden"),
		})
	}
	return out
}

// render is the golden representation of a Result: every file with its
// path, symlinks as "path -> target", then the skipped projects.
func render(res Result) []byte {
	var b bytes.Buffer
	for _, f := range res.Files {
		if f.Link != "" {
			b.WriteString("=== " + f.Path + " -> " + f.Link + "\n")
			continue
		}
		b.WriteString("=== " + f.Path)
		if f.Mode != 0 {
			fmt.Fprintf(&b, " (mode %04o)", f.Mode)
		}
		b.WriteString("\n")
		b.Write(f.Data)
	}
	for _, d := range res.Skipped {
		b.WriteString("=== skipped\n" + d.String() + "\n")
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, fx := range loadFixtures(t) {
		t.Run(fx.name, func(t *testing.T) {
			opts := optionsFor(fx.name)
			res := Generate(fx.sources, opts)
			got := render(res)
			if again := render(Generate(reversed(fx.sources), opts)); !bytes.Equal(got, again) {
				t.Fatalf("output depends on the order of the input files")
			}
			if *update {
				if err := os.WriteFile(fx.golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(fx.golden)
			if err != nil {
				t.Fatalf("%v (run `go test ./generator -update` to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run `go test ./generator -update` and review the diff):\n%s",
					fx.golden, testutil.FirstDifference(want, got))
			}
			checkAssertions(t, fx, res)
		})
	}
}

func reversed(s []config.Source) []config.Source {
	out := make([]config.Source, len(s))
	for i, x := range s {
		out[len(s)-1-i] = x
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

// checkAssertions runs the "## assert-..." lines of every fixture file:
//
//	## assert-key-is FILE SECTION KEY VALUE     the last KEY= in [SECTION] is VALUE
//	## assert-key-has FILE SECTION KEY VALUE    some KEY= in [SECTION] is VALUE
//	## assert-key-absent FILE SECTION KEY       [SECTION] has no KEY=
//	## assert-file FILE                         FILE is generated
//	## assert-no-file FILE                      FILE is not generated
//	## assert-link FILE TARGET                  FILE is a symlink to TARGET
//	## assert-skipped TEXT                      a skipped-project message contains TEXT
//	## assert-content FILE TEXT                 FILE is exactly TEXT (Go-quoted)
//	## assert-mode FILE MODE                    FILE has permission bits MODE (octal)
//	## assert-nowhere TEXT                      no generated file contains TEXT
func checkAssertions(t *testing.T, fx fixture, res Result) {
	t.Helper()
	files := map[string]File{}
	for _, f := range res.Files {
		files[f.Path] = f
	}
	n := 0
	for _, src := range fx.sources {
		sc := bufio.NewScanner(bytes.NewReader(src.Data))
		for line := 1; sc.Scan(); line++ {
			text, ok := strings.CutPrefix(sc.Text(), "## ")
			if !ok {
				continue
			}
			n++
			where := src.Path + ":" + itoa(line)
			verb, rest, _ := strings.Cut(text, " ")
			switch verb {
			case "assert-key-is", "assert-key-has":
				parts := strings.SplitN(rest, " ", 4)
				if len(parts) != 4 {
					t.Fatalf("%s: malformed %s", where, verb)
				}
				f, ok := files[parts[0]]
				if !ok {
					t.Errorf("%s: %s not generated", where, parts[0])
					continue
				}
				vals := values(f.Data, parts[1], parts[2])
				if verb == "assert-key-is" {
					if len(vals) == 0 || vals[len(vals)-1] != parts[3] {
						t.Errorf("%s: %s [%s] %s = %q, want %q", where, parts[0], parts[1], parts[2], vals, parts[3])
					}
				} else if !contains(vals, parts[3]) {
					t.Errorf("%s: %s [%s] %s = %q, want one to be %q", where, parts[0], parts[1], parts[2], vals, parts[3])
				}
			case "assert-key-absent":
				parts := strings.SplitN(rest, " ", 3)
				if len(parts) != 3 {
					t.Fatalf("%s: malformed %s", where, verb)
				}
				if vals := values(files[parts[0]].Data, parts[1], parts[2]); len(vals) > 0 {
					t.Errorf("%s: %s [%s] %s = %q, want none", where, parts[0], parts[1], parts[2], vals)
				}
			case "assert-file":
				if _, ok := files[rest]; !ok {
					t.Errorf("%s: %s not generated", where, rest)
				}
			case "assert-no-file":
				if _, ok := files[rest]; ok {
					t.Errorf("%s: %s generated, want none", where, rest)
				}
			case "assert-link":
				p, target, _ := strings.Cut(rest, " ")
				if f := files[p]; f.Link != target {
					t.Errorf("%s: %s links to %q, want %q", where, p, f.Link, target)
				}
			case "assert-content":
				p, quoted, _ := strings.Cut(rest, " ")
				want, err := strconv.Unquote(quoted)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if f, ok := files[p]; !ok || string(f.Data) != want {
					t.Errorf("%s: %s = %q, want %q", where, p, f.Data, want)
				}
			case "assert-mode":
				p, mode, _ := strings.Cut(rest, " ")
				if f, ok := files[p]; !ok || fmt.Sprintf("%04o", f.Perm()) != mode {
					t.Errorf("%s: %s mode %04o, want %s", where, p, f.Perm(), mode)
				}
			case "assert-nowhere":
				for _, f := range res.Files {
					if strings.Contains(string(f.Data), rest) && !strings.HasPrefix(f.Path, PrivateDir+"/") {
						t.Errorf("%s: %s contains %q", where, f.Path, rest)
					}
				}
			case "assert-skipped":
				found := false
				for _, d := range res.Skipped {
					found = found || strings.Contains(d.String(), rest)
				}
				if !found {
					t.Errorf("%s: no skipped project says %q; skipped: %v", where, rest, res.Skipped)
				}
			default:
				t.Fatalf("%s: unknown assertion %q", where, verb)
			}
		}
	}
	if n == 0 {
		t.Errorf("fixture %s has no assertions", fx.name)
	}
}

// values returns every value of key in section of a unit file, in order.
func values(data []byte, section, key string) []string {
	var out []string
	cur := ""
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			cur = line[1 : len(line)-1]
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && cur == section && k == key {
			out = append(out, v)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
