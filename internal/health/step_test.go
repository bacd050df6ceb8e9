package health

import (
	"testing"
	"time"
)

var (
	t0  = time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	cfg = Config{Interval: 5 * time.Second, Failures: 3}
	ok  = Result{Status: 200, Latency: 2 * time.Millisecond}
	bad = Result{Failure: Timeout, Latency: 2 * time.Second}
)

// checks runs Step once per entry of results, an interval apart from at,
// for one instance (run) and returns the states and the restarts of each.
func checks(t *testing.T, s State, run Run, at time.Time, results ...Result) ([]State, [][]Restart) {
	t.Helper()
	var states []State
	var restarts [][]Restart
	for k, r := range results {
		var rs []Restart
		s, rs = Step(s, []Run{run}, map[string]Result{run.Instance: r}, cfg, at.Add(time.Duration(k)*cfg.Interval))
		states, restarts = append(states, s), append(restarts, rs)
	}
	return states, restarts
}

// health_failures failed checks in a row restart the instance, once, with
// the last result; the count starts again after.
func TestFailuresInARowRestart(t *testing.T) {
	run := Run{Instance: "api-0", Invocation: "aa", Since: t0}
	states, restarts := checks(t, State{Project: "api"}, run, t0.Add(time.Second), ok, bad, bad, bad, bad)
	if e := states[0].Instances[0]; e.Status != Healthy || e.Failures != 0 || e.Limit != 3 || e.Last != "200" || !e.Healthy.Equal(t0.Add(time.Second)) {
		t.Fatalf("after a healthy answer: %+v", e)
	}
	for k, want := range []int{0, 1, 2, 0, 1} {
		e := states[k].Instances[0]
		if e.Failures != want {
			t.Errorf("check %d: failures %d, want %d", k, e.Failures, want)
		}
		if k > 0 && (e.Status != Unhealthy || e.Last != "timeout") {
			t.Errorf("check %d: %+v", k, e)
		}
		if (len(restarts[k]) == 1) != (k == 3) {
			t.Errorf("check %d: restarts %v", k, restarts[k])
		}
	}
	r := restarts[3][0]
	if r.Instance != "api-0" || r.Invocation != "aa" || r.Last != bad || r.Failures != 3 {
		t.Errorf("restart %+v", r)
	}
	if e := states[3].Instances[0]; e.Restarted.IsZero() || e.Status != Unhealthy {
		t.Errorf("after the restart: %+v", e)
	}
	// A healthy answer in between starts the count again.
	states, restarts = checks(t, State{}, run, t0.Add(time.Second), ok, bad, bad, ok, bad, bad)
	for k := range restarts {
		if len(restarts[k]) > 0 {
			t.Errorf("check %d restarted: %v", k, restarts[k])
		}
	}
	if e := states[5].Instances[0]; e.Failures != 2 {
		t.Errorf("failures %d, want 2", e.Failures)
	}
}

// Counts belong to one run of the instance: a new InvocationID (a crash,
// a restart, the health check's own) starts at 0, starting.
func TestNewRunStartsAtZero(t *testing.T) {
	old := Run{Instance: "api-0", Invocation: "aa", Since: t0}
	states, _ := checks(t, State{}, old, t0.Add(time.Minute), bad, bad)
	if e := states[1].Instances[0]; e.Failures != 2 {
		t.Fatalf("%+v", e)
	}
	fresh := Run{Instance: "api-0", Invocation: "bb", Since: t0.Add(2 * time.Minute)}
	s, restarts := Step(states[1], []Run{fresh}, map[string]Result{"api-0": bad}, cfg, t0.Add(2*time.Minute+time.Second))
	e := s.Instances[0]
	if len(restarts) != 0 || e.Invocation != "bb" || e.Failures != 0 || e.Status != Starting || !e.Healthy.IsZero() {
		t.Fatalf("new run: %+v %v", e, restarts)
	}
}

// A run that has not answered healthy yet is starting for StartGrace: an
// app that warms up (503) or has not listened (refused) is not counted
// against. After the grace, or after its first healthy answer, it is.
func TestStartingGrace(t *testing.T) {
	run := Run{Instance: "api-0", Invocation: "aa", Since: t0}
	refused := Result{Failure: Refused}
	warming := Result{Status: 503}
	// Every 5 s for 55 s: starting, never counted.
	var s State
	for at := t0; at.Sub(t0) < StartGrace; at = at.Add(cfg.Interval) {
		var rs []Restart
		s, rs = Step(s, []Run{run}, map[string]Result{"api-0": warming}, cfg, at)
		if e := s.Instances[0]; e.Status != Starting || e.Failures != 0 || len(rs) != 0 || e.Last != "503" {
			t.Fatalf("%v after start: %+v %v", at.Sub(t0), e, rs)
		}
	}
	// From 60 s on, counted: restarted at the third.
	states, restarts := checks(t, s, run, t0.Add(StartGrace), refused, refused, refused)
	if states[0].Instances[0].Status != Unhealthy || len(restarts[2]) != 1 {
		t.Fatalf("after the grace: %+v %v", states, restarts)
	}
	// Healthy once: no grace left for this run.
	states, restarts = checks(t, State{}, run, t0.Add(time.Second), ok, bad, bad, bad)
	if len(restarts[3]) != 1 {
		t.Fatalf("a run that answered once is not starting: %+v", states)
	}
	// A run systemd gives no start time for has its grace from its first
	// check (not from 1970, which would skip it), and only that.
	nostart := Run{Instance: "api-0", Invocation: "cc"}
	s, _ = Step(State{}, []Run{nostart}, map[string]Result{"api-0": bad}, cfg, t0)
	if e := s.Instances[0]; e.Status != Starting || !e.First.Equal(t0) {
		t.Fatalf("first check of a run with no start time: %+v", e)
	}
	s, _ = Step(s, []Run{nostart}, map[string]Result{"api-0": bad}, cfg, t0.Add(StartGrace-time.Second))
	if e := s.Instances[0]; e.Status != Starting || e.Failures != 0 {
		t.Fatalf("within the grace from its first check: %+v", e)
	}
	s, _ = Step(s, []Run{nostart}, map[string]Result{"api-0": bad}, cfg, t0.Add(StartGrace))
	if e := s.Instances[0]; e.Status != Unhealthy || e.Failures != 1 {
		t.Fatalf("past the grace from its first check: %+v", e)
	}
}

// A restart systemd did not take leaves the count where it was: the next
// failed check asks again, not health_failures more.
func TestUnrestartedKeepsTheCount(t *testing.T) {
	cfg := Config{Interval: 5 * time.Second, Failures: 3}
	run := Run{Instance: "api-0", Invocation: "aa", Since: t0.Add(-time.Hour)}
	bad := Result{Failure: Timeout}
	var s State
	var rs []Restart
	for k := range 3 {
		s, rs = Step(s, []Run{run}, map[string]Result{"api-0": bad}, cfg, t0.Add(time.Duration(k)*cfg.Interval))
	}
	if len(rs) != 1 || s.Instances[0].Failures != 0 {
		t.Fatalf("third failure: %+v %v", s.Instances[0], rs)
	}
	s = Unrestarted(s, rs[0])
	if e := s.Instances[0]; e.Failures != 3 || !e.Restarted.IsZero() {
		t.Fatalf("after Unrestarted: %+v", e)
	}
	s, rs = Step(s, []Run{run}, map[string]Result{"api-0": bad}, cfg, t0.Add(3*cfg.Interval))
	if len(rs) != 1 || rs[0].Failures != 4 {
		t.Fatalf("the next failure after a restart not taken: %v", rs)
	}
}

// bm2 serve, start and reload start the check more often than the timer
// while they wait: those extra runs record what they find but do not make
// the count go faster than one failure per (3/4) interval.
func TestExtraRunsDoNotCountFaster(t *testing.T) {
	run := Run{Instance: "api-0", Invocation: "aa", Since: t0.Add(-time.Hour)}
	var s State
	var all []Restart
	// A check every 500 ms for 12 s: failures counted at 0, 4 and 8 s
	// (the first at once, then each at least 3.75 s after the one before).
	for k := 0; k < 24; k++ {
		at := t0.Add(time.Duration(k) * 500 * time.Millisecond)
		var rs []Restart
		s, rs = Step(s, []Run{run}, map[string]Result{"api-0": bad}, cfg, at)
		all = append(all, rs...)
		if k == 15 && (s.Instances[0].Failures != 2 || len(all) != 0) { // 7.5 s
			t.Fatalf("at %v: %+v %v", at.Sub(t0), s.Instances[0], all)
		}
		if !s.Instances[0].Checked.Equal(at) {
			t.Fatalf("an extra run's check is not recorded: %+v", s.Instances[0])
		}
	}
	if len(all) != 1 || !s.Instances[0].Restarted.Equal(t0.Add(8*time.Second)) {
		t.Fatalf("restarts %v, state %+v", all, s.Instances[0])
	}
}

// The state holds the running instances only, in the order given; an
// instance the check gave no result for failed; each is counted alone.
func TestStepInstancesAlone(t *testing.T) {
	since := t0.Add(-time.Hour)
	runs := []Run{{"api-0", "aa", since}, {"api-1", "bb", since}, {"api-surge", "cc", since}}
	prev := State{Project: "api", Instances: []Entry{
		{Instance: "api-0", Invocation: "aa", Status: Unhealthy, Failures: 2, Counted: t0.Add(-cfg.Interval)},
		{Instance: "api-1", Invocation: "bb", Status: Healthy, Healthy: t0.Add(-cfg.Interval)},
		{Instance: "api-7", Invocation: "zz", Status: Healthy}, // gone
	}}
	s, restarts := Step(prev, runs, map[string]Result{"api-0": bad, "api-surge": ok}, cfg, t0)
	if len(restarts) != 1 || restarts[0].Instance != "api-0" {
		t.Fatalf("restarts %v: only api-0 reached the limit", restarts)
	}
	if len(s.Instances) != 3 || s.Instances[0].Instance != "api-0" || s.Instances[1].Instance != "api-1" || s.Instances[2].Instance != "api-surge" {
		t.Fatalf("instances %+v", s.Instances)
	}
	if e := s.Instances[1]; e.Status != Unhealthy || e.Failures != 1 || e.Last != "error" || !e.Answered.IsZero() {
		t.Errorf("api-1 without a result: %+v", e)
	}
	if e := s.Instances[2]; e.Status != Healthy || !e.Answered.Equal(t0) {
		t.Errorf("the surge: %+v", e)
	}
	if s.Project != "api" || s.Version != StateVersion {
		t.Errorf("%+v", s)
	}
}
