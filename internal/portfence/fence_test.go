package portfence

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// The child side of TestFenceBinds: started inside the fenced cgroup, it
// binds each port of BM2_FENCE_BIND on IPv4 and IPv6 and prints one line
// per bind: "4 3000 ok" or "6 4001 EPERM".
func TestMain(m *testing.M) {
	if list := os.Getenv("BM2_FENCE_BIND"); list != "" {
		for _, f := range strings.Fields(list) {
			port, _ := strconv.Atoi(f)
			for _, fam := range []int{unix.AF_INET, unix.AF_INET6} {
				fmt.Println(bindResult(fam, port))
			}
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func bindResult(fam, port int) string {
	name := map[int]string{unix.AF_INET: "4", unix.AF_INET6: "6"}[fam]
	fd, err := unix.Socket(fam, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Sprintf("%s %d socket:%v", name, port, err)
	}
	defer unix.Close(fd)
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: port}
	if fam == unix.AF_INET6 {
		unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1)
		sa = &unix.SockaddrInet6{Port: port}
	}
	switch err := unix.Bind(fd, sa); {
	case err == nil:
		return fmt.Sprintf("%s %d ok", name, port)
	case errors.Is(err, unix.EPERM):
		return fmt.Sprintf("%s %d EPERM", name, port)
	default:
		return fmt.Sprintf("%s %d %v", name, port, err)
	}
}

// freePorts are n distinct ports the kernel just handed out and nobody
// listens on, so that a bind fails only because of the fence.
func freePorts(t *testing.T, n int) []int {
	var ls []net.Listener
	var ports []int
	for len(ports) < n {
		l, err := net.Listen("tcp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}

// testCgroup creates a cgroup v2 directory for the test, mounting the
// hierarchy in a temporary directory when the host has it nowhere.
func testCgroup(t *testing.T) string {
	testutil.Root(t)
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	point, root, err := UnifiedMount(string(mi))
	if err != nil {
		point, root = t.TempDir(), "/"
		if err := unix.Mount("cgroup2", point, "cgroup2", 0, ""); err != nil {
			t.Fatalf("mount cgroup2: %v", err)
		}
		t.Cleanup(func() { unix.Unmount(point, unix.MNT_DETACH) })
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Fatal(err)
	}
	own, _ := OwnPath(string(cg))
	base := filepath.Join(point, strings.TrimPrefix(strings.TrimSpace(own), strings.TrimSuffix(root, "/")))
	dir := filepath.Join(base, fmt.Sprintf("bm2-portfence-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Rmdir(dir) })
	return dir
}

// binds runs the test binary inside the cgroup dir and returns its lines.
func binds(t *testing.T, dir string, ports ...int) map[string]bool {
	cg, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	var list []string
	for _, p := range ports {
		list = append(list, strconv.Itoa(p))
	}
	cmd := exec.Command(os.Args[0])
	cmd.Env = []string{"BM2_FENCE_BIND=" + strings.Join(list, " ")}
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(cg.Fd())}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bind child: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		got[l] = true
	}
	return got
}

func TestFenceBinds(t *testing.T) {
	dir := testCgroup(t)
	p := freePorts(t, 4)
	own, extra, foreign, later := p[0], p[1], p[2], p[3]
	start := time.Now()
	if err := Apply(dir, []int{own, extra}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	t.Logf("MEASURE Apply (load, attach and query, IPv4 and IPv6): %v", time.Since(start))
	got := binds(t, dir, own, extra, foreign, 0)
	for _, want := range []string{
		fmt.Sprintf("4 %d ok", own), fmt.Sprintf("6 %d ok", own),
		fmt.Sprintf("4 %d ok", extra), fmt.Sprintf("6 %d ok", extra),
		fmt.Sprintf("4 %d EPERM", foreign), fmt.Sprintf("6 %d EPERM", foreign),
		"4 0 ok", "6 0 ok",
	} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
	if ok, err := Attached(dir); !ok || err != nil {
		t.Errorf("Attached = %v, %v; want true", ok, err)
	}

	// A second start on the same cgroup with other ports replaces the
	// first fence: the old port is denied, the new one allowed, and one
	// program of each type is attached.
	if err := Apply(dir, []int{later}); err != nil {
		t.Fatalf("second Apply: %v", err)
	}
	got = binds(t, dir, own, later)
	for _, want := range []string{
		fmt.Sprintf("4 %d EPERM", own), fmt.Sprintf("6 %d EPERM", own),
		fmt.Sprintf("4 %d ok", later), fmt.Sprintf("6 %d ok", later),
	} {
		if !got[want] {
			t.Errorf("after the second Apply: missing %q in %v", want, got)
		}
	}
	cg, err := os.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer cg.Close()
	for _, at := range AttachTypes {
		fs, err := fences(int(cg.Fd()), at)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != 1 {
			t.Errorf("%s: %d fences attached, want 1", at, len(fs))
		}
		for _, f := range fs {
			f.Close()
		}
	}
}

func TestNotAttached(t *testing.T) {
	dir := testCgroup(t)
	if ok, err := Attached(dir); ok || err != nil {
		t.Errorf("Attached on a fresh cgroup = %v, %v; want false, nil", ok, err)
	}
}

// The verifier takes the program with the most ports allowed.
func TestVerifierTakesMaxPorts(t *testing.T) {
	testutil.Root(t)
	var ports []int
	for i := 1; i <= MaxPorts; i++ {
		ports = append(ports, 60000+i)
	}
	for _, at := range AttachTypes {
		prog, err := ebpf.NewProgram(Spec(at, ports))
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		prog.Close()
	}
}

// A cgroup whose parent holds a program that allows no other below it
// (attached without BPF_F_ALLOW_MULTI or OVERRIDE) cannot get a fence:
// that is an error of its own, not the "host cannot fence" kind the step
// lets pass quietly.
func TestApplyRefused(t *testing.T) {
	parent := testCgroup(t)
	child := filepath.Join(parent, "child")
	if err := os.Mkdir(child, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Rmdir(child) })
	prog, err := ebpf.NewProgram(Spec(ebpf.AttachCGroupInet4Bind, []int{1}))
	if err != nil {
		t.Fatal(err)
	}
	defer prog.Close()
	pf, err := os.Open(parent)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	if err := link.RawAttachProgram(link.RawAttachProgramOptions{Target: int(pf.Fd()), Program: prog, Attach: ebpf.AttachCGroupInet4Bind}); err != nil {
		t.Fatal(err)
	}
	defer link.RawDetachProgram(link.RawDetachProgramOptions{Target: int(pf.Fd()), Program: prog, Attach: ebpf.AttachCGroupInet4Bind})
	err = Apply(child, []int{3000})
	var unsupported *UnsupportedError
	if err == nil || errors.As(err, &unsupported) {
		t.Fatalf("Apply under an exclusive parent program = %v, want an error that is not UnsupportedError", err)
	}
	t.Logf("Apply: %v", err)
}

// A worker's fence (no port) allows an ephemeral port and nothing else.
func TestFenceWorker(t *testing.T) {
	dir := testCgroup(t)
	p := freePorts(t, 1)[0]
	if err := Apply(dir, nil); err != nil {
		t.Fatalf("Apply(no port): %v", err)
	}
	got := binds(t, dir, p, 0)
	for _, want := range []string{fmt.Sprintf("4 %d EPERM", p), fmt.Sprintf("6 %d EPERM", p), "4 0 ok", "6 0 ok"} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
}

// The fence of a unit that must listen nowhere denies every bind, an
// ephemeral port's included; an instance's fence put there later
// replaces it.
func TestFenceNoBind(t *testing.T) {
	dir := testCgroup(t)
	p := freePorts(t, 1)[0]
	if err := ApplyNoBind(dir); err != nil {
		t.Fatalf("ApplyNoBind: %v", err)
	}
	got := binds(t, dir, p, 0)
	for _, want := range []string{
		fmt.Sprintf("4 %d EPERM", p), fmt.Sprintf("6 %d EPERM", p), "4 0 EPERM", "6 0 EPERM",
	} {
		if !got[want] {
			t.Errorf("missing %q in %v", want, got)
		}
	}
	if ok, err := Attached(dir); !ok || err != nil {
		t.Errorf("Attached = %v, %v; want true", ok, err)
	}
	if err := Apply(dir, []int{p}); err != nil {
		t.Fatalf("Apply after ApplyNoBind: %v", err)
	}
	got = binds(t, dir, p, 0)
	if !got[fmt.Sprintf("4 %d ok", p)] || !got["4 0 ok"] {
		t.Errorf("after Apply: %v", got)
	}
}

// The fence writes the port of a denied bind where DeniedPort reads it:
// nothing before a bind is denied, nothing for an allowed one, the port
// after; a new start's fence starts from nothing.
func TestFenceRecordsDenied(t *testing.T) {
	dir := testCgroup(t)
	p := freePorts(t, 2)
	own, foreign := p[0], p[1]
	if err := Apply(dir, []int{own}); err != nil {
		t.Fatalf("Apply: %v", err)
	}
	if got, err := DeniedPort(dir); got != 0 || err != nil {
		t.Fatalf("DeniedPort before any bind = %d, %v", got, err)
	}
	binds(t, dir, own, 0)
	if got, err := DeniedPort(dir); got != 0 || err != nil {
		t.Fatalf("DeniedPort after allowed binds = %d, %v", got, err)
	}
	if got := binds(t, dir, foreign); !got[fmt.Sprintf("4 %d EPERM", foreign)] {
		t.Fatalf("the foreign bind was not denied: %v", got)
	}
	if got, err := DeniedPort(dir); got != foreign || err != nil {
		t.Fatalf("DeniedPort = %d, %v; want %d", got, err, foreign)
	}
	if err := Apply(dir, []int{own}); err != nil {
		t.Fatalf("Apply again: %v", err)
	}
	if got, err := DeniedPort(dir); got != 0 || err != nil {
		t.Errorf("DeniedPort after a new fence = %d, %v; want 0", got, err)
	}
	// A worker's fence records too.
	if err := Apply(dir, nil); err != nil {
		t.Fatalf("Apply(no port): %v", err)
	}
	binds(t, dir, own)
	if got, _ := DeniedPort(dir); got != own {
		t.Errorf("a worker's denied bind: %d, want %d", got, own)
	}
}
