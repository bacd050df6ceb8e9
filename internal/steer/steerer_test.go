package steer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/sysdtest"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// startInstance starts an instance (BM2_STEER_CHILD=hold) listening on
// port (0: a new one).
func startInstance(t *testing.T, port int) *app {
	t.Helper()
	cmd := exec.Command("/proc/self/exe", "-test.run=^$")
	cmd.Env = append(os.Environ(), "BM2_STEER_CHILD=hold", "BM2_STEER_PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return runApp(t, cmd)
}

// connectApps opens n connections to port, each closed at once, and returns
// each app's accepts once they add up to n.
func connectApps(t *testing.T, port, n int, apps ...*app) []int {
	t.Helper()
	var accepts []*atomic.Int64
	for _, a := range apps {
		accepts = append(accepts, &a.accepts)
	}
	return connectAll(t, port, n, accepts...)
}

// steerSystemd answers for the instances of one project, by unit name,
// and keeps the units read, in order (Reads).
type steerSystemd struct{ *sysdtest.Systemd }

// unitsOf is Units for a fake that reads one unit with read.
func unitsOf(ctx context.Context, read func(context.Context, string) (sysd.Status, error), names []string) ([]sysd.Status, error) {
	out := make([]sysd.Status, len(names))
	for k, n := range names {
		st, err := read(ctx, n)
		if err != nil {
			return nil, err
		}
		out[k] = st
	}
	return out, nil
}

// stopping marks an instance as systemd has it while its ExecStop= (the
// drain) runs and after: deactivating.
func (s *steerSystemd) stopping(project string, index int) {
	s.Change(units.Instance(project, index), func(st sysd.Status) sysd.Status {
		st.ActiveState, st.SubState = "deactivating", "stop"
		return st
	})
}

func (s *steerSystemd) set(project string, index, pid, port, slot int, env ...string) {
	s.Set(sysd.Status{
		Name: units.Instance(project, index), LoadState: "loaded", ActiveState: "active", SubState: "running",
		InvocationID: fmt.Sprintf("inv-%d-%d", index, pid), MainPID: uint32(pid), TimeoutStop: 1600 * time.Millisecond,
		Environment: append([]string{"BM2_EXEC_MODE=cluster", "BM2_APP_PORT=" + strconv.Itoa(port),
			"BM2_APP_INSTANCE=" + strconv.Itoa(slot)}, env...),
	})
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

// steerRig is steer add and drain of one project, on this host's
// sockets, with systemd faked.
type steerRig struct {
	sd     *steerSystemd
	store  Store
	events *journaltest.Recorder
	mu     sync.Mutex
	log    strings.Builder
}

func newSteerRig(t *testing.T, pins string) *steerRig {
	return &steerRig{sd: &steerSystemd{sysdtest.New()}, events: &journaltest.Recorder{},
		store: Store{Pins: pins, Run: filepath.Join(t.TempDir(), "steer")}}
}

func (r *steerRig) steerer(t *testing.T, project string, index int) *Steerer {
	t.Helper()
	diag, err := sockdiag.Open()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { diag.Close() })
	return &Steerer{Project: project, Index: index, Systemd: r.sd, Store: r.store,
		Sockets: HostSockets{Diag: diag}, Take: TakeFD, Events: r.events, Clock: sysd.MonotonicClock{},
		Log: func(format string, args ...any) {
			r.mu.Lock()
			defer r.mu.Unlock()
			fmt.Fprintf(&r.log, format+"\n", args...)
		}}
}

// lines returns what was logged since the last call.
func (r *steerRig) lines() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.log.String()
	r.log.Reset()
	return s
}

// instances starts one app per index on one port, the instances of
// project with those indexes (units.Surge too), each in slot k of the
// list, and tells systemd about them; it returns the apps and the port.
func (r *steerRig) instances(t *testing.T, project string, indexes []int, env ...string) ([]*app, int) {
	t.Helper()
	var apps []*app
	port := 0
	for k, i := range indexes {
		a := startInstance(t, port)
		port = a.port
		r.sd.set(project, i, a.pid, port, k, env...)
		apps = append(apps, a)
	}
	return apps, port
}

// mountBPF mounts a bpf filesystem on a temporary directory, where the
// test's groups are pinned.
func mountBPF(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		t.Fatalf("mount bpf on %s: %v", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// Three instances of one port (two and the surge), each a process of its
// own as systemd runs them: steer add puts each listener in its slot
// (BM2_APP_INSTANCE) of a group it pins, and the port goes round-robin;
// steer drain takes one out, so that it gets no new connection, and
// keeps the last one in; add puts it back.
func TestSteerAddAndDrain(t *testing.T) {
	needSteering(t)
	r := newSteerRig(t, filepath.Join(mountBPF(t), "bm2"))
	apps, port := r.instances(t, "api", []int{0, 1, units.Surge}, "BM2_DRAIN_MS=1000")
	a0, a1, surge := apps[0], apps[1], apps[2]
	ctx := context.Background()

	for i, want := range []string{"api-0 steered: slot 0, live 1, group pinned in " + r.store.Dir("api") + "\n",
		"api-1 steered: slot 1, live 2\n"} {
		if err := r.steerer(t, "api", i).Add(ctx); err != nil {
			t.Fatal(err)
		}
		if got := r.lines(); got != want {
			t.Errorf("add api-%d logged %q, want %q", i, got, want)
		}
	}
	if got := connectApps(t, port, 64, a0, a1, surge); got[0] != 32 || got[1] != 32 || got[2] != 0 {
		t.Errorf("2 instances steered: accepts %v, want [32 32 0] (the surge is not in the turn yet)", got)
	}
	if err := r.steerer(t, "api", units.Surge).Add(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); got != "api-surge steered: slot 2, live 3\n" {
		t.Errorf("add the surge logged %q", got)
	}
	if got := connectApps(t, port, 30, a0, a1, surge); got[0] != 10 || got[1] != 10 || got[2] != 10 {
		t.Errorf("with the surge: accepts %v, want [10 10 10]", got)
	}
	// Adding a slot again (a second start of the step) changes nothing.
	if err := r.steerer(t, "api", 1).Add(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); got != "api-1 steered: slot 1, live 3\n" {
		t.Errorf("add api-1 again logged %q", got)
	}

	// Drain api-1: idle (every connection closed), out of the turn at once.
	start := time.Now()
	if err := r.steerer(t, "api", 1).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 500*time.Millisecond {
		t.Errorf("an idle instance's drain took %v", took)
	}
	log := r.lines()
	if !strings.HasPrefix(log, "api-1 out of port "+strconv.Itoa(port)+"'s turn: slot 1 removed, live 2\napi-1 drained in ") {
		t.Errorf("drain logged %q", log)
	}
	if got := connectApps(t, port, 32, a0, a1, surge); got[0] != 16 || got[1] != 0 || got[2] != 16 {
		t.Errorf("api-1 drained: accepts %v, want [16 0 16]", got)
	}
	r.sd.stopping("api", 1) // systemd stops it after its drain
	// The surge goes, then api-0 would be the last: it stays in. The
	// stopping api-1 still listens, and is not taken back into the turn.
	if err := r.steerer(t, "api", units.Surge).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); strings.Contains(got, "adding it first") {
		t.Errorf("the surge's drain took a stopping instance back: %q", got)
	}
	r.sd.stopping("api", units.Surge)
	if err := r.steerer(t, "api", 0).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); !strings.Contains(got, "api-0: slot 0 is the last live one: it stays") {
		t.Errorf("drain of the last instance logged %q", got)
	}
	g, err := Open(r.store.Dir("api"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if !slices.Equal(g.Live(), []int{0}) || g.Port() != port {
		t.Errorf("pinned group: live %v, port %d; want [0], %d", g.Live(), g.Port(), port)
	}
	// A drain of a slot not in the turn waits for nothing.
	if err := r.steerer(t, "api", 1).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); !strings.Contains(got, "slot 1 is not in the turn (live [0])") {
		t.Errorf("drain of a drained slot logged %q", got)
	}
	// api-1 starts again: back in the turn.
	r.sd.set("api", 1, a1.pid, port, 1, "BM2_DRAIN_MS=1000")
	r.sd.set("api", units.Surge, surge.pid, port, 2, "BM2_DRAIN_MS=1000")
	if err := r.steerer(t, "api", 1).Add(ctx); err != nil {
		t.Fatal(err)
	}
	if got := connectApps(t, port, 16, a0, a1); got[0] != 8 || got[1] != 8 {
		t.Errorf("api-1 back: accepts %v, want [8 8]", got)
	}
	// The surge goes while it is the last one in the turn (it stays in
	// it, its slot empty): the next add takes the empty slot out, so that
	// none of the port's turns falls back to the hash.
	if err := r.steerer(t, "api", units.Surge).Add(ctx); err != nil {
		t.Fatal(err)
	}
	r.lines()
	surge.kill(t)
	if err := r.steerer(t, "api", 0).Add(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); got != "api-0: slot 2 has no listener: out of the turn\napi-0 steered: slot 0, live 2\n" {
		t.Errorf("add beside an empty slot logged %q", got)
	}
	if !slices.Equal(g.Live(), []int{0, 1}) {
		t.Errorf("live %v, want [0 1]", g.Live())
	}
	// After a crash (no main process) the drain takes the slot out and
	// waits for nothing, even with drain_ms to spare.
	r.sd.set("api", 1, 0, port, 1, "BM2_DRAIN_MS=60000")
	start = time.Now()
	if err := r.steerer(t, "api", 1).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r.lines(); !strings.Contains(got, "slot 1 removed, live 1\napi-1 has no main process (it exited): nothing to wait for\n") || time.Since(start) > 500*time.Millisecond {
		t.Errorf("drain after a crash logged %q in %v", got, time.Since(start))
	}
	if !slices.Equal(g.Live(), []int{0}) {
		t.Errorf("live %v after the crashed api-1's drain, want [0]", g.Live())
	}
	if len(r.events.Got) != 0 {
		t.Errorf("events %v, want none", r.events.Kinds())
	}
}

// A drain that begins before a peer's steering step has run (a reload
// stops the instance as soon as the surge is confirmed) adds the running
// peer first, so that the instance does leave the turn and is drained,
// instead of staying as "the last live one"; a peer that is stopping is
// left out.
// The catch-up reads only the peers that may be outside the turn: a
// numbered instance whose slot is live and holds a listener is in it.
func TestSteerCatchUpReadsOnlyPeersOutsideTheTurn(t *testing.T) {
	needSteering(t)
	r := newSteerRig(t, filepath.Join(mountBPF(t), "bm2"))
	_, port := r.instances(t, "api", []int{0, 1, 2}, "BM2_DRAIN_MS=1000")
	ctx := context.Background()
	for _, i := range []int{0, 1} {
		if err := r.steerer(t, "api", i).Add(ctx); err != nil {
			t.Fatal(err)
		}
	}
	r.lines()
	r.sd.Reads()
	if err := r.steerer(t, "api", 0).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	reads := r.sd.Reads()
	if slices.Contains(reads, units.Instance("api", 1)) || !slices.Contains(reads, units.Instance("api", 2)) {
		t.Errorf("the drain of api-0 read %q: want api-2 (outside the turn) and not api-1 (in it)", reads)
	}
	if log := r.lines(); !strings.Contains(log, "api-0: api-2 runs outside port "+strconv.Itoa(port)+"'s turn: adding it first\n") {
		t.Errorf("drain logged:\n%s", log)
	}
}

func TestSteerDrainAddsRunningPeersFirst(t *testing.T) {
	needSteering(t)
	r := newSteerRig(t, filepath.Join(mountBPF(t), "bm2"))
	apps, port := r.instances(t, "api", []int{0, units.Surge}, "BM2_DRAIN_MS=1000")
	a0, surge, other := apps[0], apps[1], startInstance(t, port)
	// Another project whose name begins with this one's, on the same
	// port (both the test's user): not a peer.
	r.sd.set("api-v2", 0, other.pid, port, 0)
	ctx := context.Background()
	if err := r.steerer(t, "api", 0).Add(ctx); err != nil {
		t.Fatal(err)
	}
	r.lines()
	// The surge listens and runs; its own step has not run yet.
	if err := r.steerer(t, "api", 0).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	log := r.lines()
	want := "api-0: api-surge runs outside port " + strconv.Itoa(port) + "'s turn: adding it first\n" +
		"api-surge steered: slot 1, live 2\n" +
		"api-0 out of port " + strconv.Itoa(port) + "'s turn: slot 0 removed, live 1\napi-0 drained in "
	if !strings.HasPrefix(log, want) {
		t.Errorf("drain beside an unsteered surge logged:\n%s\nwant it to begin:\n%s", log, want)
	}
	if got := connectApps(t, port, 16, a0, surge, other); got[0] != 0 || got[1] != 16 || got[2] != 0 {
		t.Errorf("api-0 drained: accepts %v, want [0 16 0]", got)
	}
	if strings.Contains(log, "api-v2") {
		t.Errorf("the drain took another project's instance for a peer:\n%s", log)
	}

	// The same with the surge stopping: it is not added, api-0 stays.
	r2 := newSteerRig(t, filepath.Join(mountBPF(t), "bm2"))
	b0 := startInstance(t, 0)
	b1 := startInstance(t, b0.port)
	r2.sd.set("web", 0, b0.pid, b0.port, 0)
	r2.sd.set("web", 1, b1.pid, b0.port, 1)
	if err := r2.steerer(t, "web", 0).Add(ctx); err != nil {
		t.Fatal(err)
	}
	r2.sd.stopping("web", 1)
	r2.lines()
	if err := r2.steerer(t, "web", 0).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r2.lines(); strings.Contains(got, "adding it first") || !strings.Contains(got, "slot 0 is the last live one") {
		t.Errorf("drain beside a stopping peer logged %q", got)
	}

	// A port change: web-0 runs on the new port, and its group is
	// pinned for it; web-1's drain, on the old port, adds nothing there
	// (web-2 runs on the old port) and leaves the new group as it is.
	r3 := newSteerRig(t, filepath.Join(mountBPF(t), "bm2"))
	q0 := startInstance(t, 0)
	p1 := startInstance(t, 0)
	p2 := startInstance(t, p1.port)
	r3.sd.set("web", 0, q0.pid, q0.port, 0)
	r3.sd.set("web", 1, p1.pid, p1.port, 1)
	r3.sd.set("web", 2, p2.pid, p1.port, 2)
	if err := r3.steerer(t, "web", 0).Add(ctx); err != nil {
		t.Fatal(err)
	}
	r3.lines()
	if err := r3.steerer(t, "web", 1).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if got := r3.lines(); strings.Contains(got, "adding it first") || strings.Contains(got, "steered") {
		t.Errorf("a drain on the old port changed the new port's group: %q", got)
	}
	g, err := Open(r3.store.Dir("web"))
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if g.Port() != q0.port || !slices.Equal(g.Live(), []int{0}) {
		t.Errorf("group: port %d, live %v; want %d, [0]", g.Port(), g.Live(), q0.port)
	}
	if len(r.events.Got)+len(r2.events.Got)+len(r3.events.Got) != 0 {
		t.Errorf("events %v %v %v, want none", r.events.Kinds(), r2.events.Kinds(), r3.events.Kinds())
	}
}

// stopsAfterRead is systemd where one instance begins to stop right after
// it was read once: between the catch-up's look and its add.
type stopsAfterRead struct {
	*steerSystemd
	project string
	index   int
	reads   int
}

func (s *stopsAfterRead) Units(ctx context.Context, names []string) ([]sysd.Status, error) {
	return unitsOf(ctx, s.Unit, names)
}

func (s *stopsAfterRead) Unit(ctx context.Context, name string) (sysd.Status, error) {
	st, err := s.steerSystemd.Unit(ctx, name)
	if name == units.Instance(s.project, s.index) {
		if s.reads++; s.reads == 1 {
			s.steerSystemd.stopping(s.project, s.index)
		}
	}
	return st, err
}

// A peer that begins to stop while the catch-up adds it (its own drain
// found it outside the turn) is not added: the check under the lock sees
// it stopping.
func TestSteerCatchUpSkipsAPeerThatBeganToStop(t *testing.T) {
	needSteering(t)
	r := newSteerRig(t, filepath.Join(mountBPF(t), "bm2"))
	a0 := startInstance(t, 0)
	a1 := startInstance(t, a0.port)
	r.sd.set("api", 0, a0.pid, a0.port, 0)
	r.sd.set("api", 1, a1.pid, a0.port, 1)
	ctx := context.Background()
	if err := r.steerer(t, "api", 0).Add(ctx); err != nil {
		t.Fatal(err)
	}
	r.lines()
	s := r.steerer(t, "api", 0)
	s.Systemd = &stopsAfterRead{steerSystemd: r.sd, project: "api", index: 1}
	if err := s.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	log := r.lines()
	if !strings.Contains(log, "api-1 is no longer the run that was found: not added") || !strings.Contains(log, "slot 0 is the last live one") {
		t.Errorf("catch-up of a peer that began to stop logged:\n%s", log)
	}
}

// A drain waits while the instance has a connection whose request it has
// not read, up to drain_ms, and stops waiting then.
func TestSteerDrainWaitsForUnreadBytes(t *testing.T) {
	needSteering(t)
	r := newSteerRig(t, filepath.Join(mountBPF(t), "bm2"))
	apps, port := r.instances(t, "api", []int{0, 1}, "BM2_DRAIN_MS=300")
	a0, a1 := apps[0], apps[1]
	ctx := context.Background()
	for i := range 2 {
		if err := r.steerer(t, "api", i).Add(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Round-robin: two connections, one each; both send a request the
	// apps never read.
	for range 2 {
		c, err := net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(2 * time.Second)
	for a0.accepts.Load() != 1 || a1.accepts.Load() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("accepts %d %d, want one each", a0.accepts.Load(), a1.accepts.Load())
		}
		time.Sleep(time.Millisecond)
	}
	r.lines()
	start := time.Now()
	if err := r.steerer(t, "api", 1).Drain(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	log := r.lines()
	if took < 300*time.Millisecond || took > 2*time.Second {
		t.Errorf("drain took %v, want drain_ms (300ms) and a little", took)
	}
	if !strings.Contains(log, "api-1 not idle after drain_ms (300ms): 0 queued, 1 connections with bytes unread or unsent; stopping it anyway") {
		t.Errorf("drain logged %q", log)
	}
}

// Where the host cannot steer (here: no bpf filesystem where the groups
// are pinned), steer add says why in the instance's journal every time,
// emits steering_unavailable once per project and boot, marks the
// project for bm2 status, and succeeds: the port keeps the kernel's hash.
func TestSteerUnavailableOnce(t *testing.T) {
	pins := filepath.Join(t.TempDir(), "bm2") // no bpf filesystem
	r := newSteerRig(t, pins)
	l := steerListener(t, true)
	port := l.Addr().(*net.TCPAddr).Port
	r.sd.set("api", 0, os.Getpid(), port, 0)
	r.sd.set("api", 1, os.Getpid(), port, 1)
	for _, i := range []int{0, 1, 0} {
		if err := r.steerer(t, "api", i).Add(context.Background()); err != nil {
			t.Fatalf("add api-%d: %v", i, err)
		}
		want := fmt.Sprintf("api-%d not steered (no_bpffs): ", i)
		if got := r.lines(); !strings.HasPrefix(got, want) || !strings.Contains(got, "keeps the kernel's hash") {
			t.Errorf("add api-%d logged %q, want %q...", i, got, want)
		}
	}
	if len(r.events.Got) != 1 {
		t.Fatalf("events %v, want one steering_unavailable", r.events.Kinds())
	}
	ev := r.events.Got[0]
	if ev.Kind != journal.SteeringUnavailable || ev.Reason != reason.NoBPFFS || ev.Project != "api" || ev.Instance != "api-0" ||
		ev.Port != port || ev.Invocation == "" || !strings.Contains(ev.Message, "kernel's hash") || !strings.Contains(ev.Detail, "mount -t bpf") {
		t.Errorf("event %+v", ev)
	}
	why, detail, ok, err := r.store.Unavailable("api")
	if err != nil || !ok || why != "no_bpffs" || !strings.Contains(detail, "no bpf filesystem") {
		t.Errorf("mark: %q %q %v %v", why, detail, ok, err)
	}
	if _, err := os.Stat(pins); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("pin directory %s made where there is no bpf filesystem: %v", pins, err)
	}
}

// A listener the kernel cannot steer (here: one without SO_REUSEPORT) is
// listener_not_steerable, said once, and not an error.
func TestSteerListenerNotSteerable(t *testing.T) {
	r := newSteerRig(t, filepath.Join(t.TempDir(), "bm2"))
	l := steerListener(t, false)
	port := l.Addr().(*net.TCPAddr).Port
	r.sd.set("api", 0, os.Getpid(), port, 0)
	if err := r.steerer(t, "api", 0).Add(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(r.events.Got) != 1 || r.events.Got[0].Reason != reason.ListenerNotSteerable ||
		!strings.Contains(r.events.Got[0].Message, "listening without SO_REUSEPORT") {
		t.Errorf("events %+v", r.events.Got)
	}
}

// What is no cluster instance, not running or holds no listener is
// nothing to steer, and no error; what systemd reports wrongly is one.
func TestSteerNothingToSteer(t *testing.T) {
	r := newSteerRig(t, filepath.Join(t.TempDir(), "bm2"))
	port := freePort(t)
	ctx := context.Background()
	r.sd.set("api", 0, os.Getpid(), port, 0) // nobody listens on port
	if err := r.steerer(t, "api", 0).Add(ctx); err != nil || !strings.Contains(r.lines(), "api-0 holds no listener on port "+strconv.Itoa(port)) {
		t.Errorf("no listener: %v", err)
	}
	r.sd.set("web", 0, os.Getpid(), port, 0)
	r.sd.ByName[units.Instance("web", 0)] = func(st sysd.Status) sysd.Status {
		st.Environment = []string{"BM2_EXEC_MODE=fork", "BM2_APP_PORT=3000", "BM2_APP_INSTANCE=0"}
		return st
	}(r.sd.ByName[units.Instance("web", 0)])
	if err := r.steerer(t, "web", 0).Add(ctx); err != nil || !strings.Contains(r.lines(), "not in cluster mode") {
		t.Errorf("fork mode: %v", err)
	}
	if err := r.steerer(t, "gone", 0).Add(ctx); err != nil || !strings.Contains(r.lines(), "is not-found: nothing to steer") {
		t.Errorf("no such unit: %v", err)
	}
	if err := r.steerer(t, "gone", 0).Drain(ctx); err != nil || !strings.Contains(r.lines(), "is not-found: nothing to steer") {
		t.Errorf("drain of no such unit: %v", err)
	}
	// Not pinned (as everywhere before steer add ran): a drain has
	// nothing to take out.
	if err := r.steerer(t, "api", 0).Drain(ctx); err != nil || r.lines() != "" {
		t.Errorf("drain of an unsteered port: %v", err)
	}
	r.sd.set("bad", 0, os.Getpid(), port, MaxSlots)
	if err := r.steerer(t, "bad", 0).Add(ctx); err == nil || !strings.Contains(err.Error(), "BM2_APP_INSTANCE") {
		t.Errorf("slot past MaxSlots: %v", err)
	}
	if len(r.events.Got) != 0 {
		t.Errorf("events %v", r.events.Kinds())
	}
}

// steerListener is a plain TCP listener on 127.0.0.1 of this process,
// with SO_REUSEPORT or without.
func steerListener(t *testing.T, reuse bool) *net.TCPListener {
	t.Helper()
	lc := net.ListenConfig{}
	if reuse {
		lc.Control = reuseport.ListenControl
	}
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*net.TCPListener)
}

// The drain's wait, looked at over time: idle only after DrainSettle
// idle looks in a row, whatever came before; over at the deadline
// otherwise.
func TestDrainStep(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	busy := drainSample{Busy: 1}
	queued := drainSample{Queued: 3}
	idle := drainSample{}
	// A busy connection with its tcp_info byte counts.
	conn := func(ino, received, acked uint64) drainSample {
		return drainSample{Busy: 1, Conns: []drainConn{{Inode: ino, Received: received, Acked: acked}}}
	}
	counted := drainSample{Conns: []drainConn{}}
	// Connections 7-10 at look k, each having carried k more requests,
	// with ino the one busy.
	inTurn := func(ino uint64, k int) drainSample {
		d := drainSample{Busy: 1}
		for i := uint64(7); i <= 10; i++ {
			c := drainConn{Inode: i, Received: 100 + 80*uint64(k), Acked: 300 + 150*uint64(k)}
			d.Seen = append(d.Seen, c)
			if i == ino {
				d.Conns = append(d.Conns, c)
			}
		}
		return d
	}
	for _, c := range []struct {
		name     string
		looks    []drainSample
		deadline time.Duration
		want     []drainVerdict
	}{
		{"idle at once", []drainSample{idle, idle}, ms(1000), []drainVerdict{drainWaiting, drainIdle}},
		{"a request answered", []drainSample{busy, busy, idle, idle}, ms(1000),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainIdle}},
		{"the accept queue empties", []drainSample{queued, idle, idle}, ms(1000),
			[]drainVerdict{drainWaiting, drainWaiting, drainIdle}},
		{"idle once, then a request", []drainSample{idle, busy, idle, idle}, ms(1000),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainIdle}},
		{"busy to the deadline", []drainSample{busy, busy, busy, busy}, ms(30),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainTimedOut}},
		{"idle at the deadline's look wins", []drainSample{busy, idle, idle}, ms(20),
			[]drainVerdict{drainWaiting, drainWaiting, drainIdle}},
		{"drain_ms below one look", []drainSample{busy}, 0, []drainVerdict{drainTimedOut}},
		// A keep-alive connection carrying request after request: it has
		// received and sent more since it was first seen busy, and
		// waiting cannot drain it.
		{"a keep-alive connection in use", []drainSample{conn(7, 100, 300), conn(7, 180, 450), conn(7, 260, 600)}, ms(1000),
			[]drainVerdict{drainWaiting, drainWaiting, drainIdle}},
		{"a request body still coming in", []drainSample{conn(7, 100, 0), conn(7, 5000, 0), conn(7, 9000, 0), conn(7, 9000, 0)}, ms(30),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainTimedOut}},
		{"a response still going out", []drainSample{conn(7, 18, 100), conn(7, 18, 9000), conn(7, 18, 90000), conn(7, 18, 99000)}, ms(30),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainTimedOut}},
		{"a new connection each look", []drainSample{conn(7, 18, 0), conn(8, 18, 0), conn(9, 18, 0), conn(10, 18, 0)}, ms(30),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainTimedOut}},
		{"counted and idle", []drainSample{counted, counted}, ms(1000), []drainVerdict{drainWaiting, drainIdle}},
		// Keep-alive load: four connections in use, a different one busy
		// at each look. Each counts from its first look, busy or not.
		{"keep-alive connections busy in turn", []drainSample{inTurn(7, 0), inTurn(8, 1), inTurn(9, 2), inTurn(10, 3)}, ms(1000),
			[]drainVerdict{drainWaiting, drainWaiting, drainIdle}},
		// One opened ahead of its request (nothing received or sent when
		// first seen idle) is waited for through its first exchange.
		{"a preconnected connection's first request", []drainSample{
			{Conns: []drainConn{}, Seen: []drainConn{{Inode: 12}}},
			{Busy: 1, Conns: []drainConn{{Inode: 12, Received: 300, Acked: 100}}, Seen: []drainConn{{Inode: 12, Received: 300, Acked: 100}}},
			{Busy: 1, Conns: []drainConn{{Inode: 12, Received: 300, Acked: 5000}}, Seen: []drainConn{{Inode: 12, Received: 300, Acked: 5000}}},
			{Busy: 1, Conns: []drainConn{{Inode: 12, Received: 300, Acked: 9000}}, Seen: []drainConn{{Inode: 12, Received: 300, Acked: 9000}}}},
			ms(30), []drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainTimedOut}},
		// One busy the first time it is seen is waited for.
		{"a connection first seen busy", []drainSample{inTurn(7, 0), {Busy: 1, Conns: []drainConn{{Inode: 11, Received: 900, Acked: 900}},
			Seen: []drainConn{{Inode: 11, Received: 900, Acked: 900}}}, inTurn(8, 2), inTurn(9, 3)}, ms(1000),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainIdle}},
		{"a keep-alive connection, then the queue", []drainSample{conn(7, 100, 300), conn(7, 180, 450),
			{Queued: 1, Busy: 1, Conns: []drainConn{{Inode: 7, Received: 260, Acked: 600}}}, conn(7, 300, 700), conn(7, 400, 800)}, ms(1000),
			[]drainVerdict{drainWaiting, drainWaiting, drainWaiting, drainWaiting, drainIdle}},
	} {
		var st drainState
		var got []drainVerdict
		for k, d := range c.looks {
			var v drainVerdict
			st, v = drainStep(st, d, ms(10*k), c.deadline)
			got = append(got, v)
			if v != drainWaiting {
				break
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: verdicts %v, want %v", c.name, got, c.want)
		}
	}
}

// The drain never waits into the last DrainMargin of the stop timeout,
// which bounds its ExecStop=.
func TestDrainBound(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct{ drain, stop, want time.Duration }{
		{ms(1000), ms(1600), ms(1000)},
		{ms(1000), ms(1000), ms(500)},
		{ms(1000), ms(400), 0},
		{ms(0), ms(1600), 0},
		{ms(60000), 0, ms(60000)}, // not known: drain_ms
	} {
		if got := drainBound(c.drain, c.stop); got != c.want {
			t.Errorf("drainBound(%v, %v) = %v, want %v", c.drain, c.stop, got, c.want)
		}
	}
}

// Package steer's reasons are bm2's: each one is a reason bm2 records,
// with its failure mode.
func TestSteerReasonsAreRecorded(t *testing.T) {
	for _, r := range []string{ReasonNoPermission, ReasonKernel, ReasonNoBPFFS} {
		if !slices.Contains(reason.All(), reason.Reason(r)) {
			t.Errorf("steer's reason %q is not in reason.All()", r)
		}
		if _, ok := reason.Lookup(reason.Reason(r)); !ok {
			t.Errorf("steer's reason %q has no failure mode", r)
		}
	}
}
