package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/gateway"
)

const (
	gwAPI = "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv/api\"\ninstances = 4\nport = 3000\n"
	gwFk  = "name = \"fk\"\nscript = \"a.js\"\ncwd = \"/srv/fk\"\ninstances = 3\nport = 4000\nexec_mode = \"fork\"\n"
)

func gatewayEnv(t *testing.T) *testEnv {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", gwAPI)
	te.write("etc/bm2/fk.toml", gwFk)
	return te
}

// want renders what package gateway makes of the project file text.
func gwWant(t *testing.T, kind gateway.Kind, opts gateway.Options, files ...string) string {
	t.Helper()
	var ps []*config.Project
	for _, f := range files {
		p, err := config.Parse("/etc/bm2/"+strings.SplitN(strings.SplitN(f, "\"", 3)[1], "\"", 2)[0]+".toml", []byte(f), config.Options{NumCPU: 2})
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	out, err := gateway.Render(kind, ps, opts)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestGatewayPrintsARegisteredProject(t *testing.T) {
	te := gatewayEnv(t)
	te.mustRun(ExitOK, "gateway", "nginx", "fk")
	if got, want := te.stdout.String(), gwWant(t, gateway.KindNginx, gateway.Options{}, gwFk); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range []string{"server 127.0.0.1:4000 max_fails=0;", "server 127.0.0.1:4002 max_fails=0;", "proxy_next_upstream error timeout;"} {
		if !strings.Contains(te.stdout.String(), s) {
			t.Errorf("no %q in:\n%s", s, te.stdout.String())
		}
	}
	if te.stderr.Len() != 0 {
		t.Errorf("stderr: %s", te.stderr.String())
	}

	opts := gateway.Options{ServerNames: []string{"api.example.com"}, Listen: "127.0.0.1:8080", Hosts: []string{"10.0.0.1", "10.0.0.2"}}
	te.mustRun(ExitOK, "gateway", "caddy", "api", "--server-name", "api.example.com", "--listen", "127.0.0.1:8080", "--host", "10.0.0.1", "--host", "10.0.0.2")
	if got, want := te.stdout.String(), gwWant(t, gateway.KindCaddy, opts, gwAPI); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(te.stdout.String(), "http://api.example.com:8080 {") || !strings.Contains(te.stdout.String(), "to 10.0.0.2:3000\n") {
		t.Errorf("caddy:\n%s", te.stdout.String())
	}
}

// Without arguments: every registered project, which needs --path-prefix
// as soon as there are two.
func TestGatewayAllProjects(t *testing.T) {
	te := gatewayEnv(t)
	te.mustRun(ExitUsage, "gateway", "nginx")
	if !strings.Contains(te.stderr.String(), "several projects need --path-prefix") || te.stdout.Len() != 0 {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", te.stdout.String(), te.stderr.String())
	}
	te.mustRun(ExitOK, "gateway", "nginx", "--path-prefix", "/")
	if got, want := te.stdout.String(), gwWant(t, gateway.KindNginx, gateway.Options{PathPrefix: "/"}, gwAPI, gwFk); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
	for _, s := range []string{"upstream bm2_api {", "upstream bm2_fk {", "location /api/ {", "location /fk/ {"} {
		if !strings.Contains(te.stdout.String(), s) {
			t.Errorf("no %q", s)
		}
	}

	// An invalid registered project: nothing is printed.
	te.write("etc/bm2/bad.toml", "name = \"bad\"\nport = 1\n")
	te.mustRun(ExitInvalid, "gateway", "nginx", "--path-prefix", "/")
	if te.stdout.Len() != 0 || !strings.Contains(te.stderr.String(), "1 registered project cannot be served") || !strings.Contains(te.stderr.String(), "bad (") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", te.stdout.String(), te.stderr.String())
	}
	te.mustRun(ExitInvalid, "gateway", "nginx", "bad")
	// Naming the good ones still works.
	te.mustRun(ExitOK, "gateway", "nginx", "--path-prefix", "/", "api", "fk")

	empty := newTestEnv(t)
	empty.mustRun(ExitNoProject, "gateway", "caddy")
}

// A project dir or a project file given as a path: not registered, read as
// bm2 serve or bm2 check would.
func TestGatewayProjectFiles(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/fk/bm2.toml", "name = \"fk\"\nscript = \"a.js\"\ninstances = 3\nport = 4000\nexec_mode = \"fork\"\n"))
	file := te.write("elsewhere/web.toml", "name = \"web\"\nscript = \"a.js\"\ncwd = \"/srv/web\"\nport = 5000\n")
	te.mustRun(ExitOK, "gateway", "nginx", dir, file, "--path-prefix", "/apps")
	out := te.stdout.String()
	for _, s := range []string{"server 127.0.0.1:4001 max_fails=0;", "server 127.0.0.1:5000;", "location /apps/fk/ {", "location /apps/web/ {"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in:\n%s", s, out)
		}
	}
	te.mustRun(ExitOK, "gateway", "caddy", filepath.Join(dir, "bm2.toml"))
	if !strings.Contains(te.stdout.String(), "to 127.0.0.1:4002\n") {
		t.Errorf("caddy:\n%s", te.stdout.String())
	}
	te.mustRun(ExitUsage, "gateway", "nginx", dir, filepath.Join(dir, "bm2.toml"), "--path-prefix", "/")
	if !strings.Contains(te.stderr.String(), "project fk given twice") {
		t.Errorf("stderr: %s", te.stderr.String())
	}
	te.write("srv/broken/bm2.toml", "name = \"broken\"\nport = 3000\n")
	te.mustRun(ExitInvalid, "gateway", "nginx", filepath.Join(te.root, "srv/broken"))
	te.mustRun(ExitInvalid, "gateway", "nginx", "./no/such/dir")
}

func TestGatewayUsage(t *testing.T) {
	te := gatewayEnv(t)
	te.mustRun(ExitUsage, "gateway")
	te.mustRun(ExitUsage, "gateway", "haproxy", "api")
	if !strings.Contains(te.stderr.String(), `unknown gateway "haproxy": want nginx, caddy or httproute`) {
		t.Errorf("stderr: %s", te.stderr.String())
	}
	te.mustRun(ExitNoProject, "gateway", "nginx", "nope")
	te.mustRun(ExitOK, "gateway", "--help")
	if !strings.Contains(te.stdout.String(), "Usage: bm2 gateway [flags] <nginx | caddy | httproute>") || !strings.Contains(te.stdout.String(), "--path-prefix PREFIX") {
		t.Errorf("help:\n%s", te.stdout.String())
	}
}

// No flag value reaches the configuration unchecked: each of these is
// refused with a usage error, and nothing is printed or written.
func TestGatewayRefusesHostileValues(t *testing.T) {
	te := gatewayEnv(t)
	out := filepath.Join(te.root, "gw.conf")
	for _, v := range []string{"x;", "x{", "x}", `x"`, "x'", "x\ny", "$host", "a b", "x#"} {
		for _, flag := range []string{"--server-name", "--listen", "--host", "--path-prefix"} {
			val := v
			if flag == "--path-prefix" {
				val = "/" + v
			}
			for _, kind := range []string{"nginx", "caddy"} {
				te.mustRun(ExitUsage, "gateway", kind, "fk", flag, val, "--out", out)
				if te.stdout.Len() != 0 || !strings.Contains(te.stderr.String(), strings.TrimPrefix(flag, "--")) {
					t.Errorf("%s %s %q: stdout %q, stderr %q", kind, flag, val, te.stdout.String(), te.stderr.String())
				}
			}
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written: %v", out, err)
	}
}

// --out writes atomically, and leaves a file that holds the same bytes
// alone, saying so.
func TestGatewayOut(t *testing.T) {
	te := gatewayEnv(t)
	out := filepath.Join(te.root, "etc", "nginx", "conf.d", "bm2.conf")
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitOK, "gateway", "nginx", "fk", "--out", out)
	if got := te.stdout.String(); got != "wrote "+out+" (nginx for fk); apply it: nginx -t && nginx -s reload\n" {
		t.Errorf("stdout: %q", got)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := gwWant(t, gateway.KindNginx, gateway.Options{}, gwFk); string(data) != want {
		t.Fatalf("%s:\n%s\nwant:\n%s", out, data, want)
	}
	st, _ := os.Stat(out)
	if st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
	ents, _ := os.ReadDir(filepath.Dir(out))
	if len(ents) != 1 {
		t.Errorf("left behind: %v", ents)
	}

	te.mustRun(ExitOK, "gateway", "nginx", "fk", "-o", out)
	if got := te.stdout.String(); got != "unchanged: "+out+"\n" {
		t.Errorf("stdout: %q", got)
	}
	again, _ := os.Stat(out)
	if !os.SameFile(st, again) {
		t.Error("an unchanged file was replaced")
	}

	// A change of project is written.
	te.write("etc/bm2/fk.toml", strings.Replace(gwFk, "instances = 3", "instances = 4", 1))
	te.mustRun(ExitOK, "gateway", "nginx", "fk", "--out", out)
	if data, _ := os.ReadFile(out); !strings.Contains(string(data), "server 127.0.0.1:4003 max_fails=0;") || !strings.HasPrefix(te.stdout.String(), "wrote ") {
		t.Errorf("after the change: %s\n%s", te.stdout.String(), data)
	}

	te.mustRun(ExitFailure, "gateway", "caddy", "fk", "--out", filepath.Join(te.root, "no", "such", "dir", "Caddyfile"))
	if !strings.Contains(te.stderr.String(), "write the caddy configuration") {
		t.Errorf("stderr: %s", te.stderr.String())
	}
}
