package scope

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// cgroupRoot is where the kernel's control groups are mounted.
const cgroupRoot = "/sys/fs/cgroup"

// AccountingGap says why a user's instances have no memory or CPU figures
// (systemd reports them only from a control group that has the kernel's
// memory and cpu controllers), in one sentence; "" when nothing stands in
// the way. bm2 list prints it in user scope instead of leaving "-"
// unexplained.
//
// On cgroup v1 (the legacy or hybrid hierarchy) the kernel delegates no
// controller to an unprivileged manager: systemd --user can count
// nothing, whatever its units say. On cgroup v2 it is systemd's
// Delegate= of user@UID.service that decides which controllers the
// user's manager gets.
func AccountingGap(uid int) string { return accountingGap(cgroupRoot, uid) }

func accountingGap(root string, uid int) string {
	if _, err := os.Stat(filepath.Join(root, "cgroup.controllers")); err != nil {
		which := "the legacy hierarchy"
		if _, err := os.Stat(filepath.Join(root, "unified", "cgroup.controllers")); err == nil {
			which = "the hybrid hierarchy"
		}
		return fmt.Sprintf("MEM and CPU are unknown in user scope on this host: its control groups are cgroup v1 (%s), "+
			"and the kernel delegates memory and CPU accounting to a user's systemd on cgroup v2 only "+
			"(systemd.unified_cgroup_hierarchy=1 on the kernel command line); `bm2 --system list` counts system projects", which)
	}
	svc := fmt.Sprintf("user@%d.service", uid)
	data, err := os.ReadFile(filepath.Join(root, "user.slice", fmt.Sprintf("user-%d.slice", uid), svc, "cgroup.controllers"))
	if err != nil {
		return "" // not where systemd puts it: nothing to say for sure
	}
	have := strings.Fields(string(data))
	var missing []string
	for _, c := range []string{"memory", "cpu"} {
		if !slices.Contains(have, c) {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	what := map[string]string{"memory": "MEM is", "cpu": "CPU is"}[missing[0]]
	if len(missing) == 2 {
		what = "MEM and CPU are"
	}
	return fmt.Sprintf("%s unknown in user scope on this host: systemd does not delegate the %s controller to %s "+
		"(its Delegate=; an administrator can add it with `systemctl edit user@.service`: [Service] Delegate=pids memory cpu)",
		what, strings.Join(missing, " and "), svc)
}
