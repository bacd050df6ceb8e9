package preload

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/testutil"
)

// The preload as make install ships it, and the test scripts.
var (
	file = mustAbs(FileName)
	spy  = mustAbs("testdata/spy.cjs")
)

func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		panic(err)
	}
	return abs
}

func TestPathAndArgs(t *testing.T) {
	if got := Path("/usr/lib/bm2/bm2-probe"); got != "/usr/lib/bm2/reuseport.cjs" {
		t.Errorf("Path = %q", got)
	}
	if got := Path("/usr/local/lib/bm2/bm2-probe"); got != "/usr/local/lib/bm2/reuseport.cjs" {
		t.Errorf("Path = %q", got)
	}
	if got := strings.Join(Args(config.Node, "/x.cjs"), " "); got != "--require /x.cjs" {
		t.Errorf("node: %q", got)
	}
	if got := strings.Join(Args(config.Bun, "/x.cjs"), " "); got != "--preload /x.cjs" {
		t.Errorf("bun: %q", got)
	}
}

// outcome is one line of forms.cjs or bun-forms.ts: what listen (or
// Bun.serve) received, whether that was what the app passed, and how a
// first and a second listener of that form fared ("ok" or the error
// code).
type outcome struct {
	Name          string
	Same          bool
	Got           json.RawMessage
	First, Second string
	Answers       string
}

// ports are two free TCP ports: the instance's and another.
func ports(t *testing.T) (int, int) {
	t.Helper()
	var out []int
	for range 2 {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out[0], out[1]
}

// run runs a runtime with args in an environment of its own plus env,
// and returns its standard output.
func run(t *testing.T, exe string, env []string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + cmd.Dir, "TMPDIR=" + cmd.Dir}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(exe), strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// outcomes reads the JSON lines of a forms script.
func outcomes(t *testing.T, out string) map[string]outcome {
	t.Helper()
	m := map[string]outcome{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue // Bun's own lines
		}
		var o outcome
		if err := json.Unmarshal([]byte(line), &o); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		m[o.Name] = o
	}
	return m
}

// form is what the preload must make of one call form: the arguments
// listen receives ($P is the instance's port), or "" when it must pass
// the app's own arguments on untouched; twice when two listeners of the
// form compete for one port.
type form struct {
	name, want string
	twice      bool
}

// Every form of forms.cjs.
var nodeForms = []form{
	{"listen(port)", `[{"port":$P,"reusePort":true}]`, true},
	{"listen(port, cb)", `[{"port":$P,"reusePort":true},"fn"]`, true},
	{"listen(port, host)", `[{"port":$P,"reusePort":true,"host":"0.0.0.0"},"0.0.0.0"]`, true},
	{"listen(port, host, cb)", `[{"port":$P,"reusePort":true,"host":"0.0.0.0"},"0.0.0.0","fn"]`, true},
	{"listen(port, host, backlog, cb)", `[{"port":$P,"reusePort":true,"host":"0.0.0.0"},"0.0.0.0",64,"fn"]`, true},
	{"listen(port, backlog, cb)", `[{"port":$P,"reusePort":true},64,"fn"]`, true},
	{"listen(port, loopback host, cb)", `[{"port":$P,"reusePort":true,"host":"127.0.0.1"},"127.0.0.1","fn"]`, true},
	{"listen(port as string)", `[{"port":"$P","reusePort":true}]`, true},
	{"listen(port as string, host, cb)", `[{"port":"$P","reusePort":true,"host":"0.0.0.0"},"0.0.0.0","fn"]`, true},
	{"listen(options)", `[{"port":$P,"reusePort":true}]`, true},
	{"listen(options, cb)", `[{"port":$P,"host":"0.0.0.0","reusePort":true},"fn"]`, true},
	{"listen(options, backlog, cb)", `[{"port":$P,"backlog":32,"reusePort":true},64,"fn"]`, true},
	{"listen(options, port as string)", `[{"port":"$P","exclusive":false,"reusePort":true}]`, true},
	{"listen(options, reusePort: true)", "", true},
	{"listen(options, reusePort: false)", "", true},
	{"listen(other port)", "", true},
	{"listen(other port, host, cb)", "", true},
	{"listen(options, other port)", "", true},
	{"listen(port 0)", "", false},
	{"listen(options, port 0)", "", false},
	{"listen()", "", false},
	{"listen(cb)", "", false},
	{"listen(null, cb)", "", false},
	{"listen(options, port undefined)", "", false},
	{"listen(path)", "", true},
	{"listen(options, path)", "", true},
	{"listen(handle)", "", false},
	{"listen(server)", "", false},
	{"listen(options, handle and port)", "", false},
	{"listen(options, fd and port)", "", false},
}

// checkForms compares a forms script's outcomes with and without the
// preload against the table: a form on the instance's port gets
// reusePort: true, in exactly the arguments given, and a second listener
// of the same form joins the first, which without the preload fails
// (EADDRINUSE); every other form reaches listen as the app passed it and
// fares as it does without the preload.
func checkForms(t *testing.T, forms []form, port int, with, without map[string]outcome) {
	t.Helper()
	if len(with) != len(forms) || len(without) != len(forms) {
		t.Errorf("%d and %d forms ran, the table has %d", len(with), len(without), len(forms))
	}
	for _, f := range forms {
		w, ok1 := with[f.name]
		wo, ok2 := without[f.name]
		if !ok1 || !ok2 {
			t.Errorf("%s: did not run", f.name)
			continue
		}
		if !wo.Same {
			t.Errorf("%s, without the preload: the spy saw %s, not the app's arguments", f.name, wo.Got)
		}
		if f.want == "" {
			if !w.Same || w.First != wo.First || w.Second != wo.Second {
				t.Errorf("%s: touched by the preload: %s, first %s, second %s (without it: %s, %s)", f.name, w.Got, w.First, w.Second, wo.First, wo.Second)
			}
			continue
		}
		want := strings.ReplaceAll(f.want, "$P", strconv.Itoa(port))
		if w.Same || string(w.Got) != want {
			t.Errorf("%s: listen received %s, want %s", f.name, w.Got, want)
		}
		if w.First != "ok" || (f.twice && w.Second != "ok") {
			t.Errorf("%s: with the preload, first %q, second %q; want both ok", f.name, w.First, w.Second)
		}
		if wo.First != "ok" || (f.twice && wo.Second != "EADDRINUSE") {
			t.Errorf("%s: without the preload, first %q, second %q; want ok, EADDRINUSE", f.name, wo.First, wo.Second)
		}
	}
}

// Every call form of net.Server.prototype.listen, in a real Node.js 24
// process: the forms.cjs script run with the preload and without it.
func TestNodeListenForms(t *testing.T) {
	node := runtimes.Require(t, runtimes.Node, runtimes.Node24Version)
	p, q := ports(t)
	env := []string{"BM2_APP_PORT=" + strconv.Itoa(p), "TEST_PORT=" + strconv.Itoa(p), "OTHER_PORT=" + strconv.Itoa(q), "SOCKET_DIR=" + t.TempDir()}
	script := mustAbs("testdata/forms.cjs")
	with := outcomes(t, run(t, node, env, "--require", spy, "--require", file, script))
	without := outcomes(t, run(t, node, env, "--require", spy, script))
	checkForms(t, nodeForms, p, with, without)

	// Without a port of its own to give, the preload changes nothing.
	for _, bad := range []string{"", "0", "65536", "3000x", " 3000"} {
		env := []string{"TEST_PORT=" + strconv.Itoa(p), "OTHER_PORT=" + strconv.Itoa(q), "SOCKET_DIR=" + t.TempDir()}
		if bad != "" {
			env = append(env, "BM2_APP_PORT="+bad)
		}
		for name, o := range outcomes(t, run(t, node, env, "--require", spy, "--require", file, script)) {
			if !o.Same {
				t.Errorf("BM2_APP_PORT=%q: %s touched: %s", bad, name, o.Got)
			}
		}
	}
}

// Apps as they are written: Express 5 on process.env.PORT (a string),
// Fastify 5 with listen({ port, host }), an ES module on node:http; two
// of each on one port, as two instances.
func TestNodeApps(t *testing.T) {
	node := runtimes.Require(t, runtimes.Node, runtimes.Node24Version)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	mods, err := runtimes.Modules(ctx, runtimes.Frameworks...)
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no " + strings.Join(runtimes.Frameworks, ", "), Fix: "make test-deps (npm installs them)"}, err)
	}
	for _, app := range []string{"express.cjs", "fastify.cjs", "esm.mjs"} {
		t.Run(app, func(t *testing.T) {
			p, _ := ports(t)
			env := []string{"BM2_APP_PORT=" + strconv.Itoa(p), "PORT=" + strconv.Itoa(p), "NODE_PATH=" + mods}
			script := mustAbs("testdata/" + app)
			if got := strings.TrimSpace(run(t, node, env, "--require", file, script)); got != "both listening" {
				t.Errorf("with the preload: %s", got)
			}
			if got := strings.TrimSpace(run(t, node, env, script)); got != "second: EADDRINUSE" {
				t.Errorf("without the preload: %s", got)
			}
		})
	}
}

// The preload reaches the app's process and no other: a child forked by
// the app (child_process.fork passes process.execArgv on) does not load
// it, so its listeners are as it makes them.
func TestNodeForkedChild(t *testing.T) {
	node := runtimes.Require(t, runtimes.Node, runtimes.Node24Version)
	p, _ := ports(t)
	out := run(t, node, []string{"BM2_APP_PORT=" + strconv.Itoa(p), "PORT=" + strconv.Itoa(p)}, "--require", file, mustAbs("testdata/fork.cjs"))
	var got struct {
		Parent, Child struct {
			ExecArgv []string
			Listen   string
		}
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Parent.Listen != "ok ok" || len(got.Parent.ExecArgv) != 0 {
		t.Errorf("the app: %+v, want both listening and no --require in process.execArgv", got.Parent)
	}
	if got.Child.Listen != "ok EADDRINUSE" || len(got.Child.ExecArgv) != 0 {
		t.Errorf("its forked child: %+v, want the second listener refused, as without the preload", got.Child)
	}
}

// Every form of bun-forms.ts.
var bunForms = []form{
	{"Bun.serve({ port })", `[{"port":$P,"fetch":"fn","reusePort":true}]`, true},
	{"Bun.serve({ port as string })", `[{"port":"$P","fetch":"fn","reusePort":true}]`, true},
	{"Bun.serve({ hostname, port })", `[{"hostname":"0.0.0.0","port":$P,"fetch":"fn","reusePort":true}]`, true},
	{"Bun.serve({}), port from $PORT", `[{"fetch":"fn","reusePort":true}]`, true},
	{"Bun.serve({}), port from $BUN_PORT", "", true},
	{"Bun.serve(class instance)", `[{"port":$P,"reusePort":true}]`, true},
	{"Bun.serve({ reusePort: true })", "", true},
	{"Bun.serve({ reusePort: false })", "", true},
	{"Bun.serve({ other port })", "", true},
	{"Bun.serve({ port: 0 })", "", false},
	{"Bun.serve({ unix })", "", false},
}

// Bun.serve's forms in a real Bun 1.4.4 process, with the preload and
// without; and Bun's node:http, which ignores reusePort either way (an
// Express app on Bun stays exclusive, and the probe stops it).
func TestBunServe(t *testing.T) {
	bun := runtimes.Require(t, runtimes.Bun, runtimes.BunVersion)
	p, q := ports(t)
	env := []string{"BM2_APP_PORT=" + strconv.Itoa(p), "PORT=" + strconv.Itoa(p), "TEST_PORT=" + strconv.Itoa(p),
		"OTHER_PORT=" + strconv.Itoa(q), "SOCKET_DIR=" + t.TempDir()}
	script := mustAbs("testdata/bun-forms.ts")
	with := outcomes(t, run(t, bun, env, "--preload", spy, "--preload", file, script))
	without := outcomes(t, run(t, bun, env, "--preload", spy, script))
	const nodeHTTP = "node:http listen({ port, reusePort: true })"
	for _, m := range []map[string]outcome{with, without} {
		if o := m[nodeHTTP]; o.First != "ok" || o.Second != "EADDRINUSE" {
			t.Errorf("%s: first %q, second %q; want ok, EADDRINUSE", nodeHTTP, o.First, o.Second)
		}
		delete(m, nodeHTTP)
	}
	checkForms(t, bunForms, p, with, without)
	for _, name := range []string{"Bun.serve({ port })", "Bun.serve(class instance)"} {
		if a := with[name].Answers; a != "ok" {
			t.Errorf("%s: the servers answered %q", name, a)
		}
	}
}

// `export default { port, fetch }`: Bun starts that server through
// Bun.serve too.
func TestBunDefaultExport(t *testing.T) {
	bun := runtimes.Require(t, runtimes.Bun, runtimes.BunVersion)
	p, _ := ports(t)
	env := []string{"BM2_APP_PORT=" + strconv.Itoa(p)}
	script := mustAbs("testdata/bun-default.ts")
	last := func(out string) string {
		lines := strings.Split(strings.TrimSpace(out), "\n")
		return lines[len(lines)-1]
	}
	if got := last(run(t, bun, env, "--preload", file, script)); got != "joined" {
		t.Errorf("with the preload: %s", got)
	}
	if got := last(run(t, bun, env, script)); got != "exclusive: EADDRINUSE" {
		t.Errorf("without the preload: %s", got)
	}
}
