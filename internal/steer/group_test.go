package steer

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Two instances: the kernel's hash splits 64 connections unevenly; the
// program gives each 32, and runs once per connection.
func TestRoundRobinTwo(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 2)
	t.Logf("MEASURE kernel hash, 64 connections over 2 listeners: %v", connect(t, port, 64, srv))
	g := newGroup(t, port, srv)
	got := connect(t, port, 64, srv)
	t.Logf("MEASURE steered, 64 connections over 2 listeners: %v", got)
	if got[0] != 32 || got[1] != 32 {
		t.Errorf("steered: accepts %v, want [32 32]", got)
	}
	if r := g.Runs(); r != 64 {
		t.Errorf("Runs = %d, want 64", r)
	}
}

func TestRoundRobinThree(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 3)
	t.Logf("MEASURE kernel hash, 64 connections over 3 listeners: %v", connect(t, port, 64, srv))
	newGroup(t, port, srv)
	got := connect(t, port, 64, srv)
	t.Logf("MEASURE steered, 64 connections over 3 listeners: %v", got)
	even(t, "steered over three", got)
}

// Remove is the drain: the removed instance still listens and gets
// nothing new, the others share everything, nothing is refused; adding it
// back gives it its turn again.
func TestRemoveDrains(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 3)
	g := newGroup(t, port, srv)
	if err := g.Remove(0); err != nil {
		t.Fatal(err)
	}
	if live := g.Live(); !slices.Equal(live, []int{2, 1}) {
		t.Errorf("Live after Remove(0) = %v, want [2 1] (the last moved into the hole)", live)
	}
	if g.Filled(0) {
		t.Error("slot 0 still holds its socket after Remove")
	}
	got := connect(t, port, 64, srv)
	t.Logf("MEASURE after Remove(0), 64 connections: %v", got)
	if got[0] != 0 || got[1] != 32 || got[2] != 32 {
		t.Errorf("after Remove(0): accepts %v, want [0 32 32]", got)
	}
	// Removing again, or a slot never added, changes nothing.
	if err := g.Remove(0); err != nil {
		t.Errorf("second Remove: %v", err)
	}
	if err := g.Remove(7); err != nil {
		t.Errorf("Remove of an unused slot: %v", err)
	}
	// The last live slot too: the program then selects nothing, and
	// the kernel's hash places connections over all three again.
	g.Remove(2)
	g.Remove(1)
	if live := g.Live(); len(live) != 0 {
		t.Errorf("Live = %v, want none", live)
	}
	connect(t, port, 16, srv)
	fd(t, srv[0].l, func(fd int) error { return g.Add(0, fd) })
	fd(t, srv[1].l, func(fd int) error { return g.Add(1, fd) })
	got = connect(t, port, 64, srv)
	if got[0] != 32 || got[1] != 32 || got[2] != 0 {
		t.Errorf("after adding 0 and 1 back: accepts %v, want [32 32 0]", got)
	}
}

// A drained instance that stops with connections still queued (accepted
// by the kernel, not yet by the app) hands them on: the attach type
// SELECT_OR_MIGRATE makes the kernel ask the program for a new home for
// each, instead of resetting them.
func TestQueuedConnectionsMigrate(t *testing.T) {
	needSteering(t)
	queued := listenTCP(t, "127.0.0.1:0") // never accepts
	port := queued.Addr().(*net.TCPAddr).Port
	b := serve(t, listenTCP(t, "127.0.0.1:"+strconv.Itoa(port)))
	g, err := New(port)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	fd(t, queued, func(fd int) error { return g.Add(0, fd) })
	fd(t, b.l, func(fd int) error { return g.Add(1, fd) })
	fd(t, b.l, g.Attach)
	var conns []net.Conn
	for i := 0; i < 8; i++ {
		c, err := net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(port), 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	counts(t, 4, &b.accepts)
	if err := g.Remove(0); err != nil {
		t.Fatal(err)
	}
	queued.Close()
	for i, c := range conns {
		c.SetDeadline(time.Now().Add(2 * time.Second))
		buf := []byte{byte(i)}
		if _, err := c.Write(buf); err != nil {
			t.Fatalf("connection %d: write: %v", i, err)
		}
		if _, err := c.Read(buf); err != nil || buf[0] != byte(i) {
			t.Errorf("connection %d: read %v, %v: lost when its listener closed", i, buf, err)
		}
	}
	if n := b.accepts.Load(); n != 8 {
		t.Errorf("the remaining listener accepted %d, want 8 (4 its own, 4 migrated)", n)
	}
}

// An instance that closes its listener without being removed (a crash):
// the kernel empties its slot, the program's selection fails, and the
// kernel's hash places the connection among the others. Nothing is lost.
func TestClosedSlotFallsBack(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 3)
	g := newGroup(t, port, srv)
	srv[2].l.Close()
	srv[2].wg.Wait()
	if g.Filled(2) {
		t.Error("slot 2 still filled after its listener closed")
	}
	if live := g.Live(); len(live) != 3 {
		t.Errorf("Live = %v; the slot stays live until Remove", live)
	}
	got := connect(t, port, 64, srv)
	t.Logf("MEASURE one of 3 listeners closed without Remove, 64 connections: %v", got)
	if got[0] < 21 || got[1] < 21 {
		t.Errorf("accepts %v: each of the two left should have its turn and more", got)
	}
}

// A slot holding a listener of another port group (same port, another
// address): bpf_sk_select_reuseport fails, the kernel's hash applies.
func TestForeignSocketFallsBack(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 2)
	g := newGroup(t, port, srv)
	other := serve(t, listenTCP(t, "127.0.0.2:"+strconv.Itoa(port)))
	fd(t, other.l, func(fd int) error { return g.Add(2, fd) })
	got := connect(t, port, 60, append(srv, other))
	if got[2] != 0 || got[0] < 20 || got[1] < 20 {
		t.Errorf("accepts %v: the foreign listener must get nothing, the group all", got)
	}
}

// Detach gives the port back to the kernel's hash: the program no longer
// runs, and every connection is still accepted.
func TestDetach(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 2)
	g := newGroup(t, port, srv)
	connect(t, port, 8, srv)
	fd(t, srv[1].l, Detach)
	before := g.Runs()
	got := connect(t, port, 64, srv)
	t.Logf("MEASURE after Detach, 64 connections: %v", got)
	if r := g.Runs(); r != before {
		t.Errorf("the program ran %d times after Detach", r-before)
	}
	var err error
	fd(t, srv[0].l, func(fd int) error { err = Detach(fd); return nil })
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("second Detach: %v, want fs.ErrNotExist", err)
	}
}

// A pinned group outlives its process's handles: Close changes nothing in
// the kernel, the program goes on steering, Open takes it up again and
// changes it; Unpin removes the pins.
func TestPinOpen(t *testing.T) {
	needSteering(t)
	mnt := bpffs(t)
	dir := filepath.Join(mnt, "bm2", "my-api")
	port, srv := group(t, 2)
	g := newGroup(t, port, srv)
	if err := g.Pin(dir); err != nil {
		t.Fatal(err)
	}
	g.Close()
	got := connect(t, port, 64, srv)
	if got[0] != 32 || got[1] != 32 {
		t.Errorf("after Close: accepts %v, want [32 32]: the program left with the handles", got)
	}
	h, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.Port() != port || h.Runs() != 64 || !slices.Equal(h.Live(), []int{0, 1}) {
		t.Errorf("Open: port %d, runs %d, live %v; want %d, 64, [0 1]", h.Port(), h.Runs(), h.Live(), port)
	}
	if err := h.Remove(1); err != nil {
		t.Fatal(err)
	}
	if got := connect(t, port, 16, srv); got[1] != 0 {
		t.Errorf("after Remove through Open: accepts %v, want none for slot 1", got)
	}
	if err := h.Unpin(); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Open after Unpin: %v, want fs.ErrNotExist", err)
	}
	if got := connect(t, port, 16, srv); got[1] != 0 {
		t.Errorf("after Unpin: accepts %v; the attached program should still steer", got)
	}
}

func TestPinDirNeedsBPFFS(t *testing.T) {
	for _, dir := range []string{t.TempDir(), filepath.Join(t.TempDir(), "bm2", "x")} {
		err := CheckPinDir(dir)
		var ue *UnavailableError
		if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) || ue.Reason != ReasonNoBPFFS {
			t.Errorf("CheckPinDir(%s) = %v, want ReasonNoBPFFS", dir, err)
		}
	}
	if err := CheckPinDir("relative/dir"); err == nil || errors.Is(err, ErrUnavailable) {
		t.Errorf("relative dir: %v", err)
	}
	if os.Geteuid() == 0 {
		mnt := bpffs(t)
		if err := CheckPinDir(filepath.Join(mnt, "bm2", "x")); err != nil {
			t.Errorf("under a bpf mount: %v", err)
		}
	}
}

// What Add and Attach refuse, with the reason named, and what they take.
func TestAddChecks(t *testing.T) {
	needSteering(t)
	port, srv := group(t, 1)
	g := newGroup(t, port, srv)
	var err error
	try := func(f func(int) error) func(int) error {
		return func(fd int) error { err = f(fd); return nil }
	}
	// The same socket in the same slot again: nothing to do.
	fd(t, srv[0].l, try(func(fd int) error { return g.Add(0, fd) }))
	if err != nil || !slices.Equal(g.Live(), []int{0}) {
		t.Errorf("Add of the same socket again: %v, live %v", err, g.Live())
	}
	fd(t, srv[0].l, try(func(fd int) error { return g.Add(1, fd) }))
	if !errors.Is(err, ErrSteered) || !contains(err, "slot 0") {
		t.Errorf("the same socket in another slot: %v, want ErrSteered naming slot 0", err)
	}
	fd(t, srv[0].l, try(func(fd int) error { return g.Add(MaxSlots, fd) }))
	if err == nil {
		t.Error("slot MaxSlots accepted")
	}
	otherPort := listenTCP(t, "127.0.0.1:0")
	fd(t, otherPort, try(func(fd int) error { return g.Add(1, fd) }))
	if !errors.Is(err, ErrOtherPort) {
		t.Errorf("a listener on another port: %v", err)
	}
	v6, lerr := net.Listen("tcp6", "[::1]:0")
	if lerr == nil {
		v6.Close()
		s, _ := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM, 0)
		defer unix.Close(s)
		unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
		if e := unix.Bind(s, &unix.SockaddrInet6{Port: port, Addr: [16]byte{15: 1}}); e != nil {
			t.Fatal(e)
		}
		unix.Listen(s, 1)
		if err := g.Add(1, s); !errors.Is(err, ErrOtherFamily) {
			t.Errorf("an IPv6 listener in an IPv4 group: %v", err)
		}
	}
	if err := g.Attach(0); err == nil {
		t.Error("Attach to stdin accepted")
	}
}

func contains(err error, s string) bool {
	return err != nil && strings.Contains(err.Error(), s)
}
