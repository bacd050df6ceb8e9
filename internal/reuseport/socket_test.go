package reuseport

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/testutil"
)

// listen opens a real loopback-reachable listener on 0.0.0.0:0, with or
// without SO_REUSEPORT, and returns its port.
func listen(t *testing.T, reuse bool) (net.Listener, int) {
	t.Helper()
	lc := net.ListenConfig{}
	if reuse {
		lc.Control = ListenControl
	}
	l, err := lc.Listen(context.Background(), "tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l, l.Addr().(*net.TCPAddr).Port
}

func TestCheckPortStates(t *testing.T) {
	l, port := listen(t, false)
	if got, err := CheckPort(port); err != nil || got != Exclusive {
		t.Fatalf("plain listener: %v %v, want exclusive", got, err)
	}
	l.Close()
	if got, err := CheckPort(port); err != nil || got != Free {
		t.Fatalf("after close: %v %v, want free", got, err)
	}
	_, rport := listen(t, true)
	if got, err := CheckPort(rport); err != nil || got != Shared {
		t.Fatalf("reuseport listener: %v %v, want shared", got, err)
	}
}

// The probe must not disturb the app: after many checks the listener still
// accepts, and the port is still exactly as it was.
func TestCheckPortNeverListens(t *testing.T) {
	l, port := listen(t, true)
	for i := 0; i < 50; i++ {
		if got, _ := CheckPort(port); got != Shared {
			t.Fatalf("check %d: %v", i, got)
		}
	}
	done := make(chan error, 1)
	go func() {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
		done <- err
	}()
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// A bound-but-not-listening socket (as a half-started app has) counts as
// holding the port; an app on 127.0.0.1 only is seen as exclusive by the
// 0.0.0.0 probe, as the seed warns.
func TestCheckPortLoopbackOnly(t *testing.T) {
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if got, err := CheckPort(port); err != nil || got != Exclusive {
		t.Fatalf("loopback-only listener: %v %v, want exclusive", got, err)
	}
}

// IPv6 listeners are seen as well: an app alone on [::1] or on [::] with
// IPV6_V6ONLY once looked free to a probe that asked 0.0.0.0 only.
func TestCheckPortIPv6(t *testing.T) {
	for _, addr := range []string{"[::1]:0", "[::]:0"} {
		lc := net.ListenConfig{Control: func(network, address string, c syscall.RawConn) error {
			return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 1) })
		}}
		l, err := lc.Listen(context.Background(), "tcp6", addr)
		if err != nil {
			testutil.Skip(t, testutil.Need{What: "no IPv6 loopback", Fix: "sudo sysctl net.ipv6.conf.lo.disable_ipv6=0"}, err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if got, err := CheckPort(port); err != nil || got != Exclusive {
			t.Errorf("%s listener without reusePort: %v %v, want exclusive", addr, got, err)
		}
		l.Close()
		lc.Control = func(network, address string, c syscall.RawConn) error {
			var serr error
			c.Control(func(fd uintptr) {
				syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IPV6, syscall.IPV6_V6ONLY, 1)
				serr = ReusePort(fd)
			})
			return serr
		}
		l, err = lc.Listen(context.Background(), "tcp6", addr)
		if err != nil {
			t.Fatal(err)
		}
		port = l.Addr().(*net.TCPAddr).Port
		if got, err := CheckPort(port); err != nil || got != Shared {
			t.Errorf("%s listener with reusePort: %v %v, want shared", addr, got, err)
		}
		l.Close()
	}
}

func TestCheckPortRange(t *testing.T) {
	if _, err := CheckPort(0); err == nil {
		t.Fatal("port 0 accepted")
	}
}

// SO_REUSEPORT joins only for the same effective UID (SPEC §6): a root
// check of a reusePort listener owned by another user says exclusive.
func TestCheckPortOtherUser(t *testing.T) {
	testutil.Root(t) // to run a listener as another user
	port := startOtherUserListener(t)
	if got, err := CheckPort(port); err != nil || got != Exclusive {
		t.Fatalf("root checking nobody's reusePort listener: %v %v, want exclusive", got, err)
	}
	// As the listener's own user, the same port is joinable...
	if got, err := CheckPortAs(identity.Identity{UID: 65534, GID: 65534}, port); err != nil || got != Shared {
		t.Fatalf("checking as nobody: %v %v, want shared", got, err)
	}
	// ...and borrowing the identity did not leak into the rest of the process.
	if got, err := CheckPort(port); err != nil || got != Exclusive {
		t.Fatalf("after CheckPortAs, root check: %v %v, want exclusive", got, err)
	}
	// An exclusive listener stays exclusive for everyone.
	l, err := net.Listen("tcp4", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got, err := CheckPortAs(identity.Identity{UID: 65534, GID: 65534}, l.Addr().(*net.TCPAddr).Port); err != nil || got != Exclusive {
		t.Fatalf("plain listener checked as nobody: %v %v, want exclusive", got, err)
	}
}

// startOtherUserListener runs a reusePort listener as nobody (65534) in a
// child process and returns its port.
func startOtherUserListener(t *testing.T) int {
	t.Helper()
	// The test binary sits in a root-only build dir: copy it where nobody
	// can execute it.
	dir, err := os.MkdirTemp("", "bm2-probe-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	exe := dir + "/helper.test"
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=TestHelperListener")
	cmd.Env = append(os.Environ(), "BM2_HELPER_LISTEN=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	port, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("helper said %q", buf[:n])
	}
	return port
}

// TestHelperListener is not a test: it is the other user's app for
// TestCheckPortOtherUser.
func TestHelperListener(t *testing.T) {
	if os.Getenv("BM2_HELPER_LISTEN") != "1" {
		return // the helper process only
	}
	lc := net.ListenConfig{Control: ListenControl}
	l, err := lc.Listen(context.Background(), "tcp4", "0.0.0.0:0")
	if err != nil {
		os.Exit(3)
	}
	os.Stdout.WriteString(strconv.Itoa(l.Addr().(*net.TCPAddr).Port) + "\n")
	time.Sleep(30 * time.Second)
	os.Exit(0)
}

// Without root, a check as another user refuses rather than answering as
// the caller.
func TestCheckPortAsRefusesWithoutRoot(t *testing.T) {
	if testutil.Unprivileged(t) {
		return
	}
	_, port := listen(t, true)
	if _, err := CheckPortAs(identity.Identity{UID: os.Geteuid() + 1, GID: os.Getegid()}, port); !errors.Is(err, identity.ErrNotPermitted) {
		t.Fatalf("got %v, want ErrNotPermitted", err)
	}
}
