package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/units"
)

// healthEnv is a test host whose health services answer as answer says
// for each instance ("api-0") at their nth run: a status word of package
// health, healthy when answer is nil. Each run takes a second.
func healthEnv(t *testing.T, answer func(instance string, run int) health.Status) (*testEnv, *int) {
	te := newTestEnv(t)
	te.paths.RunStateDir = filepath.Join(te.root, "run", "bm2")
	runs := 0
	te.sd.onStart = func(unit string) {
		te.now = te.now.Add(time.Second)
		te.probeRun(unit)
	}
	te.sd.onHealth = func(project string) {
		runs++
		te.now = te.now.Add(time.Second)
		st := health.State{Project: project}
		for name, u := range te.sd.units {
			p, i, ok := units.ParseInstance(name)
			if !ok || p != project || !u.Running() {
				continue
			}
			id := units.InstanceID(p, i)
			e := health.Entry{Instance: id, Invocation: u.InvocationID, Status: health.Healthy, Limit: 3, Last: "200", LatencyMS: 3, Checked: te.now}
			if answer != nil {
				if e.Status = answer(id, runs); e.Status != health.Healthy {
					e.Last = "refused"
				}
			}
			st.Instances = append(st.Instances, e)
		}
		dir := filepath.Join(te.paths.RunStateDir, "health", project)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Error(err)
		}
		if err := health.Write(health.Path(dir), st); err != nil {
			t.Error(err)
		}
	}
	return te, &runs
}

const seedHealthy = `name = "api"
script = "src/index.ts"
instances = 2
port = 3000
health_path = "/healthz"
health_port = 3100
`

// With health_path, serve waits for each instance's first healthy answer
// after the probe's verdict, running the health check itself: online
// means healthy.
func TestServeWaitsForHealthy(t *testing.T) {
	te, runs := healthEnv(t, func(id string, run int) health.Status {
		if id == "api-1" && run < 3 {
			return health.Starting // warming up
		}
		return health.Healthy
	})
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedHealthy))
	te.mustRun(ExitOK, "serve", dir)
	out := te.stdout.String()
	for _, want := range []string{"api-1 confirmed (reusePort)\napi-0 healthy (200 in 3ms)\n", "api-1 healthy (200 in 3ms)\n", "api online, confirmed and healthy: "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if *runs < 3 {
		t.Errorf("the health service ran %d times: serve did not wait for api-1", *runs)
	}
	if i, j := strings.Index(out, "api-1 healthy"), strings.Index(out, "api online"); i < 0 || j < i {
		t.Errorf("done before api-1 was healthy:\n%s", out)
	}
}

// An instance that never answers healthy fails the wait at its timeout,
// naming the check and what it last found.
func TestServeTimesOutUnhealthy(t *testing.T) {
	te, _ := healthEnv(t, func(id string, run int) health.Status {
		if id == "api-1" {
			return health.Starting
		}
		return health.Healthy
	})
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedHealthy))
	te.mustRun(ExitFailure, "serve", "--timeout", "30ms", dir)
	errOut := te.stderr.String()
	for _, want := range []string{
		"timed out after 30ms waiting for api to come online and pass the health check: api-1 is online but did not answer its health check (GET /healthz on port 3101) with 2xx or 3xx: starting, last check refused (`journalctl -u bm2-api-health.service` shows the checks)",
		"make it answer GET health_path on $BM2_HEALTH_PORT (3101)",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// A reload waits for each restarted instance, and first for the surge,
// to answer healthy; a surge that does not stops the reload before any
// instance is touched, and one instance that does not stops it there:
// the ones not reached keep serving the previous version.
func TestReloadWaitsForHealthy(t *testing.T) {
	sick := ""
	te, _ := healthEnv(t, func(id string, run int) health.Status {
		if id == sick {
			return health.Starting
		}
		return health.Healthy
	})
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedHealthy))
	te.mustRun(ExitOK, "serve", dir)
	te.stdout.Reset()
	te.mustRun(ExitOK, "reload", "api")
	if out := te.stdout.String(); !strings.Contains(out, "api-surge starting… online, listening, confirmed, healthy (") ||
		!strings.Contains(out, "api-1 restarting… online, listening, confirmed, healthy (") ||
		!strings.HasSuffix(out, "online, confirmed and healthy\n") {
		t.Fatalf("stdout:\n%s", out)
	}

	sick = "api-surge"
	te.sd.Calls()
	te.mustRun(ExitFailure, "reload", "--timeout", "30ms", "api")
	errOut := te.stderr.String()
	if !strings.Contains(errOut, "timed out after 30ms waiting for api-surge to answer its health check (GET /healthz on port 3102) with 2xx or 3xx: starting, last check refused") ||
		!strings.Contains(errOut, "reload stopped before any instance was touched: every instance still runs the previous version") {
		t.Fatalf("stderr:\n%s", errOut)
	}
	for _, c := range te.sd.Calls() {
		if strings.HasPrefix(c, "restart bm2@api-0") || strings.HasPrefix(c, "restart bm2@api-1") {
			t.Errorf("an instance was restarted: %s", c)
		}
	}

	sick = "api-0"
	te.mustRun(ExitFailure, "reload", "--timeout", "30ms", "api")
	if errOut := te.stderr.String(); !strings.Contains(errOut, "waiting for api-0 to answer its health check") ||
		!strings.Contains(errOut, "reload stopped: api-1 still runs the previous version") {
		t.Fatalf("stderr:\n%s", errOut)
	}
}

// bm2 delete stops the health timer, then a check under way, before the
// project (a check must not restart what is being deleted), and removes
// the checks' state; serve stops the timer of a project whose file no
// longer has health_path.
func TestDeleteAndServeStopTheHealthTimer(t *testing.T) {
	te, _ := healthEnv(t, nil)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedHealthy))
	te.mustRun(ExitOK, "serve", dir)
	if u := te.sd.units["bm2-api-health.timer"]; u == nil || u.ActiveState != "active" {
		t.Fatalf("the target did not start the health timer: %+v", u)
	}
	te.write("srv/api/bm2.toml", strings.Replace(seedHealthy, "health_path = \"/healthz\"\nhealth_port = 3100\n", "", 1))
	te.sd.Calls()
	te.mustRun(ExitOK, "serve", dir)
	if out := te.stdout.String(); !strings.Contains(out, "stopped bm2-api-health.timer: api has no health_path any more\n") {
		t.Errorf("serve:\n%s", out)
	}
	te.write("srv/api/bm2.toml", seedHealthy)
	te.mustRun(ExitOK, "serve", dir)
	state := filepath.Join(te.paths.RunStateDir, "health", "api", "state")
	if _, err := os.Stat(state); err != nil {
		t.Fatal(err)
	}
	te.sd.set(UnitStatus{Name: "bm2-api-health.service", ActiveState: "activating", SubState: "start", MainPID: 4243})
	te.sd.Calls()
	te.mustRun(ExitOK, "delete", "api")
	calls := strings.Join(te.sd.Calls(), "\n")
	if !strings.Contains(calls, "stop bm2-api-health.timer\nstop bm2-api-health.service\nstop bm2-api.target\n") {
		t.Errorf("calls:\n%s", calls)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("the checks' state is left: %v", err)
	}
}

// bm2 check says what the health check asks, where and how often.
func TestCheckShowsTheHealthCheck(t *testing.T) {
	te, _ := healthEnv(t, nil)
	dir := filepath.Dir(te.write("srv/api/bm2.toml", seedHealthy))
	te.mustRun(ExitOK, "check", dir)
	if want := "health: GET /healthz on 127.0.0.1, port 3100+i, every 5s (timeout 2s); 3 failed in a row restart the instance\n"; !strings.Contains(te.stdout.String(), want) {
		t.Errorf("check:\n%s", te.stdout.String())
	}
}
