package probehelper

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/memcheck"
	"github.com/bm2dev/bm2/internal/notify"
	"github.com/bm2dev/bm2/internal/portfence"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Main is bm2-probe, bm2's helper for systemd, given its arguments after
// the program name; it returns the process's exit status:
//
//	bm2-probe <project>-<i>                 the reusePort probe (bm2-probe@.service, root); this package
//	bm2-probe exited <project>-<i>          ExecStopPost=+ (root): crash.log and events; package hooks
//	bm2-probe failed <project>-<i>          OnFailure= (bm2-failed@.service, root): instance_errored; package hooks
//	bm2-probe fence <project>-<i> [PORT…]   ExecStartPre=+ (root, system scope): the port fence (none: a worker);
//	bm2-probe fence --no-bind UNIT          ExecStartPre=+ of a health check: its unit may bind nothing;
//	                                        package portfence
//	bm2-probe steer add|drain <project>-<i> bm2-steer@.service (root: CAP_BPF, CAP_SYS_PTRACE), ExecStop=+ (root):
//	                                        the port's kernel-steered turn; this package, package steer
//	bm2-probe notify                        bm2-notify.service (root, no capabilities): delivers the
//	                                        spooled notifications; package notify
//	bm2-probe events                        bm2-events.service (root, no capabilities): sends the events
//	                                        the exit hook and the fence relayed to journald; package relay
//	bm2-probe health <project>              bm2-<project>-health.service (root: CAP_SETUID, CAP_SETGID):
//	                                        one HTTP health check of every instance; this package, package health
//	bm2-probe health-get TIMEOUT PATH I:P…  its child, as the instances' user: the GETs
//	bm2-probe run bun|node [--env-file F] -- RUNTIME …
//	                                        ExecStart= wrapper, as the app's user; package hooks
//
// An instance `run` refuses to start exits with hooks.ExitRefused (it has
// said why on stderr already); any other failure is one line on stderr,
// "bm2-probe: …", and exit status 1. stderr is a file because the events'
// journal sink falls back to it (journal.Journald) when journald is not
// reachable.
func Main(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) int {
	err := dispatch(ctx, args, stdout, stderr)
	var refused *hooks.RefusedError
	switch {
	case errors.As(err, &refused):
		return hooks.ExitRefused
	case err != nil:
		fmt.Fprintf(stderr, "bm2-probe: %v\n", err)
		return 1
	}
	return 0
}

func dispatch(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: bm2-probe PROJECT-INDEX | run bun|node [--env-file PATH] -- RUNTIME ... | exited PROJECT-INDEX | failed PROJECT-INDEX | fence PROJECT-INDEX [PORT...] | fence --no-bind UNIT | health PROJECT | memory PROJECT | notify | events | steer add|drain PROJECT-INDEX")
	}
	switch args[0] {
	case "run":
		env := hooks.DefaultRunEnv()
		env.Stderr = stderr
		return hooks.Run(ctx, args[1:], env)
	case "fence":
		// System scope only (a user's manager cannot fence): the system's
		// sink says a mark it cannot write. It runs in the instance's
		// cgroup, whose journal bucket the app fills: its events are
		// relayed (package relay).
		events := notify.NewSink(stderr)
		events.Next = relay.NewSink(layout.System(), stderr)
		return portfence.Main(args[1:], stderr, events)
	case "health-get":
		// The health check's child, as the instances' user (a dynamic
		// one may have no entry the layout could be found by).
		return health.Child(ctx, args[1:], stdout)
	}
	// As root: system scope. As anyone else: the user's own manager runs
	// it (user scope), and its files are under ~/.bm2.
	scope, err := layout.Self()
	if err != nil {
		return err
	}
	// Every event of these subcommands goes through here: the journal,
	// and the scope's notification spool.
	spool := notify.Spool{Dir: scope.NotifyDir}
	events := notify.NewSink(stderr)
	if scope.IsUser() {
		spool.Owner = scope.UID
		events = notify.NewUserSink(stderr, scope.NotifyDir, scope.UID, scope.SearchPath)
	}
	switch args[0] {
	case "notify":
		if len(args) != 1 {
			return fmt.Errorf("usage: bm2-probe notify (as %s runs it)", notify.ServiceUnit)
		}
		d := notify.Deliverer{Spool: spool, Policy: notify.DefaultPolicy, Log: stdout,
			Events: journal.Journald{Fallback: stderr}}
		res, err := d.Run(ctx)
		fmt.Fprintf(stdout, "%d notifications delivered, %d dropped\n", res.Delivered, res.Dropped)
		return err
	case "events":
		if len(args) != 1 {
			return fmt.Errorf("usage: bm2-probe events (as %s runs it)", relay.ServiceUnit)
		}
		d := relay.Drainer{Spool: relay.Spool{Dir: scope.EventsDir, Owner: scope.UID}, Log: stdout}
		_, err := d.Run(ctx)
		return err
	case "steer":
		return steerCommand(ctx, args[1:], stdout, events, scope)
	case "exited", "failed":
		if len(args) != 2 {
			return fmt.Errorf("usage: bm2-probe %s PROJECT-INDEX", args[0])
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		sd, err := Connect(ctx, scope)
		if err != nil {
			return err
		}
		defer sd.Close()
		if args[0] == "exited" {
			// ExecStopPost=+ runs in the instance's cgroup, whose journal
			// bucket the app fills: its events are relayed, from the
			// notification spool's sink on (package relay). The failure
			// hook has a unit of its own, and sends directly.
			events.Next = relay.NewSink(scope, stderr)
			one := hooks.ReadOnce(sd)
			return errors.Join(hooks.Exited(ctx, args[1], one, time.Now(), scope.CrashLogs, events, hooks.MarkedOr(scope.State(), args[1], hooks.Later)),
				hooks.PortBlocked(ctx, args[1], one, time.Now(), scope.State(), scope.CrashLogs, events, hooks.ForeignHolder))
		}
		// The instance's crash before it gave up is in the relay spool:
		// into the journal first, in order (bounded: the give-up must be
		// recorded whatever journald does).
		rctx, rcancel := context.WithTimeout(ctx, relayTimeout)
		relayEvents(rctx, scope, stdout)
		rcancel()
		return hooks.Failed(ctx, args[1], sd, time.Now(), scope.State(), scope.CrashLogs, events, hooks.VerifyRefusal)
	case "health":
		c := &health.Checker{Events: events, Crashes: scope.CrashLogs, Now: time.Now,
			Log: journal.LogTo(stdout)}
		if scope.IsUser() {
			self := identity.Self()
			c.Owner = &self
		}
		return healthCommand(ctx, args, c, scope)
	case "memory":
		c := &memcheck.Checker{Events: events, Crashes: scope.CrashLogs, Now: time.Now,
			Log: journal.LogTo(stdout)}
		return memoryCommand(ctx, args, c, scope)
	}
	return probeCommand(ctx, args, stdout, stderr)
}

// CleanEnv gives bm2-probe (argv: os.Args) the environment of keptEnv
// before it does anything else, unless that is what it has already; it
// returns only when it cannot. What bm2-probe learns about an instance
// comes from systemd over D-Bus, never from variables. Every subcommand
// but `run` (which runs as the app's user, and passes the unit's
// environment on to the app) gets it:
//
//   - run in an instance's cgroup (ExecStartPre=+, ExecStop=+,
//     ExecStopPost=+: fence, steer drain, exited), where the environment
//     holds what the project file's [env] says, it starts this same
//     binary again with kept: only the Go runtime's own start-up has seen
//     the inherited variables by then (GODEBUG and the like: no code runs
//     from them); nothing of bm2 ever does;
//   - run by one of bm2's own units (ownUnit), whose environment only
//     systemd and root wrote, it clears it in place: a second start would
//     protect from nobody, and costs a Go start on every instance's start.
func CleanEnv(argv []string) error {
	kept := keptEnv(os.Geteuid(), os.LookupEnv)
	if !needsCleanEnv(argv, os.Environ(), kept) {
		return nil
	}
	if ownUnit(argv) {
		return setEnv(kept)
	}
	self := argv[0]
	if !filepath.IsAbs(self) {
		self = "/proc/self/exe"
	}
	err := syscall.Exec(self, argv, kept)
	return fmt.Errorf("cannot start again without the environment: %w", err)
}

// needsCleanEnv tells whether bm2-probe, run as argv with environ, must
// change to kept.
func needsCleanEnv(argv, environ, kept []string) bool {
	return len(argv) > 1 && argv[1] != "run" && !slices.Equal(environ, kept)
}

// ownUnit tells whether argv is how one of bm2's own units runs
// bm2-probe, units no project file reaches: the probe (bm2-probe@.service:
// bm2-probe <project>-<i>) and the steering step (bm2-steer@.service:
// steer prepare, steer add). The other subcommands keep the second start,
// the hot path's included (steer drain, exited, fence).
func ownUnit(argv []string) bool {
	switch {
	case len(argv) == 2:
		_, _, ok := units.ParseInstance(argv[1]) // no subcommand's name is one
		return ok
	case len(argv) >= 3 && argv[1] == "steer":
		return argv[2] == "prepare" || argv[2] == "add"
	}
	return false
}

// setEnv makes env the process's whole environment.
func setEnv(env []string) error {
	os.Clearenv()
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("cannot set the environment: %w", err)
		}
	}
	return nil
}

// keptEnv is the environment bm2-probe runs with: none as root; as a
// normal user (user scope: the user's own manager runs bm2-probe as the
// user, and there is nothing to protect from the user) HOME and USER,
// which name the user when the password database bm2-probe can read
// (/etc/passwd: it is linked without cgo) does not.
func keptEnv(euid int, lookup func(string) (string, bool)) []string {
	env := []string{}
	if euid == 0 {
		return env
	}
	for _, k := range []string{"HOME", "USER"} {
		if v, ok := lookup(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
