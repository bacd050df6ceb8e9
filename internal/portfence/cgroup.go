package portfence

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"
)

// ErrNoUnified is the host reason for no fence: systemd keeps no cgroup v2
// directory per unit (a cgroup v1 host without the unified hierarchy).
var ErrNoUnified = errors.New("cgroup v1 host without the unified hierarchy")

// UnifiedMount is where the cgroup v2 hierarchy is mounted: /sys/fs/cgroup
// on a unified host, /sys/fs/cgroup/unified on a hybrid one, from
// mountinfo (the text of /proc/self/mountinfo). It returns the mount point
// and the root of the mount in the hierarchy; ErrNoUnified when neither is
// a cgroup2 mount.
func UnifiedMount(mountinfo string) (point, root string, err error) {
	found := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(mountinfo))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 1 || b[0] != "cgroup2" {
			continue
		}
		// A later mount on the same point hides an earlier one.
		found[unescape(a[4])] = unescape(a[3])
	}
	for _, p := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/unified"} {
		if r, ok := found[p]; ok {
			return p, r, nil
		}
	}
	return "", "", ErrNoUnified
}

// OwnPath is the cgroup v2 path in procCgroup (the text of
// /proc/self/cgroup): its "0::" line.
func OwnPath(procCgroup string) (string, error) {
	for _, line := range strings.Split(procCgroup, "\n") {
		if p, ok := strings.CutPrefix(line, "0::"); ok {
			return p, nil
		}
	}
	return "", ErrNoUnified
}

// UnitDir is the directory of the unit's cgroup v2 cgroup, given the v2
// mount (UnifiedMount) and the v2 path of a process of the unit
// (OwnPath). On a host where systemd tracks units only in cgroup v1
// (legacy mode) the v2 path is not the unit's: ErrNoUnified.
func UnitDir(point, root, cgPath, unit string) (string, error) {
	if path.Base(cgPath) != unit {
		return "", fmt.Errorf("%w: the cgroup v2 path %q is not %s's", ErrNoUnified, cgPath, unit)
	}
	rel := cgPath
	if root != "/" {
		r, ok := strings.CutPrefix(cgPath, root)
		if !ok || (r != "" && r[0] != '/') {
			return "", fmt.Errorf("cgroup %s is outside the cgroup2 mount at %s (root %s)", cgPath, point, root)
		}
		rel = r
	}
	return path.Join(point, rel), nil
}

// SelfUnitDir is UnitDir for the calling process, which must run in the
// unit's cgroup (an ExecStartPre= does).
func SelfUnitDir(unit string) (string, error) {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	point, root, err := UnifiedMount(string(mi))
	if err != nil {
		return "", err
	}
	cg, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	own, err := OwnPath(string(cg))
	if err != nil {
		return "", err
	}
	return UnitDir(point, root, strings.TrimSpace(own), unit)
}

// ControlGroupDir is the directory of a unit's cgroup v2 cgroup from the
// unit's ControlGroup property (as systemd reports it, relative to its own
// cgroup root), for a process in the same cgroup namespace as systemd.
func ControlGroupDir(controlGroup string) (string, error) {
	if controlGroup == "" || controlGroup[0] != '/' {
		return "", fmt.Errorf("no control group")
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	point, root, err := UnifiedMount(string(mi))
	if err != nil {
		return "", err
	}
	if root != "/" {
		return "", fmt.Errorf("the cgroup2 mount at %s shows only %s", point, root)
	}
	return path.Join(point, controlGroup), nil
}

// HostSupport is nil when this host can fence ports (a cgroup v2
// hierarchy is mounted where systemd uses it), or the reason it cannot.
func HostSupport() error {
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return err
	}
	_, _, err = UnifiedMount(string(mi))
	return err
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if c, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(c))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
