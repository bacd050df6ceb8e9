package wait

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
)

// The wait's step function, one table per mode: each row is one snapshot
// of the world and what the step must make of it.
type stepCase struct {
	name string
	snap snapshot
	out  string
	done bool
	fail failKind
	next needs
	// firstErr is the first error line the driver finds in what a run
	// that ended logged (waiter.exited).
	firstErr string
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func running(inv string, pid uint32, since time.Time) view.UnitStatus {
	return view.UnitStatus{ActiveState: "active", SubState: "running", MainPID: pid, InvocationID: inv, ActiveEnter: since}
}

func confirmedEv(inst, inv string) journal.Event {
	return journal.Event{Kind: journal.ReuseportConfirmed, Instance: inst, Invocation: inv, Time: t0.Add(2 * time.Second)}
}

func runSteps(t *testing.T, w *Waiter, cases []stepCase) {
	t.Helper()
	for _, c := range cases {
		r := w.step(c.snap)
		for _, e := range r.exits { // as the driver does
			r.out = append(r.out, w.exited(e.k, e.unit, c.firstErr)...)
		}
		if got := strings.Join(r.out, ""); got != c.out || r.done != c.done || r.fail.kind != c.fail || r.next != c.next {
			t.Fatalf("%s: out %q done %v fail %v next %+v\nwant out %q done %v fail %v next %+v",
				c.name, got, r.done, r.fail.kind, r.next, c.out, c.done, c.fail, c.next)
		}
	}
}

func TestStepUntilOnlineCluster(t *testing.T) {
	p := &config.Project{Name: "api", Mode: config.Cluster, Instances: 1, Port: 3000, MinUptime: time.Second, MaxRestarts: 16}
	w := New(UntilOnline, p, []int{0}, t0)
	crashed := view.UnitStatus{ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 1}
	runSteps(t, w, []stepCase{
		{name: "starting", snap: snapshot{now: t0, units: []view.UnitStatus{{ActiveState: "activating", SubState: "start"}}}},
		{name: "crash", snap: snapshot{now: t0, units: []view.UnitStatus{crashed}}, out: "api-0 exited (exit-code, exit status 1), restarting\n"},
		{name: "crash again: said once per loop", snap: snapshot{now: t0, units: []view.UnitStatus{crashed}}},
		{name: "up: asks whether it listens", snap: snapshot{now: t0.Add(500 * time.Millisecond), units: []view.UnitStatus{running("a", 7, t0)}},
			next: needs{listen: true}},
		{name: "not listening yet", snap: snapshot{now: t0.Add(600 * time.Millisecond), units: []view.UnitStatus{running("a", 7, t0)},
			asked: needs{listen: true}, listens: []bool{false}, listenErrs: []error{nil}}, next: needs{listen: true}},
		{name: "past min_uptime, still not listening: said once", snap: snapshot{now: t0.Add(1100 * time.Millisecond), units: []view.UnitStatus{running("a", 7, t0)},
			asked: needs{listen: true}, listens: []bool{false}, listenErrs: []error{nil}}, out: "api-0 running (pid 7), not listening on port 3000 yet\n", next: needs{listen: true}},
		{name: "said once", snap: snapshot{now: t0.Add(1200 * time.Millisecond), units: []view.UnitStatus{running("a", 7, t0)},
			asked: needs{listen: true}, listens: []bool{false}, listenErrs: []error{nil}}, next: needs{listen: true}},
		{name: "listening: online, asks for verdicts", snap: snapshot{now: t0.Add(1300 * time.Millisecond), units: []view.UnitStatus{running("a", 7, t0)},
			asked: needs{listen: true}, listens: []bool{true}, listenErrs: []error{nil}},
			out: "api-0 online (pid 7)\n", next: needs{events: true, since: t0}},
		{name: "no verdict yet", snap: snapshot{now: t0.Add(2 * time.Second), units: []view.UnitStatus{running("a", 7, t0)}, asked: needs{events: true, since: t0}},
			next: needs{events: true, since: t0}},
		{name: "a verdict on another run does not count", snap: snapshot{now: t0.Add(2 * time.Second), units: []view.UnitStatus{running("a", 7, t0)},
			events: []journal.Event{confirmedEv("api-0", "b")}, asked: needs{events: true, since: t0}}, next: needs{events: true, since: t0}},
		{name: "confirmed", snap: snapshot{now: t0.Add(3 * time.Second), units: []view.UnitStatus{running("a", 7, t0)},
			events: []journal.Event{confirmedEv("api-0", "a")}, asked: needs{events: true, since: t0}},
			out: "api-0 confirmed (reusePort)\n", done: true},
	})
}

func TestStepUntilOnlineFailures(t *testing.T) {
	p := &config.Project{Name: "api", Mode: config.Fork, Instances: 2, MinUptime: 0, MaxRestarts: 3}
	cases := []struct {
		name string
		snap snapshot
		fail failKind
	}{
		{"the project became errored", snapshot{now: t0, units: []view.UnitStatus{running("a", 7, t0), running("b", 8, t0)}, errored: "reuseport_missing"}, failProject},
		{"an instance failed", snapshot{now: t0, units: []view.UnitStatus{running("a", 7, t0), {ActiveState: "failed", Result: "exit-code"}}}, failInstance},
		{"an instance stopped", snapshot{now: t0, units: []view.UnitStatus{{ActiveState: "inactive", LoadState: "loaded"}, running("b", 8, t0)}}, failInstance},
	}
	for _, c := range cases {
		r := New(UntilOnline, p, []int{0, 1}, t0).step(c.snap)
		if r.fail.kind != c.fail || r.done {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
	// Fork mode is done when all listen; no verdicts asked for. An
	// instance whose sockets cannot be read counts once it has run for
	// min_uptime_ms (0 here).
	both := snapshot{now: t0, units: []view.UnitStatus{running("a", 7, t0), running("b", 8, t0)}, asked: needs{listen: true},
		listens: []bool{true, false}, listenErrs: []error{nil, errors.New("no /proc")}}
	r := New(UntilOnline, p, []int{0, 1}, t0).step(both)
	if !r.done || r.next.events || strings.Join(r.out, "") != "api-0 online (pid 7)\napi-1 online (pid 8)\n" {
		t.Errorf("fork: %+v", r)
	}
	both.listenErrs[1] = nil
	if r := New(UntilOnline, p, []int{0, 1}, t0).step(both); r.done || !r.next.listen {
		t.Errorf("fork, one not listening: %+v", r)
	}
	// Without a journal, the wait goes on without the probe.
	pc := &config.Project{Name: "api", Mode: config.Cluster, Instances: 1}
	w := New(UntilOnline, pc, []int{0}, t0)
	r = w.step(snapshot{now: t0, units: []view.UnitStatus{running("a", 7, t0)}, asked: needs{events: true, listen: true},
		listens: []bool{true}, listenErrs: []error{nil}, eventsErr: errors.New("no journalctl")})
	if r.fail.kind != failJournalOff || !r.done {
		t.Errorf("journal off: %+v", r)
	}
}

func TestStepUntilBack(t *testing.T) {
	p := &config.Project{Name: "api", Mode: config.Cluster, Instances: 2, MinUptime: time.Second, MaxRestarts: 16}
	w := New(UntilBack, p, []int{1}, t0)
	w.before, w.checkListen, w.lineOpen = running("old", 5, t0.Add(-time.Hour)), true, true
	listen := needs{listen: true}
	events := needs{events: true, since: t0}
	runSteps(t, w, []stepCase{
		{name: "the old run still up", snap: snapshot{now: t0, units: []view.UnitStatus{running("old", 5, t0.Add(-time.Hour))}}},
		{name: "new run: online, asks whether it listens (no min_uptime wait)", snap: snapshot{now: t0.Add(100 * time.Millisecond), units: []view.UnitStatus{running("new", 9, t0)}},
			out: "online", next: listen},
		{name: "not listening yet", snap: snapshot{now: t0.Add(1100 * time.Millisecond), units: []view.UnitStatus{running("new", 9, t0)}, asked: listen},
			next: listen},
		{name: "listening: asks for the verdict", snap: snapshot{now: t0.Add(1200 * time.Millisecond), units: []view.UnitStatus{running("new", 9, t0)}, asked: listen, listen: true},
			out: ", listening", next: events},
		{name: "confirmed", snap: snapshot{now: t0.Add(1500 * time.Millisecond), units: []view.UnitStatus{running("new", 9, t0)}, asked: events,
			events: []journal.Event{confirmedEv("api-1", "new")}}, out: ", confirmed (1.5s)\n", done: true},
	})

	w = New(UntilBack, p, []int{1}, t0)
	w.before, w.lineOpen = running("old", 5, t0.Add(-time.Hour)), true
	r := w.step(snapshot{now: t0, units: []view.UnitStatus{{ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: 1}}})
	if r.fail.kind != failNotBack || strings.Join(r.out, "") != "failed\n" {
		t.Errorf("crash after restart: %+v", r)
	}
	if got := w.waitingFor(); got != "to come online" {
		t.Errorf("waitingFor %q", got)
	}
}

// A probe that ended without a verdict on the current run (killed, or
// its job dropped across a systemd re-exec) is started again, once per
// run, and only once the run has been up for reprobeAfter.
func TestStepStartsALostProbeAgain(t *testing.T) {
	p := &config.Project{Name: "api", Mode: config.Cluster, Instances: 1, Port: 3000, MinUptime: time.Second, MaxRestarts: 16}
	gone := view.UnitStatus{LoadState: "loaded", ActiveState: "inactive", SubState: "dead"}
	runningProbe := view.UnitStatus{LoadState: "loaded", ActiveState: "activating", SubState: "start", JobPending: true, JobID: 4}
	ask := needs{events: true, since: t0}
	listened := func(w *Waiter) {
		w.step(snapshot{now: t0.Add(time.Second), units: []view.UnitStatus{running("a", 7, t0)}, asked: needs{listen: true}, listens: []bool{true}, listenErrs: []error{nil}})
	}
	cases := []struct {
		name  string
		probe view.UnitStatus
		at    time.Duration
		want  []int
	}{
		{"probe still running", runningProbe, 5 * time.Second, nil},
		{"probe gone, but the run is young", gone, time.Second, nil},
		{"probe gone only just (its verdict may not be in the journal yet)",
			view.UnitStatus{LoadState: "loaded", ActiveState: "inactive", SubState: "dead", InactiveEnter: t0.Add(4500 * time.Millisecond)}, 5 * time.Second, nil},
		{"probe gone for a second", view.UnitStatus{LoadState: "loaded", ActiveState: "inactive", SubState: "dead", InactiveEnter: t0.Add(4 * time.Second)}, 5 * time.Second, []int{0}},
		{"probe gone, the run up for long enough", gone, 3 * time.Second, []int{0}},
		{"no probe unit on this host", view.UnitStatus{LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}, 5 * time.Second, nil},
	}
	for _, c := range cases {
		w := New(UntilOnline, p, []int{0}, t0)
		listened(w)
		r := w.step(snapshot{now: t0.Add(c.at), units: []view.UnitStatus{running("a", 7, t0)}, asked: ask, probes: []view.UnitStatus{c.probe}})
		if len(r.reprobe) != len(c.want) || r.done {
			t.Fatalf("%s: reprobe %v (out %q), want %v", c.name, r.reprobe, r.out, c.want)
		}
		if c.want == nil {
			continue
		}
		if !strings.Contains(strings.Join(r.out, ""), "api-0: its reusePort probe ended without a verdict; starting the probe again") {
			t.Fatalf("%s: %q", c.name, r.out)
		}
		// Once per run: the probe started again has not run yet.
		if r := w.step(snapshot{now: t0.Add(c.at + time.Second), units: []view.UnitStatus{running("a", 7, t0)}, asked: ask, probes: []view.UnitStatus{gone}}); len(r.reprobe) != 0 {
			t.Fatalf("%s: started again twice", c.name)
		}
		// Its verdict ends the wait.
		r = w.step(snapshot{now: t0.Add(c.at + 2*time.Second), units: []view.UnitStatus{running("a", 7, t0)}, asked: ask, probes: []view.UnitStatus{gone},
			events: []journal.Event{confirmedEv("api-0", "a")}})
		if !r.done {
			t.Fatalf("%s: not done after the verdict: %q", c.name, r.out)
		}
		// A new run whose probe is lost again gets one again.
		w.step(snapshot{now: t0.Add(20 * time.Second), units: []view.UnitStatus{running("b", 8, t0.Add(10*time.Second))}, asked: needs{listen: true}, listens: []bool{true}, listenErrs: []error{nil}})
		if r := w.step(snapshot{now: t0.Add(20 * time.Second), units: []view.UnitStatus{running("b", 8, t0.Add(10*time.Second))}, asked: needs{events: true, since: t0.Add(10 * time.Second)}, probes: []view.UnitStatus{gone}}); len(r.reprobe) != 1 {
			t.Fatalf("%s: the new run's lost probe: %v", c.name, r.reprobe)
		}
	}
	// UntilBack: the same, without a line of its own.
	w := New(UntilBack, p, []int{0}, t0)
	w.probe = true
	w.before = running("old", 5, t0.Add(-time.Minute))
	w.step(snapshot{now: t0.Add(time.Second), units: []view.UnitStatus{running("a", 7, t0)}})
	w.step(snapshot{now: t0.Add(time.Second), units: []view.UnitStatus{running("a", 7, t0)}, asked: needs{listen: true}, listen: true})
	r := w.step(snapshot{now: t0.Add(3 * time.Second), units: []view.UnitStatus{running("a", 7, t0)}, asked: ask, probes: []view.UnitStatus{gone}})
	if len(r.reprobe) != 1 || r.done || strings.Contains(strings.Join(r.out, ""), "\n") {
		t.Fatalf("UntilBack: reprobe %v out %q", r.reprobe, r.out)
	}
}

// With a health check, online means healthy: after the probe's verdict
// the wait asks for a run of the check until the state file says the
// current run answered healthy; an entry of another run, or a run still
// starting, does not count.
func TestStepUntilOnlineHealth(t *testing.T) {
	p := &config.Project{Name: "api", Mode: config.Cluster, Instances: 1, Port: 3000, MinUptime: time.Second, MaxRestarts: 16,
		Health: config.Health{Path: "/healthz", Interval: 5 * time.Second, Timeout: 2 * time.Second, Failures: 3, Port: 3100}}
	w := New(UntilOnline, p, []int{0}, t0)
	up := []view.UnitStatus{running("a", 7, t0)}
	events := needs{events: true, since: t0}
	checked := func(inv string, st health.Status) *health.State {
		return &health.State{Instances: []health.Entry{{Instance: "api-0", Invocation: inv, Status: st, Limit: 3, Last: "200", LatencyMS: 4}}}
	}
	runSteps(t, w, []stepCase{
		{name: "listening: verdicts first, no check yet", snap: snapshot{now: t0.Add(time.Second), units: up, asked: needs{listen: true},
			listens: []bool{true}, listenErrs: []error{nil}}, out: "api-0 online (pid 7)\n", next: events},
		{name: "confirmed: now the check", snap: snapshot{now: t0.Add(2 * time.Second), units: up, asked: events,
			events: []journal.Event{confirmedEv("api-0", "a")}}, out: "api-0 confirmed (reusePort)\n", next: needs{health: true}},
		{name: "no state file yet", snap: snapshot{now: t0.Add(3 * time.Second), units: up, asked: needs{health: true},
			healthErr: errors.New("no such file")}, next: needs{health: true}},
		{name: "healthy, but another run", snap: snapshot{now: t0.Add(3 * time.Second), units: up, asked: needs{health: true},
			health: checked("old", health.Healthy)}, next: needs{health: true}},
		{name: "starting", snap: snapshot{now: t0.Add(4 * time.Second), units: up, asked: needs{health: true},
			health: checked("a", health.Starting)}, next: needs{health: true}},
		{name: "healthy", snap: snapshot{now: t0.Add(5 * time.Second), units: up, asked: needs{health: true},
			health: checked("a", health.Healthy)}, out: "api-0 healthy (200 in 4ms)\n", done: true},
	})
	// A new run (a crash, or the check's own restart) waits afresh.
	r := w.step(snapshot{now: t0.Add(6 * time.Second), units: []view.UnitStatus{running("b", 8, t0.Add(6*time.Second))}, asked: needs{listen: true},
		listens: []bool{true}, listenErrs: []error{nil}})
	if r.done {
		t.Errorf("a new run is done at once: %+v", r)
	}
	// Fork mode: no verdict, the check right after listening.
	pf := *p
	pf.Mode = config.Fork
	r = New(UntilOnline, &pf, []int{0}, t0).step(snapshot{now: t0.Add(time.Second), units: up, asked: needs{listen: true},
		listens: []bool{true}, listenErrs: []error{nil}})
	if r.done || !r.next.health || r.next.events {
		t.Errorf("fork: %+v", r)
	}
}

// A restarted instance (or the surge) of a reload is back once it is
// healthy; until then the timeout says what the check last found.
func TestStepUntilBackHealth(t *testing.T) {
	p := &config.Project{Name: "api", Mode: config.Fork, Instances: 2, Port: 3000, MaxRestarts: 16,
		Health: config.Health{Path: "/healthz", Interval: 5 * time.Second, Timeout: 2 * time.Second, Failures: 3}}
	w := New(UntilBack, p, []int{1}, t0)
	w.before, w.listening, w.lineOpen = running("old", 5, t0.Add(-time.Hour)), true, true
	up := []view.UnitStatus{running("new", 9, t0)}
	starting := &health.State{Instances: []health.Entry{{Instance: "api-1", Invocation: "new", Status: health.Starting, Limit: 3, Last: "refused"}}}
	runSteps(t, w, []stepCase{
		{name: "online: the check", snap: snapshot{now: t0.Add(time.Second), units: up}, out: "online", next: needs{health: true}},
		{name: "starting", snap: snapshot{now: t0.Add(2 * time.Second), units: up, asked: needs{health: true}, health: starting}, next: needs{health: true}},
	})
	if got, want := w.waitingFor(), "to answer its health check (GET /healthz on port 3001) with 2xx or 3xx: starting, last check refused (`journalctl -u bm2-api-health.service` shows the checks)"; got != want {
		t.Errorf("waitingFor %q\nwant %q", got, want)
	}
	healthy := &health.State{Instances: []health.Entry{{Instance: "api-1", Invocation: "new", Status: health.Healthy, Limit: 3, Last: "204"}}}
	runSteps(t, w, []stepCase{
		{name: "healthy", snap: snapshot{now: t0.Add(3 * time.Second), units: up, asked: needs{health: true}, health: healthy},
			out: ", healthy (3.0s)\n", done: true},
	})
}

// A crash loop at start is said once per distinct exit (its exit status
// and the first error its run logged), with a count, however many runs
// and looks it takes; "not listening yet" once for the loop, not once per
// run.
func TestStepExitsOncePerDistinctExit(t *testing.T) {
	p := &config.Project{Name: "api", Mode: config.Fork, Instances: 1, Port: 3000, MinUptime: time.Second, MaxRestarts: 16}
	w := New(UntilOnline, p, []int{0}, t0)
	exit := func(inv string, status int32, restarts uint32) view.UnitStatus {
		return view.UnitStatus{ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainCode: 1, ExecMainStatus: status,
			InvocationID: inv, NRestarts: restarts}
	}
	const missing = "Error: Cannot find module './config.json'"
	slow := func(inv string, at time.Duration) snapshot {
		return snapshot{now: t0.Add(at), units: []view.UnitStatus{running(inv, 7, t0)}, asked: needs{listen: true}, listens: []bool{false}, listenErrs: []error{nil}}
	}
	listen := needs{listen: true}
	runSteps(t, w, []stepCase{
		{name: "a slow first run", snap: slow("a", 2*time.Second), out: "api-0 running (pid 7), not listening on port 3000 yet\n", next: listen},
		{name: "it exits", snap: snapshot{now: t0, units: []view.UnitStatus{exit("a", 1, 0)}}, firstErr: missing,
			out: "api-0 exited (exit-code, exit status 1), restarting: Error: Cannot find module './config.json'\n"},
		{name: "the same run, looked at again", snap: snapshot{now: t0, units: []view.UnitStatus{exit("a", 1, 0)}}, firstErr: missing},
		{name: "the next run, slow again: not said again", snap: slow("b", 2*time.Second), next: listen},
		{name: "it exits the same way", snap: snapshot{now: t0, units: []view.UnitStatus{exit("b", 1, 1)}}, firstErr: missing},
		{name: "three runs later (two not seen), the same", snap: snapshot{now: t0, units: []view.UnitStatus{exit("e", 1, 4)}}, firstErr: missing},
		{name: "another error: the count first", snap: snapshot{now: t0, units: []view.UnitStatus{exit("f", 1, 5)}}, firstErr: "TypeError: x is not a function",
			out: "api-0 exited the same way 4 more times\napi-0 exited (exit-code, exit status 1), restarting: TypeError: x is not a function\n"},
		{name: "an escaped error line", snap: snapshot{now: t0, units: []view.UnitStatus{exit("g", 1, 6)}}, firstErr: "Error: \x1b[31mred",
			out: `api-0 exited (exit-code, exit status 1), restarting: Error: \x1b[31mred` + "\n"},
		{name: "no error line, another status", snap: snapshot{now: t0, units: []view.UnitStatus{exit("h", 2, 7)}},
			out: "api-0 exited (exit-code, exit status 2), restarting\n"},
		{name: "again", snap: snapshot{now: t0, units: []view.UnitStatus{exit("i", 2, 8)}}},
		{name: "online at last: the count, then online", snap: snapshot{now: t0.Add(3 * time.Second), units: []view.UnitStatus{running("j", 9, t0)},
			asked: listen, listens: []bool{true}, listenErrs: []error{nil}},
			out: "api-0 exited the same way once more\napi-0 online (pid 9)\n", done: true},
	})

	// A loop that ends the wait: its count comes before the failure.
	w = New(UntilOnline, p, []int{0}, t0)
	runSteps(t, w, []stepCase{
		{name: "exit", snap: snapshot{now: t0, units: []view.UnitStatus{exit("a", 1, 0)}}, firstErr: missing,
			out: "api-0 exited (exit-code, exit status 1), restarting: Error: Cannot find module './config.json'\n"},
		{name: "again", snap: snapshot{now: t0, units: []view.UnitStatus{exit("b", 1, 1)}}, firstErr: missing},
		{name: "gave up", snap: snapshot{now: t0, units: []view.UnitStatus{{ActiveState: "failed", Result: "start-limit-hit", ExecMainCode: 1, ExecMainStatus: 1, NRestarts: 17}}},
			out: "api-0 exited the same way once more\n", fail: failInstance},
	})
}
