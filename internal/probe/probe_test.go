package probe

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/bm2dev/bm2/journal"
)

// fakeClock is a monotonic clock that moves only when the probe sleeps;
// onTick lets a test change the world at a given time.
type fakeClock struct {
	now    time.Duration
	onTick func(now time.Duration)
}

func (c *fakeClock) Now() time.Duration { return c.now }
func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now += d
	if c.onTick != nil {
		c.onTick(c.now)
	}
	return ctx.Err()
}

type fakeSystemd struct {
	mu      sync.Mutex
	inst    sysd.Status
	stopped [][]string
	resets  []string
	started []string
	asks    int
	// open is whether the probe holds a connection: every call opens
	// it, Idle closes it.
	open bool
	// afterAsk, if set, changes the instance at the nth question (to
	// simulate a restart between check and re-check).
	afterAsk func(n int, i sysd.Status) sysd.Status
}

func (s *fakeSystemd) Unit(ctx context.Context, unit string) (sysd.Status, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asks++
	s.open = true
	if s.afterAsk != nil {
		s.inst = s.afterAsk(s.asks, s.inst)
	}
	return s.inst, nil
}

// online is an instance running as this test's user.
func online(invocation string, at time.Duration) sysd.Status {
	return sysd.Status{ActiveState: "active", SubState: "running", InvocationID: invocation, ActiveEnterMonotonic: at,
		UID: uint32(os.Getuid()), GID: uint32(os.Getgid())}
}

func (s *fakeSystemd) Idle() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = false
}

func (s *fakeSystemd) isOpen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open
}

func (s *fakeSystemd) ResetFailed(ctx context.Context, unit string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = true
	s.resets = append(s.resets, unit+" "+s.inst.InvocationID)
	return nil
}

func (s *fakeSystemd) Start(ctx context.Context, unit string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = true
	s.started = append(s.started, unit)
	return nil
}

func (s *fakeSystemd) StopQueued(ctx context.Context, units ...string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open = true
	s.stopped = append(s.stopped, units)
	return nil
}

type rig struct {
	probe  *Probe
	sd     *fakeSystemd
	clock  *fakeClock
	events *journaltest.Recorder
	dir    string
}

// newRig probes a real port on this machine, with systemd and time faked.
func newRig(t *testing.T, port int) *rig {
	dir := t.TempDir()
	r := &rig{
		sd:     &fakeSystemd{inst: online("inv1", 10*time.Second)},
		clock:  &fakeClock{now: 10 * time.Second},
		events: &journaltest.Recorder{},
		dir:    dir,
	}
	r.probe = &Probe{
		Project: "api", Index: 1, Instances: 2, Port: port,
		Interval: DefaultInterval, Window: DefaultWindow,
		Systemd: r.sd, Clock: r.clock, Check: reuseport.CheckPortAs, Events: r.events,
		Crashes: crashlog.Logs{Dir: filepath.Join(dir, "log")}, State: state.Dir{Path: filepath.Join(dir, "lib")},
	}
	return r
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func listenOn(t *testing.T, port int, reuse bool) net.Listener {
	t.Helper()
	lc := net.ListenConfig{}
	if reuse {
		lc.Control = reuseport.ListenControl
	}
	l, err := lc.Listen(context.Background(), "tcp4", "0.0.0.0:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func TestProbeConfirmsSlowStarter(t *testing.T) {
	port := freePort(t)
	r := newRig(t, port)
	r.clock.onTick = func(now time.Duration) {
		if now == 15*time.Second { // the app listens 5 s after coming online
			listenOn(t, port, true)
		}
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v; want confirmed", out, err)
	}
	if r.clock.now != 15*time.Second {
		t.Errorf("confirmed at %v, want at the first tick after listening (15s)", r.clock.now)
	}
	if k := r.events.Kinds(); len(k) != 1 || k[0] != journal.ReuseportConfirmed {
		t.Errorf("events %v", k)
	}
	if e := r.events.Got[0]; e.Project != "api" || e.Instance != "api-1" || e.Port != port || e.Invocation != "inv1" {
		t.Errorf("event %+v", e)
	}
	if len(r.sd.stopped) != 0 {
		t.Errorf("confirmed but stopped %v", r.sd.stopped)
	}
}

// The probe holds no connection to systemd while it waits: not while the
// instance is between runs, not while the app starts, not until the run
// is healthy. systemd sends every connection every unit's every change,
// so a boot's n waiting probes would cost PID 1 n² messages.
func TestProbeWaitsWithoutAConnection(t *testing.T) {
	port := freePort(t)
	r := newRig(t, port)
	r.probe.MinUptime = 3 * time.Second
	r.probe.Watch = DefaultWatch
	r.probe.Listeners = func(p int, uid uint32) ([]uint64, error) {
		if r.clock.now < 15*time.Second {
			return nil, nil
		}
		return []uint64{1}, nil
	}
	r.sd.inst = sysd.Status{ActiveState: "activating", SubState: "auto-restart"}
	r.sd.afterAsk = func(n int, i sysd.Status) sysd.Status {
		if n == 3 { // between runs for two looks, then a run
			return online("inv1", r.clock.now)
		}
		return i
	}
	var sleeps, open int
	var listened bool
	r.clock.onTick = func(now time.Duration) {
		sleeps++
		if r.sd.isOpen() {
			open++
		}
		if now >= 15*time.Second && !listened {
			listened = true
			listenOn(t, port, true)
		}
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed || !r.probe.Reset {
		t.Fatalf("Run = %v, %v, reset %v; want confirmed and reset", out, err, r.probe.Reset)
	}
	if sleeps < 10 || open != 0 {
		t.Fatalf("%d of %d sleeps held a connection to systemd", open, sleeps)
	}
}

// A run that takes long to listen is looked at less and less often: a
// share of its age, not every Watch (n probes of a boot, each waiting n
// times as long, would cost n²). A quick one is looked at every Watch.
func TestProbePacesItsLooks(t *testing.T) {
	for _, tc := range []struct {
		after    time.Duration // the app listens this long after coming online
		maxLooks int
		maxLate  time.Duration // confirmed at most this long after it listens
	}{
		{200 * time.Millisecond, 12, DefaultWatch},
		{10 * time.Second, int(10 * time.Second / DefaultWatch / 3), 10*time.Second/WatchShare + DefaultWatch},
		{40 * time.Second, int(40 * time.Second / DefaultWatch / 8), DefaultInterval},
	} {
		t.Run(tc.after.String(), func(t *testing.T) {
			port := freePort(t)
			r := newRig(t, port)
			r.probe.Watch = DefaultWatch
			up := r.sd.inst.ActiveEnterMonotonic
			looks := 0
			var listenedAt time.Duration
			r.probe.Listeners = func(p int, uid uint32) ([]uint64, error) {
				looks++
				if r.clock.now-up < tc.after {
					return nil, nil
				}
				if listenedAt == 0 {
					listenedAt = r.clock.now
					listenOn(t, port, true)
				}
				return []uint64{1}, nil
			}
			out, err := r.probe.Run(context.Background())
			if err != nil || out != Confirmed {
				t.Fatalf("Run = %v, %v; want confirmed", out, err)
			}
			late := listenedAt - (up + tc.after)
			if looks > tc.maxLooks || late > tc.maxLate {
				t.Fatalf("%d looks (want at most %d), confirmed %v after the app listened (want at most %v)", looks, tc.maxLooks, late, tc.maxLate)
			}
			if tc.after > time.Second && looks < 20 {
				t.Fatalf("only %d looks: the pace is coarser than a share of the run's age", looks)
			}
		})
	}
}

// A confirmed run queues its steering step once; an exclusive listener
// none; a step that cannot be queued changes no verdict.
func TestProbeQueuesSteering(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, true)
	r := newRig(t, port)
	var queued int
	r.probe.Steer = func(ctx context.Context) error { queued++; return nil }
	if out, err := r.probe.Run(context.Background()); err != nil || out != Confirmed || queued != 1 {
		t.Errorf("Run = %v, %v, steering queued %d times; want confirmed, once", out, err, queued)
	}

	var logged []string
	r = newRig(t, port)
	r.probe.Log = func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }
	r.probe.Steer = func(ctx context.Context) error { return errors.New("no bus") }
	if out, err := r.probe.Run(context.Background()); err != nil || out != Confirmed {
		t.Errorf("Run with a failing step = %v, %v; want confirmed", out, err)
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "cannot start bm2-steer@api-1.service (no bus); port "+strconv.Itoa(port)+" keeps the kernel's hash") {
		t.Errorf("logged %q", logged)
	}

	excl := freePort(t)
	listenOn(t, excl, false)
	r = newRig(t, excl)
	queued = 0
	r.probe.Steer = func(ctx context.Context) error { queued++; return nil }
	if out, _ := r.probe.Run(context.Background()); out != Missing || queued != 0 {
		t.Errorf("exclusive: %v, steering queued %d times; want missing, never", out, queued)
	}
}

// With the preload on, the verdict names what the preload cannot reach
// instead of offering it again.
func TestProbeExclusiveWithPreload(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, false)
	r := newRig(t, port)
	r.probe.Preload = true
	if out, err := r.probe.Run(context.Background()); err != nil || out != Missing {
		t.Fatalf("Run = %v, %v; want missing", out, err)
	}
	ev := r.events.Got[0]
	if !strings.Contains(ev.Detail, `although reuseport = "preload" is set: a listener the preload does not reach`) ||
		strings.Contains(ev.Detail, `set reuseport = "preload"`) || !strings.Contains(ev.Detail, `exec_mode = "fork"`) {
		t.Errorf("detail: %s", ev.Detail)
	}
}

// Preloaded reads the preload from the instance's command line.
func TestPreloaded(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want bool
	}{
		{[]string{"/usr/lib/bm2/bm2-probe", "run", "node", "/usr/bin/node", "--require", "/usr/lib/bm2/reuseport.cjs", "server.js"}, true},
		{[]string{"/usr/lib/bm2/bm2-probe", "run", "bun", "/usr/bin/bun", "--preload", "/usr/local/lib/bm2/reuseport.cjs", "index.ts"}, true},
		{[]string{"/usr/lib/bm2/bm2-probe", "run", "node", "/usr/bin/node", "server.js"}, false},
		{[]string{"/usr/lib/bm2/bm2-probe", "run", "node", "/usr/bin/node", "reuseport.cjs"}, false},
	} {
		if got := Preloaded(sysd.Status{ExecStart: c.cmd}); got != c.want {
			t.Errorf("Preloaded(%v) = %v, want %v", c.cmd, got, c.want)
		}
	}
}

func TestProbeExclusiveStopsProject(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, false)
	r := newRig(t, port)
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Missing {
		t.Fatalf("Run = %v, %v; want missing", out, err)
	}
	if k := r.events.Kinds(); len(k) != 1 || k[0] != journal.ReuseportMissing {
		t.Fatalf("events %v", k)
	}
	ev := r.events.Got[0]
	if ev.Reason != "reuseport_missing" || !strings.Contains(ev.Detail, "cluster mode needs reusePort") {
		t.Errorf("event %+v", ev)
	}
	// The fix that changes no code first, then the code change, then
	// fork mode.
	preload, code, fork := strings.Index(ev.Detail, `set reuseport = "preload" in bm2.toml`), strings.Index(ev.Detail, "listen with reusePort: true"), strings.Index(ev.Detail, `exec_mode = "fork"`)
	if preload < 0 || !(preload < code && code < fork) {
		t.Errorf("detail: want the preload, then the code change, then fork mode: %s", ev.Detail)
	}
	if len(r.sd.stopped) != 1 || strings.Join(r.sd.stopped[0], " ") != "bm2-api.target bm2-api.slice" {
		t.Errorf("stopped %v, want the target and the slice once", r.sd.stopped)
	}
	for _, inst := range []string{"api-0", "api-1"} {
		data, err := os.ReadFile(r.probe.Crashes.Path("api", inst))
		if err != nil || !strings.Contains(string(data), " reason=reuseport_missing ") {
			t.Errorf("%s crash.log: %q %v", inst, data, err)
		}
	}
	if reason, ok, _ := r.probe.State.Errored("api"); !ok || reason != "reuseport_missing" {
		t.Errorf("errored mark: %q %v", reason, ok)
	}

	// A second probe (another instance of the same project) reaches the
	// same verdict but does not stop or log again (so no second
	// notification: they come from the events).
	r2 := newRig(t, port)
	r2.probe.State, r2.probe.Crashes = r.probe.State, r.probe.Crashes
	out, err = r2.probe.Run(context.Background())
	if err != nil || out != AlreadyErrored {
		t.Fatalf("second Run = %v, %v; want already-errored", out, err)
	}
	if len(r2.sd.stopped)+len(r2.events.Got) != 0 {
		t.Errorf("second probe acted: %v %v", r2.sd.stopped, r2.events.Got)
	}
	data, _ := os.ReadFile(r.probe.Crashes.Path("api", "api-0"))
	if n := strings.Count(string(data), "\n"); n != 1 {
		t.Errorf("crash.log has %d lines, want 1", n)
	}
}

func TestProbeStopsAfterWindow(t *testing.T) {
	r := newRig(t, freePort(t))
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Stopped {
		t.Fatalf("Run = %v, %v; want stopped", out, err)
	}
	if r.clock.now != 70*time.Second {
		t.Errorf("gave up at %v, want 60s after coming online (70s)", r.clock.now)
	}
	if k := r.events.Kinds(); len(k) != 1 || k[0] != journal.ReuseportProbeStopped {
		t.Errorf("events %v", k)
	}
	if len(r.sd.stopped) != 0 {
		t.Error("stopped the project for not listening")
	}
}

// The window counts from the instance coming online, not from the probe's start.
func TestProbeWindowFromOnline(t *testing.T) {
	r := newRig(t, freePort(t))
	r.clock.now = 65 * time.Second // the probe started 55 s late
	r.probe.Run(context.Background())
	if r.clock.now != 70*time.Second {
		t.Errorf("gave up at %v, want 70s", r.clock.now)
	}
}

// A restart while waiting gives the new invocation a fresh window.
func TestProbeRestartResetsWindow(t *testing.T) {
	r := newRig(t, freePort(t))
	r.clock.onTick = func(now time.Duration) {
		switch now {
		case 50 * time.Second:
			r.sd.inst = sysd.Status{ActiveState: "activating", SubState: "auto-restart", JobPending: true}
		case 52 * time.Second:
			r.sd.inst = online("inv2", 52*time.Second)
		}
	}
	out, _ := r.probe.Run(context.Background())
	if out != Stopped || r.clock.now != 112*time.Second {
		t.Errorf("Run = %v at %v, want stopped at 112s", out, r.clock.now)
	}
}

func TestProbeInstanceGone(t *testing.T) {
	r := newRig(t, freePort(t))
	r.sd.inst = sysd.Status{ActiveState: "failed", SubState: "failed"}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Gone || len(r.events.Got) != 0 {
		t.Errorf("Run = %v, %v, events %v", out, err, r.events.Got)
	}
}

// An exclusive verdict about an invocation that restarted in between is
// stale: no reaction; the new invocation is probed afresh.
func TestProbeStaleExclusive(t *testing.T) {
	port := freePort(t)
	l := listenOn(t, port, false)
	r := newRig(t, port)
	r.sd.afterAsk = func(n int, i sysd.Status) sysd.Status {
		if n == 2 { // the re-check after the first exclusive verdict
			l.Close()
			listenOn(t, port, true)
			return online("inv2", 10*time.Second)
		}
		return i
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v; want confirmed", out, err)
	}
	if len(r.sd.stopped) != 0 {
		t.Error("stopped on a stale verdict")
	}
}

// The probe joins as the app's user, by the UID systemd reports: a
// reusePort listener of another user is confirmed when the probe takes
// that user's id (and would be exclusive to root).
func TestProbeAsAppUser(t *testing.T) {
	testutil.Root(t)
	nobody := identity.Identity{UID: 65534, GID: 65534}
	var l net.Listener
	// A socket belongs to the fsuid of the thread that creates it.
	err := identity.Do(nobody, func() error {
		var err error
		l, err = (&net.ListenConfig{Control: reuseport.ListenControl}).Listen(context.Background(), "tcp4", "0.0.0.0:0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if s, _ := reuseport.CheckPort(port); s != reuseport.Exclusive {
		t.Fatalf("root sees nobody's listener as %v, want exclusive", s)
	}
	r := newRig(t, port)
	r.sd.inst.UID, r.sd.inst.GID = 65534, 65534
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v; want confirmed", out, err)
	}
}

// A run that reaches its verdict just as the instance restarts (systemd
// merged the new start into this still-running probe) goes on to judge
// the new run: every run gets a verdict.
func TestProbeJudgesARestartThatMergedIn(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, true)
	r := newRig(t, port)
	r.sd.afterAsk = func(n int, i sysd.Status) sysd.Status {
		if n == 2 { // asked right after the first verdict: restarted since
			return online("inv2", 10*time.Second)
		}
		return i
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v", out, err)
	}
	if len(r.events.Got) != 2 || r.events.Got[0].Invocation != "inv1" || r.events.Got[1].Invocation != "inv2" {
		t.Fatalf("verdicts %+v, want one per run", r.events.Got)
	}
}

// Without root the probe cannot take the app's identity, and says so
// rather than answering for root.
func TestProbeRefusesToCheckAsSomeoneElse(t *testing.T) {
	if testutil.Unprivileged(t) {
		return
	}
	port := freePort(t)
	listenOn(t, port, true)
	r := newRig(t, port)
	r.sd.inst.UID = uint32(os.Getuid() + 1)
	if out, err := r.probe.Run(context.Background()); !errors.Is(err, identity.ErrNotPermitted) || out != Gone || len(r.events.Got) != 0 {
		t.Fatalf("Run = %v, %v, events %v", out, err, r.events.Got)
	}
}

// budgetRig is a rig whose probe sees listeners through a fake sock_diag:
// listening[0] says whether the instance holds a listener, owns whether
// it is the instance's own (not a sibling's).
func budgetRig(t *testing.T, port int) (*rig, *bool, *bool) {
	r := newRig(t, port)
	listening, owns := false, true
	r.probe.MinUptime = time.Second
	r.probe.Watch = DefaultWatch
	r.probe.Listeners = func(p int, uid uint32) ([]uint64, error) {
		if p != port || uid != uint32(os.Getuid()) {
			t.Errorf("Listeners(%d, %d)", p, uid)
		}
		if listening {
			return []uint64{42}, nil
		}
		return nil, nil
	}
	r.probe.Owns = func(id identity.Identity, st sysd.Status, inodes []uint64) (bool, error) {
		return owns, nil
	}
	return r, &listening, &owns
}

// A run that listens, is confirmed and stays up for min_uptime_ms resets
// the restart budget; the verdict comes at the first watch after listen().
func TestProbeResetsBudgetAfterHealthyRun(t *testing.T) {
	port := freePort(t)
	r, listening, _ := budgetRig(t, port)
	var confirmedAt time.Duration
	r.probe.Events = sinkFunc(func(ev journal.Event) error {
		confirmedAt = r.clock.now
		return r.events.Emit(ev)
	})
	r.clock.onTick = func(now time.Duration) {
		if now == 15*time.Second {
			listenOn(t, port, true)
			*listening = true
		}
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed || !r.probe.Reset {
		t.Fatalf("Run = %v, %v, reset %v; want confirmed and reset", out, err, r.probe.Reset)
	}
	if k := r.events.Kinds(); len(k) != 1 || k[0] != journal.ReuseportConfirmed {
		t.Errorf("events %v", k)
	}
	if confirmedAt > 15*time.Second+2*DefaultWatch {
		t.Errorf("confirmed at %v, want within two watches of 15s", confirmedAt)
	}
	if len(r.sd.resets) != 1 || r.sd.resets[0] != "bm2@api-1.service inv1" || r.clock.now != 16*time.Second {
		t.Errorf("resets %v at %v, want inv1's at 16s (listen + min_uptime)", r.sd.resets, r.clock.now)
	}
}

// A run that crashes before it has stayed up min_uptime_ms after
// listening does not reset the budget; the next, healthy run does.
func TestProbeNoResetForShortRun(t *testing.T) {
	port := freePort(t)
	r, listening, _ := budgetRig(t, port)
	var l net.Listener
	step := 0
	r.clock.onTick = func(now time.Duration) {
		switch {
		case step == 0 && now >= 11*time.Second:
			l = listenOn(t, port, true)
			*listening = true
			step++
		case step == 1 && now >= 11*time.Second+500*time.Millisecond: // crashes 0.5 s after listen (seen late)
			l.Close()
			*listening = false
			r.sd.inst = sysd.Status{ActiveState: "activating", SubState: "auto-restart", JobPending: true}
			step++
		case step == 2 && now >= 13*time.Second:
			r.sd.inst = online("inv2", 13*time.Second)
			listenOn(t, port, true)
			*listening = true
			step++
		}
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v", out, err)
	}
	if len(r.sd.resets) != 1 || r.sd.resets[0] != "bm2@api-1.service inv2" {
		t.Errorf("resets %v, want only inv2's", r.sd.resets)
	}
	if n := len(r.events.Got); n != 2 {
		t.Errorf("%d verdicts, want one per run: %v", n, r.events.Kinds())
	}
}

// In cluster mode a port made joinable by a sibling's socket confirms
// nothing about this run until it listens itself.
func TestProbeWaitsForOwnListener(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, true) // a sibling instance
	r, _, _ := budgetRig(t, port)
	sockets := []uint64{42} // the sibling's
	r.probe.Listeners = func(int, uint32) ([]uint64, error) { return sockets, nil }
	looked := 0
	r.probe.Owns = func(id identity.Identity, st sysd.Status, inodes []uint64) (bool, error) {
		looked += len(inodes)
		return slices.Contains(inodes, 43), nil
	}
	r.clock.onTick = func(now time.Duration) {
		if now >= 20*time.Second && len(sockets) == 1 {
			listenOn(t, port, true)
			sockets = []uint64{42, 43} // its own
		}
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v", out, err)
	}
	if looked != 2 {
		t.Errorf("looked for %d sockets among the run's descriptors, want 2 (each socket once)", looked)
	}
	// The run is 10 s old at 20 s: the probe looks every 10s/WatchShare.
	if r.clock.now < 21*time.Second || r.clock.now > 21*time.Second+10*time.Second/WatchShare {
		t.Errorf("reset at %v, want 21s + at most one look's pace: confirmed when its own listener appeared (20s), + min_uptime", r.clock.now)
	}
}

// Fork mode: no reusePort check (an exclusive listener is fine); the budget
// resets after listen + min_uptime.
func TestProbeForkResetsBudget(t *testing.T) {
	port := freePort(t)
	r, listening, _ := budgetRig(t, port)
	r.probe.Fork = true
	r.clock.onTick = func(now time.Duration) {
		if now == 12*time.Second {
			listenOn(t, port, false)
			*listening = true
		}
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Listening || !r.probe.Reset || r.clock.now != 13*time.Second {
		t.Fatalf("Run = %v, %v, reset %v at %v; want listening, reset at 13s", out, err, r.probe.Reset, r.clock.now)
	}
	if len(r.events.Got)+len(r.sd.stopped) != 0 {
		t.Errorf("fork mode: events %v, stopped %v", r.events.Kinds(), r.sd.stopped)
	}
}

// Without sock_diag, fork mode finds the listener with its bind tests.
func TestProbeForkWithoutSockDiag(t *testing.T) {
	port := freePort(t)
	r := newRig(t, port)
	r.probe.Fork, r.probe.MinUptime = true, time.Second
	r.clock.onTick = func(now time.Duration) {
		if now == 12*time.Second {
			listenOn(t, port, false)
		}
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Listening || r.clock.now != 13*time.Second {
		t.Fatalf("Run = %v, %v at %v", out, err, r.clock.now)
	}
}

// A worker (no port): no listener is looked for, no event is logged, and
// the budget resets once the run has stayed up min_uptime_ms.
func TestProbeWorkerResetsBudget(t *testing.T) {
	r, _, _ := budgetRig(t, 0)
	r.probe.Fork, r.probe.Worker = true, true
	r.probe.Listeners = func(int, uint32) ([]uint64, error) {
		t.Error("a worker's probe looked for listeners")
		return nil, nil
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Running || !r.probe.Reset || r.clock.now > 11*time.Second {
		t.Fatalf("Run = %v, %v, reset %v at %v; want running, reset by 11s (start + min_uptime)", out, err, r.probe.Reset, r.clock.now)
	}
	if len(r.events.Got)+len(r.sd.stopped) != 0 {
		t.Errorf("a worker: events %v, stopped %v", r.events.Kinds(), r.sd.stopped)
	}
}

// A run that never listens counts as healthy when the window ends.
func TestProbeNeverListensResetsAtWindowEnd(t *testing.T) {
	r, _, _ := budgetRig(t, freePort(t))
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Stopped || !r.probe.Reset || r.clock.now != 70*time.Second {
		t.Fatalf("Run = %v, %v, reset %v at %v; want stopped and reset at 70s", out, err, r.probe.Reset, r.clock.now)
	}
}

type sinkFunc func(journal.Event) error

func (f sinkFunc) Emit(ev journal.Event) error { return f(ev) }

// An exclusive listener that is not the run's own (an old fork-mode
// instance, another program) does not make the probe stop the project.
func TestProbeExclusiveNotItsOwn(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, false) // someone else's
	r, listening, owns := budgetRig(t, port)
	*listening, *owns = true, false
	r.probe.Window = 3 * time.Second
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Stopped {
		t.Fatalf("Run = %v, %v; want stopped (no verdict on its own listener)", out, err)
	}
	if len(r.sd.stopped) != 0 || len(r.events.Got) != 1 || r.events.Got[0].Kind != journal.ReuseportProbeStopped {
		t.Errorf("stopped %v, events %v", r.sd.stopped, r.events.Kinds())
	}
	if _, errored, _ := r.probe.State.Errored("api"); errored {
		t.Error("project marked errored for someone else's listener")
	}
}

// A crash that lands between the probe's last look and its reset is
// recorded and the instance started again: systemd took the reset for the
// crash's result and would do neither.
func TestProbeResetRacingACrash(t *testing.T) {
	port := freePort(t)
	r, listening, _ := budgetRig(t, port)
	r.clock.onTick = func(now time.Duration) {
		if now == 12*time.Second {
			listenOn(t, port, true)
			*listening = true
		}
	}
	asks := 0
	r.sd.afterAsk = func(n int, st sysd.Status) sysd.Status {
		if len(r.sd.resets) > 0 {
			asks++
			if asks == 1 {
				return sysd.Status{ActiveState: "deactivating", SubState: "stop-post", Result: "success", ExecMainCode: 1, ExecMainStatus: 1}
			}
			return sysd.Status{ActiveState: "inactive", SubState: "dead", Result: "success", ExecMainCode: 1, ExecMainStatus: 1}
		}
		return st
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v", out, err)
	}
	if len(r.sd.started) != 1 || r.sd.started[0] != "bm2@api-1.service" {
		t.Errorf("started %v, want the instance again", r.sd.started)
	}
	if k := r.events.Kinds(); len(k) != 2 || k[1] != journal.InstanceCrashed {
		t.Errorf("events %v, want the crash recorded", k)
	}
	data, _ := os.ReadFile(r.probe.Crashes.Path("api", "api-1"))
	if !strings.Contains(string(data), "reason=exited") {
		t.Errorf("crash.log %q", data)
	}

	// A clean end after the reset (a stop by hand) is left alone.
	r2, l2, _ := budgetRig(t, freePort(t))
	*l2 = true
	r2.probe.Fork = true
	r2.sd.afterAsk = func(n int, st sysd.Status) sysd.Status {
		if len(r2.sd.resets) > 0 {
			return sysd.Status{ActiveState: "inactive", SubState: "dead", Result: "success", ExecMainCode: 2, ExecMainStatus: 15}
		}
		return st
	}
	if _, err := r2.probe.Run(context.Background()); err != nil || len(r2.sd.started) != 0 {
		t.Errorf("clean stop after reset: err %v, started %v", err, r2.sd.started)
	}
}

// An app alone on [::1] is caught (the probe asks IPv6 too) and errored as
// loopback_only, not reuseport_missing: the listener's address comes from
// sock_diag.
func TestProbeLoopbackOnly(t *testing.T) {
	l, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no IPv6 loopback", Fix: "sudo sysctl net.ipv6.conf.lo.disable_ipv6=0"}, err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	r := newRig(t, port)
	r.probe.Runtime = "node"
	r.probe.Addrs = func(p int, uid uint32) ([]netip.Addr, error) {
		ls, err := sockdiag.Listeners(p)
		var out []netip.Addr
		for _, l := range ls {
			out = append(out, l.Addr)
		}
		return out, err
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Missing {
		t.Fatalf("Run = %v, %v; want missing", out, err)
	}
	ev := r.events.Got[0]
	if ev.Kind != journal.ReuseportMissing || ev.Reason != reason.LoopbackOnly ||
		!strings.Contains(ev.Message, "api-1 listens on port "+strconv.Itoa(port)+" only on ::1") || !strings.Contains(ev.Detail, "leave out the host") {
		t.Errorf("event %+v", ev)
	}
	if reason, ok, _ := r.probe.State.Errored("api"); !ok || reason != "loopback_only" {
		t.Errorf("errored mark: %q %v", reason, ok)
	}
	data, _ := os.ReadFile(r.probe.Crashes.Path("api", "api-0"))
	if !strings.Contains(string(data), " reason=loopback_only ") {
		t.Errorf("crash.log %q", data)
	}
	// Without the addresses, the same listener is reuseport_missing.
	if got := (&Probe{}).loopbackOnly(0); got != "" {
		t.Errorf("loopbackOnly without Addrs = %q", got)
	}
	r.probe.Addrs = func(int, uint32) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("::ffff:127.0.0.1"), netip.MustParseAddr("::1")}, nil
	}
	if got := r.probe.loopbackOnly(0); got != "127.0.0.1 and ::1" {
		t.Errorf("loopbackOnly = %q", got)
	}
	r.probe.Addrs = func(int, uint32) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("10.0.0.1")}, nil
	}
	if got := r.probe.loopbackOnly(0); got != "" {
		t.Errorf("loopbackOnly with a public address = %q", got)
	}
}

// In a user's manager systemd reports no UID for services (no User=):
// the probe checks as the user it runs as (Owner).
func TestProbeUserScopeOwner(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, true)
	r := newRig(t, port)
	r.sd.inst.UID, r.sd.inst.GID = sysd.NoID, sysd.NoID
	if out, err := r.probe.Run(context.Background()); err == nil {
		t.Fatalf("without an owner, a unit with no UID was probed: %v", out)
	}
	r = newRig(t, port)
	r.sd.inst.UID, r.sd.inst.GID = sysd.NoID, sysd.NoID
	self := identity.Self()
	r.probe.Owner = &self
	if out, err := r.probe.Run(context.Background()); err != nil || out != Confirmed {
		t.Fatalf("user scope: Run = %v, %v; want confirmed", out, err)
	}
}

// underFile is a path whose parent is a regular file: every write there
// fails with ENOTDIR, as root too, the way a full /var fails with ENOSPC.
func underFile(t *testing.T, name string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(f, name)
}

// writeFailures are the state_write_failed events among evs, by path.
func writeFailures(evs []journal.Event) map[string]journal.Event {
	out := map[string]journal.Event{}
	for _, e := range evs {
		if e.Kind == journal.StateWriteFailed {
			out[e.Path] = e
		}
	}
	return out
}

// A full /var changes nothing of the reaction but what it writes: the
// project's mark falls back to the run directory (the project is errored
// all the same, and a second probe does not react again), the crash.log
// lines that cannot be written are said with their paths and the errno,
// and the project is stopped.
func TestProbeExclusiveOnAFullDisk(t *testing.T) {
	port := freePort(t)
	listenOn(t, port, false)
	r := newRig(t, port)
	r.probe.State = state.Dir{Path: underFile(t, "lib"), Run: t.TempDir()}
	r.probe.Crashes = crashlog.Logs{Dir: underFile(t, "log")}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Missing {
		t.Fatalf("Run = %v, %v; want missing", out, err)
	}
	if len(r.sd.stopped) != 1 || strings.Join(r.sd.stopped[0], " ") != "bm2-api.target bm2-api.slice" {
		t.Errorf("stopped %v, want the target and the slice once", r.sd.stopped)
	}
	if k := r.events.Kinds(); len(k) != 4 || k[0] != journal.ReuseportMissing {
		t.Fatalf("events %v, want reuseport_missing and 3 state_write_failed", k)
	}
	failed := writeFailures(r.events.Got)
	mark := failed[r.probe.State.ErroredPath("api")]
	if mark.Errno != "ENOTDIR" || mark.Project != "api" || mark.Instance != "" ||
		!strings.Contains(mark.Message, "project api: "+r.probe.State.ErroredPath("api")+" could not be written (ENOTDIR, not a directory)") ||
		!strings.Contains(mark.Message, "marked errored in "+r.probe.State.ErroredRunPath("api")+" instead") ||
		!strings.Contains(mark.Message, "until `bm2 start api` or the next boot") {
		t.Errorf("the mark's state_write_failed: %+v", mark)
	}
	for _, id := range []string{"api-0", "api-1"} {
		e, ok := failed[r.probe.Crashes.Path("api", id)]
		if !ok || e.Instance != id || e.Errno != "ENOTDIR" || !strings.Contains(e.Message, "reason=reuseport_missing") {
			t.Errorf("%s crash.log: state_write_failed %+v (%v)", id, e, ok)
		}
	}
	if why, ok, _ := r.probe.State.Errored("api"); !ok || why != "reuseport_missing" {
		t.Errorf("errored = %q %v; want the mark under Run to hold", why, ok)
	}

	// The fallback mark holds the first verdict.
	r2 := newRig(t, port)
	r2.probe.State, r2.probe.Crashes = r.probe.State, r.probe.Crashes
	if out, err := r2.probe.Run(context.Background()); err != nil || out != AlreadyErrored || len(r2.sd.stopped)+len(r2.events.Got) != 0 {
		t.Errorf("second probe: %v %v, stopped %v, events %v", out, err, r2.sd.stopped, r2.events.Kinds())
	}

	// No mark anywhere: said for both, and the project is stopped still.
	r3 := newRig(t, port)
	r3.probe.State = state.Dir{Path: underFile(t, "lib"), Run: underFile(t, "run")}
	if out, err := r3.probe.Run(context.Background()); err != nil || out != Missing || len(r3.sd.stopped) != 1 {
		t.Fatalf("unmarked: %v %v, stopped %v", out, err, r3.sd.stopped)
	}
	failed = writeFailures(r3.events.Got)
	for _, p := range []string{r3.probe.State.ErroredPath("api"), r3.probe.State.ErroredRunPath("api")} {
		if e, ok := failed[p]; !ok || e.Errno != "ENOTDIR" || !strings.Contains(e.Message, "marked errored nowhere") {
			t.Errorf("%s: state_write_failed %+v (%v)", p, e, ok)
		}
	}
}

// A crash found after the budget reset whose crash.log line cannot be
// written is still recorded and the instance started again.
func TestProbeResetRacingACrashOnAFullDisk(t *testing.T) {
	port := freePort(t)
	r, listening, _ := budgetRig(t, port)
	r.probe.Crashes = crashlog.Logs{Dir: underFile(t, "log")}
	r.clock.onTick = func(now time.Duration) {
		if now == 12*time.Second {
			listenOn(t, port, true)
			*listening = true
		}
	}
	r.sd.afterAsk = func(n int, st sysd.Status) sysd.Status {
		if len(r.sd.resets) > 0 {
			return sysd.Status{ActiveState: "inactive", SubState: "dead", Result: "success", ExecMainCode: 1, ExecMainStatus: 1}
		}
		return st
	}
	out, err := r.probe.Run(context.Background())
	if err != nil || out != Confirmed {
		t.Fatalf("Run = %v, %v", out, err)
	}
	if len(r.sd.started) != 1 {
		t.Errorf("started %v, want the instance again", r.sd.started)
	}
	k := r.events.Kinds()
	if len(k) != 3 || k[1] != journal.InstanceCrashed || k[2] != journal.StateWriteFailed {
		t.Fatalf("events %v", k)
	}
	if e := r.events.Got[2]; e.Path != r.probe.Crashes.Path("api", "api-1") || e.Errno != "ENOTDIR" || e.Instance != "api-1" {
		t.Errorf("state_write_failed %+v", e)
	}
}

// Each verdict (confirmed, missing, nobody listening) is kept in the
// verdicts' directory as well as logged, naming the run it judged; the
// waits of serve, start and reload read it there.
func TestProbeKeepsEachVerdictInAFile(t *testing.T) {
	keep := func(r *rig) relay.Verdicts {
		dir := filepath.Join(r.dir, "verdicts")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		v := relay.Verdicts{Spool: relay.Spool{Dir: dir, Owner: os.Geteuid()}}
		r.probe.Verdicts = v
		return v
	}
	shared, excl := freePort(t), freePort(t)
	listenOn(t, shared, true)
	listenOn(t, excl, false)
	for _, c := range []struct {
		port int
		want Outcome
		kind journal.Kind
	}{
		{shared, Confirmed, journal.ReuseportConfirmed},
		{excl, Missing, journal.ReuseportMissing},
		{freePort(t), Stopped, journal.ReuseportProbeStopped},
	} {
		r := newRig(t, c.port)
		v := keep(r)
		if out, _ := r.probe.Run(context.Background()); out != c.want {
			t.Fatalf("port %d: Run = %v, want %v", c.port, out, c.want)
		}
		ev, ok, err := v.Get("api-1")
		if err != nil || !ok || ev.Kind != c.kind || ev.Invocation != "inv1" || ev.Port != c.port || ev.Project != "api" {
			t.Errorf("%v: verdict file %v %v %+v; want %s on run inv1", c.want, ok, err, ev, c.kind)
		}
		if len(r.events.Got) != 1 || r.events.Got[0].Kind != c.kind {
			t.Errorf("%v: logged %v, want %s", c.want, r.events.Kinds(), c.kind)
		}
	}
	// A directory it cannot use leaves the verdict in the journal.
	r := newRig(t, shared)
	r.probe.Verdicts = relay.Verdicts{Spool: relay.Spool{Dir: filepath.Join(r.dir, "none"), Owner: os.Geteuid()}}
	var log []string
	r.probe.Log = func(f string, a ...any) { log = append(log, fmt.Sprintf(f, a...)) }
	if out, err := r.probe.Run(context.Background()); out != Confirmed || err != nil || len(r.events.Got) != 1 {
		t.Fatalf("no directory: Run = %v, %v, events %v", out, err, r.events.Kinds())
	}
	if !strings.Contains(strings.Join(log, "\n"), "verdict kept in the journal only") {
		t.Errorf("log %q", log)
	}
}

// A run that ends under a probe still judging (a crash loop restarts
// under one probe) has its exit hook's event sent: the probe asks for
// the relay once per run that ended, whether it saw the instance down
// between two runs or only a new run.
func TestProbeRelaysWhenARunEnds(t *testing.T) {
	r := newRig(t, freePort(t))
	relays := 0
	r.probe.Relay = func() { relays++ }
	var at []time.Duration
	r.clock.onTick = func(now time.Duration) {
		switch now {
		case 20 * time.Second:
			r.sd.inst = sysd.Status{ActiveState: "activating", SubState: "auto-restart", JobPending: true}
		case 21 * time.Second:
			at = append(at, now)
			if relays != 1 {
				t.Errorf("%d relays once inv1 ended, want 1", relays)
			}
		case 22 * time.Second:
			r.sd.inst = online("inv2", 22*time.Second)
		case 30 * time.Second:
			r.sd.inst = online("inv3", 30*time.Second) // between two looks
		}
	}
	if out, _ := r.probe.Run(context.Background()); out != Stopped {
		t.Fatalf("Run = %v, want stopped (nobody listens)", out)
	}
	if relays != 2 || len(at) != 1 {
		t.Errorf("%d relays for two ended runs (inv1, inv2), want 2", relays)
	}
}

// A probe that finds its instance still starting (the port fence, the
// sandbox, the exec: a reload's every step waits for this) asks again
// after a share of the time the start has taken, so that it sees the run
// within a quarter of that once it runs: not after a back-off that grew
// with its own looks (it saw a start of 700 ms 375 ms late). A start that
// waits long is asked about less and less often.
func TestProbeSeesTheStartSoon(t *testing.T) {
	for _, tc := range []struct {
		begun, running time.Duration // the start began, and runs, this long before/after the probe's first look
		maxAsks        int
		queued         bool // the start job waits: the state is the last stop's, 10 minutes old
	}{
		{begun: 300 * time.Millisecond, running: 400 * time.Millisecond, maxAsks: 10},
		{begun: 0, running: 160 * time.Millisecond, maxAsks: 10},
		{begun: 0, running: 20 * time.Second, maxAsks: 56},
		{begun: 0, running: 300 * time.Millisecond, maxAsks: 12, queued: true},
	} {
		t.Run(fmt.Sprintf("%v queued %v", tc.running, tc.queued), func(t *testing.T) {
			port := freePort(t)
			r := newRig(t, port)
			r.probe.Watch = DefaultWatch
			r.clock.now = 20 * time.Minute
			first := r.clock.now
			began := first - tc.begun
			runsAt := first + tc.running
			r.sd.inst = sysd.Status{ActiveState: "activating", SubState: "start-pre", JobPending: true, StateChangeMonotonic: began}
			if tc.queued {
				r.sd.inst = sysd.Status{ActiveState: "inactive", SubState: "dead", JobPending: true, StateChangeMonotonic: first - 10*time.Minute}
			}
			var seenAt time.Duration
			r.sd.afterAsk = func(n int, i sysd.Status) sysd.Status {
				if r.clock.now < runsAt {
					return i
				}
				if seenAt == 0 {
					seenAt = r.clock.now
					listenOn(t, port, true)
				}
				return online("inv1", runsAt)
			}
			r.probe.Listeners = func(p int, uid uint32) ([]uint64, error) { return []uint64{1}, nil }
			out, err := r.probe.Run(context.Background())
			if err != nil || out != Confirmed {
				t.Fatalf("Run = %v, %v; want confirmed", out, err)
			}
			late, bound := seenAt-runsAt, max(DefaultWatch, (runsAt-began)/StartShare)
			if late > bound {
				t.Errorf("the run was seen %v after it began running (the start took %v): want at most %v", late, runsAt-began, bound)
			}
			if asks := r.sd.asks; asks > tc.maxAsks+3 {
				t.Errorf("systemd was asked %d times about a start of %v: want at most %d (and the run's own)", asks, runsAt-began, tc.maxAsks)
			}
		})
	}
}
