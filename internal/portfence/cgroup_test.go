package portfence

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/bm2dev/bm2/internal/testutil"
)

const (
	hybridInfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	unifiedInfo = `25 23 0:22 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
`
	legacyInfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
50 23 0:38 / /mnt/some\040where rw,relatime - cgroup2 cgroup2 rw
`
)

func TestUnifiedMount(t *testing.T) {
	for _, tc := range []struct {
		name, info, point string
	}{
		{"hybrid", hybridInfo, "/sys/fs/cgroup/unified"},
		{"unified", unifiedInfo, "/sys/fs/cgroup"},
	} {
		point, root, err := UnifiedMount(tc.info)
		if err != nil || point != tc.point || root != "/" {
			t.Errorf("%s: UnifiedMount = %q, %q, %v; want %q, /", tc.name, point, root, err, tc.point)
		}
	}
	// A cgroup2 mount elsewhere is not where systemd keeps its units.
	if _, _, err := UnifiedMount(legacyInfo); !errors.Is(err, ErrNoUnified) {
		t.Errorf("legacy: err = %v, want ErrNoUnified", err)
	}
}

func TestUnitDir(t *testing.T) {
	const unit = "bm2@my-api-0.service"
	cg := "/bm2.slice/bm2-my\\x2dapi.slice/" + unit
	if got, err := UnitDir("/sys/fs/cgroup/unified", "/", cg, unit); err != nil || got != "/sys/fs/cgroup/unified"+cg {
		t.Errorf("UnitDir = %q, %v", got, err)
	}
	// A mount rooted below the hierarchy's root.
	if got, err := UnitDir("/sys/fs/cgroup", "/machine", "/machine/bm2.slice/"+unit, unit); err != nil || got != "/sys/fs/cgroup/bm2.slice/"+unit {
		t.Errorf("UnitDir under a root = %q, %v", got, err)
	}
	if _, err := UnitDir("/sys/fs/cgroup", "/machine", "/machinex/"+unit, unit); err == nil {
		t.Error("UnitDir outside the mount's root: no error")
	}
	// Legacy mode: the v2 path is whatever the process inherited, not
	// the unit's.
	if _, err := UnitDir("/sys/fs/cgroup/unified", "/", "/", unit); !errors.Is(err, ErrNoUnified) {
		t.Errorf("UnitDir in legacy mode: err = %v, want ErrNoUnified", err)
	}
	own, err := OwnPath("9:name=systemd:/x\n0::/bm2.slice/" + unit + "\n")
	if err != nil || own != "/bm2.slice/"+unit {
		t.Errorf("OwnPath = %q, %v", own, err)
	}
	if _, err := OwnPath("9:name=systemd:/x\n"); !errors.Is(err, ErrNoUnified) {
		t.Errorf("OwnPath without a 0:: line: err = %v", err)
	}
}

func TestPorts(t *testing.T) {
	got, err := Ports([]int{9229, 3000, 0, 3000})
	if err != nil || len(got) != 2 || got[0] != 3000 || got[1] != 9229 {
		t.Errorf("Ports = %v, %v", got, err)
	}
	for _, bad := range [][]int{{70000}, {-1}, {0}, nil} {
		if _, err := Ports(bad); err == nil {
			t.Errorf("Ports(%v): no error", bad)
		}
	}
}

// The step's command line: an instance and ports, nothing else; outside
// an instance's cgroup it says why there is no fence and lets the start
// go on.
func TestMainArgs(t *testing.T) {
	var out strings.Builder
	for _, bad := range [][]string{nil, {"../x", "3000"}, {"api-0", "0"}, {"api-0", "70000"}, {"api-0", "http"}} {
		if err := Main(bad, &out, nil); err == nil {
			t.Errorf("Main(%q): no error", bad)
		}
	}
	for _, bad := range []string{"bm2@api-0.service", "bm2--health.service", "bm2-../x-health.service", "x-health.service"} {
		if err := Main([]string{"--no-bind", bad}, &out, nil); err == nil {
			t.Errorf("Main(--no-bind %q): no error", bad)
		}
	}
	// This test runs in no unit's cgroup: no fence, no error, one line.
	if err := Main([]string{"api-0", "3000", "9229"}, &out, nil); err != nil {
		t.Fatalf("Main outside a unit: %v", err)
	}
	if !strings.Contains(out.String(), "bm2-probe fence: ports not fenced: ") || !strings.Contains(out.String(), "bm2@api-0.service starts without the fence") {
		t.Errorf("output %q", out.String())
	}
}

// As anyone but root, whether a fence is attached cannot be known, and
// says so (bm2 status then says "run as root").
func TestAttachedNotRoot(t *testing.T) {
	if testutil.Unprivileged(t) {
		return
	}
	if _, err := Attached("/sys/fs/cgroup"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Attached as a normal user: %v, want fs.ErrPermission", err)
	}
}
