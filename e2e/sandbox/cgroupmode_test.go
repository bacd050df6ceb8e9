package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// unitCgroupV2 is where the cgroup v2 directory of a unit is inside, ""
// when it has none.
const unitCgroupV2 = `cg=$(systemctl show -P ControlGroup "$1")
for r in /sys/fs/cgroup/unified /sys/fs/cgroup; do
	if [ "$(stat -f -c %T $r 2>/dev/null)" = cgroup2fs ] && [ -d "$r$cg" ] && [ "$cg" != "" ] && [ "$cg" != / ]; then echo "$r$cg"; exit 0; fi
done`

func unitV2Dir(t *testing.T, m *Machine, unit string) string {
	t.Helper()
	out := m.MustSh(t, fmt.Sprintf("set -- %q\n%s", unit, unitCgroupV2))
	return strings.TrimSpace(out)
}

// A sandbox's systemd keeps a cgroup v2 directory per unit (hybrid mode
// on a host with v1 hierarchies, unified on a v2 host): bm2's port fence
// attaches there. With Legacy it keeps none, as on a v1 host without the
// unified hierarchy.
func TestCgroupModes(t *testing.T) {
	m := New(t, Options{})
	m.MustSh(t, "systemd-run --quiet --unit=cgmode -p Slice=bm2-x.slice sleep 600")
	dir := unitV2Dir(t, m, "cgmode.service")
	if !strings.HasSuffix(dir, "/bm2.slice/bm2-x.slice/cgmode.service") {
		t.Fatalf("no cgroup v2 directory for a unit: %q\n%s", dir, m.MustSh(t, "mount | grep cgroup"))
	}
	if procs := m.MustSh(t, "cat "+dir+"/cgroup.procs"); strings.TrimSpace(procs) == "" {
		t.Errorf("%s holds no process", dir)
	}
	t.Logf("hybrid/unified: %s", dir)

	l := New(t, Options{Legacy: true})
	l.MustSh(t, "systemd-run --quiet --unit=cgmode -p Slice=bm2-x.slice sleep 600")
	if dir := unitV2Dir(t, l, "cgmode.service"); dir != "" {
		t.Errorf("legacy mode: a cgroup v2 directory for a unit: %q", dir)
	}
	if out := l.MustSh(t, "mount -t cgroup2"); strings.TrimSpace(out) != "" && !strings.Contains(out, " on /sys/fs/cgroup type") {
		t.Errorf("legacy mode: cgroup2 mounted inside:\n%s", out)
	}
}

// On a host that has the cgroup v2 hierarchy mounted nowhere (a cgroup v1
// host, simulated in a mount namespace of its own without the host's
// /sys/fs/cgroup/unified), the sandbox mounts it itself and its systemd
// still runs in hybrid mode; closing it removes its v2 cgroup.
func TestHybridOnV1Host(t *testing.T) {
	RequireRoot(t)
	if os.Getenv("BM2_E2E_V1_HOST") != "1" {
		// The child's mount goes with its namespace; the mount point it
		// made on the host's /run is removed here.
		if _, err := os.Stat(UnifiedFallback); os.IsNotExist(err) {
			defer os.Remove(UnifiedFallback)
		}
		out, err := exec.Command("mount", "-t", "cgroup2").Output()
		if err != nil {
			t.Fatal(err)
		}
		script := `exec "$0" -test.run='^TestHybridOnV1Host$' -test.v`
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if f := strings.Fields(line); len(f) > 2 && f[1] == "on" {
				script = fmt.Sprintf("umount %q && %s", f[2], script)
			}
		}
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", script, os.Args[0])
		cmd.Env = append(os.Environ(), "BM2_E2E_V1_HOST=1")
		out, err = cmd.CombinedOutput()
		t.Logf("in a mount namespace without cgroup2 mounts:\n%s", out)
		if err != nil || !strings.Contains(string(out), "--- PASS: TestHybridOnV1Host") {
			t.Fatalf("the test in a mount namespace without cgroup2 mounts: %v", err)
		}
		return
	}
	ms, err := cgroupMounts()
	if err != nil {
		t.Fatal(err)
	}
	for _, mt := range ms {
		if mt.v2 && mt.point != UnifiedFallback {
			t.Fatalf("cgroup2 still mounted at %s", mt.point)
		}
	}
	m, err := Boot(t.Context(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	var v2 string
	for _, d := range m.cgroups {
		if strings.HasPrefix(d, UnifiedFallback+"/") {
			v2 = d
		}
	}
	if v2 == "" {
		t.Fatalf("no v2 cgroup under %s among %v", UnifiedFallback, m.cgroups)
	}
	m.MustSh(t, "systemd-run --quiet --unit=cgmode -p Slice=bm2-x.slice sleep 600")
	if dir := unitV2Dir(t, m, "cgmode.service"); !strings.HasPrefix(dir, "/sys/fs/cgroup/unified/") {
		t.Fatalf("no cgroup v2 directory for a unit: %q\n%s", dir, m.MustSh(t, "mount | grep cgroup"))
	}
	if _, err := os.Stat(v2 + "/bm2.slice/bm2-x.slice/cgmode.service"); err != nil {
		t.Errorf("the unit's cgroup is not in the sandbox's v2 cgroup on the host: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(v2); !os.IsNotExist(err) {
		t.Errorf("%s left after Close: %v", v2, err)
	}
}
