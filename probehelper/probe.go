package probehelper

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/probe"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// probeCommand is `bm2-probe <project>-<i>`, run by
// bm2-probe@<project>-<i>.service after every start of the instance.
//
// It takes what it checks from what systemd actually runs — the instance's
// BM2_APP_PORT, its UID and GID — so a project file edited without a
// daemon-reload cannot make it probe the wrong port or as the wrong user;
// only the notification settings come from the project file, read when
// an event is emitted (package notify).
func probeCommand(ctx context.Context, e *env, args []string) error {
	out := e.stdout
	if len(args) != 1 {
		return fmt.Errorf("usage: bm2-probe PROJECT-INDEX (as bm2-probe@PROJECT-INDEX.service runs it)")
	}
	project, index, ok := units.ParseInstance(args[0])
	if !ok {
		return fmt.Errorf("%q is not an instance name like api-0", args[0])
	}
	err := probeInstance(ctx, e, project, index)
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// SIGTERM before a verdict: the instance was stopped or restarted
		// (PartOf=), and its next start, if any, brings a probe run of its
		// own. A reaction under way does not end here (it ignores ctx).
		fmt.Fprintf(out, "%s: stopped with its instance\n", units.InstanceID(project, index))
		return nil
	}
	return err
}

func probeInstance(ctx context.Context, e *env, project string, index int) error {
	out, scope := e.stdout, e.scope
	// Beside the probe: what exit hooks and port fences left for the
	// journal (the crash of the run before this one, as a rule), now and
	// whenever a run the probe judges ends (a crash loop restarts under
	// one probe); one asked for as the probe ends still runs.
	relayer := relay.StartBackground(ctx, scope, out)
	defer relayer.Stop()
	// The connection must outlive a SIGTERM (ctx): the probe that stops its
	// project is stopped with it (PartOf=) and still has to see its
	// reaction through; a connection tied to ctx would close under it.
	bus, err := Connect(context.WithoutCancel(ctx), scope)
	if err != nil {
		return err
	}
	defer bus.Close()
	unit := units.Instance(project, index)
	st, err := bus.Unit(ctx, unit)
	if err != nil {
		return err
	}
	if st.Gone() {
		fmt.Fprintf(out, "%s is not running: nothing to probe\n", unit)
		return nil
	}
	mode := config.ExecMode(st.Env("BM2_EXEC_MODE"))
	port, err := strconv.Atoi(st.Env("BM2_APP_PORT"))
	if err != nil && mode != config.Worker {
		return fmt.Errorf("%s has no BM2_APP_PORT (is it a bm2 instance? run %s daemon-reload)", unit, scope.Systemctl)
	}
	instances := index + 1
	if t, err := bus.Unit(ctx, units.Target(project)); err == nil {
		n := 0
		for _, w := range t.Wants {
			if p, _, ok := units.ParseInstance(w); ok && p == project {
				n++
			}
		}
		instances = max(n, instances)
	}
	minUptime := config.DefaultMinUptime
	if ms, err := strconv.ParseInt(st.Env("BM2_MIN_UPTIME_MS"), 10, 64); err == nil && ms >= 0 {
		minUptime = time.Duration(ms) * time.Millisecond
	}
	p := &probe.Probe{
		Project: project, Index: index, Instances: instances, Port: port,
		Fork: mode == config.Fork || mode == config.Worker, Worker: mode == config.Worker, MinUptime: minUptime,
		Interval: probe.DefaultInterval, Window: probe.DefaultWindow, Watch: probe.DefaultWatch,
		Systemd: bus, Clock: sysd.MonotonicClock{}, Check: reuseport.CheckPortAs,
		Events:   e.events(false),
		Verdicts: relay.NewVerdicts(scope),
		Crashes:  scope.CrashLogs,
		State:    scope.State(),
		Log:      journal.LogTo(out),
		Owns:     probe.OwnsListener,
		Runtime:  probe.RuntimeOf(st),
		Preload:  probe.Preloaded(st),
		Relay:    relayer.Kick,
	}
	if scope.IsUser() {
		self := identity.Self()
		p.Owner = &self
	} else if !p.Fork {
		// Cluster mode, system scope: each confirmed run's listener goes
		// into the port's kernel-steered turn (bm2-steer@.service).
		steerUnit := units.Steer(project, index)
		p.Steer = func(ctx context.Context) error { return bus.StartQueued(ctx, steerUnit) }
	}
	if diag, err := sockdiag.Open(); err == nil {
		defer diag.Close()
		p.Listeners, p.Addrs = probe.DiagListeners(diag), probe.DiagAddrs(diag)
	} else {
		fmt.Fprintf(out, "%s: %v; bind tests only\n", units.InstanceID(project, index), err)
	}
	// Stopping waits for SIGTERM, then SIGKILL after each instance's TimeoutStopSec.
	runCtx, cancel := context.WithTimeout(ctx, probe.DefaultWindow+minUptime+st.TimeoutStop+30*time.Second)
	defer cancel()
	start := time.Now()
	outcome, err := p.Run(runCtx)
	if outcome == probe.Gone && ctx.Err() != nil {
		fmt.Fprintf(out, "%s port %d: stopped with its instance after %v\n", units.InstanceID(project, index), port, time.Since(start).Round(time.Millisecond))
		return nil
	}
	budget := ""
	if p.Reset {
		budget = "; healthy run, restart budget reset"
	}
	fmt.Fprintf(out, "%s port %d: %s after %v%s\n", units.InstanceID(project, index), port, outcome, time.Since(start).Round(time.Millisecond), budget)
	return err
}
