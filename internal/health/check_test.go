package health

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/sysdtest"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// healthWorld is systemd as the health check sees it (units by name,
// the restarts asked for), and each instance's answer to its check.
type healthWorld struct {
	*sysdtest.Systemd
	mu       sync.Mutex
	answers  map[int]Result // by index; none: no line
	asked    [][]Target
	as       []*identity.Identity
	checkErr error
}

func (w *healthWorld) check(ctx context.Context, id *identity.Identity, targets []Target, path string, timeout time.Duration) (map[int]Result, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.asked, w.as = append(w.asked, targets), append(w.as, id)
	if path != "/healthz" || timeout != 2*time.Second {
		return nil, fmt.Errorf("asked for %s within %v", path, timeout)
	}
	if w.checkErr != nil {
		return nil, w.checkErr
	}
	out := map[int]Result{}
	for _, t := range targets {
		if r, ok := w.answers[t.Index]; ok {
			out[t.Index] = r
		}
	}
	return out, nil
}

var hstart = time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)

// running is instance i of api, up since hstart, as uid 1500, answering
// its check on 3100+i.
func running(i int, invocation string) sysd.Status {
	return sysd.Status{Name: units.Instance("api", i), LoadState: "loaded", ActiveState: "active", SubState: "running",
		InvocationID: invocation, ActiveEnter: hstart, UID: 1500, GID: 1500,
		Environment: []string{"BM2_APP_PORT=3000", "BM2_HEALTH_PORT=" + strconv.Itoa(3100+max(i, 0))}}
}

func newHealthWorld(n int) *healthWorld {
	w := &healthWorld{Systemd: sysdtest.New(), answers: map[int]Result{}}
	var wants []string
	for i := 0; i < n; i++ {
		wants = append(wants, units.Instance("api", i))
		w.ByName[units.Instance("api", i)] = running(i, fmt.Sprintf("inv%d", i))
		w.answers[i] = Result{Status: 200, Latency: time.Millisecond}
	}
	w.ByName[units.Target("api")] = sysd.Status{Name: units.Target("api"), LoadState: "loaded", ActiveState: "active", Wants: append(wants, "bm2-probe@api-0.service")}
	w.ByName[units.HealthService("api")] = sysd.Status{Name: units.HealthService("api"), LoadState: "loaded",
		Environment: []string{"BM2_HEALTH_PATH=/healthz", "BM2_HEALTH_INTERVAL_MS=5000", "BM2_HEALTH_TIMEOUT_MS=2000", "BM2_HEALTH_FAILURES=3"}}
	return w
}

type healthRig struct {
	w      *healthWorld
	c      *Checker
	events *journaltest.Recorder
	now    time.Time
	log    *bytes.Buffer
	dir    string
}

func newHealthRig(t *testing.T, n int) *healthRig {
	dir := t.TempDir()
	r := &healthRig{w: newHealthWorld(n), events: &journaltest.Recorder{}, now: hstart.Add(2 * time.Minute), log: &bytes.Buffer{}, dir: dir}
	r.c = &Checker{Project: "api", Systemd: r.w, Check: r.w.check, Events: r.events,
		Crashes: crashlog.Logs{Dir: filepath.Join(dir, "log")}, Dir: filepath.Join(dir, "health", "api"),
		Now: func() time.Time { return r.now }, Log: func(f string, a ...any) { fmt.Fprintf(r.log, f+"\n", a...) }}
	return r
}

// run is one start of the health service, an interval after the last.
func (r *healthRig) run(t *testing.T) {
	t.Helper()
	if err := r.c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.now = r.now.Add(5 * time.Second)
}

func (r *healthRig) state(t *testing.T) State {
	t.Helper()
	s, err := Read(Path(r.c.Dir))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An instance that stops answering (its event loop blocked) is restarted
// alone after health_failures checks, with instance_unhealthy and a
// crash.log line; its neighbours are checked and left running.
func TestHealthRestartsOnlyTheUnhealthyInstance(t *testing.T) {
	r := newHealthRig(t, 3)
	r.run(t)
	if s := r.state(t); len(s.Instances) != 3 || s.Instances[1].Status != Healthy || s.Project != "api" {
		t.Fatalf("first run: %+v", s)
	}
	r.w.answers[1] = Result{Failure: Timeout, Latency: 2 * time.Second}
	r.run(t)
	r.run(t)
	if len(r.w.Restarted) != 0 || len(r.events.Got) != 0 {
		t.Fatalf("restarted before health_failures: %v %v", r.w.Restarted, r.events.Got)
	}
	if e := r.state(t).Instances[1]; e.Status != Unhealthy || e.Failures != 2 || e.Last != "timeout" {
		t.Fatalf("after two failures: %+v", e)
	}
	r.run(t)
	if len(r.w.Restarted) != 1 || r.w.Restarted[0] != "bm2@api-1.service" {
		t.Fatalf("restarts %v, want bm2@api-1.service alone", r.w.Restarted)
	}
	if len(r.events.Got) != 1 {
		t.Fatalf("events %v", r.events.Got)
	}
	ev := r.events.Got[0]
	if ev.Kind != journal.InstanceUnhealthy || ev.Project != "api" || ev.Instance != "api-1" || ev.Invocation != "inv1" ||
		ev.Reason != reason.Unhealthy || ev.Port != 3101 || !strings.Contains(ev.Message, "failed 3 health checks in a row (GET /healthz on port 3101: no answer within 2s)") {
		t.Errorf("event %+v", ev)
	}
	lines := crashlog.Logs{Dir: filepath.Join(r.dir, "log")}.LastLines("api", "api-1", 5)
	if len(lines) != 1 || !strings.Contains(lines[0], ` reason=unhealthy detail="GET /healthz on port 3101: no answer within 2s, 3 times in a row"`) {
		t.Errorf("crash.log: %q", lines)
	}
	s := r.state(t)
	if e := s.Instances[1]; e.Failures != 0 || e.Restarted.IsZero() {
		t.Errorf("after the restart: %+v", e)
	}
	for _, k := range []int{0, 2} {
		if e := s.Instances[k]; e.Status != Healthy || e.Failures != 0 {
			t.Errorf("neighbour %d: %+v", k, e)
		}
	}
	// The restart brings a new run: it starts at 0, starting.
	r.w.ByName[units.Instance("api", 1)] = func() sysd.Status {
		st := running(1, "inv1b")
		st.ActiveEnter = r.now
		return st
	}()
	r.run(t)
	if e := r.state(t).Instances[1]; e.Invocation != "inv1b" || e.Status != Starting || e.Failures != 0 {
		t.Errorf("the new run: %+v", e)
	}
	if len(r.w.Restarted) != 1 {
		t.Errorf("restarted again: %v", r.w.Restarted)
	}
}

// What is checked is what systemd runs: the instance's BM2_HEALTH_PORT,
// as its UID and GID, the settings of the service's Environment=; an
// instance that does not run is not asked; the surge of a reload is.
func TestHealthChecksWhatSystemdRuns(t *testing.T) {
	r := newHealthRig(t, 3)
	r.w.ByName[units.Instance("api", 2)] = sysd.Status{Name: units.Instance("api", 2), LoadState: "loaded", ActiveState: "activating", SubState: "auto-restart", InvocationID: "x"}
	stale := running(1, "inv1")
	stale.Environment = []string{"BM2_APP_PORT=3000"} // started before the project had its check
	r.w.ByName[units.Instance("api", 1)] = stale
	surge := running(units.Surge, "invs")
	surge.Environment = []string{"BM2_HEALTH_PORT=3103"}
	r.w.ByName[units.Instance("api", units.Surge)] = surge
	r.w.answers[units.Surge] = Result{Status: 204}
	r.run(t)
	if len(r.w.asked) != 1 {
		t.Fatalf("children: %v", r.w.asked)
	}
	want := []Target{{Index: 0, Port: 3100}, {Index: units.Surge, Port: 3103}}
	if got := r.w.asked[0]; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("asked %v, want %v", got, want)
	}
	if id := r.w.as[0]; id == nil || id.UID != 1500 || id.GID != 1500 {
		t.Errorf("checked as %v, want the instances' uid and gid", id)
	}
	s := r.state(t)
	if len(s.Instances) != 2 || s.Instances[0].Instance != "api-0" || s.Instances[1].Instance != "api-surge" || s.Instances[1].Last != "204" {
		t.Errorf("state %+v", s.Instances)
	}
	if !strings.Contains(r.log.String(), "api-1: no BM2_HEALTH_PORT in its unit") {
		t.Errorf("log:\n%s", r.log)
	}
	// In user scope the child runs as the user, as this process does,
	// whatever systemd says of the instances.
	self := identity.Identity{UID: 1001, GID: 1001}
	r.c.Owner = &self
	r.run(t)
	if id := r.w.as[len(r.w.as)-1]; id != nil {
		t.Errorf("user scope: checked as %v, want this process's own user", id)
	}
	r.c.Owner = nil
	// Without its settings the service says to reload systemd.
	delete(r.w.ByName, units.HealthService("api"))
	if err := r.c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "daemon-reload") {
		t.Errorf("no settings: %v", err)
	}
}

// A check that could not be made (the child did not start) counts for
// nothing: no failure, no restart, the entries left as they were, and
// the run fails so that systemd shows it.
func TestHealthCheckNotMadeCountsNothing(t *testing.T) {
	r := newHealthRig(t, 1)
	r.w.answers[0] = Result{Failure: Refused}
	r.run(t)
	r.run(t)
	before := r.state(t).Instances[0]
	if before.Failures != 2 {
		t.Fatalf("%+v", before)
	}
	r.w.checkErr = fmt.Errorf("%w: start bm2-probe: operation not permitted", ErrCheckNotMade)
	for k := 0; k < 3; k++ {
		if err := r.c.Run(context.Background()); !errors.Is(err, ErrCheckNotMade) {
			t.Fatalf("run %d: %v", k, err)
		}
		r.now = r.now.Add(5 * time.Second)
	}
	if after := r.state(t).Instances[0]; after != before || len(r.w.Restarted) != 0 {
		t.Errorf("after checks not made: %+v (was %+v), restarts %v", after, before, r.w.Restarted)
	}
	// A child whose output was refused did run: its instances failed.
	r.w.checkErr = errors.New("the check's output is refused: line 1: too long")
	if err := r.c.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.w.Restarted) != 1 {
		t.Errorf("restarts %v: refused output is a failed check", r.w.Restarted)
	}
}

// A run stopped in the middle of its checks (SIGTERM: the project
// stops) counts nothing and restarts nothing.
func TestHealthStoppedCountsNothing(t *testing.T) {
	r := newHealthRig(t, 1)
	r.w.answers[0] = Result{Failure: Timeout}
	r.run(t)
	r.run(t)
	ctx, cancel := context.WithCancel(context.Background())
	check := r.c.Check
	r.c.Check = func(c context.Context, id *identity.Identity, tg []Target, p string, to time.Duration) (map[int]Result, error) {
		cancel()
		return check(c, id, tg, p, to)
	}
	if err := r.c.Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
	if e := r.state(t).Instances[0]; e.Failures != 2 || len(r.w.Restarted) != 0 {
		t.Errorf("%+v, restarts %v", e, r.w.Restarted)
	}
}

// A run that ended between its last check and the reaction (it crashed,
// or was restarted by hand) is not restarted again: the new one is
// judged afresh.
func TestHealthLeavesARunThatEnded(t *testing.T) {
	r := newHealthRig(t, 1)
	r.w.answers[0] = Result{Failure: Reset}
	r.run(t)
	r.run(t)
	reads := 0
	r.w.OnUnit = func(name string, st sysd.Status) sysd.Status {
		if name == units.Instance("api", 0) {
			if reads++; reads > 1 { // the check saw inv0; the reaction sees a new run
				st.InvocationID = "new"
			}
		}
		return st
	}
	r.run(t)
	if len(r.w.Restarted) != 0 || len(r.events.Got) != 0 {
		t.Errorf("restarts %v, events %v", r.w.Restarted, r.events.Got)
	}
}

// The child: bm2-probe health-get (Child) makes every GET at once and prints one
// line per instance, in the order asked.
func TestHealthGet(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/healthz" {
			w.WriteHeader(404)
		}
	}))
	defer ok.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := l.Addr().(*net.TCPAddr).Port
	l.Close()
	okPort := ok.Listener.Addr().(*net.TCPAddr).Port
	var out strings.Builder
	if err := Child(context.Background(), []string{"1000", "/healthz", "0:" + strconv.Itoa(okPort), "surge:" + strconv.Itoa(free)}, &out); err != nil {
		t.Fatal(err)
	}
	stdout := out.String()
	got, err := ParseOutput([]byte(stdout), []int{0, units.Surge}, time.Second)
	if err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if got[0].Status != 200 || got[units.Surge].Failure != Refused || !strings.HasPrefix(stdout, "0 200 ") {
		t.Errorf("%q", stdout)
	}
}

// ChildCheck believes the child only as far as ParseOutput does: output
// out of form fails every instance of the run, a line about an instance
// not asked about is refused with it, and a child that does not start is
// a check not made.
func TestChildCheck(t *testing.T) {
	dir := t.TempDir()
	script := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	targets := []Target{{Index: 0, Port: 3100}, {Index: 1, Port: 3101}}
	ctx := context.Background()
	// The arguments the child gets, and its lines read back.
	echo := script("echo", `[ "$1 $2 $3 $4 $5" = "health-get 2000 /healthz 0:3100 1:3101" ] || exit 9
[ -z "$HOME$USER$BM2_APP_PORT" ] || exit 8
printf '0 200 3\n1 timeout 2000\n'
`)
	got, err := ChildCheck(echo)(ctx, nil, targets, "/healthz", 2*time.Second)
	if err != nil || got[0].Status != 200 || got[1].Failure != Timeout {
		t.Fatalf("%v %v", got, err)
	}
	for name, body := range map[string]string{
		"another instance": `printf '0 200 3\n7 200 1\n'`,
		"garbage":          `printf 'HTTP/1.1 200 OK\n'`,
		"flood":            `yes '0 200 1'`,
	} {
		got, err := ChildCheck(script(name, body))(ctx, nil, targets, "/healthz", 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), "refused") || len(got) != 0 || errors.Is(err, ErrCheckNotMade) {
			t.Errorf("%s: %v %v", name, got, err)
		}
	}
	// A child that says nothing and fails: its instances have no result.
	got, err = ChildCheck(script("dies", "exit 3\n"))(ctx, nil, targets, "/healthz", 2*time.Second)
	if err == nil || len(got) != 0 || errors.Is(err, ErrCheckNotMade) {
		t.Errorf("dies: %v %v", got, err)
	}
	// One that cannot start is a check not made.
	if _, err := ChildCheck(filepath.Join(dir, "missing"))(ctx, nil, targets, "/healthz", 2*time.Second); !errors.Is(err, ErrCheckNotMade) {
		t.Errorf("missing: %v", err)
	}
	// One that hangs is killed after its timeout and a little more.
	start := time.Now()
	if _, err := ChildCheck(script("hangs", "exec sleep 60\n"))(ctx, nil, targets, "/healthz", 100*time.Millisecond); err == nil || time.Since(start) > 10*time.Second {
		t.Errorf("hangs: %v after %v", err, time.Since(start))
	}
}

// A restart systemd did not take (the bus gone for the moment) keeps the
// run's count in the state file: the next failed check asks again, rather
// than health_failures checks later.
func TestHealthRestartNotTakenIsAskedAgain(t *testing.T) {
	r := newHealthRig(t, 1)
	r.run(t)
	r.w.answers[0] = Result{Failure: Timeout, Latency: 2 * time.Second}
	r.w.RestartErr = errors.New("connection reset by peer")
	for range 2 {
		r.run(t)
	}
	if err := r.c.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "connection reset by peer") {
		t.Fatalf("third failure, restart refused: %v", err)
	}
	r.now = r.now.Add(5 * time.Second)
	if e := r.state(t).Instances[0]; e.Failures != 3 || !e.Restarted.IsZero() {
		t.Fatalf("after a restart not taken: %+v", e)
	}
	r.w.RestartErr = nil
	r.run(t)
	if len(r.w.Restarted) != 1 || r.w.Restarted[0] != "bm2@api-0.service" {
		t.Fatalf("the next failed check restarted %v", r.w.Restarted)
	}
	if e := r.state(t).Instances[0]; e.Failures != 0 || e.Restarted.IsZero() {
		t.Errorf("after the restart: %+v", e)
	}
}

// The child runs as the instances' user only from a bm2-probe that user
// cannot read, so that its exec is non-dumpable: one it can read (by
// owner, group or others) is a check not made, before anything starts.
func TestChildCheckRefusesReadableSelf(t *testing.T) {
	dir := t.TempDir()
	self := filepath.Join(dir, "bm2-probe")
	if err := os.WriteFile(self, []byte("#!/bin/sh\necho started >"+filepath.Join(dir, "ran")+"\n"), 0o711); err != nil {
		t.Fatal(err)
	}
	uid, gid := os.Getuid(), os.Getgid()
	for _, c := range []struct {
		mode     os.FileMode
		id       identity.Identity
		readable bool
	}{
		{0o711, identity.Identity{UID: uid + 1000, GID: gid + 1000}, false},
		{0o755, identity.Identity{UID: uid + 1000, GID: gid + 1000}, true},
		{0o751, identity.Identity{UID: uid + 1000, GID: gid}, true},
		{0o751, identity.Identity{UID: uid + 1000, GID: gid + 1000}, false},
		{0o711, identity.Identity{UID: uid, GID: gid}, true},
		{0o311, identity.Identity{UID: uid, GID: gid}, false},
	} {
		if err := os.Chmod(self, c.mode); err != nil {
			t.Fatal(err)
		}
		err := unreadableBy(self, &c.id)
		if (err != nil) != c.readable {
			t.Errorf("mode %04o, uid %d gid %d: %v, want readable=%v", c.mode, c.id.UID, c.id.GID, err, c.readable)
		}
	}
	if err := os.Chmod(self, 0o755); err != nil {
		t.Fatal(err)
	}
	id := identity.Identity{UID: uid + 1000, GID: gid + 1000}
	targets := []Target{{Index: 0, Port: 3100}}
	_, err := ChildCheck(self)(context.Background(), &id, targets, "/healthz", time.Second)
	if !errors.Is(err, ErrCheckNotMade) || !strings.Contains(err.Error(), "chmod 0711 "+self) {
		t.Errorf("ChildCheck from a readable bm2-probe: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "ran")); err == nil {
		t.Errorf("the child ran")
	}
}
