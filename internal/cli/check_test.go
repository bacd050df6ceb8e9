package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/testutil"
)

// freePorts finds n consecutive TCP ports that are free on 0.0.0.0.
func freePorts(t *testing.T, n int) int {
	t.Helper()
	for attempt := 0; attempt < 50; attempt++ {
		l, err := net.Listen("tcp4", "0.0.0.0:0")
		if err != nil {
			t.Fatal(err)
		}
		base := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if base+n > 65535 {
			continue
		}
		ok := true
		for p := base; p < base+n; p++ {
			if s, err := reuseport.CheckPort(p); err != nil || s != reuseport.Free {
				ok = false
				break
			}
		}
		if ok {
			return base
		}
	}
	t.Fatal("no free port range")
	return 0
}

// hold listens on port, with SO_REUSEPORT when shared.
func hold(t *testing.T, port int, shared bool) {
	t.Helper()
	lc := net.ListenConfig{}
	if shared {
		lc.Control = reuseport.ListenControl
	}
	l, err := lc.Listen(context.Background(), "tcp4", fmt.Sprintf("0.0.0.0:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

func seedProject(port int) string {
	return fmt.Sprintf(`name = "api"
script = "src/index.ts"
instances = 4
port = %d
# exec_mode 省略即 cluster
`, port)
}

func TestCheckSeedOutput(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)))
	te.mustRun(ExitOK, "check", dir)
	want := fmt.Sprintf(`config ok: project "api", 4 x cluster on port %d, runtime bun, as bm2-api:bm2-api
notify: disabled
ports %d~%d: free
reusePort set by the app (reuseport = "app"): it must listen with reusePort: true; the probe checks every start
ports: fenced at each start: an instance may bind only port %d
runtime: %s 1.4.4 (>= 1.4.0)
`, port, port, port, port, filepath.Join(te.bin, "bun"))
	if got := te.stdout.String(); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if te.stderr.Len() != 0 {
		t.Fatalf("stderr: %s", te.stderr.String())
	}
}

// check says whose reusePort is: the app's, or bm2's, and what bm2 does
// under each runtime; fork mode needs none and gets no line.
func TestCheckReusePort(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 2) // the fork project below has 2 instances: port and port+1
	for _, c := range []struct{ extra, want string }{
		{"runtime = \"node\"\nreuseport = \"preload\"\n", fmt.Sprintf("\nreusePort supplied by bm2 (reuseport = \"preload\"): node loads reuseport.cjs with --require, "+
			"which adds reusePort: true to the app's listen on port %d; the probe checks every start\n", port)},
		{"reuseport = \"preload\"\n", fmt.Sprintf("\nreusePort supplied by bm2 (reuseport = \"preload\"): bun loads reuseport.cjs with --preload, "+
			"which gives Bun.serve reusePort: true on port %d; Bun's node:http ignores it (Express or Fastify on Bun cannot share the port); the probe checks every start\n", port)},
	} {
		dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)+c.extra))
		te.mustRun(ExitOK, "check", dir)
		if got := te.stdout.String(); !strings.Contains(got, c.want) {
			t.Errorf("stdout:\n%s\nwant %q", got, c.want)
		}
	}
	dir := filepath.Dir(te.write("web/bm2.toml", forkProject("web", port, 2)))
	te.mustRun(ExitOK, "check", dir)
	if got := te.stdout.String(); strings.Contains(got, "reusePort") {
		t.Errorf("fork mode:\n%s", got)
	}
}

// check lists the units a project needs after the notification target.
func TestCheckNeeds(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)+
		`wants = ["postgresql.service", "network-online.target"]
requires = ["redis-server.service"]
`))
	te.mustRun(ExitOK, "check", dir)
	want := "notify: disabled\nneeds: postgresql.service (wants), network-online.target (wants), redis-server.service (requires)\nports "
	if got := te.stdout.String(); !strings.Contains(got, want) {
		t.Fatalf("stdout:\n%s\nwant %q", got, want)
	}
}

// check says what the log keys do, after the needs; without them it says
// nothing (TestCheckSeedOutput): journald's own limit applies.
func TestCheckLogs(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	for _, c := range []struct{ keys, want string }{
		{"log_rate_limit_burst = 100\nlog_rate_limit_interval_ms = 1000\n",
			"logs: at most 100 lines per 1000 ms per instance, which journald scales up with free disk space (4 times with 4 GiB free)\n"},
		{"log_rate_limit_burst = 100\n",
			"logs: at most 100 lines per journald's interval (RateLimitIntervalSec=) per instance, which journald scales up with free disk space (4 times with 4 GiB free)\n"},
		{"log_rate_limit_interval_ms = 500\nlog_level_prefix = true\n",
			"logs: at most journald's burst (RateLimitBurst=) lines per 500 ms per instance, which journald scales up with free disk space (4 times with 4 GiB free); " +
				"the app's <N> prefixes set its lines' priorities (log_level_prefix)\n"},
		{"log_rate_limit_burst = 0\nlog_rate_limit_interval_ms = 1000\n",
			"logs: no rate limit: one instance may flood the journal and push its older entries out sooner, bm2's events included\n"},
	} {
		dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)+c.keys))
		te.mustRun(ExitOK, "check", dir)
		if got := te.stdout.String(); !strings.Contains(got, "notify: disabled\n"+c.want+"ports ") {
			t.Errorf("%q: stdout:\n%s\nwant %q", c.keys, got, c.want)
		}
	}
}

// check says what restart_delay_max_ms does on the host's systemd: the
// backoff from 254 on; before, a warning that the fixed delay applies,
// and the check passes.
func TestCheckBackoff(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)+"restart_delay_ms = 250\nrestart_delay_max_ms = 15000\n"))
	for v, want := range map[int]string{
		254: "restart backoff: from 250 ms to 15000 ms over 5 restarts in a row (RestartSteps=5, RestartMaxDelaySec=15000ms)\n",
		252: "restart backoff: warning: restart_delay_max_ms needs systemd 254 (this host has 252): every restart waits restart_delay_ms (250 ms)\n",
		0:   "restart backoff: warning: restart_delay_max_ms needs systemd 254 (this host's version is not known): every restart waits restart_delay_ms (250 ms)\n",
	} {
		te.systemdVersion = v
		te.mustRun(ExitOK, "check", dir)
		if got := te.stdout.String(); !strings.Contains(got, "notify: disabled\n"+want+"ports ") {
			t.Errorf("systemd %d: stdout:\n%s\nwant %q", v, got, want)
		}
	}
	dir = filepath.Dir(te.write("plain/bm2.toml", seedProject(port)))
	te.systemdVersion = 254
	te.mustRun(ExitOK, "check", dir)
	if got := te.stdout.String(); strings.Contains(got, "backoff") {
		t.Errorf("no restart_delay_max_ms, yet:\n%s", got)
	}
}

func TestCheckDefaultsToCurrentDirFile(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)))
	t.Chdir(dir)
	te.mustRun(ExitOK, "check")
	if !strings.HasPrefix(te.stdout.String(), `config ok: project "api", 4 x cluster`) {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	// A file path is used as it is.
	te.mustRun(ExitOK, "check", "bm2.toml")
	te.mustRun(ExitOK, "check", filepath.Join(dir, "bm2.toml"))
}

func TestCheckSharedListener(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	hold(t, port, true)
	dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)))
	te.mustRun(ExitOK, "check", dir)
	want := fmt.Sprintf("ports %d~%d: held by a shared listener (joinable)\n", port, port)
	if !strings.Contains(te.stdout.String(), want) {
		t.Fatalf("stdout:\n%s\nwant a line %q", te.stdout.String(), want)
	}
}

func TestCheckExclusiveListener(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	hold(t, port, false)
	dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)))
	te.mustRun(ExitInvalid, "check", dir)
	want := fmt.Sprintf("ports %d~%d: held by an exclusive listener (cannot join)\n", port, port)
	if !strings.Contains(te.stdout.String(), want) {
		t.Fatalf("stdout:\n%s\nwant a line %q", te.stdout.String(), want)
	}
	if !strings.Contains(te.stderr.String(), "bm2: check found 1 problem in "+filepath.Join(dir, "bm2.toml")) ||
		!strings.Contains(te.stderr.String(), fmt.Sprintf("port %d is held by an exclusive listener", port)) {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func forkProject(name string, port, n int) string {
	return fmt.Sprintf("name = %q\nscript = \"server.js\"\ninstances = %d\nport = %d\nexec_mode = \"fork\"\n", name, n, port)
}

func TestCheckForkMixedPorts(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 3)
	hold(t, port+1, false)
	hold(t, port+2, true)
	dir := filepath.Dir(te.write("web/bm2.toml", forkProject("web", port, 3)))
	te.mustRun(ExitInvalid, "check", dir)
	want := fmt.Sprintf(`config ok: project "web", 3 x fork on port %d, runtime node, as bm2-web:bm2-web
notify: disabled
port %d: free
port %d: held by an exclusive listener (cannot join)
port %d: held by a shared listener (joinable)
ports: fenced at each start: an instance may bind only port %d+i
runtime: %s v24.1.0 (>= 24.0.0)
`, port, port, port+1, port+2, port, filepath.Join(te.bin, "node"))
	if got := te.stdout.String(); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
}

// A running fork project holds its own ports exclusively: that is no
// problem, and neither is a range held by its own shared listeners.
func TestCheckOwnRunningInstances(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 2)
	hold(t, port, false)
	hold(t, port+1, false)
	te.write("etc/bm2/web.toml", forkProject("web", port, 2)+"cwd = \"/srv/web\"\n")
	te.sd.set(UnitStatus{Name: "bm2@web-0.service", ActiveState: "active", SubState: "running", MainPID: 10})
	te.sd.set(UnitStatus{Name: "bm2@web-1.service", ActiveState: "active", SubState: "running", MainPID: 11})
	te.mustRun(ExitOK, "check", "web")
	want := fmt.Sprintf("ports %d~%d: held by an exclusive listener (cannot join)\n", port, port+1)
	if !strings.Contains(te.stdout.String(), want) {
		t.Fatalf("stdout:\n%s\nwant a line %q", te.stdout.String(), want)
	}
	// Without systemd nothing is known to be the project's own.
	te.noSD = true
	te.mustRun(ExitInvalid, "check", "web")
}

func TestCheckNotifyLine(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	dir := filepath.Dir(te.write("app/bm2.toml", seedProject(port)+"\n[notify]\nwebhook = \"http://127.0.0.1:9000/hook\"\n"))
	te.mustRun(ExitOK, "check", dir)
	if !strings.Contains(te.stdout.String(), "\nnotify: webhook http://127.0.0.1:9000/hook (level error): bm2-notify refuses it: 127.0.0.1 is a loopback address") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	te.write("app/bm2.toml", seedProject(port)+"\n[notify]\nwebhook = \"http://127.0.0.1:9000/hook\"\nallow_local = true\n")
	te.mustRun(ExitOK, "check", dir)
	if !strings.Contains(te.stdout.String(), "\nnotify: webhook http://127.0.0.1:9000/hook (level error), on loopback (allow_local)\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
}

func TestCheckConflict(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/api.toml", "name = \"api\"\nscript = \"a.js\"\ncwd = \"/srv/api\"\ninstances = 4\nport = 3000\nexec_mode = \"fork\"\n")
	te.write("etc/bm2/broken.toml", "name = \"broken\"\nport = 3000\n") // skipped: does not parse
	dir := filepath.Dir(te.write("web/bm2.toml", "name = \"web\"\nscript = \"a.js\"\nport = 3000\n"))
	te.mustRun(ExitInvalid, "check", dir)
	if !strings.Contains(te.stdout.String(), "\nport conflict: web port range 3000~3000 overlaps api 3000~3003\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	// The same name is not a conflict with itself (re-registering).
	dir = filepath.Dir(te.write("api2/bm2.toml", "name = \"api\"\nscript = \"a.js\"\nport = 3001\n"))
	te.run("check", dir)
	if strings.Contains(te.stdout.String(), "port conflict") {
		t.Fatalf("conflict with itself:\n%s", te.stdout.String())
	}
}

func TestCheckRuntimeProblems(t *testing.T) {
	te := newTestEnv(t)
	port := freePorts(t, 1)
	node := te.runtime("node", "v20.20.2")
	dir := filepath.Dir(te.write("app/bm2.toml", fmt.Sprintf("name = \"app\"\nscript = \"a.js\"\nport = %d\n", port)))
	te.mustRun(ExitInvalid, "check", dir)
	want := "runtime: " + node + " is Node.js v20.20.2, below the floor 24.0.0\n"
	if !strings.HasSuffix(te.stdout.String(), want) {
		t.Fatalf("stdout:\n%s\nwant last line %q", te.stdout.String(), want)
	}

	te.write("app/bm2.toml", fmt.Sprintf("name = \"app\"\nscript = \"a.ts\"\nport = %d\nruntime_path = %q\n", port, filepath.Join(te.root, "nope", "bun")))
	te.mustRun(ExitInvalid, "check", dir)
	if !strings.Contains(te.stdout.String(), "runtime: "+filepath.Join(te.root, "nope", "bun")+" does not exist\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}

	te.write("app/bm2.toml", fmt.Sprintf("name = \"app\"\nscript = \"a.ts\"\nport = %d\n", port))
	a := te.app()
	a.c.RuntimeDirs = []string{filepath.Join(te.root, "empty1"), filepath.Join(te.root, "empty2")}
	te.stdout.Reset()
	if code := a.Main(context.Background(), []string{"check", dir}); code != ExitInvalid {
		t.Fatalf("exit %d", code)
	}
	want = "runtime: bun not found in " + a.c.RuntimeDirs[0] + ":" + a.c.RuntimeDirs[1] + "\n"
	if !strings.HasSuffix(te.stdout.String(), want) {
		t.Fatalf("stdout:\n%s\nwant last line %q", te.stdout.String(), want)
	}
}

func TestCheckInvalidFile(t *testing.T) {
	te := newTestEnv(t)
	file := te.write("app/bm2.toml", "name = \"api\"\nscript = \"a.js\"\n\nport = 0\n")
	te.mustRun(ExitInvalid, "check", filepath.Dir(file))
	// Line numbers are the user's, although check fills in cwd.
	want := "bm2: " + file + ":4: port: must be between 1 and 65535, got 0\n"
	if !strings.HasPrefix(te.stderr.String(), want) || te.stdout.Len() != 0 {
		t.Fatalf("stdout:\n%s\nstderr:\n%s\nwant stderr to start with %q", te.stdout.String(), te.stderr.String(), want)
	}

	te.write("app/bm2.toml", "script = \"a.js\"\nport = 80\n")
	te.mustRun(ExitInvalid, "check", filepath.Dir(file))
	if !strings.Contains(te.stderr.String(), file+": name: required") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}

	te.write("app/bm2.toml", "name = \"api\"\nscript = \"a.js\"\nport = [\n")
	te.mustRun(ExitInvalid, "check", filepath.Dir(file))
	if !strings.HasPrefix(te.stderr.String(), "bm2: "+file+":") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func TestCheckArguments(t *testing.T) {
	te := newTestEnv(t)
	te.mustRun(ExitNoProject, "check", "nosuchproject")
	te.mustRun(ExitInvalid, "check", filepath.Join(te.root, "nowhere", "x.toml"))
	t.Chdir(te.root)
	te.mustRun(ExitInvalid, "check") // no ./bm2.toml
	if !strings.Contains(te.stderr.String(), "no project file bm2.toml") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.mustRun(ExitUsage, "check", "a", "b")
}

// Finding 1 of issue 22: root's bm2 check never runs a runtime that
// someone else can replace as root, and asks one for a non-root project
// only inside the project's sandbox (the confined asker), never itself.
func TestCheckReplaceableRuntime(t *testing.T) {
	testutil.Root(t)
	te := newTestEnv(t)
	port := freePorts(t, 1)
	marker := filepath.Join(te.root, "ran")
	pwn := te.write("home/alice/app/pwn", "#!/bin/sh\necho \"$(id -u)\" >> "+marker+"\necho v24.1.0\n")
	os.Chmod(pwn, 0o755)
	te.replaceable = map[string]string{pwn: "alice (uid 1000)"}
	body := fmt.Sprintf("name = \"pwn\"\nscript = \"server.js\"\nruntime = \"node\"\nruntime_path = %q\nport = %d\nexec_mode = \"fork\"\n", pwn, port)
	dir := filepath.Dir(te.write("home/alice/app/bm2.toml", body))
	te.write("home/alice/app/server.js", "")

	// The project runs as root (LookupUser: root): not run at all, and
	// refused, as the run wrapper would refuse it.
	te.mustRun(ExitInvalid, "check", dir)
	if out := te.stdout.String() + te.stderr.String(); !strings.Contains(out, "runtime_missing") ||
		!strings.Contains(out, pwn+" cannot be run by the app's user (it can be replaced by alice (uid 1000), and bm2 runs no such binary as root") {
		t.Errorf("check as root of a root project:\n%s", out)
	}
	if len(te.confinedLog) != 0 {
		t.Errorf("asked in a sandbox as root: %q", te.confinedLog)
	}

	// As alice: only through the confined asker.
	te.lookupUser = func(string) identity.Identity { return identity.Identity{Name: "alice", UID: 1000, GID: 1000} }
	te.confined = func(p *config.Project, path string) (string, error) { return "v24.1.0\n", nil }
	te.mustRun(ExitOK, "check", dir)
	if out := te.stdout.String(); !strings.Contains(out, "runtime: "+pwn+" v24.1.0 (>= 24.0.0)") {
		t.Errorf("check of alice's project:\n%s", out)
	}
	if len(te.confinedLog) != 1 || te.confinedLog[0] != "pwn "+pwn {
		t.Errorf("confined asks: %q", te.confinedLog)
	}
	// No sandbox to be had: not asked, and not a problem.
	te.confined = func(p *config.Project, path string) (string, error) { return "", errors.New("systemd-run: no systemd") }
	te.mustRun(ExitOK, "check", dir)
	if out := te.stdout.String(); !strings.Contains(out, "so bm2 asks it only in pwn's sandbox, which failed (systemd-run: no systemd); the run wrapper checks it at each start, as alice") {
		t.Errorf("check without a sandbox:\n%s", out)
	}
	// Not executable by alice in her sandbox: refused as the wrapper would.
	te.confined = func(p *config.Project, path string) (string, error) {
		return "", fmt.Errorf("%w: exit status 203/EXEC", fs.ErrPermission)
	}
	te.mustRun(ExitInvalid, "check", dir)
	if out := te.stdout.String() + te.stderr.String(); !strings.Contains(out, "runtime_missing") {
		t.Errorf("check of a runtime alice cannot run:\n%s", out)
	}
	if _, err := os.Stat(marker); err == nil {
		data, _ := os.ReadFile(marker)
		t.Fatalf("bm2 check ran the replaceable runtime itself, as uid %s", data)
	}
}

// bm2 import run by root does not run an imported app's runtime that
// someone else can replace (there is no project sandbox yet).
func TestImportRuntimeReplaceable(t *testing.T) {
	testutil.Root(t)
	te := newTestEnv(t)
	marker := filepath.Join(te.root, "ran")
	pwn := te.write("home/alice/pwn", "#!/bin/sh\ntouch "+marker+"\necho v20.0.0\n")
	os.Chmod(pwn, 0o755)
	te.replaceable = map[string]string{pwn: "alice (uid 1000)"}
	a := te.app()
	a.c.Env = a.c.Env.WithDefaults()
	if problem := a.importRuntime(context.Background(), config.Node, pwn, 1000); problem != "" {
		t.Errorf("importRuntime = %q", problem)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("import ran the replaceable runtime")
	}
}
