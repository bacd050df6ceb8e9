package reuseport

import (
	"bufio"
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// timeWaits counts the TIME_WAIT sockets whose local port is port, from
// /proc/net/tcp and /proc/net/tcp6 (sock_diag's package asks only for
// listeners and established connections).
func timeWaits(t *testing.T, port int) int {
	t.Helper()
	n := 0
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// "sl local_address rem_address st ...": local is ADDR:PORT
			// in hex, st 06 is TCP_TIME_WAIT.
			fs := strings.Fields(sc.Text())
			if len(fs) < 4 || fs[3] != "06" {
				continue
			}
			i := strings.LastIndexByte(fs[1], ':')
			if p, err := strconv.ParseUint(fs[1][i+1:], 16, 16); err == nil && int(p) == port {
				n++
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	return n
}

// closeFirst makes n connections to l through host and closes each one on
// l's side first, so that l's side (local port: l's) lands in TIME_WAIT.
// It returns once the kernel shows at least n more of them on the port.
func closeFirst(t *testing.T, l net.Listener, host string, n int) {
	t.Helper()
	port := l.Addr().(*net.TCPAddr).Port
	before := timeWaits(t, port)
	for range n {
		c, err := net.DialTimeout("tcp", net.JoinHostPort(host, strconv.Itoa(port)), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		s, err := l.Accept()
		if err != nil {
			c.Close()
			t.Fatal(err)
		}
		s.Close() // FIN from the listener's side: it goes to FIN_WAIT2...
		c.SetReadDeadline(time.Now().Add(time.Second))
		io.Copy(io.Discard, c) // ...the client sees EOF...
		c.Close()              // ...and its FIN puts the listener's side in TIME_WAIT.
	}
	deadline := time.Now().Add(2 * time.Second)
	for timeWaits(t, port) < before+n {
		if time.Now().After(deadline) {
			t.Fatalf("port %d: %d TIME_WAIT sockets, want at least %d", port, timeWaits(t, port), before+n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// listenAt listens on addr ("127.0.0.1:0", "[::1]:3000"), with SO_REUSEPORT
// or without (Go sets SO_REUSEADDR on every listener, as Node and Bun do).
// A missing IPv6 loopback skips the test.
func listenAt(t *testing.T, addr string, reuse bool) net.Listener {
	t.Helper()
	lc := net.ListenConfig{}
	if reuse {
		lc.Control = ListenControl
	}
	l, err := lc.Listen(context.Background(), "tcp", addr)
	if err != nil {
		if strings.HasPrefix(addr, "[") {
			testutil.Skip(t, testutil.Need{What: "no IPv6 loopback", Fix: "sudo sysctl net.ipv6.conf.lo.disable_ipv6=0"}, err)
		}
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// hosts are the loopback address each family's test listens on and dials.
var hosts = []struct{ listen, dial string }{
	{"127.0.0.1", "127.0.0.1"},
	{"[::1]", "::1"},
}

// wildcards are the wildcard addresses, dialled through loopback ("[::]"
// is dual-stack, as Node listens by default).
var wildcards = []struct{ listen, dial string }{
	{"0.0.0.0", "127.0.0.1"},
	{"[::]", "::1"},
}

// A reusePort app that starts while the port still has TIME_WAIT sockets
// of the server before it (PM2's, just after `pm2 kill`) is shared. Those
// sockets lack SO_REUSEPORT, so a second bind with SO_REUSEPORT alone
// collided with them and said exclusive, and the probe stopped a healthy
// project. (The kernel's shortcut for a bind that matches the group's
// address hides this from a listener on the wildcard address, the
// probe's own; a listener on loopback only, as behind a proxy, met it.
// Both are asked.)
// TIME_WAIT sockets of the app's own connections have SO_REUSEPORT, as
// their listener has: they are here too.
func TestCheckPortSharedOverTimeWait(t *testing.T) {
	for _, h := range append(hosts, wildcards...) {
		t.Run(h.listen, func(t *testing.T) {
			old := listenAt(t, h.listen+":0", false)
			port := old.Addr().(*net.TCPAddr).Port
			closeFirst(t, old, h.dial, 3)
			old.Close()

			app := listenAt(t, h.listen+":"+strconv.Itoa(port), true)
			closeFirst(t, app, h.dial, 3)
			if got, err := CheckPort(port); err != nil || got != Shared {
				t.Fatalf("reusePort listener on %s with %d TIME_WAIT sockets on its port: %v %v, want shared",
					h.listen, timeWaits(t, port), got, err)
			}
		})
	}
}

// An exclusive listener stays exclusive with TIME_WAIT sockets beside it
// (SO_REUSEADDR on the second bind lets it pass only sockets that do not
// listen).
func TestCheckPortExclusiveOverTimeWait(t *testing.T) {
	for _, h := range append(hosts, wildcards...) {
		t.Run(h.listen, func(t *testing.T) {
			l := listenAt(t, h.listen+":0", false)
			port := l.Addr().(*net.TCPAddr).Port
			closeFirst(t, l, h.dial, 3)
			if got, err := CheckPort(port); err != nil || got != Exclusive {
				t.Fatalf("plain listener on %s with TIME_WAIT sockets: %v %v, want exclusive", h.listen, got, err)
			}
		})
	}
}

// Nobody listens on a port that has only TIME_WAIT sockets left: the
// first bind, with SO_REUSEADDR as their listener had it, passes them.
func TestCheckPortFreeOverTimeWait(t *testing.T) {
	for _, h := range hosts {
		for _, reuse := range []bool{false, true} {
			t.Run(h.dial+"/reuseport="+strconv.FormatBool(reuse), func(t *testing.T) {
				l := listenAt(t, h.listen+":0", reuse)
				port := l.Addr().(*net.TCPAddr).Port
				closeFirst(t, l, h.dial, 3)
				l.Close()
				if n := timeWaits(t, port); n < 3 {
					t.Fatalf("%d TIME_WAIT sockets left on port %d, want 3", n, port)
				}
				if got, err := CheckPort(port); err != nil || got != Free {
					t.Fatalf("only TIME_WAIT sockets on the port: %v %v, want free", got, err)
				}
			})
		}
	}
}
