package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// openRoot lets nobody, as whom a command line's runtime is asked its
// version (as import asks it), reach te's runtimes.
func openRoot(t *testing.T, te *testEnv) {
	for _, d := range []string{filepath.Dir(te.root), te.root} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// bm2 start app.js -i 2, as PM2 users type it: the port found in the
// code, cluster mode with the preload, a bm2.toml beside the script, and
// the project served and confirmed.
func TestStartScript(t *testing.T) {
	te := newTestEnv(t)
	openRoot(t, te)
	script := te.write("srv/shop/server.js", "const port = process.env.PORT || 3000;\nrequire('http').createServer().listen(port);\n")
	te.mustRun(ExitOK, "start", script, "-i", "2", "--env", "NODE_ENV=production", "--", "--verbose")
	out := te.stdout.String()
	toml := filepath.Join(filepath.Dir(script), "bm2.toml")
	for _, want := range []string{
		"port 3000: server.js reads `process.env.PORT || 3000`",
		"bm2 start " + script + ": writes " + toml,
		"server-0 confirmed (reusePort)",
		"server-1 confirmed (reusePort)",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name = "server"`, `script = "server.js"`, "instances = 2", "port = 3000", `exec_mode = "cluster"`,
		`reuseport = "preload"`, `port_env = ["PORT"]`, `args = ["--verbose"]`, `NODE_ENV = "production"`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("%s lacks %q:\n%s", toml, want, data)
		}
	}
	if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, "server.toml")); err != nil {
		t.Errorf("not registered: %v", err)
	}

	// Again with other settings: the bm2.toml beside it differs, and
	// only --force replaces it.
	te.stdout.Reset()
	te.mustRun(ExitInvalid, "start", script, "-i", "3")
	if !strings.Contains(te.stderr.String(), "--force") {
		t.Errorf("stderr:\n%s", te.stderr.String())
	}
	te.mustRun(ExitOK, "start", script, "-i", "3", "--force")
	if data, _ := os.ReadFile(toml); !strings.Contains(string(data), "instances = 3") {
		t.Errorf("--force did not replace it:\n%s", data)
	}
	// A project's name still starts the project.
	te.mustRun(ExitOK, "start", "server")
}

// A script with no port anywhere is a worker; --name names it.
func TestStartScriptWorker(t *testing.T) {
	te := newTestEnv(t)
	openRoot(t, te)
	script := te.write("srv/jobs/consume.mjs", "setInterval(() => {}, 1000);\n")
	te.mustRun(ExitOK, "start", script, "--name", "mail-jobs")
	out := te.stdout.String()
	if !strings.Contains(out, "a worker (no port)") || !strings.Contains(out, "mail-jobs-0 online") {
		t.Errorf("output:\n%s", out)
	}
	data, _ := os.ReadFile(filepath.Join(filepath.Dir(script), "bm2.toml"))
	if strings.Contains(string(data), "\nport =") || !strings.Contains(string(data), `name = "mail-jobs"`) {
		t.Errorf("bm2.toml:\n%s", data)
	}
}

// What start refuses, each with what to type.
func TestStartRefusals(t *testing.T) {
	te := newTestEnv(t)
	script := te.write("srv/x/app.js", "x\n")
	other := te.write("srv/x/notes.txt", "x\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"start", "api", "-i", "4"}, ExitUsage, "api is a project's name, which takes no -i"},
		{[]string{"start", "/srv/none.js"}, ExitUsage, "no such file: /srv/none.js"},
		{[]string{"start", other}, ExitUsage, "is neither a script nor an ecosystem file"},
		{[]string{"start", script, "-i", "lots"}, ExitUsage, `-i "lots": give a number of instances`},
		{[]string{"start", script, "--env", "JUSTANAME"}, ExitUsage, `--env "JUSTANAME": give NAME=VALUE`},
		{[]string{"start", script, "--name", "Bad Name"}, ExitUsage, `--name "Bad Name" is not a project name`},
		{[]string{"start", script, "extra"}, ExitUsage, "the app's own arguments go after --"},
	} {
		te.stderr.Reset()
		if code := te.run(c.args...); code != c.code || !strings.Contains(te.stderr.String(), c.want) {
			t.Errorf("bm2 %s: exit %d (want %d)\n%s", strings.Join(c.args, " "), code, c.code, te.stderr.String())
		}
	}
}
