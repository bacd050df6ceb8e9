package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/kube"
)

const (
	kubeAPI = "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv/api\"\ninstances = 4\nport = 3000\n\n[env]\nTOKEN = \"ZQX-secret-value\"\n"
	kubeFk  = "name = \"fk\"\nscript = \"a.js\"\ncwd = \"/srv/fk\"\ninstances = 3\nport = 4000\nexec_mode = \"fork\"\nuser = \"www-data\"\n"
	kubeImg = "registry.example.com/app:1.0"
)

func kubeEnv(t *testing.T) *testEnv {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", kubeAPI)
	te.write("etc/bm2/fk.toml", kubeFk)
	return te
}

// kubeWant is what package kube makes of the registered files, as the
// command reads them.
func kubeWant(t *testing.T, te *testEnv, opts kube.Options, names ...string) *kube.Result {
	t.Helper()
	var srcs []kube.Source
	for _, n := range names {
		file := filepath.Join(te.paths.ConfigDir, n+".toml")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		p, err := config.Parse(file, data, config.Options{NumCPU: 2})
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, kube.Source{Project: p, File: file, Lines: config.KeyLines(data)})
	}
	res, err := kube.Export(srcs, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestExportPrintsManifests(t *testing.T) {
	te := kubeEnv(t)
	te.mustRun(ExitOK, "export", "kube", "api", "--image", kubeImg, "--namespace", "prod")
	want := kubeWant(t, te, kube.Options{Image: kubeImg, Namespace: "prod"}, "api")
	if got := te.stdout.String(); got != string(want.Manifests()) {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want.Manifests())
	}
	for _, s := range []string{"kind: Service\n", "kind: Deployment\n", "replicas: 4\n", "namespace: prod\n", "name: api-env\n"} {
		if !strings.Contains(te.stdout.String(), s) {
			t.Errorf("no %q in the manifests", s)
		}
	}
	if strings.Contains(te.stdout.String()+te.stderr.String(), "ZQX") {
		t.Error("an [env] value is in the output")
	}
	if !strings.Contains(te.stderr.String(), "bm2: note: api reads [env] from Secret api-env, which you create") {
		t.Errorf("stderr: %s", te.stderr.String())
	}

	// Every registered project; a warning for what is left out.
	te.mustRun(ExitOK, "export", "kube", "--image", kubeImg, "--ordinal")
	want = kubeWant(t, te, kube.Options{Image: kubeImg, Ordinal: true}, "api", "fk")
	if got := te.stdout.String(); got != string(want.Manifests()) {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want.Manifests())
	}
	if strings.Count(te.stdout.String(), "kind: StatefulSet\n") != 2 {
		t.Errorf("not a StatefulSet each:\n%s", te.stdout.String())
	}
	if w := filepath.Join(te.paths.ConfigDir, "fk.toml") + ":7: user: \"www-data\" is left out"; !strings.Contains(te.stderr.String(), "bm2: warning: "+w) {
		t.Errorf("stderr: %s", te.stderr.String())
	}

	// A project dir and a file, not registered; a gateway over both.
	// (The test's directory is under /tmp, which no image has: the dir's
	// bm2.toml names where the image holds the app.)
	dir := filepath.Dir(te.write("srv/web/bm2.toml", "name = \"web\"\nscript = \"a.js\"\ncwd = \"/app\"\ninstances = 2\nport = 5000\n"))
	file := te.write("elsewhere/one.toml", "name = \"one\"\nscript = \"a.js\"\ncwd = \"/srv/one\"\nport = 5100\n")
	te.mustRun(ExitInvalid, "export", "kube", filepath.Dir(te.write("tmpapp/bm2.toml", "name = \"tmpapp\"\nscript = \"a.js\"\nport = 5200\n")), "--image", kubeImg)
	if !strings.Contains(te.stderr.String(), "/tmpapp/bm2.toml: cwd: ") || !strings.Contains(te.stderr.String(), "is under /tmp, which an image does not have") {
		t.Errorf("a project dir under /tmp: %s", te.stderr.String())
	}
	te.mustRun(ExitOK, "export", "kube", dir, file, "--image", kubeImg, "--gateway", "edge", "--path-prefix", "/apps", "--server-name", "example.com")
	out := te.stdout.String()
	for _, s := range []string{"kind: HTTPRoute\n", "value: /apps/web/\n", "value: /apps/one/\n", "- example.com\n", "workingDir: /app\n", "workingDir: /srv/one\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in:\n%s", s, out)
		}
	}
}

func TestExportUsage(t *testing.T) {
	te := kubeEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"export", "kube", "api"}, "export kube: image: required: the image that holds the app at its cwd and its runtime, e.g. --image"},
		{[]string{"export", "helm", "api"}, `export: unknown target "helm": want kube`},
		{[]string{"export", "kube", "api", "--image", kubeImg, "--secrets"}, "--secrets writes the values of [env] to a file of their own, mode 0600, and never prints them: give --out DIR"},
		{[]string{"export", "kube", "api", "--image", "Not An Image"}, `image "Not An Image": not an image reference`},
		{[]string{"export", "kube", "api", "--image", kubeImg, "--server-name", "a.example.com"}, "need --gateway NAME"},
		{[]string{"export", "kube", "--image", kubeImg, "--gateway", "edge"}, "several projects need --path-prefix"},
		{[]string{"export", "kube", "api", "fk", "api", "--image", kubeImg}, "project api given twice"},
		{[]string{"export"}, "missing argument"},
	} {
		te.mustRun(ExitUsage, c.args...)
		if te.stdout.Len() != 0 || !strings.Contains(te.stderr.String(), c.want) {
			t.Errorf("%q: stdout %q, stderr %q, want %q", c.args, te.stdout.String(), te.stderr.String(), c.want)
		}
	}
	te.mustRun(ExitNoProject, "export", "kube", "nope", "--image", kubeImg)
	newTestEnv(t).mustRun(ExitNoProject, "export", "kube", "--image", kubeImg)
	te.mustRun(ExitOK, "export", "--help")
	if h := te.stdout.String(); !strings.Contains(h, "Usage: bm2 export [flags] <kube>") || !strings.Contains(h, "--image IMAGE") || !strings.Contains(h, "-o, --out DIR") {
		t.Errorf("help:\n%s", h)
	}
}

// A project that cannot run in a pod as it says is refused, naming the
// file, the line and the key, and nothing is printed or written, not
// even the other projects'.
func TestExportRefusesUnmappable(t *testing.T) {
	te := kubeEnv(t)
	bad := te.write("etc/bm2/bad.toml", "name = \"bad\"\nscript = \"a.js\"\ncwd = \"/srv/bad\"\nport = 3100\nruntime_path = \"/home/alice/.bun/bin/bun\"\n")
	out := filepath.Join(te.root, "k8s")
	for _, args := range [][]string{
		{"export", "kube", "bad", "--image", kubeImg},
		{"export", "kube", "--image", kubeImg, "--out", out, "--secrets"},
	} {
		te.mustRun(ExitInvalid, args...)
		if te.stdout.Len() != 0 || !strings.Contains(te.stderr.String(), "bm2:   "+bad+":5: runtime_path: /home/alice/.bun/bin/bun is under /home, which an image does not have") {
			t.Errorf("%q: stdout %q\nstderr %s", args, te.stdout.String(), te.stderr.String())
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was made: %v", out, err)
	}
	// An invalid registered project: nothing either.
	te.write("etc/bm2/broken.toml", "name = \"broken\"\nport = 1\n")
	te.mustRun(ExitInvalid, "export", "kube", "api", "broken", "--image", kubeImg)
	te.mustRun(ExitInvalid, "export", "kube", "--image", kubeImg)
	if te.stdout.Len() != 0 || !strings.Contains(te.stderr.String(), "cannot be served") {
		t.Errorf("stdout %q\nstderr %s", te.stdout.String(), te.stderr.String())
	}
}

// --out writes a file per project and the Secrets beside them with mode
// 0600, each atomically; the same bytes with the same mode are left alone.
func TestExportOut(t *testing.T) {
	te := kubeEnv(t)
	out := filepath.Join(te.root, "deploy", "k8s")
	te.mustRun(ExitOK, "export", "kube", "--image", kubeImg, "--secrets", "--out", out, "--gateway", "edge", "--path-prefix", "/")
	want := kubeWant(t, te, kube.Options{Image: kubeImg, Secrets: true, Gateway: "edge", PathPrefix: "/"}, "api", "fk")
	if got, w := te.stdout.String(), "wrote "+out+"/api.yaml (Service, Deployment and HTTPRoute for api)\n"+
		"wrote "+out+"/api.secret.yaml (Secret for api, mode 0600: keep it out of version control)\n"+
		"wrote "+out+"/fk.yaml (Service, Deployment and HTTPRoute for fk)\n"+
		"apply them: kubectl apply -f "+out+"\n"; got != w {
		t.Errorf("stdout:\n%s\nwant:\n%s", got, w)
	}
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != len(want.Files) {
		t.Errorf("%s holds %v, want %d files", out, ents, len(want.Files))
	}
	for _, f := range want.Files {
		path := filepath.Join(out, f.Name)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != string(f.Data) {
			t.Errorf("%s:\n%s\nwant:\n%s", path, data, f.Data)
		}
		st, _ := os.Stat(path)
		if st.Mode().Perm() != f.Perm() {
			t.Errorf("%s: mode %v, want %v", path, st.Mode().Perm(), f.Perm())
		}
	}
	secret := filepath.Join(out, "api.secret.yaml")
	if st, _ := os.Stat(secret); st.Mode().Perm() != 0o600 {
		t.Errorf("the Secret is %v", st.Mode())
	}
	if data, _ := os.ReadFile(secret); !strings.Contains(string(data), "TOKEN: ZQX-secret-value\n") {
		t.Errorf("the Secret:\n%s", data)
	}
	if data, _ := os.ReadFile(filepath.Join(out, "api.yaml")); strings.Contains(string(data), "ZQX") {
		t.Error("an [env] value in api.yaml")
	}

	// Again: unchanged, the files not replaced.
	before, _ := os.Stat(filepath.Join(out, "fk.yaml"))
	te.mustRun(ExitOK, "export", "kube", "--image", kubeImg, "--secrets", "--out", out, "--gateway", "edge", "--path-prefix", "/")
	if !strings.Contains(te.stdout.String(), "unchanged: "+out+"/fk.yaml\n") || !strings.Contains(te.stdout.String(), "unchanged: "+secret+"\n") {
		t.Errorf("stdout:\n%s", te.stdout.String())
	}
	if after, _ := os.Stat(filepath.Join(out, "fk.yaml")); !os.SameFile(before, after) {
		t.Error("an unchanged file was replaced")
	}
	// A Secret someone made readable to all is written again, 0600.
	if err := os.Chmod(secret, 0o644); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitOK, "export", "kube", "api", "--image", kubeImg, "--secrets", "--out", out, "--gateway", "edge")
	if st, _ := os.Stat(secret); st.Mode().Perm() != 0o600 || !strings.Contains(te.stdout.String(), "wrote "+secret) {
		t.Errorf("after chmod: %v\n%s", st.Mode(), te.stdout.String())
	}
	ents, _ = os.ReadDir(out)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".#") {
			t.Errorf("left behind: %s", e.Name())
		}
	}

	// Without --secrets the old Secret stays, and bm2 says so: apply -f
	// DIR would apply its values again.
	te.mustRun(ExitOK, "export", "kube", "api", "--image", kubeImg, "--out", out, "--gateway", "edge")
	if !strings.Contains(te.stderr.String(), "bm2: warning: "+secret+" is an earlier export's Secret of api") {
		t.Errorf("no word of the stale Secret:\n%s", te.stderr.String())
	}

	// A directory that cannot be made.
	te.write("afile", "")
	te.mustRun(ExitFailure, "export", "kube", "api", "--image", kubeImg, "--out", filepath.Join(te.root, "afile", "k8s"))
}

func TestGatewayHTTPRoute(t *testing.T) {
	te := kubeEnv(t)
	te.mustRun(ExitOK, "gateway", "httproute", "api", "fk", "--gateway", "infra/edge", "--path-prefix", "/", "--server-name", "example.com", "-n", "prod")
	out := te.stdout.String()
	for _, s := range []string{"kind: HTTPRoute\n", "namespace: infra\n", "namespace: prod\n", "value: /api/\n", "value: /fk/\n", "port: 4000\n", "- example.com\n"} {
		if !strings.Contains(out, s) {
			t.Errorf("no %q in:\n%s", s, out)
		}
	}
	for _, s := range []string{"kind: Deployment", "kind: Service\n", "ZQX"} {
		if strings.Contains(out, s) {
			t.Errorf("%q in:\n%s", s, out)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gateway", "httproute", "api"}, "gateway httproute: gateway: required"},
		{[]string{"gateway", "httproute", "api", "--gateway", "edge", "--listen", "8080"}, "--listen is for nginx and caddy"},
		{[]string{"gateway", "httproute", "api", "--gateway", "edge", "--host", "10.0.0.1"}, "--host is for nginx and caddy"},
		{[]string{"gateway", "nginx", "api", "--gateway", "edge"}, "gateway nginx: --gateway is for httproute"},
		{[]string{"gateway", "caddy", "api", "--namespace", "prod"}, "gateway caddy: --namespace is for httproute"},
		{[]string{"gateway", "httproute", "api", "--gateway", "edge", "--server-name", "10.0.0.1"}, "not IP addresses"},
		{[]string{"gateway", "httproute", "--gateway", "edge"}, "several projects need --path-prefix"},
	} {
		te.mustRun(ExitUsage, c.args...)
		if te.stdout.Len() != 0 || !strings.Contains(te.stderr.String(), c.want) {
			t.Errorf("%q: stdout %q, stderr %q, want %q", c.args, te.stdout.String(), te.stderr.String(), c.want)
		}
	}
	file := filepath.Join(te.root, "routes.yaml")
	te.mustRun(ExitOK, "gateway", "httproute", "fk", "--gateway", "edge", "--out", file)
	if got := te.stdout.String(); got != "wrote "+file+" (httproute for fk); apply it: kubectl apply -f "+file+"\n" {
		t.Errorf("stdout: %q", got)
	}
	te.mustRun(ExitOK, "gateway", "httproute", "fk", "--gateway", "edge", "--out", file)
	if got := te.stdout.String(); got != "unchanged: "+file+"\n" {
		t.Errorf("stdout: %q", got)
	}
}

// A worker (no port) exports as its workload alone; with --gateway the
// other projects get their routes and bm2 says why the worker has none.
// A route alone for a worker is refused, naming it.
func TestExportWorker(t *testing.T) {
	te := kubeEnv(t)
	te.write("etc/bm2/queue.toml", "name = \"queue\"\nscript = \"worker.js\"\ncwd = \"/srv/queue\"\ninstances = 2\n")
	te.mustRun(ExitOK, "export", "kube", "queue", "--image", kubeImg)
	want := kubeWant(t, te, kube.Options{Image: kubeImg}, "queue")
	out := te.stdout.String()
	if out != string(want.Manifests()) {
		t.Fatalf("stdout:\n%s\nwant:\n%s", out, want.Manifests())
	}
	if !strings.Contains(out, "# queue: a worker, 2 replicas, no port: no Service.") || strings.Contains(out, "kind: Service\n") ||
		strings.Contains(out, "name: BM2_APP_PORT\n") || !strings.Contains(out, "kind: Deployment\n") {
		t.Errorf("manifests:\n%s", out)
	}

	dir := filepath.Join(te.root, "k8s")
	te.mustRun(ExitOK, "export", "kube", "api", "queue", "--image", kubeImg, "--gateway", "edge", "--out", dir)
	if got := te.stdout.String(); !strings.Contains(got, "wrote "+dir+"/api.yaml (Service, Deployment and HTTPRoute for api)\n") ||
		!strings.Contains(got, "wrote "+dir+"/queue.yaml (Deployment for queue)\n") {
		t.Errorf("stdout:\n%s", got)
	}
	if !strings.Contains(te.stderr.String(), "bm2: note: queue is a worker (no port): it has no Service and no HTTPRoute to Gateway edge") {
		t.Errorf("stderr:\n%s", te.stderr.String())
	}

	te.mustRun(ExitInvalid, "gateway", "httproute", "queue", "--gateway", "edge")
	if te.stdout.Len() != 0 || !strings.Contains(te.stderr.String(), "no HTTPRoute can send requests to the project as its file says") ||
		!strings.Contains(te.stderr.String(), "queue.toml: port: not set: queue is a worker, which serves nothing an HTTPRoute could send requests to") {
		t.Errorf("httproute of a worker: stdout %q\nstderr %s", te.stdout.String(), te.stderr.String())
	}
}
