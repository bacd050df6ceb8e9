// Command bm2-probe is bm2's helper for systemd, installed in /usr/lib/bm2:
//
//	bm2-probe <project>-<i>                 the reusePort probe (bm2-probe@.service, root); package probehelper
//	bm2-probe exited <project>-<i>          ExecStopPost=+ (root): crash.log and events; package hooks
//	bm2-probe failed <project>-<i>          OnFailure= (bm2-failed@.service, root): instance_errored; package hooks
//	bm2-probe fence <project>-<i> PORT…     ExecStartPre=+ (root, system scope): the port fence;
//	                                        package portfence
//	bm2-probe notify                        bm2-notify.service (root, no capabilities): delivers the
//	                                        spooled notifications; package notify
//	bm2-probe run bun|node [--env-file F] -- RUNTIME …
//	                                        ExecStart= wrapper, as the app's user; package hooks
//
// It is linked statically (no dynamic loader reads LD_PRELOAD, LD_AUDIT or
// LD_LIBRARY_PATH for it), and every root subcommand starts over with an
// empty environment before it does anything else: what it learns about
// an instance comes from systemd over D-Bus, never from variables.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/hooks"
	"github.com/bm2dev/bm2/internal/notify"
	"github.com/bm2dev/bm2/internal/portfence"
	"github.com/bm2dev/bm2/internal/scope"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/probehelper"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] != "run" && !slices.Equal(os.Environ(), keptEnv()) {
		cleanExec()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:])
	var refused *hooks.RefusedError
	switch {
	case errors.As(err, &refused):
		os.Exit(hooks.ExitRefused)
	case err != nil:
		fmt.Fprintf(os.Stderr, "bm2-probe: %v\n", err)
		os.Exit(1)
	}
}

// keptEnv is the environment bm2-probe runs with: none as root; as a
// normal user (user scope: the user's own manager runs bm2-probe as the
// user, and there is nothing to protect from the user) HOME and USER,
// which name the user when the password database bm2-probe can read
// (/etc/passwd: it is linked without cgo) does not.
func keptEnv() []string {
	env := []string{}
	if os.Geteuid() == 0 {
		return env
	}
	for _, k := range []string{"HOME", "USER"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// cleanExec runs this same binary again, with the same arguments and no
// environment at all. Only the Go runtime's own start-up has seen the
// inherited variables by then (GODEBUG and the like: no code runs from
// them); nothing of bm2 ever does.
func cleanExec() {
	self := os.Args[0]
	if !filepath.IsAbs(self) {
		self = "/proc/self/exe"
	}
	err := syscall.Exec(self, os.Args, keptEnv())
	fmt.Fprintf(os.Stderr, "bm2-probe: cannot start again without the environment: %v\n", err)
	os.Exit(1)
}

func run(ctx context.Context, args []string) error {
	if len(args) == 0 {
		return fmt.Errorf("usage: bm2-probe PROJECT-INDEX | run bun|node [--env-file PATH] -- RUNTIME ... | exited PROJECT-INDEX | failed PROJECT-INDEX | fence PROJECT-INDEX PORT... | notify")
	}
	switch args[0] {
	case "run":
		return hooks.Run(ctx, args[1:], hooks.DefaultRunEnv())
	case "fence":
		return portfence.Main(args[1:], os.Stderr)
	}
	// As root: system scope. As anyone else: the user's own manager runs
	// it (user scope), and its files are under ~/.bm2.
	layout, err := scope.Self()
	if err != nil {
		return err
	}
	// Every event of these subcommands goes through here: the journal,
	// and the scope's notification spool.
	spool := notify.Spool{Dir: notify.System.Dir}
	events := notify.NewSink(os.Stderr)
	if layout.IsUser() {
		sc := notify.User(layout.StateDir)
		spool = notify.Spool{Dir: sc.Dir, Owner: layout.UID}
		events = notify.NewUserSink(os.Stderr, sc, layout.UID, layout.SearchPath)
	}
	switch args[0] {
	case "notify":
		if len(args) != 1 {
			return fmt.Errorf("usage: bm2-probe notify (as %s runs it)", notify.System.ServiceUnit)
		}
		d := notify.Deliverer{Spool: spool, Policy: notify.DefaultPolicy, Log: os.Stdout,
			Events: journal.Journald{Fallback: os.Stderr}}
		res, err := d.Run(ctx)
		fmt.Printf("%d notifications delivered, %d dropped\n", res.Delivered, res.Dropped)
		return err
	case "exited", "failed":
		if len(args) != 2 {
			return fmt.Errorf("usage: bm2-probe %s PROJECT-INDEX", args[0])
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		sd, err := probehelper.Connect(ctx, layout)
		if err != nil {
			return err
		}
		defer sd.Close()
		if args[0] == "exited" {
			return errors.Join(hooks.Exited(ctx, args[1], sd, time.Now(), layout.CrashLogs, events, hooks.MarkedOr(layout.State(), args[1], hooks.VerifyRefusal)),
				hooks.PortBlocked(ctx, args[1], sd, time.Now(), layout.State(), layout.CrashLogs, events, hooks.ForeignHolder))
		}
		return hooks.Failed(ctx, args[1], sd, time.Now(), layout.State(), layout.CrashLogs, events)
	}
	return probehelper.Main(ctx, args, os.Stdout)
}
