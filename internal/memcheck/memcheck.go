// Package memcheck is the memory check of a project with memory_restart:
// one run of `bm2-probe memory <project>`, the oneshot
// bm2-<project>-memory.service its timer starts ([Checker]).
package memcheck

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/safefs"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Systemd is the part of systemd the memory check talks to (*sysd.Conn).
type Systemd interface {
	sysd.Reader
	sysd.StartQueuer
}

// Checker is one run of `bm2-probe memory <project>`, the oneshot
// bm2-<project>-memory.service: it reads every running instance's
// memory (systemd's MemoryCurrent, its cgroup's), reads again after
// config.MemoryConfirm those above the limit, and for each one still
// above in the same run emits memory_restart, writes a crash.log line and
// starts bm2-<project>-reload@<i>.service: `bm2 reload <project>-<i>`,
// which restarts it the way reload does (in cluster mode beside the
// surge), holding the project's reload lock. Its limit comes from its
// own service's Environment= (BM2_MEMORY_RESTART), not from the project
// file.
type Checker struct {
	Project string
	Systemd Systemd
	Events  journal.Sink
	Crashes crashlog.Logs
	Now     func() time.Time
	// Sleep waits d or until ctx ends (tests: no wait).
	Sleep func(ctx context.Context, d time.Duration) error
	Log   journal.Logf
	// Dir is the project's memory directory (layout.Layout.MemoryDir),
	// which holds the runs already reported; CgroupRoot is where the
	// cgroup file systems are mounted (/sys/fs/cgroup).
	Dir        string
	CgroupRoot string
}

// limit reads BM2_MEMORY_RESTART from the memory service's Environment=.
func (c *Checker) limit(ctx context.Context) (uint64, error) {
	unit := units.MemoryService(c.Project)
	st, err := c.Systemd.Unit(ctx, unit)
	if err != nil {
		return 0, err
	}
	v := st.Env("BM2_MEMORY_RESTART")
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil || n < config.MinMemoryRestart || strconv.FormatUint(n, 10) != v {
		return 0, fmt.Errorf("%s has no BM2_MEMORY_RESTART of %d bytes or more: is it bm2-generator's? run daemon-reload", unit, uint64(config.MinMemoryRestart))
	}
	return n, nil
}

// over is an instance whose memory was above the limit at a reading.
type over struct {
	index      int
	invocation string
	memory     uint64
	gid        uint32
}

// above returns the running instances of sts (named by names) whose
// working set is above limit, and logs those whose memory systemd does
// not know. Runs younger than config.MemoryGrace are left alone: a start
// may peak (the bundle loaded, the JIT warming up), and a limit below
// what the app needs to run reloads it at most once a grace.
func (c *Checker) above(names []string, sts []sysd.Status, limit uint64, now time.Time) []over {
	var out []over
	for k, st := range sts {
		_, index, ok := units.ParseInstance(names[k])
		if !ok || index < 0 || !st.Running() || st.InvocationID == "" {
			continue
		}
		if st.MemoryCurrent == sysd.Unknown {
			c.Log.Printf("%s: systemd does not know its memory (no memory accounting here?): not checked", units.InstanceID(c.Project, index))
			continue
		}
		if start := startOf(st); !start.IsZero() && now.Sub(start) < config.MemoryGrace {
			continue
		}
		if m := WorkingSet(c.CgroupRoot, st.ControlGroup, st.MemoryCurrent); m > limit {
			out = append(out, over{index: index, invocation: st.InvocationID, memory: m, gid: st.GID})
		}
	}
	return out
}

// startOf is when the run started: its main process, else its unit.
func startOf(st sysd.Status) time.Time {
	if !st.ExecMainStart.IsZero() {
		return st.ExecMainStart
	}
	return st.ActiveEnter
}

// WorkingSet is the memory of the cgroup cg (systemd's MemoryCurrent,
// current) less its inactive page cache, which the kernel gives back
// without the app's help (kubelet's working set): an app that reads or
// writes files is not reloaded for the cache. It reads memory.stat of the
// v1 memory controller (total_inactive_file) or of the unified hierarchy
// (inactive_file) under root; when neither can be read, current.
func WorkingSet(root, cg string, current uint64) uint64 {
	if root == "" || cg == "" || strings.Contains(cg, "..") {
		return current
	}
	for _, f := range []struct{ dir, key string }{
		{filepath.Join(root, "memory", cg), "total_inactive_file"},
		{filepath.Join(root, cg), "inactive_file"},
		{filepath.Join(root, "unified", cg), "inactive_file"},
	} {
		data, err := os.ReadFile(filepath.Join(f.dir, "memory.stat"))
		if err != nil {
			continue
		}
		if n, ok := statValue(data, f.key); ok {
			if n >= current {
				return 0
			}
			return current - n
		}
	}
	return current
}

// statValue reads key's value from a memory.stat file.
func statValue(data []byte, key string) (uint64, bool) {
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if ok && k == key {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// Run is one check of every instance the target wants (not the surge:
// it runs only during a reload, which replaces what it serves for).
func (c *Checker) Run(ctx context.Context) error {
	limit, err := c.limit(ctx)
	if err != nil {
		return err
	}
	t, err := c.Systemd.Unit(ctx, units.Target(c.Project))
	if err != nil {
		return err
	}
	var names []string
	for _, w := range t.Wants {
		if p, i, ok := units.ParseInstance(w); ok && p == c.Project && i >= 0 {
			names = append(names, units.Instance(c.Project, i))
		}
	}
	if len(names) == 0 {
		return nil
	}
	sts, err := c.Systemd.Units(ctx, names)
	if err != nil {
		return err
	}
	first := c.above(names, sts, limit, c.Now())
	if len(first) == 0 {
		return nil
	}
	// A reading above the limit may be a peak the garbage collector is
	// about to give back: only one that stays above is acted on.
	if err := c.Sleep(ctx, config.MemoryConfirm); err != nil {
		return nil // stopped with the project: nothing to do
	}
	again := make([]string, len(first))
	for k, o := range first {
		again[k] = units.Instance(c.Project, o.index)
	}
	sts, err = c.Systemd.Units(ctx, again)
	if err != nil {
		return err
	}
	var stayed []over
	firstMemory := map[int]uint64{}
	for _, o := range c.above(again, sts, limit, c.Now()) {
		for _, f := range first {
			if f.index == o.index && f.invocation == o.invocation {
				stayed, firstMemory[o.index] = append(stayed, o), f.memory
			}
		}
	}
	if len(stayed) == 0 {
		return nil
	}
	// One reload of the project at a time (they take its lock): the one
	// using the most memory now, the others at the next check.
	slices.SortStableFunc(stayed, func(a, b over) int { return cmp.Compare(b.memory, a.memory) })
	if busy, err := c.Systemd.Loaded(ctx, []string{units.ReloadPattern(c.Project)}); err == nil {
		for _, u := range busy {
			if u.ActiveState == "activating" || u.ActiveState == "active" || u.ActiveState == "deactivating" {
				c.Log.Printf("%s is under way: the instances above memory_restart wait for the next check", u.Name)
				return nil
			}
		}
	}
	for _, o := range stayed[1:] {
		c.Log.Printf("%s: %s, above memory_restart: reloaded after %s, at a later check", units.InstanceID(c.Project, o.index),
			config.FormatBytes(o.memory), units.InstanceID(c.Project, stayed[0].index))
	}
	return c.restart(ctx, stayed[0], firstMemory[stayed[0].index], limit)
}

// restart is the reaction to an instance whose memory stayed above the
// limit: unless a reload of it is under way already, the event, a
// crash.log line and the start of its reload.
//
// The event and the line are for a run, once: a reload that failed (the
// project's lock held by a deploy) is started again at the next check
// without saying it again.
func (c *Checker) restart(ctx context.Context, o over, firstMemory, limit uint64) error {
	id := units.InstanceID(c.Project, o.index)
	reload := units.ReloadInstance(c.Project, o.index)
	what := fmt.Sprintf("%s, above memory_restart (%s) at two readings %s apart (%s first)",
		config.FormatBytes(o.memory), config.FormatBytes(limit), config.MemoryConfirm, config.FormatBytes(firstMemory))
	reported := c.reported()
	if reported[id] == o.invocation {
		if err := c.Systemd.StartQueued(ctx, reload); err != nil {
			return fmt.Errorf("start %s: %w", reload, err)
		}
		c.Log.Printf("%s: %s; %s started again", id, what, reload)
		return nil
	}
	ev := journal.Event{
		Kind: journal.MemoryRestart, Project: c.Project, Instance: id, Invocation: o.invocation,
		Reason: reason.MemoryRestart, Memory: o.memory, MemoryLimit: limit,
		Message: fmt.Sprintf("%s uses %s; reloading it", id, what),
		Detail:  fmt.Sprintf("%s runs `bm2 reload %s`: the instance is restarted the way reload does, its neighbours keep serving", reload, id),
	}
	errs := []error{c.Events.Emit(ev)}
	crash := crashlog.Crash{Time: c.Now(), Reason: reason.MemoryRestart, Detail: what}
	werr := c.Crashes.AppendGroup(c.Project, id, crash, crashlog.LogGroup(o.gid))
	errs = append(errs, journal.ReportWriteFailure(c.Events, c.Project, id, c.Crashes.Path(c.Project, id), werr,
		"its crash.log misses the line reason=memory_restart, which the journal has"))
	if err := c.Systemd.StartQueued(ctx, reload); err != nil {
		errs = append(errs, fmt.Errorf("start %s: %w", reload, err))
	} else {
		c.Log.Printf("%s: %s; %s started", id, what, reload)
	}
	reported[id] = o.invocation
	errs = append(errs, c.writeReported(reported))
	return errors.Join(errs...)
}

// reportedFile is where the runs already reported are kept: one line
// "<instance> <invocation>" each.
func (c *Checker) reportedFile() string { return filepath.Join(c.Dir, "reported") }

// reported reads the runs already reported; none when there is no file
// (or no Dir) or it is not one this service wrote.
func (c *Checker) reported() map[string]string {
	out := map[string]string{}
	if c.Dir == "" {
		return out
	}
	data, err := os.ReadFile(c.reportedFile())
	if err != nil || len(data) > 64<<10 {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		inst, inv, ok := strings.Cut(line, " ")
		if p, _, okInst := units.ParseInstance(inst); ok && okInst && p == c.Project && isHexID(inv) {
			out[inst] = inv
		}
	}
	return out
}

func (c *Checker) writeReported(m map[string]string) error {
	if c.Dir == "" {
		return nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + " " + m[k] + "\n")
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return fmt.Errorf("keep the reported runs: %w", err)
	}
	if err := safefs.Write(c.reportedFile(), []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("keep the reported runs: %w", err)
	}
	return nil
}

// isHexID tells an InvocationID: 32 hex digits.
func isHexID(s string) bool {
	if len(s) != 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !strings.ContainsRune("0123456789abcdef", rune(s[i])) {
			return false
		}
	}
	return true
}
