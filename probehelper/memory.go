package probehelper

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// MemorySystemd is the part of systemd the memory check talks to
// (*sysd.Conn).
type MemorySystemd interface {
	Unit(ctx context.Context, name string) (sysd.Status, error)
	Units(ctx context.Context, names []string) ([]sysd.Status, error)
	// Trigger queues a start of the unit and does not wait for it.
	Trigger(ctx context.Context, unit string) error
}

// MemoryChecker is one run of `bm2-probe memory <project>`, the oneshot
// bm2-<project>-memory.service: it reads every running instance's
// memory (systemd's MemoryCurrent, its cgroup's), reads again after
// config.MemoryConfirm those above the limit, and for each one still
// above in the same run emits memory_restart, writes a crash.log line and
// starts bm2-<project>-reload@<i>.service: `bm2 reload <project>-<i>`,
// which restarts it the way reload does (in cluster mode beside the
// surge), holding the project's reload lock. Its limit comes from its
// own service's Environment= (BM2_MEMORY_RESTART), not from the project
// file.
type MemoryChecker struct {
	Project string
	Systemd MemorySystemd
	Events  journal.Sink
	Crashes crashlog.Logs
	Now     func() time.Time
	// Sleep waits d or until ctx ends (tests: no wait).
	Sleep func(ctx context.Context, d time.Duration) error
	Log   func(format string, args ...any)
}

func (c *MemoryChecker) logf(format string, args ...any) {
	if c.Log != nil {
		c.Log(format, args...)
	}
}

// limit reads BM2_MEMORY_RESTART from the memory service's Environment=.
func (c *MemoryChecker) limit(ctx context.Context) (uint64, error) {
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

// above returns the running instances of sts (named by names) above
// limit, which must be neither unknown nor zero.
func above(names []string, sts []sysd.Status, limit uint64) []over {
	var out []over
	for k, st := range sts {
		_, index, ok := units.ParseInstance(names[k])
		if !ok || index < 0 || !st.Running() || st.InvocationID == "" {
			continue
		}
		if m := st.MemoryCurrent; m != sysd.Unknown && m > limit {
			out = append(out, over{index: index, invocation: st.InvocationID, memory: m, gid: st.GID})
		}
	}
	return out
}

// Run is one check of every instance the target wants (not the surge:
// it runs only during a reload, which replaces what it serves for).
func (c *MemoryChecker) Run(ctx context.Context) error {
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
	first := above(names, sts, limit)
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
	second := above(again, sts, limit)
	var errs []error
	for _, o := range second {
		for _, f := range first {
			if f.index == o.index && f.invocation == o.invocation {
				errs = append(errs, c.restart(ctx, o, f.memory, limit))
			}
		}
	}
	return errors.Join(errs...)
}

// restart is the reaction to an instance whose memory stayed above the
// limit: unless a reload of it is under way already, the event, a
// crash.log line and the start of its reload.
func (c *MemoryChecker) restart(ctx context.Context, o over, firstMemory, limit uint64) error {
	id := units.InstanceID(c.Project, o.index)
	reload := units.ReloadInstance(c.Project, o.index)
	if st, err := c.Systemd.Unit(ctx, reload); err == nil && !st.Down() {
		c.logf("%s: %s above memory_restart, its reload (%s) is under way", id, config.FormatBytes(o.memory), reload)
		return nil
	}
	what := fmt.Sprintf("%s, above memory_restart (%s) at two readings %s apart (%s first)",
		config.FormatBytes(o.memory), config.FormatBytes(limit), config.MemoryConfirm, config.FormatBytes(firstMemory))
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
	if err := c.Systemd.Trigger(ctx, reload); err != nil {
		errs = append(errs, fmt.Errorf("start %s: %w", reload, err))
	} else {
		c.logf("%s: %s; %s started", id, what, reload)
	}
	return errors.Join(errs...)
}

// sleepCtx waits d, or until ctx ends (its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// memoryCommand is `bm2-probe memory <project>`, as
// bm2-<project>-memory.service runs it (root in system scope, the user in
// user scope).
func memoryCommand(ctx context.Context, args []string, c *MemoryChecker, scope layout.Layout) error {
	if len(args) != 2 {
		return fmt.Errorf("usage: bm2-probe memory PROJECT (as bm2-PROJECT-memory.service runs it)")
	}
	if !config.ValidName(args[1]) {
		return fmt.Errorf("%q is not a project name", args[1])
	}
	bus, err := Connect(ctx, scope)
	if err != nil {
		return err
	}
	defer bus.Close()
	c.Project, c.Systemd = args[1], bus
	if c.Sleep == nil {
		c.Sleep = sleepCtx
	}
	if err := c.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
