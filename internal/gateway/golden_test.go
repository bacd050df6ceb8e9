package gateway

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenCase is one configuration: projects (testdata/<name>.toml, read as
// /etc/bm2/<name>.toml) and options, rendered for each kind into
// testdata/<case>.<kind>.golden.
type goldenCase struct {
	name     string
	projects []string
	opts     Options
}

var goldenCases = []goldenCase{
	{name: "cluster", projects: []string{"api"}},
	{name: "fork", projects: []string{"fk"},
		opts: Options{ServerNames: []string{"fk.example.com"}, Listen: "127.0.0.1:8080"}},
	{name: "fork-one", projects: []string{"one"}},
	{name: "fork-max", projects: []string{"max"}},
	{name: "fleet-cluster", projects: []string{"api"},
		opts: Options{ServerNames: []string{"api.example.com", "www.api.example.com"}, Hosts: []string{"10.0.0.1", "10.0.0.2"}}},
	{name: "fleet-fork", projects: []string{"fk"},
		opts: Options{Hosts: []string{"10.0.0.1", "10.0.0.2"}, Listen: "[::]:80"}},
	{name: "prefix", projects: []string{"api", "fk", "my-api"},
		opts: Options{ServerNames: []string{"example.com"}, PathPrefix: "/"}},
	{name: "prefix-fleet", projects: []string{"one", "fk"},
		opts: Options{ServerNames: []string{"*.example.com"}, PathPrefix: "/apps/v1", Hosts: []string{"[fd00::1]", "10.0.0.3"}, Listen: "[::1]:8080"}},
}

// testNumCPU pins instances = "max".
const testNumCPU = 2

func loadProject(t *testing.T, name string) *config.Project {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name+".toml"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := config.Parse("/etc/bm2/"+name+".toml", data, config.Options{NumCPU: testNumCPU})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func (c goldenCase) load(t *testing.T) []*config.Project {
	var ps []*config.Project
	for _, n := range c.projects {
		ps = append(ps, loadProject(t, n))
	}
	return ps
}

func goldenPath(c goldenCase, kind Kind) string {
	return filepath.Join("testdata", c.name+"."+string(kind)+".golden")
}

// TestGolden renders every case, checks the bytes against the golden file
// and checks that the real server accepts them.
func TestGolden(t *testing.T) {
	for _, c := range goldenCases {
		for _, kind := range Kinds() {
			t.Run(c.name+"/"+string(kind), func(t *testing.T) {
				ps := c.load(t)
				got, err := Render(kind, ps, c.opts)
				if err != nil {
					t.Fatal(err)
				}
				rev := make([]*config.Project, len(ps))
				for i, p := range ps {
					rev[len(ps)-1-i] = p
				}
				again, err := Render(kind, rev, c.opts)
				if err != nil || !bytes.Equal(got, again) {
					t.Fatalf("output depends on the order of the projects (%v)", err)
				}
				path := goldenPath(c, kind)
				if *update {
					if err := os.WriteFile(path, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run `go test ./internal/gateway -update` to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from %s (run `go test ./internal/gateway -update` and review the diff):\n%s", path, testutil.FirstDifference(want, got))
				}
				switch kind {
				case KindNginx:
					nginxAccepts(t, got)
				case KindCaddy:
					caddyAccepts(t, got)
				}
			})
		}
	}
}

// Every golden file belongs to a case: a renamed case leaves none behind.
func TestNoStaleGoldens(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.golden"))
	want := map[string]bool{}
	for _, c := range goldenCases {
		for _, k := range Kinds() {
			want[goldenPath(c, k)] = true
		}
	}
	for _, f := range files {
		if !want[f] {
			t.Errorf("%s belongs to no case in goldenCases", f)
		}
	}
}

// needTool finds a server binary, or skips the test without it; with
// CI=true it must be there (.ci/run installs nginx and caddy).
func needTool(t *testing.T, name, pkg string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		for _, dir := range []string{"/usr/sbin", "/usr/bin"} {
			if _, serr := os.Stat(filepath.Join(dir, name)); serr == nil {
				return filepath.Join(dir, name)
			}
		}
		testutil.Skip(t, testutil.Need{What: "no " + name, Fix: "sudo apt-get install " + pkg}, err)
	}
	return path
}

// nginxAccepts runs `nginx -t` on a minimal nginx.conf that includes the
// snippet in its http block, in a temporary prefix: no root paths, no
// sockets, nothing outside the test's directory. A warning fails too.
func nginxAccepts(t *testing.T, snippet []byte) {
	t.Helper()
	nginx := needTool(t, "nginx", "nginx")
	dir := nginxDir(t, snippet)
	cmd := exec.Command(nginx, "-t", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr",
		"-g", "pid "+filepath.Join(dir, "nginx.pid")+"; error_log stderr;")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test is successful") {
		t.Fatalf("nginx -t refuses the snippet: %v\n%s\nsnippet:\n%s", err, out, snippet)
	}
	for _, bad := range []string{"[warn]", "[emerg]", "[alert]", "[crit]"} {
		if strings.Contains(string(out), bad) {
			t.Errorf("nginx -t says %s:\n%s", bad, out)
		}
	}
}

// caddyAccepts runs `caddy validate` on the Caddyfile (with HOME and the
// XDG directories in the test's directory, so it writes nowhere else) and
// checks that `caddy fmt` would not change it.
func caddyAccepts(t *testing.T, caddyfile []byte) {
	t.Helper()
	caddy := needTool(t, "caddy", "caddy")
	dir := t.TempDir()
	file := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(file, caddyfile, 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	cmd := exec.Command(caddy, "validate", "--config", file, "--adapter", "caddyfile")
	cmd.Env, cmd.Dir = env, dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Valid configuration") {
		t.Fatalf("caddy validate refuses the Caddyfile: %v\n%s\nCaddyfile:\n%s", err, out, caddyfile)
	}
	if strings.Contains(string(out), "not formatted") {
		t.Errorf("caddy validate: %s", out)
	}
	cmd = exec.Command(caddy, "fmt", file)
	cmd.Env, cmd.Dir = env, dir
	formatted, err := cmd.Output()
	if err != nil {
		t.Fatalf("caddy fmt: %v", err)
	}
	if !bytes.Equal(formatted, caddyfile) {
		t.Errorf("caddy fmt would change the Caddyfile:\n%s", testutil.FirstDifference(caddyfile, formatted))
	}
}

// nginxDir writes the snippet and a standalone nginx.conf that includes it
// into a fresh directory, nginx's prefix for the test.
func nginxDir(t *testing.T, snippet []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "bm2.conf"), snippet, 0o644); err != nil {
		t.Fatal(err)
	}
	conf := NginxStandalone(dir, "", "    include "+filepath.Join(dir, "bm2.conf")+";")
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
