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

	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/notify"
	"github.com/bm2dev/bm2/internal/relay"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Main is bm2-probe, bm2's helper for systemd, given its arguments after
// the program name; it returns the process's exit status:
//
//	bm2-probe <project>-<i>                 the reusePort probe (bm2-probe@.service, root); package probe
//	bm2-probe exited <project>-<i>          ExecStopPost=+ (root): crash.log and events; package hooks
//	bm2-probe failed <project>-<i>          OnFailure= (bm2-failed@.service, root): instance_errored; package hooks
//	bm2-probe fence <project>-<i> [PORT…]   ExecStartPre=+ (root, system scope): the port fence (none: a worker);
//	bm2-probe fence --no-bind UNIT          ExecStartPre=+ of a health check: its unit may bind nothing;
//	                                        package portfence
//	bm2-probe steer add|drain <project>-<i> bm2-steer@.service (root: CAP_BPF, CAP_SYS_PTRACE), ExecStop=+ (root):
//	                                        the port's kernel-steered turn; package steer
//	bm2-probe notify                        bm2-notify.service (root, no capabilities): delivers the
//	                                        spooled notifications; package notify
//	bm2-probe events                        bm2-events.service (root, no capabilities): sends the events
//	                                        the exit hook and the fence relayed to journald; package relay
//	bm2-probe health <project>              bm2-<project>-health.service (root: CAP_SETUID, CAP_SETGID):
//	                                        one HTTP health check of every instance; package health
//	bm2-probe health-get TIMEOUT PATH I:P…  its child, as the instances' user: the GETs
//	bm2-probe memory <project>              bm2-<project>-memory.service: one memory check of every
//	                                        instance; package memcheck
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

// A command is one subcommand of bm2-probe: its name, the first argument
// ("" for the probe, whose first argument is the instance); its part of
// the usage line ("" for none: health-get, which only bm2-probe starts);
// whether it runs in a scope (env.scope); and what it does with the
// arguments after its name. Each one checks its own arguments, before it
// reaches systemd, a spool or the cgroup tree.
type command struct {
	name, usage string
	scoped      bool
	run         func(ctx context.Context, e *env, args []string) error
}

// commands are bm2-probe's subcommands, in the order of the usage line;
// the first one, the probe, takes what no name matches.
var commands = []command{
	{"", "PROJECT-INDEX", true, probeCommand},
	{"run", "run bun|node [--env-file PATH] -- RUNTIME ...", false, runCommand},
	{"exited", "exited PROJECT-INDEX", true, exitedCommand},
	{"failed", "failed PROJECT-INDEX", true, failedCommand},
	{"fence", "fence PROJECT-INDEX [PORT...] | fence --no-bind UNIT", false, fenceCommand},
	{"health", "health PROJECT", true, healthCommand},
	{"memory", "memory PROJECT", true, memoryCommand},
	{"notify", "notify", true, notifyCommand},
	{"events", "events", true, eventsCommand},
	{"steer", "steer add|drain PROJECT-INDEX", true, steerCommand},
	{"health-get", "", false, healthGetCommand},
}

// env is what a subcommand runs with: bm2-probe's output (stderr: see
// Main) and, for one that runs in a scope, the scope.
type env struct {
	stdout io.Writer
	stderr *os.File
	scope  layout.Layout
}

func dispatch(ctx context.Context, args []string, stdout io.Writer, stderr *os.File) error {
	if len(args) == 0 {
		var parts []string
		for _, c := range commands {
			if c.usage != "" {
				parts = append(parts, c.usage)
			}
		}
		return errors.New("usage: bm2-probe " + strings.Join(parts, " | "))
	}
	c, rest := commands[0], args
	for _, named := range commands[1:] {
		if named.name == args[0] {
			c, rest = named, args[1:]
			break
		}
	}
	e := &env{stdout: stdout, stderr: stderr}
	if c.scoped {
		// As root: system scope. As anyone else: the user's own manager
		// runs it (user scope), and its files are under ~/.bm2.
		scope, err := layout.Self()
		if err != nil {
			return err
		}
		e.scope = scope
	}
	return c.run(ctx, e, rest)
}

// newEvents is the sink every event of a subcommand of scope goes
// through: the journal, and the scope's notification spool (package
// notify). A subcommand that runs in an instance's cgroup, whose journal
// bucket the app fills, has its events relayed (relayed: package relay's
// sink in place of the journal).
func newEvents(scope layout.Layout, stderr *os.File, relayed bool) journal.Sink {
	var next journal.Sink // the journal
	if relayed {
		next = relay.NewSink(scope, stderr)
	}
	return notify.NewSink(scope, stderr, next)
}

// events is newEvents of e's scope.
func (e *env) events(relayed bool) journal.Sink { return newEvents(e.scope, e.stderr, relayed) }

// Connect reaches the manager of the scope bm2-probe runs in: the system
// manager's private socket as root, the user's manager's otherwise.
func Connect(ctx context.Context, l layout.Layout) (*sysd.Conn, error) {
	if l.IsUser() {
		return sysd.ConnectUser(ctx, l.PrivateSocket)
	}
	return sysd.ConnectPrivate(ctx)
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
