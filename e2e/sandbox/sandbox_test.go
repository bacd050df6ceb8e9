package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := RepoRoot()
	if err != nil {
		t.Fatalf("repository root: %v", err)
	}
	return root
}

func TestBoot(t *testing.T) {
	RequireRoot(t)
	repo := repoRoot(t)
	m := New(t, Options{Repo: repo})
	ctx, cancel := testContext(t)
	defer cancel()

	out, _, err := m.Exec(ctx, "systemctl", "is-system-running")
	if st := strings.TrimSpace(out); st != "running" && st != "degraded" {
		t.Fatalf("is-system-running = %q (%v), want running or degraded", st, err)
	}
	if got := strings.TrimSpace(m.MustSh(t, "hostname")); got != m.ID() {
		t.Errorf("hostname = %q, want %q", got, m.ID())
	}
	// PID 1 is systemd, and we are in the sandbox's root cgroup.
	if got := strings.TrimSpace(m.MustSh(t, "cat /proc/1/comm")); got != "systemd" {
		t.Errorf("PID 1 is %q, want systemd", got)
	}
	if got := m.MustSh(t, "grep '^0::' /proc/self/cgroup"); strings.TrimSpace(got) != "0::/" {
		t.Errorf("cgroup v2 path inside = %q, want 0::/", got)
	}
	// Only a loopback interface, and it is up.
	if got := m.MustSh(t, "ip -o link show | awk -F': ' '{print $2}'"); strings.TrimSpace(got) != "lo" {
		t.Errorf("network interfaces = %q, want just lo", got)
	}
	// The environment is the fixed one.
	env := m.MustSh(t, "env")
	for _, want := range []string{"HOME=/root", "LANG=C.UTF-8", "SYSTEMD_COLORS=0", "PATH=" + sandboxPath} {
		if !slices.Contains(strings.Split(env, "\n"), want) {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
	// The repository is the host's, writable, at the same path.
	marker := filepath.Join(repo, ".bm2-e2e-"+m.ID())
	m.MustSh(t, "echo hi > "+marker)
	defer os.Remove(marker)
	if data, err := os.ReadFile(marker); err != nil || string(data) != "hi\n" {
		t.Errorf("file written to repo inside not visible on host: %q, %v", data, err)
	}
	if m.PID() <= 1 {
		t.Errorf("PID() = %d", m.PID())
	}
}

func TestTransientUnit(t *testing.T) {
	m := New(t, Options{})
	m.MustSh(t, "systemd-run --quiet --wait -p Slice=bm2-x.slice true")

	// A failing unit is reported as such.
	ctx, cancel := testContext(t)
	defer cancel()
	_, err := m.Sh(ctx, "systemd-run --quiet --wait -p Slice=bm2-x.slice false")
	var ee *ExecError
	if !errors.As(err, &ee) || ee.ExitCode == 0 {
		t.Errorf("systemd-run false: err = %v, want an ExecError with a non-zero exit code", err)
	}

	// A resource-limited service lands in the sandbox's own cgroups, in
	// the v1 memory and pids hierarchies too, with its limits applied.
	m.MustSh(t, "systemd-run --quiet --unit=bm2-probe -p Slice=bm2-x.slice -p MemoryMax=64M -p TasksMax=42 sleep 600")
	cg := strings.TrimSpace(m.MustSh(t, "systemctl show -P ControlGroup bm2-probe.service"))
	if cg != "/bm2.slice/bm2-x.slice/bm2-probe.service" {
		t.Fatalf("ControlGroup = %q", cg)
	}
	pid := strings.TrimSpace(m.MustSh(t, "systemctl show -P MainPID bm2-probe.service"))
	if pid == "0" || pid == "" {
		t.Fatalf("bm2-probe has no main pid")
	}
	for _, dir := range m.cgroups {
		if !isHierarchy(dir, "unified") && !isHierarchy(dir, "systemd") {
			continue
		}
		procs, err := os.ReadFile(filepath.Join(dir, cg, "cgroup.procs"))
		if err != nil || len(strings.Fields(string(procs))) != 1 {
			t.Errorf("%s: want the service's process in the sandbox's cgroup, got %q, %v", dir, procs, err)
		}
	}
	limits := map[string]string{
		"memory": "memory.limit_in_bytes",
		"pids":   "pids.max",
	}
	want := map[string]string{"memory": "67108864", "pids": "42"}
	for _, dir := range m.cgroups {
		for ctl, file := range limits {
			if !isHierarchy(dir, ctl) {
				continue
			}
			got, err := os.ReadFile(filepath.Join(dir, cg, file))
			if err != nil || strings.TrimSpace(string(got)) != want[ctl] {
				t.Errorf("%s/%s = %q, %v; want %s", dir, file, got, err, want[ctl])
			}
		}
	}
}

// isHierarchy reports whether dir is a cgroup dir in the hierarchy mounted at
// /sys/fs/cgroup/<ctl>.
func isHierarchy(dir, ctl string) bool {
	return strings.HasPrefix(dir, "/sys/fs/cgroup/"+ctl+"/")
}

func TestJournal(t *testing.T) {
	m := New(t, Options{})
	m.MustSh(t, "systemd-cat -t bm2test echo hello")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var out string
	err := pollUntil(ctx, 50*time.Millisecond, func() (bool, error) {
		var err error
		out, err = m.Sh(ctx, "journalctl --no-pager -o cat -t bm2test")
		return err == nil && strings.Contains(out, "hello"), nil
	})
	if err != nil {
		t.Fatalf("journalctl -t bm2test never showed hello (last output %q): %v", out, err)
	}
	// Each sandbox has its own journal: a fresh machine id.
	hostID, _ := os.ReadFile("/etc/machine-id")
	if id := m.MustSh(t, "cat /etc/machine-id"); id == string(hostID) {
		t.Errorf("sandbox has the host's machine id %s", id)
	}
}

func TestWriteFileAndExec(t *testing.T) {
	m := New(t, Options{})
	ctx, cancel := testContext(t)
	defer cancel()

	unit := "[Service]\nType=oneshot\nExecStart=/bin/sh -c 'echo written > /run/bm2-wf.out'\n"
	if err := m.WriteFile("/etc/systemd/system/bm2-wf.service", []byte(unit), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteFile("relative", nil, 0o644); err == nil {
		t.Error("WriteFile with a relative path succeeded")
	}
	if err := m.WriteFile("/opt/bm2-test/deep/dir/x.sh", []byte("#!/bin/sh\necho run\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := m.MustSh(t, "stat -c %a /etc/systemd/system/bm2-wf.service /opt/bm2-test/deep/dir/x.sh && /opt/bm2-test/deep/dir/x.sh"); got != "644\n755\nrun\n" {
		t.Errorf("modes and output = %q", got)
	}
	m.MustSh(t, "systemctl daemon-reload && systemctl start bm2-wf.service")
	if got := m.MustSh(t, "cat /run/bm2-wf.out"); got != "written\n" {
		t.Errorf("unit output = %q", got)
	}
	if _, err := os.Stat("/opt/bm2-test"); err == nil {
		t.Error("/opt/bm2-test leaked onto the host")
	}

	stdout, stderr, err := m.Exec(ctx, "sh", "-c", "echo out; echo err >&2; exit 3")
	var ee *ExecError
	if !errors.As(err, &ee) || ee.ExitCode != 3 || stdout != "out\n" || stderr != "err\n" {
		t.Errorf("Exec = %q, %q, %v; want out, err, exit 3", stdout, stderr, err)
	}
	if err == nil || !strings.Contains(err.Error(), "err") || !strings.Contains(err.Error(), "exit status 3") {
		t.Errorf("error text %q lacks stderr or exit status", err)
	}

	// A background process keeping stdout open does not hold Exec up.
	start := time.Now()
	if out, err := m.Sh(ctx, "sleep 600 & echo started"); err != nil || out != "started\n" {
		t.Errorf("Sh with a background process = %q, %v", out, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Sh with a background process took %v", d)
	}

	// ctx ends a command.
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	start = time.Now()
	if _, err := m.Sh(short, "sleep 600"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Sh past its deadline: err = %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Sh past its deadline returned after %v", d)
	}
}

func TestClose(t *testing.T) {
	RequireRoot(t)
	ctx, cancel := testContext(t)
	defer cancel()
	m, err := Boot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid, dirs, staging := m.PID(), m.cgroups, m.staging
	m.MustSh(t, "systemd-run --quiet --unit=bm2-sleeper sleep 600")
	start := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("teardown took %v", time.Since(start).Round(time.Millisecond))
	if err := m.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		t.Errorf("sandbox PID 1 (%d) still alive after Close:\n%s", pid, st)
	}
	for _, d := range append(dirs, staging) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still there after Close: %v", d, err)
		}
	}
	if _, err := m.Sh(ctx, "true"); !errors.Is(err, ErrClosed) {
		t.Errorf("Sh after Close: %v, want ErrClosed", err)
	}
}

// TestDeadSandbox checks that a sandbox whose PID 1 died behind our back
// refuses commands (rather than running them anywhere else) and still
// closes cleanly.
func TestDeadSandbox(t *testing.T) {
	RequireRoot(t)
	ctx, cancel := testContext(t)
	defer cancel()
	m, err := Boot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if err := syscall.Kill(m.PID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-m.exited
	out, err := m.Sh(ctx, "hostname")
	if err == nil {
		t.Errorf("Sh in a dead sandbox succeeded: %q", out)
	} else {
		t.Logf("Sh in a dead sandbox: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Errorf("Close of a dead sandbox: %v", err)
	}
}

// cgroupSnapshot lists the cgroup tree that a sandbox could affect: the
// direct children of every hierarchy's root, and everything below the
// calling process's own cgroups, except sandboxes' own dirs (other tests,
// and other test binaries, may be running theirs). Plus every cgroup mount.
func cgroupSnapshot(t *testing.T) []string {
	t.Helper()
	hs, err := cgroupHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	var snap []string
	for _, h := range hs {
		ents, err := os.ReadDir(h.mount)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), IDPrefix) {
				snap = append(snap, filepath.Join(h.mount, e.Name()))
			}
		}
		err = filepath.WalkDir(h.own, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // removed while walking
			}
			if !d.IsDir() {
				return nil
			}
			if strings.HasPrefix(d.Name(), IDPrefix) {
				return fs.SkipDir
			}
			snap = append(snap, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		a := strings.Fields(sc.Text())
		if len(a) > 5 && (a[4] == "/sys/fs/cgroup" || strings.HasPrefix(a[4], "/sys/fs/cgroup/")) {
			snap = append(snap, "mount "+a[4]+" "+a[5])
		}
	}
	slices.Sort(snap)
	return slices.Compact(snap)
}

func TestHostUntouched(t *testing.T) {
	RequireRoot(t)
	marker, err := os.CreateTemp("", "bm2-e2e-marker-")
	if err != nil {
		t.Fatal(err)
	}
	marker.Close()
	defer os.Remove(marker.Name())
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(marker.Name(), old, old); err != nil { // fair game for tmpfiles cleanup
		t.Fatal(err)
	}
	etc := map[string][]byte{}
	for _, f := range []string{"/etc/hostname", "/etc/machine-id"} {
		etc[f], _ = os.ReadFile(f)
	}
	before := cgroupSnapshot(t)
	devBefore := dirNames(t, "/dev")

	ctx, cancel := testContext(t)
	defer cancel()
	m, err := Boot(ctx, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	m.MustSh(t, "systemd-tmpfiles --clean --remove >/dev/null 2>&1 || true")
	m.MustSh(t, "systemd-run --quiet --wait -p Slice=bm2-x.slice -p MemoryMax=32M true")
	if out, err := m.Sh(ctx, "test -e "+marker.Name()); err == nil {
		t.Errorf("host /tmp marker visible inside the sandbox: %s", out)
	}
	// Host-global knobs are read-only inside.
	for _, f := range []string{"/proc/sys/kernel/core_uses_pid", "/sys/kernel/mm/transparent_hugepage/enabled"} {
		if out, err := m.Sh(ctx, "cat "+f+" > "+f); err == nil {
			t.Errorf("%s is writable inside the sandbox: %s", f, out)
		}
	}
	m.MustSh(t, "test -L /dev/log") // journald's, in the sandbox's own /dev
	during := cgroupSnapshot(t)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	after := cgroupSnapshot(t)

	for name, snap := range map[string][]string{"while running": during, "after Close": after} {
		if !slices.Equal(before, snap) {
			t.Errorf("host cgroup tree changed %s:\n%s", name, diff(before, snap))
		}
	}
	if _, err := os.Stat(marker.Name()); err != nil {
		t.Errorf("host /tmp marker: %v", err)
	}
	if devAfter := dirNames(t, "/dev"); !slices.Equal(devBefore, devAfter) {
		t.Errorf("host /dev changed:\n%s", diff(devBefore, devAfter))
	}
	for f, want := range etc {
		if got, _ := os.ReadFile(f); string(got) != string(want) {
			t.Errorf("host %s changed: %q -> %q", f, want, got)
		}
	}
	// The host's cgroup mounts are still read-write.
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, line := range strings.Split(string(mi), "\n") {
		a := strings.Fields(line)
		if len(a) < 6 || !(a[4] == "/sys/fs/cgroup" || strings.HasPrefix(a[4], "/sys/fs/cgroup/")) {
			continue
		}
		found = true
		if !slices.Contains(strings.Split(a[5], ","), "rw") {
			t.Errorf("host %s is mounted %s, want rw", a[4], a[5])
		}
	}
	if !found {
		t.Error("no /sys/fs/cgroup mount found on the host")
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name()+" "+e.Type().String())
	}
	return names
}

func diff(a, b []string) string {
	var out []string
	for _, s := range a {
		if !slices.Contains(b, s) {
			out = append(out, "- "+s)
		}
	}
	for _, s := range b {
		if !slices.Contains(a, s) {
			out = append(out, "+ "+s)
		}
	}
	return strings.Join(out, "\n")
}

func TestParallel(t *testing.T) {
	RequireRoot(t)
	const n = 2
	ms := make([]*Machine, n)
	var wg sync.WaitGroup
	for i := range ms {
		wg.Go(func() {
			// New may only call t.Fatal from the test goroutine, so
			// boot here and check below.
			ctx, cancel := testContext(t)
			defer cancel()
			m, err := Boot(ctx, Options{Name: fmt.Sprintf("bm2-par-%d", i)})
			if err != nil {
				t.Errorf("boot %d: %v", i, err)
				return
			}
			t.Cleanup(func() {
				if err := m.Close(); err != nil {
					t.Error(err)
				}
			})
			ms[i] = m
		})
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	// The same unit name in both, each sees only its own.
	for _, m := range ms {
		m.MustSh(t, "systemd-run --quiet --unit=bm2-same -p Slice=bm2-x.slice sleep 600")
	}
	seen := map[string]bool{}
	for i, m := range ms {
		if got := strings.TrimSpace(m.MustSh(t, "hostname")); got != fmt.Sprintf("bm2-par-%d", i) {
			t.Errorf("sandbox %d hostname = %q", i, got)
		}
		id := m.MustSh(t, "cat /etc/machine-id")
		if seen[id] {
			t.Errorf("two sandboxes share machine id %s", id)
		}
		seen[id] = true
		pid := strings.TrimSpace(m.MustSh(t, "systemctl show -P MainPID bm2-same.service"))
		// Inside its pid namespace, the service's pid is small and the
		// other sandbox's processes are invisible.
		if out := m.MustSh(t, "ps -e -o comm= | grep -c '^sleep$' || true"); strings.TrimSpace(out) != "1" {
			t.Errorf("sandbox %d sees %s sleep processes, want 1 (pid %s)", i, strings.TrimSpace(out), pid)
		}
		for _, dir := range m.cgroups {
			if !isHierarchy(dir, "pids") && !isHierarchy(dir, "memory") && !isHierarchy(dir, "unified") {
				continue
			}
			procs, err := os.ReadFile(filepath.Join(dir, "bm2.slice/bm2-x.slice/bm2-same.service/cgroup.procs"))
			if err != nil || len(strings.Fields(string(procs))) != 1 {
				t.Errorf("sandbox %d: %s holds %q (%v), want exactly its own process", i, dir, procs, err)
			}
		}
	}
}

func TestSweep(t *testing.T) {
	RequireRoot(t)
	start, err := selfStartTime()
	if err != nil {
		t.Fatal(err)
	}
	// Our own pid with a wrong start time: a previous process that had the
	// same pid, long gone.
	id := fmt.Sprintf("%s%d-%d-%d", IDPrefix, os.Getpid(), start+1, 999)
	if ownerAlive(id) {
		t.Fatalf("ownerAlive(%s) = true", id)
	}
	liveID := fmt.Sprintf("%s%d-%d-%d", IDPrefix, os.Getpid(), start, 999)
	if !ownerAlive(liveID) {
		t.Fatalf("ownerAlive(%s) = false", liveID)
	}
	hs, err := cgroupHierarchies()
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := createCgroups(hs, id)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroups(context.Background(), dirs) })
	live, err := createCgroups(hs, liveID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeCgroups(context.Background(), live) })
	// A process and a nested cgroup in the stale sandbox.
	for _, d := range dirs {
		if err := os.Mkdir(filepath.Join(d, "system.slice"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m := &Machine{}
	for _, d := range dirs {
		m.procs = append(m.procs, filepath.Join(d, "cgroup.procs"))
	}
	sleeper := exec.Command("/bin/sh", m.joinArgs([]string{"sleep", "600"})...)
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill() })
	exited := make(chan error, 1)
	go func() { exited <- sleeper.Wait() }()
	// Wait until it has joined (exec'd sleep).
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := pollUntil(ctx, 5*time.Millisecond, func() (bool, error) {
		data, err := os.ReadFile(m.procs[0])
		return err == nil && strings.TrimSpace(string(data)) == strconv.Itoa(sleeper.Process.Pid), nil
	}); err != nil {
		t.Fatalf("sleeper never joined the stale cgroup: %v", err)
	}
	staleStaging := filepath.Join(os.TempDir(), id+"-12345")
	liveStaging := filepath.Join(os.TempDir(), liveID+"-12345")
	for _, d := range []string{staleStaging, liveStaging} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, bootScript), []byte(bootInner), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { removeStaging(liveStaging); removeStaging(staleStaging) })

	if err := Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err == nil {
			t.Error("stale sandbox process exited normally, want killed")
		}
	case <-ctx.Done():
		t.Fatal("stale sandbox process not killed")
	}
	for _, d := range append(dirs, staleStaging) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stale %s still there: %v", d, err)
		}
	}
	for _, d := range append(live, liveStaging) {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("live sandbox's %s swept: %v", d, err)
		}
	}
}

func TestUnescapeMountinfo(t *testing.T) {
	for in, want := range map[string]string{
		`/plain`:          "/plain",
		`/with\040space`:  "/with space",
		`/tab\011x`:       "/tab\tx",
		`/back\134slash`:  `/back\slash`,
		`/trailing\04`:    `/trailing\04`,
		`/not\999escaped`: `/not\999escaped`,
	} {
		if got := unescapeMountinfo(in); got != want {
			t.Errorf("unescapeMountinfo(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestTailBuffer(t *testing.T) {
	b := &tailBuffer{max: 5}
	b.Write([]byte("abc"))
	b.Write([]byte("defg"))
	if got := b.String(); got != "cdefg" {
		t.Errorf("tail = %q, want cdefg", got)
	}
}

func TestIDPatterns(t *testing.T) {
	if !idRE.MatchString("bm2-e2e-123-456-7") || idRE.MatchString("bm2-e2e-123-456-7-x") || idRE.MatchString("bm2-e2e-marker-1") {
		t.Error("idRE")
	}
	if sm := stagingRE.FindStringSubmatch("bm2-e2e-1-2-3-98765"); sm == nil || sm[1] != "bm2-e2e-1-2-3" {
		t.Errorf("stagingRE: %q", sm)
	}
}

// BenchmarkBootClose measures a sandbox's whole life: boot until systemd
// reports running, then teardown.
func BenchmarkBootClose(b *testing.B) {
	RequireRoot(b)
	var boot, teardown time.Duration
	for b.Loop() {
		start := time.Now()
		m, err := Boot(context.Background(), Options{})
		if err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if err := m.Close(); err != nil {
			b.Fatal(err)
		}
		boot += mid.Sub(start)
		teardown += time.Since(mid)
	}
	b.ReportMetric(float64(boot.Milliseconds())/float64(b.N), "boot-ms/op")
	b.ReportMetric(float64(teardown.Milliseconds())/float64(b.N), "teardown-ms/op")
}
