package steer

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// Why Map.Put(slot, fd) of a Go listener said "not supported": since Go
// 1.24, net.Listen and net.ListenConfig make MPTCP listeners
// (IPPROTO_MPTCP) wherever the kernel has net.mptcp.enabled=1, and the
// kernel's sockarray takes only TCP and UDP sockets
// (reuseport_array_update_check returns ENOTSUPP, errno 524, which
// cilium/ebpf reports as ErrNotSupported, "not supported"). The same
// listener with SetMultipathTCP(false) goes in, dual-stack IPv6 or not.
// The other suspects give other errors: a missing SO_REUSEPORT, or a
// socket bound but not listening, EINVAL (no sk_reuseport_cb, not
// hashed); a value of the wrong Go size, a marshalling error before any
// syscall. A 4-byte value map takes fds as well as an 8-byte one, but
// only the 8-byte one can be read back (the socket's cookie; with 4,
// ENOSPC).
func TestWhyNotSupported(t *testing.T) {
	needSteering(t)
	m8 := sockarray(t, 8)
	m4 := sockarray(t, 4)

	def := net.ListenConfig{Control: reuseport.ListenControl}
	goDefault, err := def.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer goDefault.Close()
	fd(t, goDefault.(*net.TCPListener), func(fd int) error {
		proto, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
		if proto != unix.IPPROTO_MPTCP {
			mptcp, _ := os.ReadFile("/proc/sys/net/mptcp/enabled")
			testutil.Skip(t, testutil.Need{What: "Go made a plain TCP listener: no MPTCP in this kernel", Fix: "sudo sysctl net.mptcp.enabled=1"}, "net.mptcp.enabled=", strings.TrimSpace(string(mptcp)))
		}
		err := m8.Put(uint32(0), uint64(fd))
		if !errors.Is(err, ebpf.ErrNotSupported) || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("Put of Go's default (MPTCP) listener: %v, want ErrNotSupported", err)
		}
		if _, err := CheckListener(fd, 0); !errors.Is(err, ErrMPTCP) {
			t.Errorf("CheckListener of an MPTCP listener: %v, want ErrMPTCP", err)
		}
		return nil
	})

	// The same, without MPTCP: in, as a dual-stack [::] listener too.
	for _, addr := range []string{"127.0.0.1:0", "[::]:0"} {
		lc := net.ListenConfig{Control: reuseport.ListenControl}
		lc.SetMultipathTCP(false)
		l, err := lc.Listen(context.Background(), "tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		fd(t, l.(*net.TCPListener), func(fd int) error {
			if err := m8.Put(uint32(1), uint64(fd)); err != nil {
				t.Errorf("Put of a TCP listener on %s: %v", addr, err)
			}
			var cookie uint64
			if err := m8.Lookup(uint32(1), &cookie); err != nil || cookie == 0 {
				t.Errorf("Lookup in an 8-byte sockarray: %d, %v; want the socket's cookie", cookie, err)
			}
			m8.Delete(uint32(1))
			if err := m4.Put(uint32(1), uint32(fd)); err != nil {
				t.Errorf("Put in a 4-byte sockarray: %v", err)
			}
			var v uint32
			if err := m4.Lookup(uint32(1), &v); !errors.Is(err, unix.ENOSPC) {
				t.Errorf("Lookup in a 4-byte sockarray: %v, want ENOSPC", err)
			}
			m4.Delete(uint32(1))
			// A Go value of the wrong size never reaches the kernel.
			if err := m8.Put(uint32(1), uint32(fd)); err == nil || !strings.Contains(err.Error(), "marshal") {
				t.Errorf("Put of a uint32 in an 8-byte sockarray: %v, want a marshal error", err)
			}
			return nil
		})
		l.Close()
	}

	// Without SO_REUSEPORT, or not listening: EINVAL, not "not supported".
	plain := net.ListenConfig{}
	plain.SetMultipathTCP(false)
	l, err := plain.Listen(context.Background(), "tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	fd(t, l.(*net.TCPListener), func(fd int) error {
		if err := m8.Put(uint32(0), uint64(fd)); !errors.Is(err, unix.EINVAL) {
			t.Errorf("Put of a listener without SO_REUSEPORT: %v, want EINVAL", err)
		}
		if _, err := CheckListener(fd, 0); !errors.Is(err, ErrNoReusePort) {
			t.Errorf("CheckListener without SO_REUSEPORT: %v", err)
		}
		return nil
	})
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_TCP)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(s)
	unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	if err := unix.Bind(s, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	if err := m8.Put(uint32(0), uint64(s)); !errors.Is(err, unix.EINVAL) {
		t.Errorf("Put of a bound, not listening socket: %v, want EINVAL", err)
	}
	if _, err := CheckListener(s, 0); !errors.Is(err, ErrNotListening) {
		t.Errorf("CheckListener of a bound socket: %v", err)
	}
	// Not TCP at all: a Unix listener is "not supported" too.
	u, err := net.Listen("unix", "@bm2-steer-test-"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	rc, _ := u.(*net.UnixListener).SyscallConn()
	rc.Control(func(fd uintptr) {
		if err := m8.Put(uint32(0), uint64(fd)); !errors.Is(err, ebpf.ErrNotSupported) {
			t.Errorf("Put of a Unix listener: %v, want ErrNotSupported", err)
		}
		if _, err := CheckListener(int(fd), 0); !errors.Is(err, ErrNotTCP) {
			t.Errorf("CheckListener of a Unix listener: %v", err)
		}
	})
}

func sockarray(t *testing.T, valueSize uint32) *ebpf.Map {
	m, err := ebpf.NewMap(&ebpf.MapSpec{Type: ebpf.ReusePortSockArray, KeySize: 4, ValueSize: valueSize, MaxEntries: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}
