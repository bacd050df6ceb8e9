package steer

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
	"golang.org/x/sys/unix"
)

// What each step needs, checked by running it as root with only the
// named capabilities left in the bounding set (setpriv), so that root's
// exec gets those and no others:
//
//   - loading the program and creating its maps: CAP_BPF (CAP_SYS_ADMIN
//     also does, as before 5.8); CAP_NET_ADMIN is not needed;
//   - taking up a pinned group, filling and emptying slots, attaching
//     the pinned program: no capability, only the pins' permissions;
//   - pidfd_getfd of another user's listener: CAP_SYS_PTRACE; of a
//     process of the same user, none if it has no capability the caller
//     lacks (a root caller without CAP_SYS_PTRACE cannot take from a full
//     root process).
func TestCapabilities(t *testing.T) {
	needSteering(t)
	setpriv := testutil.Command(t, "setpriv", "sudo apt-get install util-linux")
	dir := filepath.Join(bpffs(t), "bm2", "caps")
	port, srv := group(t, 2)
	g := newGroup(t, port, srv)
	if err := g.Pin(dir); err != nil {
		t.Fatal(err)
	}
	nobody := startApp(t, exeForAll(t), 0, &syscall.Credential{Uid: 65534, Gid: 65534})
	rootApp := startApp(t, os.Args[0], 0, nil)
	of := func(a *app) string { return fmt.Sprintf("%d %d", a.pid, a.fd) }
	for _, tc := range []struct {
		name, caps, step, arg, want string
	}{
		{"load, no capability", "-all", "new", "3000", ReasonNoPermission},
		{"load, CAP_NET_ADMIN", "-all,+net_admin", "new", "3000", ReasonNoPermission},
		{"load, CAP_BPF", "-all,+bpf", "new", "3000", "ok"},
		{"load, CAP_SYS_ADMIN", "-all,+sys_admin", "new", "3000", "ok"},
		{"open a pinned group, add, remove, attach; no capability", "-all", "open", dir, "ok"},
		{"pidfd_getfd of nobody's listener, no capability", "-all", "getfd", of(nobody), "EPERM"},
		{"pidfd_getfd of nobody's listener, CAP_SYS_PTRACE", "-all,+sys_ptrace", "getfd", of(nobody), "ok"},
		{"pidfd_getfd of a full root process, no capability", "-all", "getfd", of(rootApp), "EPERM"},
		{"pidfd_getfd of a full root process, all capabilities", "+all", "getfd", of(rootApp), "ok"},
	} {
		cmd := exec.Command(setpriv, "--bounding-set", tc.caps, "--inh-caps", "-all", "--", os.Args[0])
		cmd.Env = childEnv("BM2_STEER_CHILD", "caps", "BM2_STEER_STEP", tc.step, "BM2_STEER_ARG", tc.arg)
		out, err := cmd.CombinedOutput()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		got := lines[len(lines)-1]
		if err != nil || got != tc.want {
			t.Errorf("%s (bounding set %s): %q, %v; want %q\n%s", tc.name, tc.caps, got, err, tc.want, out)
			continue
		}
		t.Logf("%s: %s", tc.name, got)
	}
	if live := g.Live(); len(live) != 2 {
		t.Errorf("live after the children: %v", live)
	}
}

// capsStep is one step of TestCapabilities in the child: "ok", a reason
// of an UnavailableError, an errno's name, or "error: ...".
func capsStep(step, arg string) string {
	switch step {
	case "new":
		port, _ := strconv.Atoi(arg)
		g, err := New(port)
		if err != nil {
			var ue *UnavailableError
			if errors.As(err, &ue) {
				return ue.Reason
			}
			return "error: " + err.Error()
		}
		g.Close()
		return "ok"
	case "open":
		g, err := Open(arg)
		if err != nil {
			return "error: " + err.Error()
		}
		defer g.Close()
		fd, err := reuseListener(g.Port())
		if err != nil {
			return "error: " + err.Error()
		}
		defer unix.Close(fd)
		for _, f := range []func() error{
			func() error { return g.Add(5, fd) },
			func() error { return g.Remove(5) },
			func() error { return g.Attach(fd) },
		} {
			if err := f(); err != nil {
				return "error: " + err.Error()
			}
		}
		return "ok"
	case "getfd":
		var pid, fd int
		fmt.Sscan(arg, &pid, &fd)
		nfd, err := getfd(pid, fd)
		if err != nil {
			var errno unix.Errno
			if errors.As(err, &errno) {
				return unix.ErrnoName(errno)
			}
			return "error: " + err.Error()
		}
		unix.Close(nfd)
		return "ok"
	}
	return "error: no step " + step
}

// reuseListener is a TCP listener with SO_REUSEPORT on 127.0.0.1:port.
func reuseListener(port int) (int, error) {
	s, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return -1, err
	}
	if err = unix.SetsockoptInt(s, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1); err == nil {
		if err = unix.Bind(s, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err == nil {
			err = unix.Listen(s, 64)
		}
	}
	if err != nil {
		unix.Close(s)
		return -1, err
	}
	return s, nil
}

// exeForAll is a copy of the test binary that another user can run (the
// build directory may be root's only).
func exeForAll(t *testing.T) string {
	dir, err := os.MkdirTemp("", "bm2-steer-test-")
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
	exe := filepath.Join(dir, "app.test")
	if err := os.WriteFile(exe, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// A normal user (bm2 of a user manager) cannot steer, and is told why in
// the word the steering_unavailable event carries.
func TestUnavailableAsUser(t *testing.T) {
	if testutil.Unprivileged(t) {
		return
	}
	err := Available("")
	var ue *UnavailableError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &ue) || ue.Reason != ReasonNoPermission {
		t.Fatalf("Available as uid %d: %v, want ReasonNoPermission", os.Geteuid(), err)
	}
	t.Logf("Available: %v", err)
}
