package probehelper

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/memcheck"
	"github.com/bm2dev/bm2/internal/notify"
	"github.com/bm2dev/bm2/internal/portfence"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/steer"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// runCommand is `bm2-probe run`, the ExecStart= wrapper, as the app's
// user (package hooks).
func runCommand(ctx context.Context, e *env, args []string) error {
	re := hooks.DefaultRunEnv()
	re.Stderr = e.stderr
	return hooks.Run(ctx, args, re)
}

// fenceCommand is `bm2-probe fence`, an ExecStartPre=+ (package
// portfence). System scope only (a user's manager cannot fence): the
// system's sink says a mark it cannot write. It runs in the instance's
// cgroup: its events are relayed.
func fenceCommand(ctx context.Context, e *env, args []string) error {
	return portfence.Main(args, e.stderr, newEvents(layout.System(), e.stderr, true))
}

// healthGetCommand is the health check's child, as the instances' user
// (a dynamic one may have no entry the layout could be found by): package
// health.
func healthGetCommand(ctx context.Context, e *env, args []string) error {
	return health.Child(ctx, args, e.stdout)
}

// notifyCommand is bm2-notify.service: it delivers the spooled
// notifications (package notify).
func notifyCommand(ctx context.Context, e *env, args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("usage: bm2-probe notify (as %s runs it)", notify.ServiceUnit)
	}
	spool := notify.Spool{Dir: e.scope.NotifyDir}
	if e.scope.IsUser() {
		spool.Owner = e.scope.UID
	}
	d := notify.Deliverer{Spool: spool, Policy: notify.DefaultPolicy, Log: e.stdout,
		Events: journal.Journald{Fallback: e.stderr}}
	res, err := d.Run(ctx)
	fmt.Fprintf(e.stdout, "%d notifications delivered, %d dropped\n", res.Delivered, res.Dropped)
	return err
}

// eventsCommand is bm2-events.service: it sends the events the exit hook
// and the fence relayed to journald (package relay).
func eventsCommand(ctx context.Context, e *env, args []string) error {
	if len(args) != 0 {
		return fmt.Errorf("usage: bm2-probe events (as %s runs it)", relay.ServiceUnit)
	}
	d := relay.Drainer{Spool: relay.Spool{Dir: e.scope.EventsDir, Owner: e.scope.UID}, Log: e.stdout}
	_, err := d.Run(ctx)
	return err
}

// hookSystemd reaches systemd for the exit and failure hooks of
// instance, bounded, and runs hook with it.
func hookSystemd(ctx context.Context, e *env, name string, args []string, hook func(ctx context.Context, sd *sysd.Conn) error) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: bm2-probe %s PROJECT-INDEX", name)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sd, err := Connect(ctx, e.scope)
	if err != nil {
		return err
	}
	defer sd.Close()
	return hook(ctx, sd)
}

// exitedCommand is the instance's ExecStopPost=+ (package hooks). It runs
// in the instance's cgroup: its events are relayed, from the notification
// spool's sink on.
func exitedCommand(ctx context.Context, e *env, args []string) error {
	return hookSystemd(ctx, e, "exited", args, func(ctx context.Context, sd *sysd.Conn) error {
		scope, instance, events := e.scope, args[0], e.events(true)
		one := hooks.ReadOnce(sd)
		return errors.Join(hooks.Exited(ctx, instance, one, time.Now(), scope.CrashLogs, events, hooks.MarkedOr(scope.State(), instance, hooks.Later)),
			hooks.PortBlocked(ctx, instance, one, time.Now(), scope.State(), scope.CrashLogs, events, hooks.ForeignHolder))
	})
}

// failedCommand is OnFailure= (bm2-failed@.service: package hooks). It
// has a unit of its own, and sends its events directly.
func failedCommand(ctx context.Context, e *env, args []string) error {
	return hookSystemd(ctx, e, "failed", args, func(ctx context.Context, sd *sysd.Conn) error {
		// The instance's crash before it gave up is in the relay spool:
		// into the journal first, in order (bounded: the give-up must be
		// recorded whatever journald does).
		rctx, rcancel := context.WithTimeout(ctx, relay.Timeout)
		relay.DrainQuietly(rctx, e.scope, e.stdout)
		rcancel()
		return hooks.Failed(ctx, args[0], sd, time.Now(), e.scope.State(), e.scope.CrashLogs, e.events(false), hooks.VerifyRefusal)
	})
}

// projectArg is the argument of `bm2-probe health|memory PROJECT` (name),
// as bm2-PROJECT-<name>.service runs it (root in system scope, the user
// in user scope).
func projectArg(name string, args []string) (string, error) {
	if len(args) != 1 {
		return "", fmt.Errorf("usage: bm2-probe %s PROJECT (as bm2-PROJECT-%s.service runs it)", name, name)
	}
	if !config.ValidName(args[0]) {
		return "", fmt.Errorf("%q is not a project name", args[0])
	}
	return args[0], nil
}

// stoppedQuietly is the error of a check's run: none when it was stopped
// with its project (SIGTERM: its service is PartOf= the target).
func stoppedQuietly(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}

// healthCommand is bm2-<project>-health.service: one HTTP health check of
// every instance (package health), each made by a child, this same
// binary.
func healthCommand(ctx context.Context, e *env, args []string) error {
	project, err := projectArg("health", args)
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find bm2-probe for the check: %w", err)
	}
	bus, err := Connect(ctx, e.scope)
	if err != nil {
		return err
	}
	defer bus.Close()
	c := &health.Checker{Project: project, Systemd: bus, Check: health.ChildCheck(filepath.Clean(self)),
		Events: e.events(false), Crashes: e.scope.CrashLogs, Dir: e.scope.HealthDir(project),
		Now: time.Now, Log: journal.LogTo(e.stdout)}
	if e.scope.IsUser() {
		self := identity.Self()
		c.Owner = &self
	}
	return stoppedQuietly(ctx, c.Run(ctx))
}

// memoryCommand is bm2-<project>-memory.service: one memory check of
// every instance (package memcheck).
func memoryCommand(ctx context.Context, e *env, args []string) error {
	project, err := projectArg("memory", args)
	if err != nil {
		return err
	}
	bus, err := Connect(ctx, e.scope)
	if err != nil {
		return err
	}
	defer bus.Close()
	c := &memcheck.Checker{Project: project, Systemd: bus, Events: e.events(false), Crashes: e.scope.CrashLogs,
		Now: time.Now, Sleep: sysd.MonotonicClock{}.Sleep, Log: journal.LogTo(e.stdout),
		Dir: e.scope.MemoryDir(project), CgroupRoot: "/sys/fs/cgroup"}
	return stoppedQuietly(ctx, c.Run(ctx))
}

// steerCommand is `bm2-probe steer add|drain|prepare` (package steer): add
// as bm2-steer@<project>-<i>.service (root, CAP_BPF, CAP_SYS_PTRACE,
// CAP_DAC_READ_SEARCH), drain as the ExecStop=+ of the instance's drop-in
// (root), prepare as the ExecStartPre=+ of bm2-steer@.service. A drain
// never fails the stop: whatever goes wrong is said and it exits 0.
func steerCommand(ctx context.Context, e *env, args []string) error {
	out := e.stdout
	if len(args) == 1 && args[0] == "prepare" {
		return steer.Prepare(out)
	}
	if len(args) != 2 || (args[0] != "add" && args[0] != "drain") {
		return errors.New("usage: bm2-probe steer add|drain PROJECT-INDEX | steer prepare")
	}
	verb := args[0]
	project, index, ok := units.ParseInstance(args[1])
	if !ok {
		err := fmt.Errorf("%q is not an instance name like api-0", args[1])
		if verb == "drain" {
			fmt.Fprintf(out, "bm2-probe steer drain: %v\n", err)
			return nil
		}
		return err
	}
	if e.scope.IsUser() {
		// A user's manager cannot load BPF programs: its ports keep the
		// kernel's hash, and nothing of it is pinned.
		if verb == "add" {
			fmt.Fprintf(out, "%s: user scope: port steering is system scope's; the port keeps the kernel's hash\n", units.InstanceID(project, index))
		}
		return nil
	}
	err := steerRun(ctx, e, verb, project, index)
	if err != nil && verb == "drain" {
		fmt.Fprintf(out, "%s: drain: %v; stopping it as it is\n", units.InstanceID(project, index), err)
		return nil
	}
	return err
}

func steerRun(ctx context.Context, e *env, verb, project string, index int) error {
	// Bounded: a drain waits at most drain_ms (a minute at most) inside
	// the instance's stop timeout.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	bus, err := Connect(ctx, e.scope)
	if err != nil {
		return err
	}
	defer bus.Close()
	diag, err := sockdiag.Open()
	if err != nil {
		return err
	}
	defer diag.Close()
	s := &steer.Steerer{
		Project: project, Index: index, Systemd: bus,
		Store:   steer.Store{Pins: steer.PinRoot, Run: e.scope.SteerDir()},
		Sockets: steer.HostSockets{Diag: diag}, Take: steer.TakeFD, Events: e.events(false),
		Clock: sysd.MonotonicClock{}, Log: journal.LogTo(e.stdout),
	}
	if verb == "add" {
		return s.Add(ctx)
	}
	return s.Drain(ctx)
}
