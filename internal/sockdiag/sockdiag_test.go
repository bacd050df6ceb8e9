package sockdiag

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
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/bm2dev/bm2/internal/testutil"

	"golang.org/x/sys/unix"
)

// inodeOf reads a socket's inode the way OwnerOf does: from the link
// /proc/self/fd/<fd> -> socket:[N].
func inodeOf(t testing.TB, s syscall.Conn) uint64 {
	t.Helper()
	rc, err := s.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var link string
	var lerr error
	if err := rc.Control(func(fd uintptr) {
		link, lerr = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd)))
	}); err != nil {
		t.Fatal(err)
	}
	if lerr != nil {
		t.Fatal(lerr)
	}
	n, ok := strings.CutPrefix(link, "socket:[")
	if !ok || !strings.HasSuffix(n, "]") {
		t.Fatalf("fd link %q is not a socket", link)
	}
	ino, err := strconv.ParseUint(strings.TrimSuffix(n, "]"), 10, 64)
	if err != nil {
		t.Fatalf("fd link %q: %v", link, err)
	}
	return ino
}

func listen(t testing.TB, network, address string) *net.TCPListener {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener)
}

// listenReusePort listens with SO_REUSEADDR and SO_REUSEPORT, as a
// reusePort app does, so that several listeners can share one port.
func listenReusePort(t testing.TB, address string) *net.TCPListener {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); serr == nil {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	ln, err := lc.Listen(context.Background(), "tcp4", address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.(*net.TCPListener)
}

func portOf(a net.Addr) int { return a.(*net.TCPAddr).Port }

func mustListeners(t testing.TB, port int) []Listener {
	t.Helper()
	ls, err := Listeners(port)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range ls {
		if l.Port != port {
			t.Errorf("asked for port %d, got %+v", port, l)
		}
	}
	return ls
}

func byInode(ls []Listener, inode uint64) (Listener, bool) {
	for _, l := range ls {
		if l.Inode == inode {
			return l, true
		}
	}
	return Listener{}, false
}

func TestWireSizes(t *testing.T) {
	// The Go mirrors of the kernel's structs have the kernel's sizes.
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"inet_diag_sockid", unsafe.Sizeof(sockID{}), sizeofSockID},
		{"inet_diag_req_v2", unsafe.Sizeof(reqV2{}), sizeofReqV2},
		{"inet_diag_msg", unsafe.Sizeof(diagMsg{}), sizeofMsg},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d bytes, want %d", c.name, c.got, c.want)
		}
	}
	if sizeofSockID != 48 || sizeofReqV2 != 56 || sizeofMsg != 72 {
		t.Errorf("sizes %d %d %d, want 48 56 72 (linux/inet_diag.h)", sizeofSockID, sizeofReqV2, sizeofMsg)
	}
}

func TestTCP4Listener(t *testing.T) {
	ln := listen(t, "tcp4", "127.0.0.1:0")
	port := portOf(ln.Addr())
	ls := mustListeners(t, port)
	if len(ls) != 1 {
		t.Fatalf("port %d: %d listeners, want 1: %+v", port, len(ls), ls)
	}
	want := Listener{
		Family:  unix.AF_INET,
		Addr:    netip.MustParseAddr("127.0.0.1"),
		Port:    port,
		UID:     uint32(os.Getuid()),
		Inode:   inodeOf(t, ln),
		Backlog: ls[0].Backlog, // Go's backlog is net.core.somaxconn: see TestAcceptQueue
	}
	if ls[0].Backlog == 0 {
		t.Errorf("no backlog: %+v", ls[0])
	}
	if ls[0] != want {
		t.Errorf("got  %+v\nwant %+v", ls[0], want)
	}
}

func TestTCP6Listener(t *testing.T) {
	ln, err := net.Listen("tcp6", "[::1]:0")
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no IPv6 loopback", Fix: "sudo sysctl net.ipv6.conf.lo.disable_ipv6=0"}, err)
	}
	defer ln.Close()
	port := portOf(ln.Addr())
	l, ok := byInode(mustListeners(t, port), inodeOf(t, ln.(*net.TCPListener)))
	if !ok {
		t.Fatalf("[::1]:%d not listed", port)
	}
	// Go sets IPV6_V6ONLY on "tcp6" listeners.
	want := Listener{Family: unix.AF_INET6, Addr: netip.IPv6Loopback(), Port: port, UID: uint32(os.Getuid()), Inode: l.Inode, V6Only: true, Backlog: l.Backlog}
	if l != want {
		t.Errorf("got  %+v\nwant %+v", l, want)
	}
}

func TestDualStackListener(t *testing.T) {
	// Go listens on "tcp" ":0" with one AF_INET6 socket on :: that also
	// takes IPv4 (IPV6_V6ONLY off), or with AF_INET on 0.0.0.0 without
	// IPv6.
	ln := listen(t, "tcp", ":0")
	port := portOf(ln.Addr())
	ls := mustListeners(t, port)
	l, ok := byInode(ls, inodeOf(t, ln))
	if !ok || len(ls) != 1 {
		t.Fatalf("port %d: %+v", port, ls)
	}
	switch l.Family {
	case unix.AF_INET6:
		if l.Addr != netip.IPv6Unspecified() || l.V6Only {
			t.Errorf("dual-stack listener: %+v, want :: without V6Only", l)
		}
	case unix.AF_INET:
		if l.Addr != netip.IPv4Unspecified() || l.V6Only {
			t.Errorf("IPv4-only listener: %+v, want 0.0.0.0", l)
		}
	default:
		t.Errorf("family %d", l.Family)
	}
}

func TestV4MappedListener(t *testing.T) {
	// An AF_INET6 socket bound to ::ffff:127.0.0.1 is reported as such,
	// not as 127.0.0.1.
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no IPv6 loopback", Fix: "sudo sysctl net.ipv6.conf.lo.disable_ipv6=0"}, err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0); err != nil {
		t.Fatal(err)
	}
	mapped := netip.MustParseAddr("::ffff:127.0.0.1")
	if err := unix.Bind(fd, &unix.SockaddrInet6{Addr: mapped.As16()}); err != nil {
		testutil.Skip(t, testutil.Need{What: "no IPv4-mapped IPv6 binds", Fix: "sudo sysctl net.ipv6.bindv6only=0"}, mapped, err)
	}
	if err := unix.Listen(fd, 8); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*unix.SockaddrInet6).Port
	ls := mustListeners(t, port)
	if len(ls) != 1 || ls[0].Family != unix.AF_INET6 || ls[0].Addr != mapped || ls[0].V6Only {
		t.Fatalf("port %d: %+v, want one AF_INET6 listener on %v", port, ls, mapped)
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	if ls[0].Inode != st.Ino {
		t.Errorf("inode %d, fstat says %d", ls[0].Inode, st.Ino)
	}
}

func TestClosedListenerGone(t *testing.T) {
	ln := listen(t, "tcp4", "127.0.0.1:0")
	port, inode := portOf(ln.Addr()), inodeOf(t, ln)
	if _, ok := byInode(mustListeners(t, port), inode); !ok {
		t.Fatalf("port %d: listener not listed while open", port)
	}
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	// The port is free again and somebody else may take it: only this
	// socket must be gone.
	if l, ok := byInode(mustListeners(t, port), inode); ok {
		t.Errorf("closed listener still listed: %+v", l)
	}
}

func TestNoListener(t *testing.T) {
	// A socket bound but not listening keeps the port from being handed
	// out to anybody else, and is not a listener itself.
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	port := sa.(*unix.SockaddrInet4).Port
	ls := mustListeners(t, port)
	if ls == nil || len(ls) != 0 {
		t.Errorf("port %d with no listener: %#v, want an empty slice", port, ls)
	}
}

func TestReusePortGroup(t *testing.T) {
	a := listenReusePort(t, "127.0.0.1:0")
	port := portOf(a.Addr())
	b := listenReusePort(t, fmt.Sprintf("127.0.0.1:%d", port))
	ls := mustListeners(t, port)
	if len(ls) != 2 {
		t.Fatalf("port %d: %d listeners, want 2: %+v", port, len(ls), ls)
	}
	for _, ln := range []*net.TCPListener{a, b} {
		if _, ok := byInode(ls, inodeOf(t, ln)); !ok {
			t.Errorf("listener %d missing from %+v", inodeOf(t, ln), ls)
		}
	}
}

func TestConnectedSocketsNotListed(t *testing.T) {
	ln := listen(t, "tcp4", "127.0.0.1:0")
	port := portOf(ln.Addr())
	client, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	// The accepted socket shares the listener's port, established.
	ls := mustListeners(t, port)
	if len(ls) != 1 || ls[0].Inode != inodeOf(t, ln) {
		t.Errorf("port %d: %+v, want the listener alone", port, ls)
	}
	// The client's own port has an established socket and no listener.
	cport := portOf(client.LocalAddr())
	if ls := mustListeners(t, cport); len(ls) != 0 {
		t.Errorf("client port %d: %+v, want none", cport, ls)
	}
}

func TestKernelFiltersPort(t *testing.T) {
	// The request's id.sport is applied by the kernel: the raw reply,
	// before the check in listeners, holds only sockets on that port.
	a := listen(t, "tcp4", "127.0.0.1:0")
	listen(t, "tcp4", "127.0.0.1:0") // another port, to be left out
	c, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	port := portOf(a.Addr())
	req := reqV2{Family: unix.AF_INET, Protocol: unix.IPPROTO_TCP, States: 1 << tcpListen, ID: sockID{SPort: bePort(port)}}
	var got []diagMsg
	if err := c.dump(&req, func(m *diagMsg, _ []byte) { got = append(got, *m) }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID.SPort != bePort(port) || got[0].State != tcpListen {
		t.Errorf("raw reply for port %d: %+v", port, got)
	}
}

func TestMultipartReply(t *testing.T) {
	// 200 listeners on one port make a reply of more than 200*88 bytes;
	// read through an 8 KiB buffer (the kernel then sends datagrams of at
	// most that size, or Listeners fails on MSG_TRUNC) it takes at least
	// three datagrams, all of which must be read.
	const n = 200
	first := listenReusePort(t, "127.0.0.1:0")
	port := portOf(first.Addr())
	want := map[uint64]bool{inodeOf(t, first): true}
	for range n - 1 {
		want[inodeOf(t, listenReusePort(t, fmt.Sprintf("127.0.0.1:%d", port)))] = true
	}
	fd, err := openSocket()
	if err != nil {
		t.Fatal(err)
	}
	small := &Conn{fd: fd, buf: make([]byte, 8<<10)}
	defer small.Close()
	big, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	for name, c := range map[string]*Conn{"8 KiB buffer": small, "default buffer": big} {
		for i := range 3 { // again on the same socket: nothing left over
			ls, err := c.Listeners(port)
			if err != nil {
				t.Fatalf("%s, call %d: %v", name, i, err)
			}
			seen := map[uint64]bool{}
			for _, l := range ls {
				if !want[l.Inode] || seen[l.Inode] {
					t.Errorf("%s: unexpected or repeated %+v", name, l)
				}
				seen[l.Inode] = true
			}
			if len(seen) != n {
				t.Errorf("%s, call %d: %d of %d listeners", name, i, len(seen), n)
			}
		}
	}
}

func TestConnReuseAndClose(t *testing.T) {
	ln := listen(t, "tcp4", "127.0.0.1:0")
	port, inode := portOf(ln.Addr()), inodeOf(t, ln)
	c, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		ls, err := c.Listeners(port)
		if err != nil {
			t.Fatal(err)
		}
		if len(ls) != 1 || ls[0].Inode != inode {
			t.Fatalf("call %d: %+v", i, ls)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := c.Listeners(port); !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), "sock_diag") {
		t.Errorf("Listeners after Close: %v", err)
	}
}

func TestConnConcurrent(t *testing.T) {
	ln := listen(t, "tcp4", "127.0.0.1:0")
	port := portOf(ln.Addr())
	c, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	errs := make(chan error, 8)
	for range cap(errs) {
		go func() {
			for range 20 {
				ls, err := c.Listeners(port)
				if err == nil && len(ls) != 1 {
					err = fmt.Errorf("%d listeners", len(ls))
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestKernelError(t *testing.T) {
	// A request the kernel refuses comes back as NLMSG_ERROR, an errno;
	// the socket stays usable.
	c, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	bad := reqV2{Family: 255, Protocol: unix.IPPROTO_TCP, States: 1 << tcpListen}
	if err := c.dump(&bad, func(*diagMsg, []byte) {}); !errors.Is(err, unix.EINVAL) {
		t.Errorf("family 255: %v, want EINVAL", err)
	}
	ln := listen(t, "tcp4", "127.0.0.1:0")
	if ls, err := c.Listeners(portOf(ln.Addr())); err != nil || len(ls) != 1 {
		t.Errorf("after the error: %+v, %v", ls, err)
	}
}

func TestPortOutOfRange(t *testing.T) {
	for _, port := range []int{0, -1, 65536} {
		if _, err := Listeners(port); err == nil || !strings.Contains(err.Error(), "sock_diag") {
			t.Errorf("port %d: %v", port, err)
		}
	}
}

func TestOwnerOf(t *testing.T) {
	ln := listen(t, "tcp4", "127.0.0.1:0")
	port, inode := portOf(ln.Addr()), inodeOf(t, ln)
	l, ok := byInode(mustListeners(t, port), inode)
	if !ok {
		t.Fatalf("port %d not listed", port)
	}
	want := filepath.Base(os.Args[0])
	pid, name, ok := OwnerOf(l)
	if !ok || pid != os.Getpid() || name != want {
		t.Errorf("OwnerOf = %d %q %v, want %d %q true", pid, name, ok, os.Getpid(), want)
	}

	ln.Close()
	if pid, name, ok := OwnerOf(l); ok {
		t.Errorf("closed socket: held by %d %q", pid, name)
	}
	if _, _, ok := OwnerOf(Listener{}); ok {
		t.Error("inode 0 has an owner")
	}
	if _, _, ok := ownerOf(t.TempDir(), inode); ok {
		t.Error("found an owner in an empty /proc")
	}
}

// listenBacklog listens on a loopback port of family with exactly
// backlog, which the net package does not let one choose.
func listenBacklog(t *testing.T, family int, backlog int) (fd, port int) {
	t.Helper()
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	var sa unix.Sockaddr = &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}
	if family == unix.AF_INET6 {
		sa = &unix.SockaddrInet6{Addr: netip.IPv6Loopback().As16()}
	}
	if err := unix.Bind(fd, sa); err != nil {
		testutil.Skip(t, testutil.Need{What: "no loopback of family " + strconv.Itoa(family), Fix: "sudo sysctl net.ipv6.conf.lo.disable_ipv6=0"}, err)
	}
	if err := unix.Listen(fd, backlog); err != nil {
		t.Fatal(err)
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	switch a := got.(type) {
	case *unix.SockaddrInet4:
		port = a.Port
	case *unix.SockaddrInet6:
		port = a.Port
	}
	return fd, port
}

func fdInode(t *testing.T, fd int) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// eventually asks until ok says the answer is the one awaited, for up to
// two seconds: the kernel completes a loopback handshake as connect
// returns, but need not have queued the server's side by then.
func eventually[T any](t *testing.T, ask func() (T, error), ok func(T) bool) T {
	t.Helper()
	var v T
	var err error
	for range 200 {
		if v, err = ask(); err != nil {
			t.Fatal(err)
		}
		if ok(v) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return v
}

func TestAcceptQueue(t *testing.T) {
	// A listener with a backlog of 7 and 3 connections not accepted: the
	// kernel says 3 of 7, and the 3 are established sockets on the port
	// that no process holds yet (inode 0). One accepted and kept is a
	// socket of this process's, and leaves 2 in the queue.
	for _, family := range []int{unix.AF_INET, unix.AF_INET6} {
		t.Run(familyName(uint8(family)), func(t *testing.T) {
			fd, port := listenBacklog(t, family, 7)
			addr := fmt.Sprintf("127.0.0.1:%d", port)
			if family == unix.AF_INET6 {
				addr = fmt.Sprintf("[::1]:%d", port)
			}
			for range 3 {
				c, err := net.Dial("tcp", addr)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { c.Close() })
			}
			c, err := Open()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			ls := eventually(t, func() ([]Listener, error) { return c.Listeners(port) },
				func(ls []Listener) bool { return len(ls) == 1 && ls[0].Queued == 3 })
			if len(ls) != 1 || ls[0].Queued != 3 || ls[0].Backlog != 7 || ls[0].Inode != fdInode(t, fd) {
				t.Fatalf("port %d: %+v, want one listener with 3 of 7 queued", port, ls)
			}
			es, err := c.Established(port)
			if err != nil {
				t.Fatal(err)
			}
			if len(es) != 3 {
				t.Fatalf("port %d: %d established sockets, want 3: %+v", port, len(es), es)
			}
			for _, e := range es {
				if e.Inode != 0 || e.Family != family || e.UID != uint32(os.Getuid()) {
					t.Errorf("queued connection %+v, want inode 0, family %d, uid %d", e, family, os.Getuid())
				}
			}

			nfd, _, err := unix.Accept4(fd, unix.SOCK_CLOEXEC)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(nfd)
			ls = eventually(t, func() ([]Listener, error) { return Listeners(port) },
				func(ls []Listener) bool { return len(ls) == 1 && ls[0].Queued == 2 })
			if len(ls) != 1 || ls[0].Queued != 2 || ls[0].Backlog != 7 {
				t.Errorf("after one accept: %+v, want 2 of 7 queued", ls)
			}
			es, err = Established(port)
			if err != nil {
				t.Fatal(err)
			}
			accepted := fdInode(t, nfd)
			held := 0
			for _, e := range es {
				if e.Inode == accepted {
					held++
				} else if e.Inode != 0 {
					t.Errorf("unexpected %+v", e)
				}
			}
			if len(es) != 3 || held != 1 {
				t.Errorf("after one accept: %+v, want 3 with one of inode %d", es, accepted)
			}
			// The accepted socket is among this process's sockets.
			inodes, _, err := SocketsOf(uint32(os.Getpid()), 0)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(inodes, accepted) || !slices.Contains(inodes, fdInode(t, fd)) {
				t.Errorf("SocketsOf(self) = %v, lacks %d or the listener", inodes, accepted)
			}
		})
	}
}

func TestEstablishedOnlyOnThePort(t *testing.T) {
	// The client's side of a connection has its own local port: it is
	// listed there, not on the server's; a listener is never listed as
	// established.
	ln := listen(t, "tcp4", "127.0.0.1:0")
	client, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	es, err := Established(portOf(ln.Addr()))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Inode != inodeOf(t, server.(*net.TCPConn)) {
		t.Errorf("server port: %+v, want the accepted socket alone", es)
	}
	es, err = Established(portOf(client.LocalAddr()))
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 1 || es[0].Inode != inodeOf(t, client.(*net.TCPConn)) {
		t.Errorf("client port: %+v, want the client's socket alone", es)
	}
	if es, err := Established(0); err == nil || !strings.Contains(err.Error(), "sock_diag") {
		t.Errorf("port 0: %v %v", es, err)
	}
	free := listen(t, "tcp4", "127.0.0.1:0")
	if es, err := Established(portOf(free.Addr())); err != nil || es == nil || len(es) != 0 {
		t.Errorf("a port with no connection: %#v %v, want an empty slice", es, err)
	}
}

// connected is a loopback connection, both ends, and a look at the
// server's end through Established.
func connected(t *testing.T) (client, server net.Conn, look func() Connection) {
	t.Helper()
	ln := listen(t, "tcp4", "127.0.0.1:0")
	client, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Close() })
	port, ino := portOf(ln.Addr()), inodeOf(t, server.(*net.TCPConn))
	return client, server, func() Connection {
		t.Helper()
		es, err := Established(port)
		if err != nil || len(es) != 1 || es[0].Inode != ino {
			t.Fatalf("Established = %+v, %v; want the server's socket", es, err)
		}
		return es[0]
	}
}

func TestEstablishedQueues(t *testing.T) {
	// What a drain waits for: bytes the app has not read, bytes the peer
	// has not acknowledged. An idle connection has neither.
	client, server, look := connected(t)
	queues := func() (unread, unsent uint32) {
		t.Helper()
		c := look()
		return c.Unread, c.Unsent
	}
	if r, w := queues(); r != 0 || w != 0 {
		t.Errorf("idle: unread %d, unsent %d; want 0 0", r, w)
	}
	if _, err := client.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for r, _ := queues(); r != 18; r, _ = queues() {
		if time.Now().After(deadline) {
			t.Fatalf("unread %d after the client wrote 18 bytes", r)
		}
		time.Sleep(time.Millisecond)
	}
	buf := make([]byte, 64)
	if n, err := server.Read(buf); n != 18 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	if r, _ := queues(); r != 0 {
		t.Errorf("unread %d once read", r)
	}
}

// A connection's byte counts (tcp_info): what it has received and had
// acknowledged over its life, which a drain uses to tell a keep-alive
// connection still carrying requests from one finishing its last.
func TestEstablishedCountsBytes(t *testing.T) {
	client, server, look := connected(t)
	counts := func() Connection {
		t.Helper()
		c := look()
		if !c.Counted {
			t.Fatal("no tcp_info from the kernel")
		}
		return c
	}
	if c := counts(); c.Received != 0 || c.Acked != 0 {
		t.Errorf("fresh: received %d, acked %d; want 0 0", c.Received, c.Acked)
	}
	buf := make([]byte, 64)
	for round := 1; round <= 2; round++ {
		if _, err := client.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		if n, err := server.Read(buf); n != 18 || err != nil {
			t.Fatalf("read %d, %v", n, err)
		}
		if _, err := server.Write([]byte("HTTP/1.1 200 OK\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
		if n, err := client.Read(buf); n != 19 || err != nil {
			t.Fatalf("client read %d, %v", n, err)
		}
		deadline := time.Now().Add(2 * time.Second)
		for c := counts(); c.Received != uint64(18*round) || c.Acked != uint64(19*round); c = counts() {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: received %d, acked %d; want %d %d", round, c.Received, c.Acked, 18*round, 19*round)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

func TestAllPorts(t *testing.T) {
	// Every port at once: both listeners, with their ports, and the
	// accepted connection with the server's port, the client's with its
	// own.
	a := listen(t, "tcp4", "127.0.0.1:0")
	b := listen(t, "tcp6", "[::1]:0")
	client, err := net.Dial("tcp4", a.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := a.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	ls, err := AllListeners()
	if err != nil {
		t.Fatal(err)
	}
	found := map[int]bool{}
	for _, l := range ls {
		if l.Inode == inodeOf(t, a) || l.Inode == inodeOf(t, b) {
			found[l.Port] = true
		}
	}
	if !found[portOf(a.Addr())] || !found[portOf(b.Addr())] {
		t.Errorf("AllListeners lacks %v or %v: %+v", a.Addr(), b.Addr(), ls)
	}
	es, err := AllEstablished(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[uint64]int{inodeOf(t, server.(*net.TCPConn)): portOf(a.Addr()), inodeOf(t, client.(*net.TCPConn)): portOf(client.LocalAddr())}
	for _, e := range es {
		if port, ok := want[e.Inode]; ok {
			if e.Port != port {
				t.Errorf("connection %d on port %d, want %d", e.Inode, e.Port, port)
			}
			delete(want, e.Inode)
		}
	}
	if len(want) != 0 {
		t.Errorf("AllEstablished lacks %v: %+v", want, es)
	}
	// Only the server's port: the client's side is dropped.
	es, err = AllEstablished(func(port int) bool { return port == portOf(a.Addr()) })
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		if e.Port != portOf(a.Addr()) {
			t.Errorf("kept a connection on port %d", e.Port)
		}
	}
	if len(es) != 1 {
		t.Errorf("AllEstablished(server's port) = %+v, want the accepted socket", es)
	}
}

func BenchmarkListeners(b *testing.B) {
	ln := listen(b, "tcp4", "127.0.0.1:0")
	port := portOf(ln.Addr())
	b.Run("Conn", func(b *testing.B) {
		c, err := Open()
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		for b.Loop() {
			if ls, err := c.Listeners(port); err != nil || len(ls) != 1 {
				b.Fatal(ls, err)
			}
		}
	})
	b.Run("OpenEachTime", func(b *testing.B) {
		for b.Loop() {
			if ls, err := Listeners(port); err != nil || len(ls) != 1 {
				b.Fatal(ls, err)
			}
		}
	})
}
