package sandbox

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// UnifiedFallback is where the sandbox mounts the cgroup v2 hierarchy on
// a host that has it mounted nowhere (a cgroup v1 host without the
// unified hierarchy): every sandbox then gets a cgroup v2 cgroup of its
// own, like one in each v1 hierarchy, and boot-inner.sh mounts it at
// /sys/fs/cgroup/unified inside, so that the booted systemd runs in hybrid
// mode with a cgroup v2 directory per unit, as on a unified host. It stays
// mounted for later sandboxes and Sweep; the hierarchy exists in the
// kernel anyway, the mount only shows it.
const UnifiedFallback = "/run/bm2-e2e-unified"

// ensureUnified mounts the cgroup v2 hierarchy at UnifiedFallback unless
// it is mounted somewhere already.
func ensureUnified() error {
	ms, err := cgroupMounts()
	if err != nil {
		return err
	}
	if slices.ContainsFunc(ms, func(m cgroupMount) bool { return m.v2 }) {
		return nil
	}
	if err := os.MkdirAll(UnifiedFallback, 0o755); err != nil {
		return fmt.Errorf("mount the cgroup v2 hierarchy: %w", err)
	}
	err = syscall.Mount("cgroup2", UnifiedFallback, "cgroup2", syscall.MS_NOSUID|syscall.MS_NODEV|syscall.MS_NOEXEC, "")
	if err != nil {
		return fmt.Errorf("mount the cgroup v2 hierarchy at %s: %w", UnifiedFallback, err)
	}
	return nil
}

// hierarchy is one mounted cgroup hierarchy of the host.
type hierarchy struct {
	mount  string // where it is mounted, e.g. /sys/fs/cgroup/memory
	own    string // the calling process's cgroup in it, as a host path
	cpuset bool   // a v1 cpuset hierarchy (new cgroups need cpus and mems)
}

// cgroupHierarchies lists the host's mounted cgroup hierarchies and the
// calling process's cgroup in each, from /proc/self/mountinfo and
// /proc/self/cgroup.
func cgroupHierarchies() ([]hierarchy, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, fmt.Errorf("read own cgroups: %w", err)
	}
	var hs []hierarchy
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		// hierarchy-ID:controller-list:cgroup-path
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("parse /proc/self/cgroup line %q", line)
		}
		var ctrls []string
		if parts[1] != "" {
			ctrls = strings.Split(parts[1], ",")
		}
		i := slices.IndexFunc(mounts, func(m cgroupMount) bool { return m.serves(ctrls) })
		if i < 0 {
			continue // not mounted (e.g. net_cls on a v1 host): nothing to isolate
		}
		m := mounts[i]
		rel, ok := strings.CutPrefix(parts[2], m.root)
		if !ok {
			return nil, fmt.Errorf("own cgroup %s of %s is outside its mount %s (root %s)", parts[2], parts[1], m.point, m.root)
		}
		hs = append(hs, hierarchy{
			mount:  m.point,
			own:    filepath.Join(m.point, rel),
			cpuset: slices.Contains(ctrls, "cpuset"),
		})
	}
	if len(hs) == 0 {
		return nil, errors.New("no mounted cgroup hierarchy found")
	}
	return hs, nil
}

type cgroupMount struct {
	point, root string
	v2          bool
	opts        []string // super options, e.g. rw,name=systemd
}

// serves reports whether m is the mount of the hierarchy that has exactly
// the controllers ctrls (none means the cgroup v2 hierarchy).
func (m cgroupMount) serves(ctrls []string) bool {
	if len(ctrls) == 0 {
		return m.v2
	}
	if m.v2 {
		return false
	}
	for _, c := range ctrls {
		if !slices.Contains(m.opts, c) {
			return false
		}
	}
	return true
}

// cgroupMounts lists the cgroup mounts of the calling process's mount
// namespace, one per hierarchy, preferring mounts under /sys/fs/cgroup.
func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	defer f.Close()
	seen := map[string]int{} // device -> index in ms
	var ms []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		a, b := strings.Fields(pre), strings.Fields(post)
		if len(a) < 5 || len(b) < 3 || (b[0] != "cgroup" && b[0] != "cgroup2") {
			continue
		}
		m := cgroupMount{
			point: unescapeMountinfo(a[4]),
			root:  unescapeMountinfo(a[3]),
			v2:    b[0] == "cgroup2",
			opts:  strings.Split(b[2], ","),
		}
		if m.root == "/" {
			m.root = ""
		}
		if i, dup := seen[a[2]]; dup {
			if !strings.HasPrefix(ms[i].point, "/sys/fs/cgroup/") && strings.HasPrefix(m.point, "/sys/fs/cgroup/") {
				ms[i] = m
			}
			continue
		}
		seen[a[2]] = len(ms)
		ms = append(ms, m)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read mount table: %w", err)
	}
	return ms, nil
}

// unescapeMountinfo undoes the octal escaping of spaces, tabs, newlines and
// backslashes in /proc/*/mountinfo paths.
func unescapeMountinfo(s string) string {
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

// createCgroups creates the cgroup dir of sandbox id in every hierarchy and
// returns the created dirs. On error it removes what it created.
func createCgroups(hs []hierarchy, id string) ([]string, error) {
	var dirs []string
	for _, h := range hs {
		dir := filepath.Join(h.own, id)
		if err := os.Mkdir(dir, 0o755); err != nil {
			err = fmt.Errorf("create cgroup: %w", err)
			return nil, errors.Join(err, removeCgroups(context.Background(), dirs))
		}
		dirs = append(dirs, dir)
		if h.cpuset {
			// A new v1 cpuset cgroup has no CPUs and memory nodes, and
			// nothing can join it until it gets some.
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				v, err := os.ReadFile(filepath.Join(h.own, f))
				if err == nil {
					err = os.WriteFile(filepath.Join(dir, f), v, 0o644)
				}
				if err != nil {
					err = fmt.Errorf("set up cpuset cgroup %s: %w", dir, err)
					return nil, errors.Join(err, removeCgroups(context.Background(), dirs))
				}
			}
		}
	}
	return dirs, nil
}

// cgroupRemoveTimeout bounds how long removeCgroups waits for the kernel to
// release cgroups whose last process has just been killed.
const cgroupRemoveTimeout = 5 * time.Second

// removeCgroups removes the cgroup trees rooted at dirs, deepest first,
// retrying while the kernel still reports them busy (it frees cgroups of
// killed processes asynchronously) until ctx is done or cgroupRemoveTimeout
// has passed. It never removes anything outside dirs.
func removeCgroups(ctx context.Context, dirs []string) error {
	ctx, cancel := context.WithTimeout(ctx, cgroupRemoveTimeout)
	defer cancel()
	var errs []error
	for _, dir := range dirs {
		var last error
		if err := pollUntil(ctx, 10*time.Millisecond, func() (bool, error) {
			last = removeTree(dir)
			return last == nil, nil
		}); err != nil {
			errs = append(errs, fmt.Errorf("remove cgroup %s: %w (gave up: %w)", dir, last, err))
		}
	}
	return errors.Join(errs...)
}

// removeTree rmdirs every directory under and including root, deepest first.
// Cgroup directories cannot be removed with their files, and rmdir is what
// the kernel expects. A root that no longer exists is not an error.
func removeTree(root string) error {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- { // WalkDir lists parents first
		if err := syscall.Rmdir(dirs[i]); err != nil && !errors.Is(err, syscall.ENOENT) {
			return &fs.PathError{Op: "rmdir", Path: dirs[i], Err: err}
		}
	}
	return nil
}

// pollUntil calls cond every interval until it returns true or an error, or
// until ctx is done, in which case it returns ctx's error.
func pollUntil(ctx context.Context, interval time.Duration, cond func() (bool, error)) error {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		done, err := cond()
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-t.C:
		}
	}
}
