package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/registry"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

const seedAPI = `name = "api"
script = "src/index.ts"
instances = 4
port = 3000
# exec_mode 省略即 cluster

[env]
NODE_ENV = "production"
`

func TestServeRegistersAndIsIdempotent(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	reg := filepath.Join(te.paths.ConfigDir, "api.toml")

	te.mustRun(ExitOK, "serve", dir)
	data, err := os.ReadFile(reg)
	if err != nil {
		t.Fatal(err)
	}
	wantFile := config.MarshalHeader + `name = "api"
script = "src/index.ts"
cwd = "` + dir + `"
runtime = "bun"
runtime_path = "` + filepath.Join(te.bin, "bun") + `"
instances = 4
port = 3000
exec_mode = "cluster"
source = "` + filepath.Join(dir, "bm2.toml") + `"
`
	if string(data) != wantFile {
		t.Fatalf("registered file:\n%s\nwant:\n%s", data, wantFile)
	}
	if st, _ := os.Stat(reg); st.Mode().Perm() != 0o644 {
		t.Fatalf("mode %v", st.Mode())
	}
	// [env] lives in the private part, root's alone.
	priv := filepath.Join(te.paths.ConfigDir, "private", "api.toml")
	pdata, _ := os.ReadFile(priv)
	if want := config.PrivateHeader + "\n[env]\nNODE_ENV = \"production\"\n"; string(pdata) != want {
		t.Fatalf("private part:\n%s\nwant:\n%s", pdata, want)
	}
	if st, _ := os.Stat(priv); st.Mode().Perm() != 0o600 {
		t.Fatalf("private part mode %v", st.Mode())
	}
	if st, _ := os.Stat(filepath.Dir(priv)); st.Mode().Perm() != 0o700 {
		t.Fatalf("private dir mode %v", st.Mode())
	}
	wantCalls := []string{
		"reload",
		"reset-failed bm2@api-0.service", "reset-failed bm2@api-1.service",
		"reset-failed bm2@api-2.service", "reset-failed bm2@api-3.service",
		"start bm2-api.target",
	}
	if got := te.sd.Calls(); !reflect.DeepEqual(got, wantCalls) {
		t.Fatalf("calls %q\nwant %q", got, wantCalls)
	}
	wantOut := "registered " + reg + `: project "api", 4 x cluster on port 3000, runtime bun, as bm2-api:bm2-api
kept [env] in ` + priv + `, which only root can read
starting bm2-api.target
api-0 online (pid 1001)
api-1 online (pid 1002)
api-2 online (pid 1003)
api-3 online (pid 1004)
api-0 confirmed (reusePort)
api-1 confirmed (reusePort)
api-2 confirmed (reusePort)
api-3 confirmed (reusePort)
api online and confirmed: 4 x cluster on port 3000, runtime bun (` + filepath.Join(te.bin, "bun") + `); ` +
		"`bm2 list` shows it, `bm2 logs api` its output\n"
	if got := te.stdout.String(); got != wantOut {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, wantOut)
	}

	// Again, unchanged: the file is not rewritten, systemd is not
	// reloaded, nothing is restarted.
	before, _ := os.Stat(reg)
	te.mustRun(ExitOK, "serve", dir)
	after, _ := os.Stat(reg)
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Fatal("the file was rewritten")
	}
	for _, c := range te.sd.Calls() {
		if c == "reload" || strings.HasPrefix(c, "restart ") || strings.HasPrefix(c, "start ") || strings.HasPrefix(c, "stop ") {
			t.Fatalf("second serve did %q", c)
		}
	}
	if !strings.HasPrefix(te.stdout.String(), reg+" is up to date: ") || !strings.Contains(te.stdout.String(), "api-3 online (pid 1004)\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
}

func TestServeChangeRestartsAndStopsStray(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()

	te.write("srv/api/bm2.toml", strings.Replace(seedAPI, "instances = 4", "instances = 2", 1))
	te.mustRun(ExitOK, "serve", dir)
	want := []string{
		"reload",
		"reset-failed bm2@api-0.service", "reset-failed bm2@api-1.service",
		"stop bm2@api-2.service", "reset-failed bm2@api-2.service",
		"stop bm2@api-3.service", "reset-failed bm2@api-3.service",
		// A rolling restart, as bm2 reload does: the surge, then one
		// instance at a time.
		"reset-failed bm2@api-surge.service", "restart bm2@api-surge.service",
		"reset-failed bm2@api-0.service", "restart bm2@api-0.service",
		"reset-failed bm2@api-1.service", "restart bm2@api-1.service",
		"stop --no-block bm2@api-surge.service",
		"start bm2-api.target",
	}
	if got := te.sd.Calls(); !reflect.DeepEqual(got, want) {
		t.Fatalf("calls %q\nwant %q", got, want)
	}
	out := te.stdout.String()
	for _, line := range []string{"updated ", "stopped api-3: no longer part of api\n", "rolling restart of api, one instance at a time\n"} {
		if !strings.Contains(out, line) {
			t.Fatalf("stdout lacks %q:\n%s", line, out)
		}
	}
}

// A cluster project that changes accounts cannot roll: an instance of the
// new account cannot listen beside the old ones (nor the surge). serve
// restarts it all at once instead, and says why; both ways.
func TestServeAccountChangeRestarts(t *testing.T) {
	te := newTestEnv(t)
	asAlice := strings.Replace(seedAPI, "port = 3000\n", "port = 3000\nuser = \"alice\"\n", 1)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", asAlice))
	// runAs makes the running instances run as uid.
	runAs := func(uid uint32) {
		te.sd.mu.Lock()
		for i := range 4 {
			te.sd.units[units.Instance("api", i)].UID = uid
		}
		te.sd.mu.Unlock()
	}
	for _, c := range []struct {
		toml, from, to string
		uid            uint32
	}{
		{seedAPI, "alice", "bm2-api", 1000},
		{asAlice, "uid 61595", "alice", 61595}, // a dynamic uid the user database does not list
	} {
		if c.from == "alice" {
			te.mustRun(ExitOK, "serve", dir)
		}
		runAs(c.uid)
		te.write("srv/api/bm2.toml", c.toml)
		te.sd.Calls()
		te.mustRun(ExitOK, "serve", dir)
		calls := te.sd.Calls()
		if !slices.Contains(calls, "restart bm2-api.target") || slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "surge") }) {
			t.Fatalf("%s -> %s: calls %q\n%s", c.from, c.to, calls, te.stdout.String())
		}
		want := "api runs as " + c.from + " and is to run as " + c.to + ": the instances of two accounts cannot share port 3000 " +
			"(SO_REUSEPORT joins only one user's sockets), so its instances restart all at once, not one at a time\nrestarting bm2-api.target\n"
		if out := te.stdout.String(); !strings.Contains(out, want) || strings.Contains(out, "rolling restart") {
			t.Fatalf("%s -> %s: stdout:\n%s", c.from, c.to, out)
		}
	}
	// The same account: a rolling restart, as before.
	runAs(1000)
	te.write("srv/api/bm2.toml", strings.Replace(asAlice, "port = 3000\n", "port = 3000\nmax_restarts = 5\n", 1))
	te.mustRun(ExitOK, "serve", dir)
	if out := te.stdout.String(); !strings.Contains(out, "rolling restart of api") {
		t.Fatalf("same account: stdout:\n%s", out)
	}
}

// A hand-written registered file that means the same is left alone, unless
// it holds secrets every user can read: those move to the private part.
func TestServeKeepsEquivalentFile(t *testing.T) {
	te := newTestEnv(t)
	noEnv := strings.Replace(seedAPI, "[env]\nNODE_ENV = \"production\"\n", "", 1)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", noEnv))
	mine := "# mine\nname=\"api\"\nscript=\"src/index.ts\"\ncwd=\"" + dir + "\"\nruntime_path=\"" + filepath.Join(te.bin, "bun") + "\"\ninstances=4\nport=3000\n"
	reg := te.write("etc/bm2/api.toml", mine)
	te.mustRun(ExitOK, "serve", dir)
	if data, _ := os.ReadFile(reg); string(data) != mine {
		t.Fatalf("rewritten:\n%s", data)
	}

	te.write("srv/api/bm2.toml", seedAPI)
	te.write("etc/bm2/api.toml", mine+"[env]\nNODE_ENV=\"production\"\n")
	te.mustRun(ExitOK, "serve", dir)
	data, _ := os.ReadFile(reg)
	priv, _ := os.ReadFile(filepath.Join(te.paths.ConfigDir, "private", "api.toml"))
	if strings.Contains(string(data), "production") || !strings.Contains(string(priv), "NODE_ENV = \"production\"") {
		t.Fatalf("secrets stayed in the world-readable file:\n%s\n---\n%s", data, priv)
	}
}

func TestServeConflictWritesNothing(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/web.toml", "name = \"web\"\nscript = \"a.js\"\ncwd = \"/srv/web\"\nport = 3000\n")
	dir := filepath.Dir(te.write("srv/api/bm2.toml", "name = \"api\"\nscript = \"a.js\"\ninstances = 4\nport = 3000\nexec_mode = \"fork\"\n"))
	connected := false
	a := te.app()
	connect := a.c.Connect
	a.c.Connect = func(ctx context.Context) (Systemd, error) { connected = true; return connect(ctx) }
	if code := a.Main(context.Background(), []string{"serve", dir}); code != ExitInvalid {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if !strings.HasPrefix(te.stderr.String(), "bm2: port conflict: api port range 3000~3003 overlaps web 3000~3000\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, "api.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("api.toml written: %v", err)
	}
	if connected || len(te.sd.Calls()) != 0 {
		t.Fatal("systemd was touched")
	}
}

func TestServeClearsErroredState(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitOK, "serve", dir)
	st := state.Dir{Path: te.paths.StateDir}
	if _, err := st.SetErrored("api", "reuseport_missing"); err != nil {
		t.Fatal(err)
	}
	te.mustRun(ExitOK, "stop", "api")
	te.sd.Calls()
	te.mustRun(ExitOK, "serve", dir)
	if _, errored, _ := st.Errored("api"); errored {
		t.Fatal("still errored")
	}
	if !strings.Contains(te.stdout.String(), "cleared errored state of api (was: reuseport_missing)\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	calls := te.sd.Calls()
	if calls[len(calls)-1] != "start bm2-api.target" {
		t.Fatalf("calls %q", calls)
	}
}

// runLines logs the lines of one run of an instance as journald keeps
// them: by the run's invocation, the last few only by the process
// (journald lost their unit as the process exited), and systemd's own
// lines about the unit around them.
func (te *testEnv) runLines(unit string, u UnitStatus, lost int, lines ...string) {
	t0 := u.ExecMainStart
	te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": fmt.Sprint(t0.UnixMicro()), "_PID": "1", "_UID": "0", "_TRANSPORT": "journal",
		"_SYSTEMD_UNIT": "init.scope", "UNIT": unit, "MESSAGE": "Started " + unit + ".", "PRIORITY": "6"})
	for k, l := range lines {
		e := journal.Entry{"__REALTIME_TIMESTAMP": fmt.Sprint(t0.Add(time.Duration(k+1) * time.Millisecond).UnixMicro()),
			"_PID": fmt.Sprint(u.ExecMainPID), "_UID": "61234", "_TRANSPORT": "stdout", "MESSAGE": l, "PRIORITY": "6"}
		if k < len(lines)-lost {
			e["_SYSTEMD_UNIT"], e["_SYSTEMD_INVOCATION_ID"] = unit, u.InvocationID
		}
		te.entries.add(e)
	}
	for _, m := range []string{unit + ": Main process exited, code=exited, status=1/FAILURE", unit + ": Failed with result 'exit-code'."} {
		te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": fmt.Sprint(t0.Add(time.Second).UnixMicro()), "_PID": "1", "_UID": "0",
			"_TRANSPORT": "journal", "_SYSTEMD_UNIT": "init.scope", "UNIT": unit, "MESSAGE": m, "PRIORITY": "5"})
	}
}

// A crash loop at start ends with the first error of its last run (found
// by the run's invocation, and by its process for the last lines, whose
// unit journald lost) and the lines below it, not with its last lines.
func TestServeInstanceFails(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	last := UnitStatus{ActiveState: "failed", SubState: "failed", Result: "start-limit-hit", ExecMainCode: 1, ExecMainStatus: 1, NRestarts: 16,
		InvocationID: "de7ffaf2d0614019af984aeb2c98c4ad", ExecMainPID: 1107, ExecMainStart: te.now.Add(-2 * time.Second)}
	te.sd.fail["bm2@api-2.service"] = last
	te.runLines("bm2@api-2.service", last, 4, "node:internal/modules/cjs/loader:1568", "  throw err;", "  ^", "",
		"Error: Cannot find module './config.json'", "Require stack:", "- /srv/api/server.js",
		"    at Module._resolveFilename (node:internal/modules/cjs/loader:1564:15)", "  code: 'MODULE_NOT_FOUND',", "}", "", "Node.js v24.22.3")
	te.journal["bm2@api-2.service"] = []string{"l1", "l2", "l3", "l4", "l5", "Node.js v24.22.3"}
	code := 1
	crashes := crashlog.Logs{Dir: te.paths.LogDir}
	crashes.Append("api", "api-2", crashlog.Crash{Time: te.now, Reason: reason.Exited, ExitCode: &code})
	crashes.Append("api", "api-2", crashlog.Crash{Time: te.now, Reason: reason.Budget, Detail: "result=exit-code restarts=16"})
	te.mustRun(ExitFailure, "serve", dir)
	want := `bm2: instance api-2 errored: restart_budget_exhausted: api-2 crashed again and again and gave up (restart budget exhausted); last exit: exit status 1: Error: Cannot find module './config.json'
bm2: its last run's output, from its first error (journalctl _SYSTEMD_INVOCATION_ID=de7ffaf2d0614019af984aeb2c98c4ad shows all of it):
bm2:   Error: Cannot find module './config.json'
bm2:   Require stack:
bm2:   - /srv/api/server.js
bm2:       at Module._resolveFilename (node:internal/modules/cjs/loader:1564:15)
bm2:     code: 'MODULE_NOT_FOUND',
bm2:   }
bm2:   Node.js v24.22.3
bm2: fix: ` + "`bm2 logs api`" + ` shows why it crashes; fix the app (or give it more ` + "`max_restarts =`" + ` in bm2.toml); then ` + "`bm2 serve`" + ` (see bm2.toml(5) RESTART BUDGET)
`
	if got := te.stderr.String(); got != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", got, want)
	}
}

// A run systemd could not start leaves no crash.log line (its exit hook
// could not start either): the reason is that run's failure, in
// systemd's words, never an older run's crash.log line.
func TestServeInstanceFailsNotAnOlderCrash(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	last := UnitStatus{ActiveState: "failed", SubState: "failed", Result: "start-limit-hit", ExecMainCode: 1, ExecMainStatus: 233, NRestarts: 16,
		InvocationID: "0a0b", ExecMainPID: 1580, ExecMainStart: te.now.Add(-time.Second)}
	te.sd.fail["bm2@api-2.service"] = last
	for k, m := range []string{"bm2@api-2.service: Failed to set up special execution directory in /run: No such file or directory",
		"bm2@api-2.service: Failed at step RUNTIME_DIRECTORY spawning /usr/lib/bm2/bm2-probe: No such file or directory"} {
		te.entries.add(journal.Entry{"__REALTIME_TIMESTAMP": fmt.Sprint(last.ExecMainStart.Add(time.Duration(k) * time.Millisecond).UnixMicro()),
			"_PID": "1580", "_UID": "0", "_TRANSPORT": "journal", "_SYSTEMD_UNIT": "bm2@api-2.service", "_SYSTEMD_INVOCATION_ID": "0a0b",
			"SYSLOG_IDENTIFIER": "(m2-probe)", "PRIORITY": "3", "MESSAGE": m})
	}
	crashes := crashlog.Logs{Dir: te.paths.LogDir}
	crashes.Append("api", "api-2", crashlog.Crash{Time: te.now.Add(-time.Hour), Reason: reason.CwdMissing, Detail: "result=exit-code restarts=0"})
	crashes.Append("api", "api-2", crashlog.Crash{Time: te.now, Reason: reason.Budget, Detail: "result=exit-code restarts=16"})
	te.mustRun(ExitFailure, "serve", dir)
	got := te.stderr.String()
	if !strings.Contains(got, "gave up (restart budget exhausted); last exit: exit status 233/RUNTIME_DIRECTORY: bm2@api-2.service: Failed to set up special execution directory in /run: No such file or directory\n") ||
		strings.Contains(got, "cwd_missing") {
		t.Fatalf("stderr:\n%s", got)
	}
}

func TestServeTimeout(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.sd.stuck["bm2@api-1.service"] = true
	te.mustRun(ExitFailure, "serve", "--timeout", "30ms", dir)
	if !strings.HasPrefix(te.stderr.String(), "bm2: timed out after 30ms waiting for api to come online: api-1 is waiting restart (exit-code, exit status 1)\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if !strings.Contains(te.stdout.String(), "api-1 exited (exit-code, exit status 1), restarting\n") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
}

// An instance that exits while serve waits is said with the first error
// its run logged, once; still crash-looping when time runs out, it is
// quoted from that error.
func TestServeSaysTheExitsError(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	loop := UnitStatus{ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 1, NRestarts: 3,
		InvocationID: "0c0d", ExecMainPID: 2200, ExecMainStart: te.now.Add(-time.Second)}
	te.sd.fail["bm2@api-1.service"] = loop
	te.runLines("bm2@api-1.service", loop, 2, "  throw err;", "Error: Cannot find module './config.json'", "Require stack:", "Node.js v24.22.3")
	te.mustRun(ExitFailure, "serve", "--timeout", "30ms", dir)
	if got := te.stdout.String(); strings.Count(got, "api-1 exited") != 1 ||
		!strings.Contains(got, "api-1 exited (exit-code, exit status 1), restarting: Error: Cannot find module './config.json'\n") {
		t.Fatalf("stdout:\n%s", got)
	}
	if got := te.stderr.String(); !strings.Contains(got, "api-1 is waiting restart (exit-code, exit status 1)\n"+
		"bm2: its last run's output, from its first error (journalctl _SYSTEMD_INVOCATION_ID=0c0d shows all of it):\n"+
		"bm2:   Error: Cannot find module './config.json'\nbm2:   Require stack:\n") {
		t.Fatalf("stderr:\n%s", got)
	}
}

func TestServeWithoutSystemdWritesNothing(t *testing.T) {
	te := newTestEnv(t)
	te.noSD = true
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitNoSystemd, "serve", dir)
	if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, "api.toml")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("api.toml written: %v", err)
	}
	if !strings.Contains(te.stderr.String(), "bm2: systemd is not reachable") || !strings.Contains(te.stderr.String(), "nothing was written") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func TestServeRefusals(t *testing.T) {
	te := newTestEnv(t)
	te.runtime("node", "v20.20.2")
	dir := filepath.Dir(te.write("srv/old/bm2.toml", "name = \"old\"\nscript = \"a.js\"\nport = 4000\n"))
	te.mustRun(ExitInvalid, "serve", dir)
	if !strings.Contains(te.stderr.String(), "is Node.js v20.20.2, below the floor 24.0.0") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}

	// A file earlier on the search path would hide the registration.
	te.searchPath = append([]string{filepath.Join(te.root, "run", "bm2")}, te.searchPath...)
	te.write("run/bm2/api.toml", "name = \"api\"\nscript = \"a.js\"\ncwd = \"/x\"\nport = 5000\n")
	dir = filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitFailure, "serve", dir)
	if !strings.Contains(te.stderr.String(), "comes before "+te.paths.ConfigDir) {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}

	te.mustRun(ExitUsage, "serve", filepath.Join(te.root, "nowhere"))
	te.mustRun(ExitInvalid, "serve", te.root) // no bm2.toml
}

// An app that crashes right after it starts is never online, although
// systemd says active/running whenever bm2 happens to look.
// serve waits until every instance listens on its port (not for
// min_uptime_ms: a crash after that is the restart budget's business).
func TestServeWaitsUntilListening(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.listening[1003] = false // api-2's process (the fake starts api-3 before api-2)
	te.mustRun(ExitFailure, "serve", "--timeout", "30ms", dir)
	if got := te.stderr.String(); !strings.HasPrefix(got, "bm2: timed out after 30ms waiting for api to come online: api-2 has run for ") ||
		!strings.Contains(got, " but does not listen on port 3000 (it must listen on $BM2_APP_PORT)\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if strings.Contains(te.stdout.String(), "api-2 online") || !strings.Contains(te.stdout.String(), "api-3 online") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
}

// The reusePort probe finds the port held exclusively: serve says so, with
// what the probe saw, the app's last lines and what to do.
func TestServeReuseportMissing(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.probe["bm2@api-0.service"] = "missing"
	te.journal["bm2@api-0.service"] = []string{"listening on 3000 without reusePort"}
	te.mustRun(ExitFailure, "serve", dir)
	want := `bm2: api is errored: reuseport_missing: api-0 holds port 3000 alone (no SO_REUSEPORT): under Bun either Bun.serve is called without reusePort, or the app listens through node:http (Express, Fastify, Koa, ...), whose reusePort Bun ignores; cluster mode needs every instance to share the port, so bm2 stopped api
bm2: last lines of its log (journalctl -u bm2@api-0.service -n 5):
bm2:   listening on 3000 without reusePort
bm2: fix: with Bun.serve, set ` + "`reuseport = \"preload\"`" + ` in bm2.toml: bm2 gives Bun.serve reusePort: true, no code change; or pass ` + "`Bun.serve({ port: Number(process.env.BM2_APP_PORT), reusePort: true })`" + `; an app on node:http cannot share a port under Bun, preload or not: set ` + "`exec_mode = \"fork\"` (or `runtime = \"node\"`)" + ` in bm2.toml; then ` + "`bm2 serve`" + ` (see bm2.toml(5) ERRORED PROJECTS)
`
	if got := te.stderr.String(); got != want {
		t.Fatalf("stderr:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(te.stdout.String(), "confirmed") {
		t.Fatalf("stdout:\n%s", te.stdout.String())
	}
	te.mustRun(ExitOK, "list", "--json")
	if !strings.Contains(te.stdout.String(), `"reason": "reuseport_missing"`) || !strings.Contains(te.stdout.String(), `"reuseport": "missing"`) {
		t.Fatalf("list --json:\n%s", te.stdout.String())
	}

	// Fixed, serve clears the mark and every instance is confirmed again.
	delete(te.probe, "bm2@api-0.service")
	te.mustRun(ExitOK, "serve", dir)
	if out := te.stdout.String(); !strings.Contains(out, "cleared errored state of api (was: reuseport_missing)\n") ||
		!strings.Contains(out, "api-0 confirmed (reusePort)\n") || !strings.Contains(out, "\napi online and confirmed: ") {
		t.Fatalf("stdout:\n%s", out)
	}
}

// Without a verdict, serve waits, and says what it waited for.
func TestServeWaitsForConfirmation(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.probe["bm2@api-1.service"] = "none"
	te.probe["bm2@api-2.service"] = "none"
	te.mustRun(ExitFailure, "serve", "--timeout", "30ms", dir)
	if !strings.HasPrefix(te.stderr.String(), "bm2: timed out after 30ms waiting for api to come online and be confirmed: "+
		"api-1, api-2 are online but not confirmed (no reuseport_confirmed event yet; `journalctl -u 'bm2-probe@api-*'` shows the probe)\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	if out := te.stdout.String(); !strings.Contains(out, "api-0 confirmed (reusePort)\n") || strings.Contains(out, "api-1 confirmed") {
		t.Fatalf("stdout:\n%s", out)
	}

	// A fork-mode project is not probed.
	te2 := newTestEnv(t)
	dir = filepath.Dir(te2.write("srv/web/bm2.toml", "name = \"web\"\nscript = \"s.js\"\nexec_mode = \"fork\"\ninstances = 2\nport = 4000\n"))
	te2.mustRun(ExitOK, "serve", dir)
	if out := te2.stdout.String(); strings.Contains(out, "confirmed") || !strings.Contains(out, "\nweb online: 2 x fork on port 4000~4001") {
		t.Fatalf("stdout:\n%s", out)
	}
}

// bm2 migrate keeps a 0.1 host's projects as they ran: as bm2, in 0.1's
// sandbox, with their secrets moved out of the world-readable file; and
// a second run changes nothing.
func TestMigrate(t *testing.T) {
	te := newTestEnv(t)
	legacy := "name = \"old\"\nscript = \"a.js\"\ncwd = \"/srv/old\"\nport = 3000\n[env]\nTOKEN = \"t0k\"\n"
	reg := te.write("etc/bm2/old.toml", legacy)
	te.write("etc/bm2/mine.toml", "name = \"mine\"\nscript = \"a.js\"\ncwd = \"/srv/mine\"\nport = 4000\nuser = \"www-data\"\n")
	te.mustRun(ExitOK, "migrate", "--from-0.1", "--dry-run")
	if data, _ := os.ReadFile(reg); string(data) != legacy || !strings.Contains(te.stdout.String(), "would migrate "+reg) {
		t.Fatalf("dry run changed something:\n%s", te.stdout.String())
	}
	te.mustRun(ExitOK, "migrate", "--from-0.1")
	data, _ := os.ReadFile(reg)
	priv, _ := os.ReadFile(filepath.Join(te.paths.ConfigDir, "private", "old.toml"))
	if !strings.Contains(string(data), "user = \"bm2\"\n") || !strings.Contains(string(data), "[sandbox]\nmode = \"compat\"\n") ||
		strings.Contains(string(data), "t0k") || !strings.Contains(string(priv), "TOKEN = \"t0k\"") {
		t.Fatalf("migrated:\n%s\n---\n%s", data, priv)
	}
	backup, _ := os.ReadFile(filepath.Join(te.paths.StateDir, "migrated-0.1", "old.toml"))
	if string(backup) != legacy {
		t.Fatalf("backup %q", backup)
	}
	if strings.Contains(te.stdout.String(), "mine.toml") {
		t.Fatalf("a project that names its user was migrated:\n%s", te.stdout.String())
	}
	te.mustRun(ExitOK, "migrate", "--from-0.1")
	if te.stdout.String() != "nothing to migrate in "+te.paths.ConfigDir+"\n" {
		t.Fatalf("second run:\n%s", te.stdout.String())
	}
}

// Without --from-0.1, migrate only moves secrets: a project registered
// after the upgrade keeps its own account and sandbox.
func TestMigrateSecretsOnly(t *testing.T) {
	te := newTestEnv(t)
	own := "name = \"fresh\"\nscript = \"a.js\"\ncwd = \"/srv/fresh\"\nport = 3000\n[env]\nTOKEN = \"t0k\"\n"
	reg := te.write("etc/bm2/fresh.toml", own)
	te.mustRun(ExitOK, "migrate")
	data, _ := os.ReadFile(reg)
	if strings.Contains(string(data), "user") || strings.Contains(string(data), "compat") || strings.Contains(string(data), "t0k") {
		t.Fatalf("migrated:\n%s", data)
	}
	if priv, _ := os.ReadFile(filepath.Join(te.paths.ConfigDir, "private", "fresh.toml")); !strings.Contains(string(priv), "TOKEN = \"t0k\"") {
		t.Fatalf("private part %q", priv)
	}
	te.mustRun(ExitOK, "migrate")
	if te.stdout.String() != "nothing to migrate in "+te.paths.ConfigDir+"\n" {
		t.Fatalf("second run:\n%s", te.stdout.String())
	}
}

// The scrape endpoint's port is never given to a project: the shipped
// 9615 while systemd has no bm2-metrics.socket, the socket's own
// ListenStream= once it has one (a drop-in moved it), and a user's
// socket's shipped 9616 in either case.
func TestServeRefusesTheMetricsPort(t *testing.T) {
	project := func(port int) string {
		return fmt.Sprintf("name = \"api\"\nscript = \"a.js\"\nport = %d\n", port)
	}
	for _, tc := range []struct {
		name   string
		listen []string // nil: systemd has no such unit
		port   int
		refuse bool
	}{
		{"shipped port", nil, registry.MetricsPort, true},
		{"users' shipped port", nil, registry.UserMetricsPort, true},
		{"moved away", []string{"Stream 127.0.0.1:9100"}, registry.MetricsPort, false},
		{"moved here", []string{"Stream 127.0.0.1:9100"}, 9100, true},
		{"moved here, IPv6", []string{"Stream [::1]:9200", "Stream /run/x.sock"}, 9200, true},
		{"another port", nil, 3000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newTestEnv(t)
			if tc.listen != nil {
				te.sd.set(UnitStatus{Name: registry.MetricsSocket, ActiveState: "active", SubState: "listening",
					UnitFileState: "disabled", FragmentPath: "/usr/lib/systemd/system/bm2-metrics.socket", Listen: tc.listen})
			}
			dir := filepath.Dir(te.write("srv/api/bm2.toml", project(tc.port)))
			code := te.app().Main(context.Background(), []string{"serve", dir})
			if !tc.refuse {
				if code != ExitOK {
					t.Fatalf("exit %d\n%s", code, te.stderr.String())
				}
				return
			}
			want := fmt.Sprintf("bm2: port conflict: api port range %d~%d overlaps bm2-metrics.socket %d~%d\n", tc.port, tc.port, tc.port, tc.port)
			if code != ExitInvalid || !strings.HasPrefix(te.stderr.String(), want) {
				t.Fatalf("exit %d, stderr:\n%s\nwant %q", code, te.stderr.String(), want)
			}
			if _, err := os.Stat(filepath.Join(te.paths.ConfigDir, "api.toml")); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("api.toml written: %v", err)
			}
		})
	}
}

// The probe's verdict files are enough: serve and reload of a cluster
// project whose confirmations are in files and not (yet) in the journal
// end confirmed at their first look (no poll: the fake clock does not
// move), and ask the journal nothing, as the files cover every run.
func TestWaitsReadVerdictFiles(t *testing.T) {
	te := newTestEnv(t)
	te.verdicts = map[string]journal.Event{}
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitOK, "serve", dir)
	if out := te.stdout.String(); !strings.Contains(out, "api-3 confirmed (reusePort)") || !strings.Contains(out, "api online and confirmed: 4 x cluster") {
		t.Fatalf("serve:\n%s\nstderr:\n%s", out, te.stderr.String())
	}
	te.stdout.Reset()
	te.mustRun(ExitOK, "reload", "api")
	if out := te.stdout.String(); !strings.Contains(out, "api-0 restarting… online, listening, confirmed") ||
		!strings.HasSuffix(out, "api reloaded: 4 instances in 0.0s, online and confirmed\n") {
		t.Fatalf("reload:\n%s\nstderr:\n%s", out, te.stderr.String())
	}
	for _, q := range te.entries.queries {
		if slices.Contains(q.Matches, journal.FieldEvent+"="+string(journal.ReuseportConfirmed)) {
			t.Errorf("the journal was asked for verdicts: %+v", q)
		}
	}
	if n := len(te.verdicts); n != 5 {
		t.Errorf("%d verdict files, want the 4 instances' and the surge's", n)
	}
}

// A verdict file written while a wait sleeps ends that wait at once,
// with the instance's state as last read: it does not ask systemd about
// the instance again first (under load each read keeps a reload's next
// step waiting 20-100 ms).
func TestWaitEndsWhenTheVerdictIsWritten(t *testing.T) {
	te := newTestEnv(t)
	te.verdicts = map[string]journal.Event{}
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedAPI))
	te.mustRun(ExitOK, "serve", dir)
	te.verdictsMu.Lock()
	te.lateVerdicts, te.pending, te.armed = true, map[string]journal.Event{}, map[string]journal.Event{}
	te.lastLook, te.readBetween = map[string]int{}, map[string][]string{}
	te.written = make(chan struct{}, 1)
	te.verdictsMu.Unlock()
	te.stdout.Reset()
	te.mustRun(ExitOK, "reload", "api-1")
	if out := te.stdout.String(); !strings.Contains(out, "api-surge starting… online, listening, confirmed") ||
		!strings.Contains(out, "api-1 restarting… online, listening, confirmed") {
		t.Fatalf("reload:\n%s\nstderr:\n%s", out, te.stderr.String())
	}
	te.verdictsMu.Lock()
	defer te.verdictsMu.Unlock()
	for _, id := range []string{"api-surge", "api-1"} {
		between, ok := te.readBetween[id]
		if !ok {
			t.Fatalf("no verdict of %s was written late", id)
		}
		if slices.ContainsFunc(between, func(r string) bool {
			return slices.Contains(strings.Split(r, ","), units.Instance("api", mustIndexOf(t, id)))
		}) {
			t.Errorf("the wait read %s again after its verdict was written: %q", id, between)
		}
	}
}

func mustIndexOf(t *testing.T, id string) int {
	t.Helper()
	_, i, ok := units.ParseInstance(id)
	if !ok {
		t.Fatalf("%q is no instance", id)
	}
	return i
}
