package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/journal"
)

const nodeAPI = "name = \"api\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3000\n"

// What can be known before start is refused before anything changes,
// with the failure's reason, message and fix.
func TestServeRefusesWhatCannotStart(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", nodeAPI+"user = \"deploy\"\n"))
	a := te.app()
	a.c.LookupUser = func(ctx context.Context, name, group string) (identity.Identity, error) {
		return identity.Identity{}, errors.New("unknown user " + name)
	}
	if code := a.Main(context.Background(), []string{"serve", dir}); code != ExitInvalid {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	want := "bm2: user_missing: api-0 cannot start: user deploy does not exist\n" +
		"bm2: fix: create the account (`useradd --system deploy`), or fix `user =` in bm2.toml (leave it out and the project runs as an account of its own); then `bm2 serve` (see bm2.toml(5) KEYS)\n"
	if got := te.stderr.String(); got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
	if len(te.sd.Calls()) != 0 {
		t.Errorf("systemd touched: %v", te.sd.Calls())
	}

	dir = filepath.Dir(te.write("srv/web/bm2.toml", strings.ReplaceAll(nodeAPI, "api", "web")+"env_file = \".env\"\n"))
	script := filepath.Join(te.root, "srv/web/server.js")
	te.access[script] = &fs.PathError{Op: "open", Path: script, Err: fs.ErrNotExist}
	te.access[filepath.Join(te.root, "srv/web/.env")] = &fs.PathError{Op: "open", Path: script, Err: fs.ErrPermission}
	te.mustRun(ExitInvalid, "serve", dir)
	got := te.stderr.String()
	for _, want := range []string{
		// Unreadable as far as bm2 can tell: a warning, as the user's groups may still let it in.
		"bm2: warning: env_file_refused: web-0 not started: env_file " + filepath.Join(te.root, "srv/web/.env") + ": permission denied (as user ",
		"bm2: script_missing: web-0 cannot start: script " + script + ": no such file or directory\n",
		"bm2: fix: put the script there and make it readable by the app's user",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
}

// An instance refused by the run wrapper ends the wait with the reason
// the exit hook confirmed, worded from the table.
func TestServeExplainsRefusal(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", nodeAPI))
	te.sd.fail["bm2@api-1.service"] = UnitStatus{ActiveState: "failed", SubState: "failed", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 78}
	te.entries.event(te.now, journal.RuntimeRejected, "api", "api-1", "runtime_missing",
		"api-1 not started: runtime /opt/node/bin/node: not executable by user bm2-api (install Node.js 24.0.0 or newer where systemd finds it (/usr/bin), or set runtime_path to one)")
	te.mustRun(ExitFailure, "serve", dir)
	got := te.stderr.String()
	for _, want := range []string{
		"bm2: instance api-1 errored: runtime_missing: api-1 not started: runtime /opt/node/bin/node: not executable by user bm2-api\n",
		"bm2: fix: install Node.js 24.0.0 (or Bun 1.4.0) or newer where the app's user can run it",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
}

// The exit hook's events are relayed (package relay): the one that names
// the refusal may reach the journal after the unit has failed. The wait
// takes the one of the run that failed, when it comes, and never an
// older run's.
func TestServeExplainsRefusalRelayedLate(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", nodeAPI))
	te.sd.fail["bm2@api-1.service"] = UnitStatus{ActiveState: "failed", SubState: "failed", Result: "exit-code",
		ExecMainCode: 1, ExecMainStatus: 78, InvocationID: "run2"}
	// An older run's verdict, with another reason.
	te.entries.event(te.now, journal.RuntimeRejected, "api", "api-1", "env_file_refused", "api-1 not started: env_file /srv/api/.env: gone")
	te.entries.entries[len(te.entries.entries)-1][journal.FieldInvocation] = "run1"
	a := te.app()
	verdicts := 0
	a.c.ReadJournal = func(ctx context.Context, q journal.Query, each func(journal.Entry) error) error {
		if slices.Contains(q.Matches, journal.FieldEvent+"="+string(journal.RuntimeRejected)) {
			if verdicts++; verdicts == 3 { // the relay delivers it now
				te.entries.event(te.now, journal.RuntimeRejected, "api", "api-1", "runtime_missing",
					"api-1 not started: runtime /opt/node/bin/node: not executable by user bm2-api (install Node.js 24.0.0 or newer)")
				te.entries.entries[len(te.entries.entries)-1][journal.FieldInvocation] = "run2"
			}
		}
		return te.entries.read(ctx, q, each)
	}
	if code := a.Main(context.Background(), []string{"serve", dir}); code != ExitFailure {
		t.Fatalf("exit %d\n%s", code, te.stderr.String())
	}
	if got := te.stderr.String(); !strings.Contains(got, "bm2: instance api-1 errored: runtime_missing: api-1 not started: runtime /opt/node/bin/node") {
		t.Errorf("stderr (after %d reads of the verdict):\n%s", verdicts, got)
	}

	// The verdict never comes: the cause is not known, and the older
	// run's is not taken for it.
	te = newTestEnv(t)
	dir = filepath.Dir(te.write("srv/api/bm2.toml", nodeAPI))
	te.sd.fail["bm2@api-1.service"] = UnitStatus{ActiveState: "failed", SubState: "failed", Result: "exit-code",
		ExecMainCode: 1, ExecMainStatus: 78, InvocationID: "run2"}
	te.entries.event(te.now, journal.RuntimeRejected, "api", "api-1", "env_file_refused", "api-1 not started: env_file /srv/api/.env: gone")
	te.entries.entries[len(te.entries.entries)-1][journal.FieldInvocation] = "run1"
	te.mustRun(ExitFailure, "serve", dir)
	if got := te.stderr.String(); strings.Contains(got, "env_file") || !strings.Contains(got, "the cause is not known to bm2") {
		t.Errorf("stderr:\n%s", got)
	}
}

// systemd's own cannot-start statuses are named, never left as a raw exit
// status.
func TestServeExplainsSpawnFailures(t *testing.T) {
	for status, want := range map[int32]string{
		217: "bm2: instance api-0 errored: user_missing: api-0 cannot start: user deploy does not exist\n",
		200: "bm2: instance api-0 errored: cwd_missing: api-0 cannot start: working directory /srv/api does not exist or cannot be entered by the app's user (systemd: exit status 200/CHDIR)\n",
	} {
		te := newTestEnv(t)
		dir := filepath.Dir(te.write("srv/api/bm2.toml", nodeAPI+"user = \"deploy\"\ncwd = \"/srv/api\"\n"))
		te.sd.fail["bm2@api-0.service"] = UnitStatus{ActiveState: "failed", SubState: "failed", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: status}
		te.mustRun(ExitFailure, "serve", dir)
		if got := te.stderr.String(); !strings.HasPrefix(got, want) || !strings.Contains(got, "bm2: fix: ") {
			t.Errorf("status %d: stderr:\n%s\nwant prefix:\n%s", status, got, want)
		}
	}
}

// A working directory the project's own account cannot enter, whose
// owner can (an app in a home directory closed to other accounts, as on
// Debian 13): check and the failed start name the owner and the line that
// runs the app as them. A directory root owns, or whose owner cannot
// enter it either, names no one.
func TestCwdNamesTheOwnerWhoCanEnter(t *testing.T) {
	for _, c := range []struct {
		name   string
		owner  int
		enters string
		want   bool
	}{
		{"the owner can enter", 1000, "alice", true},
		{"root owns it", 0, "root", false},
		{"the owner cannot enter either", 1000, "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			te := newTestEnv(t)
			dir := filepath.Dir(te.write("home/alice/web/bm2.toml", strings.ReplaceAll(nodeAPI, "api", "web")))
			// Closed to the project's account, for certain.
			if err := os.Chmod(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			needModeBits(t, dir)
			te.access[dir] = &fs.PathError{Op: "stat", Path: dir, Err: fs.ErrPermission}
			te.owners = map[string]int{dir: c.owner}
			te.enters = map[string]string{dir: c.enters}
			te.lookupUser = func(name string) identity.Identity {
				uid := map[string]int{"alice": 1000, "bm2-web": 61300}[name]
				return identity.Identity{Name: name, UID: uid, GID: uid}
			}
			te.mustRun(ExitInvalid, "check", dir)
			got := te.stdout.String() + te.stderr.String()
			hint := "; alice, who owns it, can: `user = \"alice\"` in bm2.toml runs the app as alice"
			if !strings.Contains(got, "cwd_missing: web-0 cannot start: working directory "+dir+": permission denied") {
				t.Fatalf("check output:\n%s", got)
			}
			if strings.Contains(got, hint) != c.want || (!c.want && strings.Contains(got, "who owns it")) {
				t.Errorf("check output (want the owner named: %v):\n%s", c.want, got)
			}
		})
	}
}

// bm2 check names every mode it can know before start, each with its fix;
// a port another user's process holds is port_in_use, naming it.
func TestCheckFindsWhatCannotStart(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/web/bm2.toml", strings.ReplaceAll(nodeAPI, "api", "web")+"cwd = \"/srv/nowhere\"\n"))
	te.access["/srv/nowhere"] = &fs.PathError{Op: "stat", Path: "/srv/nowhere", Err: fs.ErrNotExist}
	te.mustRun(ExitInvalid, "check", dir)
	if got := te.stdout.String() + te.stderr.String(); !strings.Contains(got, "cwd_missing: web-0 cannot start: working directory /srv/nowhere: no such file or directory; fix: create it and let the app's user enter it, or fix `cwd =` in bm2.toml; then `bm2 check`") {
		t.Errorf("check output:\n%s", got)
	}

	l := listenExclusive(t)
	port := l.Addr().(*net.TCPAddr).Port
	dir = filepath.Dir(te.write("srv/api/bm2.toml", fmt.Sprintf("name = \"api\"\nscript = \"server.js\"\nruntime = \"node\"\nport = %d\nexec_mode = \"fork\"\n", port)))
	a := te.app()
	a.c.PortHolder = func(p int, uid uint32) (string, bool) {
		return "python3 (pid 812), uid 65534 (nobody)", p == port && uid == uint32(identity.Self().UID)
	}
	if code := a.Main(context.Background(), []string{"check", dir}); code != ExitInvalid {
		t.Fatalf("exit %d", code)
	}
	want := fmt.Sprintf("port_in_use: port %d is held by python3 (pid 812), uid 65534 (nobody), not by api: its instances cannot listen there", port)
	if got := te.stdout.String() + te.stderr.String(); !strings.Contains(got, want) || !strings.Contains(got, "fix: stop that program, or give api another `port =` in bm2.toml; then `bm2 check`") {
		t.Errorf("check output lacks %q:\n%s", want, got)
	}
}

func listenExclusive(t *testing.T) net.Listener {
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// bm2 status names the current failure and its fix, worded by runtime.
func TestStatusNamesTheFailure(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", nodeAPI))
	te.probe["bm2@api-0.service"] = "missing"
	te.mustRun(ExitFailure, "serve", dir)
	te.mustRun(ExitOK, "status", "api")
	got := te.stdout.String()
	for _, want := range []string{
		"  errored: reuseport_missing",
		"  why: api-0 holds port 3000 alone (no SO_REUSEPORT): cluster mode needs every instance to share the port, so bm2 stopped api\n",
		"  fix: set `reuseport = \"preload\"` in bm2.toml: bm2 adds reusePort: true to the app's listen (node:http, Express, Fastify, ...), no code change; " +
			"or listen with `server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })` (Node.js >= 24); or set `exec_mode = \"fork\"` in bm2.toml; then `bm2 start api` (see bm2.toml(5) ERRORED PROJECTS)\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	// A script gone since: the next start cannot work, and status says so.
	te.access[filepath.Join(te.root, "srv/api/server.js")] = fs.ErrNotExist
	te.mustRun(ExitOK, "status", "api")
	if got := te.stdout.String(); !strings.Contains(got, "  problem: script_missing: api-0 cannot start: script "+filepath.Join(te.root, "srv/api/server.js")+": no such file or directory\n  fix: put the script there") ||
		!strings.Contains(got, "then `bm2 start api` (see bm2.toml(5) KEYS)") {
		t.Errorf("status:\n%s", got)
	}
}

// A project that has the preload already is not told to set it: the
// listener is one the preload does not reach.
func TestServeReuseportMissingWithPreload(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", nodeAPI+"reuseport = \"preload\"\n"))
	te.probe["bm2@api-0.service"] = "missing"
	te.mustRun(ExitFailure, "serve", dir)
	got := te.stderr.String()
	if !strings.Contains(got, "bm2: fix: `reuseport = \"preload\"` is set, so the port is held by a listener the preload does not reach (a child process, a native addon, an explicit `reusePort: false`): "+
		"listen with `server.listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true })` in the process bm2 starts, or set `exec_mode = \"fork\"` in bm2.toml; then `bm2 serve`") {
		t.Errorf("stderr:\n%s", got)
	}
	if strings.Contains(got, "set `reuseport") {
		t.Errorf("the fix offers the preload it has:\n%s", got)
	}
}

// A reload stopped by a refusal says which one and its fix, not only the
// exit status.
func TestReloadExplainsRefusal(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.sd.fail["bm2@api-1.service"] = UnitStatus{ActiveState: "failed", SubState: "failed", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 78}
	te.entries.event(te.now, journal.RuntimeRejected, "api", "api-1", "runtime_below_floor",
		"api-1 not started: runtime /usr/local/bin/bun is Bun 1.1.0, below the floor 1.4.0 (install Bun 1.4.0 or newer where systemd finds it (/usr/bin), or set runtime_path to one)")
	te.mustRun(ExitFailure, "reload", "api")
	got := te.stderr.String()
	for _, want := range []string{
		"bm2: instance api-1 did not come back after its restart: runtime_below_floor: api-1 not started: runtime /usr/local/bin/bun is Bun 1.1.0, below the floor 1.4.0\n",
		"bm2: fix: install Node.js 24.0.0 (or Bun 1.4.0) or newer, or point `runtime_path =` in bm2.toml at one (`bm2 check api` shows the version found); then `bm2 reload api` (see bm2.toml(5) KEYS)\n",
		"bm2: reload stopped: ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("stderr lacks %q:\n%s", want, got)
		}
	}
}

// bm2 check words the runtime and a port conflict from the table as well.
func TestCheckWordsRuntimeAndConflict(t *testing.T) {
	te := newTestEnv(t)
	te.write("etc/bm2/web.toml", "name = \"web\"\nscript = \"a.js\"\ncwd = \"/srv/web\"\nport = 3990\n")
	dir := filepath.Dir(te.write("srv/api/bm2.toml", "name = \"api\"\nscript = \"a.js\"\nruntime = \"node\"\nruntime_path = \"/nonexistent/node\"\nport = 3990\n"))
	te.mustRun(ExitInvalid, "check", dir)
	got := te.stderr.String()
	for _, want := range []string{
		"runtime_missing: api-0 not started: runtime /nonexistent/node",
		"; fix: install Node.js 24.0.0 (or Bun 1.4.0) or newer where the app's user can run it",
		"port_conflict: port conflict: api port range 3990~3990 overlaps web 3990~3990 (registered in " + filepath.Join(te.paths.ConfigDir, "web.toml") + "); fix: give api another `port =` in bm2.toml, or `bm2 delete` the other project; then `bm2 check`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("check lacks %q:\n%s", want, got)
		}
	}
}

// A broken project file names file, line and key (package config), and
// its hint is the table's.
func TestBrokenFileHint(t *testing.T) {
	te := newTestEnv(t)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", "name = \"api\"\nscript = \"server.js\"\ninstances = \"four\"\n"))
	te.mustRun(ExitInvalid, "serve", dir)
	got := te.stderr.String()
	if !strings.Contains(got, filepath.Join(dir, "bm2.toml")+":3: instances: ") ||
		!strings.HasSuffix(got, "bm2: config_invalid: fix: fix the key named there (bm2.toml(5) describes each one), then `bm2 check` (see bm2.toml(5) KEYS)\n") {
		t.Errorf("stderr:\n%s", got)
	}
}
