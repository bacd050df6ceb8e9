package cli

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/units"
)

// reloadEnv is served() with a clock that moves a second at every start
// of an instance, so that every run of an instance (and its probe's
// verdict) has its own time, as on a real host.
func reloadEnv(t *testing.T, toml string) *testEnv {
	te := newTestEnv(t)
	te.sd.onStart = func(unit string) {
		te.now = te.now.Add(time.Second)
		te.probeRun(unit)
	}
	dir := filepath.Dir(te.write("srv/api/bm2.toml", toml))
	te.mustRun(ExitOK, "serve", dir)
	te.sd.Calls()
	return te
}

func TestReloadRolls(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.mustRun(ExitOK, "reload", "api")
	want := `reloading api: 4 x cluster on port 3000, one instance at a time, with api-surge serving beside them
api-surge starting… online, listening, confirmed (1.0s)
api-0 restarting… online, listening, confirmed (1.0s)
api-1 restarting… online, listening, confirmed (1.0s)
api-2 restarting… online, listening, confirmed (1.0s)
api-3 restarting… online, listening, confirmed (1.0s)
api-surge retired
api reloaded: 4 instances in 5.0s, online and confirmed
`
	if got := te.stdout.String(); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s\nstderr:\n%s", got, want, te.stderr.String())
	}
	wantCalls := []string{
		"reset-failed bm2@api-surge.service", "restart bm2@api-surge.service",
		"reset-failed bm2@api-0.service", "restart bm2@api-0.service",
		"reset-failed bm2@api-1.service", "restart bm2@api-1.service",
		"reset-failed bm2@api-2.service", "restart bm2@api-2.service",
		"reset-failed bm2@api-3.service", "restart bm2@api-3.service",
		"stop --no-block bm2@api-surge.service",
	}
	if got := te.sd.Calls(); !reflect.DeepEqual(got, wantCalls) {
		t.Fatalf("calls %q\nwant %q", got, wantCalls)
	}
	if te.stderr.String() != "" {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}

	// One instance.
	te.mustRun(ExitOK, "reload", "api-2")
	if got := te.stdout.String(); got != "reloading api: 4 x cluster on port 3000, one instance, with api-surge serving beside it\n"+
		"api-surge starting… online, listening, confirmed (1.0s)\napi-2 restarting… online, listening, confirmed (1.0s)\napi-surge retired\n"+
		"api-2 reloaded: 1 instance in 2.0s, online and confirmed\n" {
		t.Fatalf("stdout:\n%s", got)
	}
	te.mustRun(ExitNoProject, "reload", "api-4")
	te.mustRun(ExitNoProject, "reload", "nope")
	te.mustRun(ExitNoProject, "reload", "api-surge")
}

// The first instance that does not come back stops the reload; the rest
// keep running the previous version.
func TestReloadStopsAtFirstFailure(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.sd.fail["bm2@api-1.service"] = UnitStatus{ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 1}
	te.journal["bm2@api-1.service"] = []string{"SyntaxError: Unexpected token"}
	te.mustRun(ExitFailure, "reload", "api")
	wantOut := "reloading api: 4 x cluster on port 3000, one instance at a time, with api-surge serving beside them\n" +
		"api-surge starting… online, listening, confirmed (1.0s)\n" +
		"api-0 restarting… online, listening, confirmed (1.0s)\n" +
		"api-1 restarting… failed\n"
	if got := te.stdout.String(); got != wantOut {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, wantOut)
	}
	wantErr := `bm2: instance api-1 did not come back after its restart: exit-code, exit status 1
bm2: last lines of its log (journalctl -u bm2@api-1.service -n 5):
bm2:   SyntaxError: Unexpected token
bm2: reload stopped: api-2, api-3 still run the previous version
bm2: api-surge keeps serving in its place (the new version); the next bm2 command on api retires it
bm2: fix the app and run ` + "`bm2 reload api`" + ` again; ` + "`bm2 logs api-1`" + ` shows its output
`
	if got := te.stderr.String(); got != wantErr {
		t.Fatalf("stderr:\n%s\nwant:\n%s", got, wantErr)
	}
	for _, c := range te.sd.Calls() {
		if strings.Contains(c, "api-2") || strings.Contains(c, "api-3") || strings.Contains(c, "stop bm2@api-surge") {
			t.Fatalf("%s after api-1 failed", c)
		}
	}
	// The surge still serves; bm2 list shows it, and the next command on
	// the project retires it.
	te.mustRun(ExitOK, "list")
	if !strings.Contains(te.stdout.String(), "surge  cluster  online           surge of a reload  1005") {
		t.Fatalf("list:\n%s", te.stdout.String())
	}
	delete(te.sd.fail, "bm2@api-1.service")
	te.mustRun(ExitOK, "start", "api")
	// Retired once the instances are online, not before: it may be the
	// only listener of an instance that does not come back.
	if !strings.HasSuffix(te.stdout.String(), "api online and confirmed\nretired api-surge, left running by an interrupted bm2 reload\n") {
		t.Fatalf("start:\n%s", te.stdout.String())
	}
	if u, _ := te.sd.Units(t.Context(), []string{"bm2@api-surge.service"}); u[0].ActiveState != "inactive" {
		t.Fatalf("surge %+v", u[0])
	}
}

// A surge that does not come up stops the reload before any instance is
// touched.
func TestReloadSurgeFails(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.sd.fail["bm2@api-surge.service"] = UnitStatus{ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 1}
	te.mustRun(ExitFailure, "reload", "api")
	if !strings.Contains(te.stderr.String(), "reload stopped before any instance was touched: every instance still runs the previous version") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	for _, c := range te.sd.Calls() {
		if strings.Contains(c, "restart bm2@api-0") {
			t.Fatalf("%s after the surge failed", c)
		}
	}
}

// While a reload holds the project's lock, another reload is refused and
// no command retires its surge.
func TestReloadLock(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	l, _, err := te.app().c.Projects().TryLockProject("api")
	if err != nil || l == nil {
		t.Fatal(l, err)
	}
	te.mustRun(ExitFailure, "reload", "api")
	if !strings.Contains(te.stderr.String(), "is reloading or scaling api") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.sd.Start(t.Context(), "bm2@api-surge.service")
	te.mustRun(ExitOK, "start", "api")
	if u, _ := te.sd.Units(t.Context(), []string{"bm2@api-surge.service"}); u[0].ActiveState != "active" {
		t.Fatalf("the surge of a running reload was retired: %+v", u[0])
	}
	l.Unlock()
	te.mustRun(ExitOK, "start", "api")
	if u, _ := te.sd.Units(t.Context(), []string{"bm2@api-surge.service"}); u[0].ActiveState != "inactive" {
		t.Fatalf("surge %+v", u[0])
	}
}

// A restarted instance that does not listen again holds the reload up,
// although the probe confirms the port group (the other instances hold it).
func TestReloadWaitsForTheListener(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.listening[1006] = false // api-0's next process (1005 is the surge)
	te.mustRun(ExitFailure, "reload", "--timeout", "30ms", "api")
	if !strings.HasSuffix(te.stdout.String(), "api-0 restarting… online, failed\n") ||
		!strings.HasPrefix(te.stderr.String(), "bm2: timed out after 30ms waiting for api-0 to listen on port 3000\n") ||
		!strings.Contains(te.stderr.String(), "bm2: reload stopped: api-1, api-2, api-3 still run the previous version\n") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", te.stdout.String(), te.stderr.String())
	}
}

func TestReloadReuseportMissing(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.probe["bm2@api-0.service"] = "missing"
	te.mustRun(ExitFailure, "reload", "api")
	errOut := te.stderr.String()
	for _, want := range []string{
		"bm2: api is errored: reuseport_missing: api-0 holds port 3000 alone (no SO_REUSEPORT): under Bun either Bun.serve is called without reusePort, or the app listens through node:http",
		"set `exec_mode = \"fork\"` (or `runtime = \"node\"`) in bm2.toml; then `bm2 start api` (see bm2.toml(5) ERRORED PROJECTS)\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	// Errored: nothing to reload until it is started again.
	te.mustRun(ExitFailure, "reload", "api")
	if !strings.Contains(te.stderr.String(), "project api is errored (reuseport_missing): there is nothing running to reload") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func TestReloadFork(t *testing.T) {
	te := reloadEnv(t, "name = \"web\"\nscript = \"s.js\"\nexec_mode = \"fork\"\ninstances = 2\nport = 4000\n")
	te.listening[1002] = false // web-1 does not listen on its port: it is not waited for
	te.mustRun(ExitOK, "reload", "web")
	want := `reloading web: 2 x fork on port 4000~4001, one instance at a time
web-0 restarting… online, listening (1.0s)
web-1 restarting… online (1.0s)
web reloaded: 2 instances in 2.0s, online
`
	if got := te.stdout.String(); got != want {
		t.Fatalf("stdout:\n%s\nwant:\n%s", got, want)
	}
	if !strings.Contains(te.stderr.String(), "in fork mode each instance owns its port") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

func TestReloadRefusals(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.mustRun(ExitOK, "stop", "api")
	te.mustRun(ExitFailure, "reload", "api")
	if !strings.Contains(te.stderr.String(), "bm2: project api is not running: there is nothing to reload\nbm2: `bm2 start api` starts it\n") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
	te.mustRun(ExitOK, "start", "api")
	(state.Dir{Path: te.paths.StateDir}).SetErrored("api", "reuseport_missing")
	te.mustRun(ExitFailure, "reload", "api")
	te.noSD = true
	te.mustRun(ExitNoSystemd, "reload", "api")

	// One instance: the surge keeps the port served.
	one := reloadEnv(t, "name = \"solo\"\nscript = \"s.js\"\nport = 4000\n")
	one.mustRun(ExitOK, "reload", "solo")
	if one.stderr.String() != "" || !strings.Contains(one.stdout.String(), "solo-surge starting… online, listening, confirmed") {
		t.Fatalf("stdout:\n%s\nstderr:\n%s", one.stdout.String(), one.stderr.String())
	}
}

// The surge's probe finding the port held exclusively ends the reload with
// the errored project's story, not a crash.
func TestReloadSurgeErrored(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.probe["bm2@api-surge.service"] = "missing"
	te.mustRun(ExitFailure, "reload", "api")
	if !strings.Contains(te.stderr.String(), "bm2: api is errored: reuseport_missing") {
		t.Fatalf("stderr:\n%s", te.stderr.String())
	}
}

// A project switched from fork to cluster mode: its old instances hold
// their ports alone, so the surge could not join them; the rolling restart
// goes without it and says so.
func TestReloadForkToCluster(t *testing.T) {
	te := reloadEnv(t, "name = \"api\"\nscript = \"s.js\"\nexec_mode = \"fork\"\ninstances = 2\nport = 4000\n")
	te.write("srv/api/bm2.toml", "name = \"api\"\nscript = \"s.js\"\nexec_mode = \"cluster\"\ninstances = 2\nport = 4000\n")
	te.mustRun(ExitOK, "serve", filepath.Join(te.root, "srv/api"))
	if !strings.Contains(te.stderr.String(), "no surge instance for this reload: api-0 still runs in fork mode on port 4000") {
		t.Fatalf("stderr:\n%s\nstdout:\n%s", te.stderr.String(), te.stdout.String())
	}
	for _, c := range te.sd.Calls() {
		if strings.Contains(c, "api-surge") && strings.HasPrefix(c, "restart") {
			t.Fatalf("%s: the surge was started beside fork-mode instances", c)
		}
	}
}

// A surge whose stop is under way (a reload retired it, and returned) is
// on its way out: start neither stops it again nor says a reload left it,
// and status does not report it as left behind.
func TestRetiringSurgeIsNotLeft(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.sd.Start(t.Context(), "bm2@api-surge.service")
	te.sd.mu.Lock()
	te.sd.units["bm2@api-surge.service"].ActiveState = "deactivating"
	te.sd.units["bm2@api-surge.service"].SubState = "stop-sigterm"
	te.sd.mu.Unlock()
	te.sd.Calls()
	te.mustRun(ExitOK, "start", "api")
	if strings.Contains(te.stdout.String(), "retired api-surge") {
		t.Errorf("start retired a surge on its way out:\n%s", te.stdout.String())
	}
	for _, c := range te.sd.Calls() {
		if strings.Contains(c, "api-surge") {
			t.Errorf("start: %s", c)
		}
	}
	te.stdout.Reset()
	te.mustRun(ExitOK, "status", "api")
	if strings.Contains(te.stdout.String(), "left by a reload that did not finish") {
		t.Errorf("status:\n%s", te.stdout.String())
	}
}

// A cluster project whose instances run as another account than its file
// names (the file changed accounts) cannot roll: reload restarts it all
// at once and says why; one instance alone is refused.
func TestReloadAccountChangeRestarts(t *testing.T) {
	te := reloadEnv(t, seedAPI)
	te.sd.mu.Lock()
	for i := range 4 {
		te.sd.units[units.Instance("api", i)].UID = 1000 // alice, before the file left user = "alice" out
	}
	te.sd.mu.Unlock()
	te.mustRun(ExitFailure, "reload", "api-1")
	if !strings.Contains(te.stderr.String(), "bm2: api runs as alice and is to run as bm2-api: ") ||
		!strings.Contains(te.stderr.String(), "`bm2 restart api` restarts every instance at once") {
		t.Fatalf("reload api-1: stderr:\n%s", te.stderr.String())
	}
	te.sd.Calls()
	te.mustRun(ExitOK, "reload", "api")
	if calls := te.sd.Calls(); !slices.Contains(calls, "restart bm2-api.target") || slices.ContainsFunc(calls, func(c string) bool { return strings.Contains(c, "surge") }) {
		t.Fatalf("calls %q", calls)
	}
	if out := te.stdout.String(); !strings.HasPrefix(out, "api runs as alice and is to run as bm2-api: ") || !strings.Contains(out, "restarting bm2-api.target\n") {
		t.Fatalf("stdout:\n%s", out)
	}
}
