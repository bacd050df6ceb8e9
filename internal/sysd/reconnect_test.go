package sysd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// world is a fake systemd that outlives the fake connections to it, as
// the real one outlives its D-Bus connections across a re-exec.
type world struct {
	mu      sync.Mutex
	units   map[string]map[string]any // unit properties
	dials   int
	downFor int   // the next downFor dials fail as a re-exec does
	dialErr error // what a failing dial returns
	// lose, when set, is asked before each call: true cuts the
	// connection, and the call fails as a cut one does.
	lose      func(call string) bool
	restarts  int // restart jobs enqueued
	nextJob   uint32
	lastCh    chan<- string // the channel of the last job, never signalled by the fake
	finishJob func(unit string)
	// types are the properties of a unit's type interface, by
	// "unit/Type"; asked records which were asked for.
	types map[string]map[string]any
	asked []string
}

type fakeConn struct {
	w    *world
	gone bool
}

func (w *world) dial(context.Context) (manager, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dials++
	if w.downFor > 0 {
		w.downFor--
		return nil, unreachable(w.dialErr)
	}
	return &fakeConn{w: w}, nil
}

func (f *fakeConn) cut(call string) error {
	if f.gone {
		return dbus.ErrClosed
	}
	if f.w.lose != nil && f.w.lose(call) {
		f.gone = true
		return dbus.ErrClosed
	}
	return nil
}

func (f *fakeConn) ReloadContext(context.Context) error { return f.cut("reload") }
func (f *fakeConn) ResetFailedUnitContext(context.Context, string) error {
	return f.cut("reset-failed")
}
func (f *fakeConn) StartUnitContext(_ context.Context, name, _ string, ch chan<- string) (int, error) {
	return f.enqueue("start", name, ch)
}
func (f *fakeConn) StopUnitContext(_ context.Context, name, _ string, ch chan<- string) (int, error) {
	return f.enqueue("stop", name, ch)
}
func (f *fakeConn) RestartUnitContext(_ context.Context, name, _ string, ch chan<- string) (int, error) {
	return f.enqueue("restart", name, ch)
}

// enqueue queues a job on the unit. Its signal is never sent: the
// tests cut the connection, so only the unit's state can tell.
func (f *fakeConn) enqueue(verb, name string, ch chan<- string) (int, error) {
	if err := f.cut(verb + "-before"); err != nil {
		return 0, err
	}
	f.w.mu.Lock()
	f.w.nextJob++
	id := f.w.nextJob
	f.w.units[name]["Job"] = []any{id, dbus.ObjectPath("/org/freedesktop/systemd1/job/1")}
	if verb == "restart" {
		f.w.restarts++
	}
	f.w.lastCh = ch
	f.w.mu.Unlock()
	// The job is queued but the answer is lost: a re-exec in between.
	if err := f.cut(verb + "-after"); err != nil {
		return 0, err
	}
	return int(id), nil
}

func (f *fakeConn) GetUnitPropertiesContext(_ context.Context, unit string) (map[string]any, error) {
	if err := f.cut("properties"); err != nil {
		return nil, err
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	out := map[string]any{}
	for k, v := range f.w.units[unit] {
		out[k] = v
	}
	return out, nil
}

func (f *fakeConn) GetUnitTypePropertiesContext(_ context.Context, unit, unitType string) (map[string]any, error) {
	if err := f.cut("service-properties"); err != nil {
		return nil, err
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.w.asked = append(f.w.asked, unit+"/"+unitType)
	out := map[string]any{}
	for k, v := range f.w.types[unit+"/"+unitType] {
		out[k] = v
	}
	return out, nil
}

func (f *fakeConn) ListUnitsByPatternsContext(context.Context, []string, []string) ([]sddbus.UnitStatus, error) {
	return nil, f.cut("list")
}

// ListUnitsByNamesContext answers as systemd does: every name, in order,
// a unit it has no properties for as not-found.
func (f *fakeConn) ListUnitsByNamesContext(_ context.Context, names []string) ([]sddbus.UnitStatus, error) {
	if err := f.cut("list-names"); err != nil {
		return nil, err
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	var out []sddbus.UnitStatus
	for _, n := range names {
		u, ok := f.w.units[n]
		if !ok {
			out = append(out, sddbus.UnitStatus{Name: n, LoadState: "not-found", ActiveState: "inactive", SubState: "dead"})
			continue
		}
		load, _ := u["LoadState"].(string)
		if load == "" {
			load = "loaded"
		}
		job := jobID(u["Job"])
		active, _ := u["ActiveState"].(string)
		sub, _ := u["SubState"].(string)
		out = append(out, sddbus.UnitStatus{Name: n, LoadState: load, ActiveState: active, SubState: sub, JobId: job})
	}
	return out, nil
}

func (f *fakeConn) GetUnitPropertyContext(_ context.Context, unit, prop string) (*sddbus.Property, error) {
	return f.property("property", unit, prop, func() map[string]any { return f.w.units[unit] })
}

func (f *fakeConn) GetServicePropertyContext(_ context.Context, unit, prop string) (*sddbus.Property, error) {
	return f.property("service-property", unit, prop, func() map[string]any { return f.w.types[unit+"/Service"] })
}

// property is one Get: a property the unit does not have is systemd's
// error for it.
func (f *fakeConn) property(call, unit, prop string, of func() map[string]any) (*sddbus.Property, error) {
	if err := f.cut(call); err != nil {
		return nil, err
	}
	f.w.mu.Lock()
	defer f.w.mu.Unlock()
	f.w.asked = append(f.w.asked, unit+"."+prop)
	v, ok := of()[prop]
	if !ok {
		return nil, dbus.Error{Name: "org.freedesktop.DBus.Error.UnknownProperty", Body: []any{"Unknown property " + prop}}
	}
	return &sddbus.Property{Name: prop, Value: dbus.MakeVariant(v)}, nil
}

func (f *fakeConn) Connected() bool { return !f.gone }
func (f *fakeConn) Close()          { f.gone = true }

func newWorld() *world {
	return &world{units: map[string]map[string]any{
		"bm2@a-0.service": {"ActiveState": "active", "SubState": "running", "InvocationID": []byte{1}, "Job": []any{uint32(0), dbus.ObjectPath("/")}},
	}, dialErr: errors.New("connect: connection refused")}
}

func (w *world) conn(window time.Duration, booted bool) *Conn {
	return &Conn{what: "fake", dial: w.dial, retry: func() bool { return booted }, window: window, poll: 10 * time.Millisecond, grace: 20 * time.Millisecond}
}

// finish ends the unit's job the way systemd does, leaving the state.
func (w *world) finish(unit, active, sub string, invocation byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.units[unit]
	u["Job"] = []any{uint32(0), dbus.ObjectPath("/")}
	u["ActiveState"], u["SubState"], u["InvocationID"] = active, sub, []byte{invocation}
}

func TestCallReconnectsAfterALostConnection(t *testing.T) {
	w := newWorld()
	c := w.conn(5*time.Second, true)
	cuts := 1
	w.lose = func(call string) bool {
		if call == "properties" && cuts > 0 {
			cuts--
			w.downFor = 3 // systemd re-executing: the next dials are refused
			return true
		}
		return false
	}
	st, err := c.Unit(context.Background(), "bm2@a-0.service")
	if err != nil || st.ActiveState != "active" {
		t.Fatalf("%+v %v", st, err)
	}
	if w.dials != 5 { // the first, three refused, the one that worked
		t.Fatalf("dials %d", w.dials)
	}
}

func TestCallGivesUpAfterTheWindow(t *testing.T) {
	w := newWorld()
	w.downFor = 1 << 30
	c := w.conn(150*time.Millisecond, true)
	start := time.Now()
	err := c.Reload(context.Background())
	if !IsUnreachable(err) || !strings.Contains(err.Error(), "tried again for 150ms") {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("gave up after %v", d)
	}
}

// Where systemd is not PID 1 there is nothing to wait for.
func TestCallDoesNotRetryWithoutSystemd(t *testing.T) {
	w := newWorld()
	w.downFor = 1 << 30
	c := w.conn(time.Hour, false)
	err := c.Reload(context.Background())
	if !IsUnreachable(err) || strings.Contains(err.Error(), "tried again") || w.dials != 1 {
		t.Fatalf("%v after %d dials", err, w.dials)
	}
}

// A refusal is an answer: it is not asked again.
func TestCallReturnsAnswersAtOnce(t *testing.T) {
	w := newWorld()
	c := w.conn(time.Hour, true)
	w.lose = func(string) bool { return false }
	denied := dbus.Error{Name: "org.freedesktop.DBus.Error.AccessDenied", Body: []any{"no"}}
	err := c.call(context.Background(), "reload", func(manager) error { return denied })
	if !IsDenied(err) || w.dials != 1 {
		t.Fatalf("%v, %d dials", err, w.dials)
	}
}

// A job queued just before the connection was cut: its JobRemoved never
// comes, and the wait reads the unit's state once the job is gone.
func TestJobWaitSurvivesALostSignal(t *testing.T) {
	for _, tc := range []struct {
		verb, active, sub string
		wantErr           string
	}{
		{"start", "active", "running", ""},
		{"start", "activating", "auto-restart", "start bm2@a-0.service: job failed"},
		{"stop", "inactive", "dead", ""},
		{"stop", "active", "running", "stop bm2@a-0.service: job canceled"},
	} {
		t.Run(tc.verb+"-"+tc.sub, func(t *testing.T) {
			w := newWorld()
			c := w.conn(5*time.Second, true)
			var once bool
			w.lose = func(call string) bool {
				if call == tc.verb+"-after" && !once {
					once = true
					return true // queued, then the connection dropped
				}
				return false
			}
			done := make(chan error, 1)
			go func() {
				if tc.verb == "start" {
					done <- c.Start(context.Background(), "bm2@a-0.service")
				} else {
					done <- c.Stop(context.Background(), "bm2@a-0.service")
				}
			}()
			select {
			case err := <-done:
				t.Fatalf("returned while the job runs: %v", err)
			case <-time.After(100 * time.Millisecond):
			}
			w.finish("bm2@a-0.service", tc.active, tc.sub, 2)
			select {
			case err := <-done:
				if got := errString(err); got != tc.wantErr {
					t.Fatalf("got %q, want %q", got, tc.wantErr)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the wait never noticed the job had finished")
			}
		})
	}
}

// A restart whose request got through although its answer was lost is
// not asked for again: that would restart the instance twice.
func TestRestartIsNotRepeatedWhenItGotThrough(t *testing.T) {
	w := newWorld()
	c := w.conn(5*time.Second, true)
	var once bool
	w.lose = func(call string) bool {
		if call == "restart-after" && !once {
			once = true
			return true
		}
		return false
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		w.finish("bm2@a-0.service", "active", "running", 9)
	}()
	if err := c.Restart(context.Background(), "bm2@a-0.service"); err != nil {
		t.Fatal(err)
	}
	if w.restarts != 1 {
		t.Fatalf("%d restarts", w.restarts)
	}
}

// A queued restart returns once systemd has the job, before the unit is
// back, and is not asked for again when its answer was lost.
func TestRestartQueuedDoesNotWait(t *testing.T) {
	w := newWorld()
	c := w.conn(5*time.Second, true)
	var once bool
	w.lose = func(call string) bool {
		if call == "restart-after" && !once {
			once = true
			return true
		}
		return false
	}
	done := make(chan error, 1)
	go func() { done <- c.RestartQueued(context.Background(), "bm2@a-0.service") }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("RestartQueued waited for the job")
	}
	if w.restarts != 1 {
		t.Fatalf("%d restarts", w.restarts)
	}
}

// A restart whose request was lost before systemd had it is asked again.
func TestRestartIsRepeatedWhenItWasLost(t *testing.T) {
	w := newWorld()
	c := w.conn(5*time.Second, true)
	var once bool
	w.lose = func(call string) bool {
		if call == "restart-before" && !once {
			once = true
			return true
		}
		return false
	}
	go func() {
		for {
			w.mu.Lock()
			n := w.restarts
			w.mu.Unlock()
			if n > 0 {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		w.finish("bm2@a-0.service", "active", "running", 9)
	}()
	if err := c.Restart(context.Background(), "bm2@a-0.service"); err != nil {
		t.Fatal(err)
	}
	if w.restarts != 1 {
		t.Fatalf("%d restarts", w.restarts)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// A Conn closed by its owner and a bus socket that was never there are
// answers, not gaps: no waiting.
func TestCallFailsAtOnceForGood(t *testing.T) {
	w := newWorld()
	c := w.conn(time.Hour, true)
	c.Close()
	start := time.Now()
	if err := c.Reload(context.Background()); !errors.Is(err, errClosed) {
		t.Fatalf("closed: %v", err)
	}
	// A bus socket that is not there at the first dial (no bus daemon):
	// at once. A refused private socket (systemd re-executing): retried.
	w = newWorld()
	w.downFor, w.dialErr = 1<<30, fmt.Errorf("dial unix /run/dbus/system_bus_socket: %w", syscall.ENOENT)
	c = w.conn(time.Hour, true)
	c.absent = func(err error) bool { return errors.Is(err, syscall.ENOENT) }
	if err := c.Reload(context.Background()); !IsUnreachable(err) || Retried(err) || w.dials != 1 {
		t.Fatalf("ENOENT: %v after %d dials", err, w.dials)
	}
	w = newWorld()
	w.downFor, w.dialErr = 1<<30, fmt.Errorf("dial unix /run/systemd/private: %w", syscall.ECONNREFUSED)
	c = w.conn(100*time.Millisecond, true)
	c.absent = func(err error) bool { return errors.Is(err, syscall.ENOENT) }
	if err := c.Reload(context.Background()); !Retried(err) || w.dials < 2 {
		t.Fatalf("ECONNREFUSED: %v after %d dials", err, w.dials)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
	// Once connected, a missing socket is the gap of a restart: retried.
	w = newWorld()
	c = w.conn(100*time.Millisecond, true)
	if err := c.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.lose = func(string) bool { return true }
	c.absent = func(err error) bool { return errors.Is(err, syscall.ENOENT) }
	w.downFor, w.dialErr = 1<<30, fmt.Errorf("dial: %w", syscall.ENOENT)
	if err := c.Reload(context.Background()); !Retried(err) {
		t.Fatalf("after a connection: %v", err)
	}
}

// A cancelled context ends a call waiting to reconnect at once.
func TestCallEndsWithItsContext(t *testing.T) {
	w := newWorld()
	c := w.conn(time.Hour, true)
	if err := c.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	w.lose = func(string) bool { return true }
	w.downFor = 1 << 30
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if err := c.Reload(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("%v", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
}

// What a lost signal leaves is read from the unit: a start whose unit
// never ran is not "done".
func TestInferResult(t *testing.T) {
	for _, c := range []struct {
		verb, active, sub, inv, want string
	}{
		{"start", "active", "running", "b", "done"},
		{"start", "inactive", "dead", "a", "canceled"},
		{"start", "inactive", "dead", "b", "done"}, // ran, and exited cleanly
		{"restart", "failed", "failed", "b", "failed"},
		{"start", "activating", "auto-restart", "b", "failed"},
		{"stop", "inactive", "dead", "a", "done"},
		{"stop", "active", "running", "b", "canceled"},
	} {
		if got := inferResult(c.verb, "a", Status{ActiveState: c.active, SubState: c.sub, InvocationID: c.inv}); got != c.want {
			t.Errorf("%s, then %s/%s (invocation %s): %s, want %s", c.verb, c.active, c.sub, c.inv, got, c.want)
		}
	}
}

// Idle closes the connection and the next call dials again; a job wait
// under way keeps its connection (its signal comes on it), and the wait
// still ends with the job.
func TestIdleClosesUntilTheNextCall(t *testing.T) {
	w := newWorld()
	c := w.conn(5*time.Second, true)
	ctx := context.Background()
	if _, err := c.Unit(ctx, "bm2@a-0.service"); err != nil {
		t.Fatal(err)
	}
	first := c.m.(*fakeConn)
	c.Idle()
	if !first.gone || c.m != nil {
		t.Fatalf("after Idle: connection closed %v, held %v", first.gone, c.m != nil)
	}
	c.Idle() // nothing to close: no dial, no panic
	st, err := c.Unit(ctx, "bm2@a-0.service")
	if err != nil || st.ActiveState != "active" || w.dials != 2 {
		t.Fatalf("after Idle: %+v, %v, %d dials (want 2)", st, err, w.dials)
	}

	done := make(chan error, 1)
	go func() { done <- c.Start(ctx, "bm2@a-0.service") }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		w.mu.Lock()
		queued := w.lastCh != nil
		w.mu.Unlock()
		if queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the start was never queued")
		}
		time.Sleep(time.Millisecond)
	}
	held := c.m.(*fakeConn)
	c.Idle()
	if held.gone {
		t.Fatal("Idle closed the connection of a job wait under way")
	}
	w.mu.Lock()
	w.lastCh <- "done"
	w.mu.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the job wait never ended")
	}
	c.Idle()
	if !held.gone {
		t.Fatal("Idle after the wait left the connection open")
	}
}

// A start not waited for reads nothing first: reading a unit systemd has
// not loaded loads it, for every connection to hear of. A restart still
// does (it must not be repeated when its answer was lost).
func TestStartQueuedReadsNothing(t *testing.T) {
	w := newWorld()
	c := w.conn(5*time.Second, true)
	var reads int
	w.lose = func(call string) bool {
		if call == "properties" || call == "service-properties" {
			reads++
		}
		return false
	}
	if err := c.StartQueued(context.Background(), "bm2@a-0.service"); err != nil {
		t.Fatal(err)
	}
	if reads != 0 || w.nextJob != 1 {
		t.Fatalf("StartQueued: %d reads, %d jobs; want 0 and 1", reads, w.nextJob)
	}
	if err := c.RestartQueued(context.Background(), "bm2@a-0.service"); err != nil {
		t.Fatal(err)
	}
	if reads == 0 {
		t.Fatal("RestartQueued did not read the unit first")
	}
}
