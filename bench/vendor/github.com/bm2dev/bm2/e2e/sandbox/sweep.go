package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var (
	idRE      = regexp.MustCompile(`^` + IDPrefix + `(\d+)-(\d+)-\d+$`)
	stagingRE = regexp.MustCompile(`^(` + IDPrefix + `\d+-\d+-\d+)-\d+$`)
)

// Sweep cleans up after sandboxes whose owning process is gone, for example
// because a previous test run crashed or was killed: it SIGKILLs every
// process left in their cgroups, removes the cgroups and removes their empty
// staging directories. Sandboxes are recognised by the IDPrefix cgroup names
// in every mounted hierarchy; those of live processes, including parallel
// test binaries, are left alone. New runs Sweep once per process.
func Sweep(ctx context.Context) error {
	// On a host without the cgroup v2 hierarchy mounted, the sandboxes'
	// v2 cgroups are found through UnifiedFallback.
	if err := ensureUnified(); err != nil {
		return fmt.Errorf("sweep sandboxes: %w", err)
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return fmt.Errorf("sweep sandboxes: %w", err)
	}
	stale := map[string][]string{} // id -> cgroup dirs
	var errs []error
	for _, m := range mounts {
		err := filepath.WalkDir(m.point, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					return nil // a cgroup removed while we walk
				}
				return err
			}
			if !d.IsDir() {
				return nil
			}
			if id := d.Name(); idRE.MatchString(id) {
				if !ownerAlive(id) {
					stale[id] = append(stale[id], p)
				}
				return fs.SkipDir
			}
			return nil
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("walk cgroup hierarchy %s: %w", m.point, err))
		}
	}
	ids := make([]string, 0, len(stale))
	for id := range stale {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		dirs := stale[id]
		for _, dir := range dirs {
			if err := killCgroup(dir, id); err != nil {
				errs = append(errs, err)
			}
		}
		if err := removeCgroups(ctx, dirs); err != nil {
			errs = append(errs, fmt.Errorf("stale sandbox %s: %w", id, err))
		}
	}

	ents, err := os.ReadDir(os.TempDir())
	if err != nil {
		errs = append(errs, fmt.Errorf("list staging dirs: %w", err))
	}
	for _, e := range ents {
		sm := stagingRE.FindStringSubmatch(e.Name())
		if sm == nil || !e.IsDir() || ownerAlive(sm[1]) {
			continue
		}
		if err := removeStaging(filepath.Join(os.TempDir(), e.Name())); err != nil {
			errs = append(errs, fmt.Errorf("stale sandbox %s: %w", sm[1], err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sweep sandboxes: %w", err)
	}
	return nil
}

// ownerAlive reports whether the process that created sandbox id is still
// running, by its pid and start time.
func ownerAlive(id string) bool {
	sm := idRE.FindStringSubmatch(id)
	if sm == nil {
		return false
	}
	pid, err1 := strconv.Atoi(sm[1])
	start, err2 := strconv.ParseUint(sm[2], 10, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	got, err := startTime(pid)
	return err == nil && got == start
}

// killCgroup SIGKILLs every process in the cgroup tree dir of sandbox id.
// Each process is pinned (os.FindProcess uses a pidfd) and checked to still
// belong to the sandbox before it is signalled, so a recycled pid is never
// hit.
func killCgroup(dir, id string) error {
	var errs []error
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		for _, f := range strings.Fields(string(data)) {
			pid, err := strconv.Atoi(f)
			if err != nil {
				continue
			}
			proc, err := os.FindProcess(pid)
			if err != nil {
				continue
			}
			cg, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
			if err == nil && (strings.Contains(string(cg), "/"+id+"/") || strings.Contains(string(cg), "/"+id+"\n")) {
				if err := proc.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
					errs = append(errs, fmt.Errorf("kill %d of stale sandbox %s: %w", pid, id, err))
				}
			}
			proc.Release()
		}
		return nil
	})
	if err != nil {
		errs = append(errs, fmt.Errorf("list processes of stale sandbox %s: %w", id, err))
	}
	return errors.Join(errs...)
}
