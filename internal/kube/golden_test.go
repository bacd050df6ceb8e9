package kube

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// testNumCPU pins instances = "max".
const testNumCPU = 2

const testImage = "registry.example.com/team/app:1.0"

// goldenCase is one export: projects (testdata/<name>.toml, read as
// /etc/bm2/<name>.toml) and options, into testdata/<case>.golden. routes
// renders Routes instead of Export.
type goldenCase struct {
	name     string
	projects []string
	opts     Options
	routes   bool
}

var goldenCases = []goldenCase{
	{name: "cluster", projects: []string{"api"}, opts: Options{Image: testImage}},
	{name: "cluster-secrets-gateway", projects: []string{"api"},
		opts: Options{Image: testImage, Namespace: "prod", Secrets: true, Gateway: "edge", Hostnames: []string{"api.example.com"}}},
	{name: "fork", projects: []string{"fk"}, opts: Options{Image: testImage}},
	{name: "health-cluster", projects: []string{"hc"}, opts: Options{Image: testImage}},
	{name: "health-fork", projects: []string{"hf"}, opts: Options{Image: testImage}},
	{name: "fork-ordinal", projects: []string{"fk"}, opts: Options{Image: testImage, Namespace: "prod", Ordinal: true}},
	{name: "cluster-ordinal", projects: []string{"api"}, opts: Options{Image: testImage, Ordinal: true, Secrets: true}},
	{name: "lowport-envfile", projects: []string{"web"}, opts: Options{Image: testImage, Secrets: true}},
	{name: "lowport-envfile-nosecrets", projects: []string{"web"}, opts: Options{Image: "web:2"}},
	{name: "dropped", projects: []string{"legacy"}, opts: Options{Image: testImage}},
	{name: "prefix-gateway", projects: []string{"fk", "api"},
		opts: Options{Image: testImage, Gateway: "infra/edge", Hostnames: []string{"*.example.com", "example.com"}, PathPrefix: "/apps"}},
	{name: "worker", projects: []string{"wk"}, opts: Options{Image: testImage}},
	{name: "worker-health", projects: []string{"wh"}, opts: Options{Image: testImage}},
	{name: "worker-ordinal-gateway", projects: []string{"api", "wk"},
		opts: Options{Image: testImage, Namespace: "prod", Ordinal: true, Gateway: "edge", Hostnames: []string{"api.example.com"}}},
	{name: "routes", projects: []string{"api", "fk"}, routes: true,
		opts: Options{Gateway: "edge", Namespace: "prod", PathPrefix: "/"}},
}

// source reads testdata/<name>.toml as /etc/bm2/<name>.toml, with its
// key lines.
func source(t *testing.T, name string) Source {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	return parse(t, "/etc/bm2/"+name+".toml", string(data))
}

func parse(t *testing.T, file, text string) Source {
	t.Helper()
	p, err := config.Parse(file, []byte(text), config.Options{NumCPU: testNumCPU})
	if err != nil {
		t.Fatal(err)
	}
	return Source{Project: p, Lines: config.KeyLines([]byte(text))}
}

func (c goldenCase) sources(t *testing.T) []Source {
	var out []Source
	for _, n := range c.projects {
		out = append(out, source(t, n))
	}
	return out
}

// render is the case's output as one text: each file after a comment
// line with its name and mode, so the golden file is a YAML stream too.
func (c goldenCase) render(t *testing.T, sources []Source) []byte {
	t.Helper()
	if c.routes {
		out, err := Routes(sources, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	res, err := Export(sources, c.opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	for _, f := range res.Files {
		fmt.Fprintf(&b, "# ==> %s (mode %04o) <==\n", f.Name, f.Perm())
		b.Write(f.Data)
	}
	return b.Bytes()
}

func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			srcs := c.sources(t)
			got := c.render(t, srcs)
			rev := make([]Source, len(srcs))
			for i, s := range srcs {
				rev[len(srcs)-1-i] = s
			}
			if again := c.render(t, rev); !bytes.Equal(got, again) {
				t.Fatal("output depends on the order of the projects")
			}
			if again := c.render(t, c.sources(t)); !bytes.Equal(got, again) {
				t.Fatal("the same input gave other bytes")
			}
			path := filepath.Join("testdata", c.name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run `go test ./internal/kube -update` to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (run `go test ./internal/kube -update` and review the diff):\n%s", path, testutil.FirstDifference(want, got))
			}
			for _, noise := range []string{"creationTimestamp", "status:", ": null", "resources: {}"} {
				if strings.Contains(string(got), noise) {
					t.Errorf("output has %q", noise)
				}
			}
		})
	}
}

// Every golden file belongs to a case: a renamed case leaves none behind.
func TestNoStaleGoldens(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.golden"))
	want := map[string]bool{}
	for _, c := range goldenCases {
		want[filepath.Join("testdata", c.name+".golden")] = true
	}
	for _, f := range files {
		if !want[f] {
			t.Errorf("%s belongs to no case in goldenCases", f)
		}
	}
}
