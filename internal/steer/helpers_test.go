package steer

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/testutil"
	"golang.org/x/sys/unix"
)

// needSteering skips (fails under CI=true) a test that needs the kernel to
// load the program: root on Linux 5.14 or later.
func needSteering(t testing.TB) {
	t.Helper()
	testutil.Root(t)
	if err := Available(""); err != nil {
		testutil.Skip(t, testutil.Need{What: "no BPF connection steering on this host", Fix: "sudo make test on Linux 5.14 or later"}, err)
	}
}

// A server is one instance's listener: it accepts, counts, and answers
// each connection's first byte with the same byte.
type server struct {
	l       *net.TCPListener
	accepts atomic.Int64
	wg      sync.WaitGroup
}

// listenTCP is a plain TCP (not MPTCP) listener with SO_REUSEADDR and
// SO_REUSEPORT, as a reusePort app's, on addr ("127.0.0.1:0" for a new
// port).
func listenTCP(t testing.TB, addr string) *net.TCPListener {
	t.Helper()
	lc := net.ListenConfig{Control: reuseport.ListenControl}
	lc.SetMultipathTCP(false)
	l, err := lc.Listen(context.Background(), "tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*net.TCPListener)
}

// group starts k servers on one new loopback port.
func group(t testing.TB, k int) (int, []*server) {
	t.Helper()
	var srv []*server
	port := 0
	for i := 0; i < k; i++ {
		l := listenTCP(t, "127.0.0.1:"+strconv.Itoa(port))
		port = l.Addr().(*net.TCPAddr).Port
		srv = append(srv, serve(t, l))
	}
	return port, srv
}

func serve(t testing.TB, l *net.TCPListener) *server {
	s := &server{l: l}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.accepts.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				b := make([]byte, 1)
				if n, _ := c.Read(b); n == 1 {
					c.Write(b)
				}
			}()
		}
	}()
	t.Cleanup(func() { l.Close(); s.wg.Wait() })
	return s
}

// fd runs f with the listener's file descriptor.
func fd(t testing.TB, l *net.TCPListener, f func(fd int) error) {
	t.Helper()
	rc, err := l.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		t.Fatal(err)
	}
	if ferr != nil {
		t.Fatal(ferr)
	}
}

// connect opens n connections to port one after the other, each closed at
// once, and returns the accepts per server once they add up to n. A
// refused or failed connection fails the test.
func connect(t testing.TB, port, n int, srv []*server) []int {
	t.Helper()
	return connectAll(t, port, n, acceptsOf(srv)...)
}

// acceptsOf is each server's count of accepts.
func acceptsOf(srv []*server) []*atomic.Int64 {
	var accepts []*atomic.Int64
	for _, s := range srv {
		accepts = append(accepts, &s.accepts)
	}
	return accepts
}

// connectAll zeroes the counts of accepts, opens n connections to port one
// after the other, each closed at once, and returns the counts once they
// add up to n. A refused or failed connection fails the test.
func connectAll(t testing.TB, port, n int, accepts ...*atomic.Int64) []int {
	t.Helper()
	for _, a := range accepts {
		a.Store(0)
	}
	for i := 0; i < n; i++ {
		c, err := dial(port)
		if err != nil {
			t.Fatalf("connection %d of %d: %v", i+1, n, err)
		}
		c.Close()
	}
	return counts(t, n, accepts...)
}

// counts waits until the accepts add up to n.
func counts(t testing.TB, n int, accepts ...*atomic.Int64) []int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got, sum := make([]int, len(accepts)), 0
		for i, a := range accepts {
			got[i] = int(a.Load())
			sum += got[i]
		}
		if sum >= n || time.Now().After(deadline) {
			if sum != n {
				t.Fatalf("accepts %v add up to %d, want %d", got, sum, n)
			}
			return got
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// even fails unless the counts differ by at most one.
func even(t testing.TB, what string, got []int) {
	t.Helper()
	lo, hi := got[0], got[0]
	for _, c := range got {
		lo, hi = min(lo, c), max(hi, c)
	}
	if hi-lo > 1 {
		t.Errorf("%s: accepts %v, want an even spread (±1)", what, got)
	}
}

// newGroup is New(port) with every server in slot i, attached, closed at
// the end of the test.
func newGroup(t testing.TB, port int, srv []*server) *Group {
	t.Helper()
	g, err := New(port)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	for i, s := range srv {
		fd(t, s.l, func(fd int) error { return g.Add(i, fd) })
	}
	fd(t, srv[0].l, g.Attach)
	return g
}

// bpffs mounts a bpf filesystem on a temporary directory for the test.
func bpffs(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("bpf", dir, "bpf", 0, "mode=0700"); err != nil {
		t.Fatalf("mount bpf on %s: %v", dir, err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// child runs the test binary again with env set, for the processes of
// TestMain.
func childEnv(kv ...string) []string {
	env := os.Environ()
	for i := 0; i+1 < len(kv); i += 2 {
		env = append(env, fmt.Sprintf("%s=%s", kv[i], kv[i+1]))
	}
	return env
}

func dial(port int) (net.Conn, error) {
	return net.DialTimeout("tcp4", "127.0.0.1:"+strconv.Itoa(port), 2*time.Second)
}
