// Command bm2-probe is bm2's helper for systemd, installed in /usr/lib/bm2:
//
//	bm2-probe <project>-<i>                 the reusePort probe (bm2-probe@.service); package probehelper
//	bm2-probe run bun|node -- RUNTIME …     ExecStart= wrapper: runtime floor, then execve; package hooks
//	bm2-probe exited <project>-<i>          ExecStopPost=: crash.log and instance_crashed; package hooks
//	bm2-probe failed <project>-<i>          OnFailure= (bm2-failed@.service): instance_errored; package hooks
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/hooks"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/probehelper"
	"github.com/bm2dev/bm2/state"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	err := run(ctx, os.Args[1:])
	var rejected *hooks.RejectedError
	switch {
	case errors.As(err, &rejected):
		os.Exit(hooks.ExitRuntimeRejected)
	case err != nil:
		fmt.Fprintf(os.Stderr, "bm2-probe: %v\n", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string) error {
	events := journal.Journald{Fallback: os.Stderr}
	crashes := journal.CrashLog{Dir: journal.DefaultLogDir}
	if len(args) == 0 {
		return fmt.Errorf("usage: bm2-probe PROJECT-INDEX | run bun|node -- RUNTIME ... | exited PROJECT-INDEX | failed PROJECT-INDEX")
	}
	switch args[0] {
	case "run":
		return hooks.Run(ctx, args[1:], hooks.DefaultRunEnv())
	case "exited":
		if len(args) != 2 {
			return fmt.Errorf("usage: bm2-probe exited PROJECT-INDEX")
		}
		x := hooks.ExitInfo{Result: os.Getenv("SERVICE_RESULT"), Code: os.Getenv("EXIT_CODE"), Status: os.Getenv("EXIT_STATUS")}
		return hooks.Exited(args[1], x, time.Now(), crashes, events)
	case "failed":
		if len(args) != 2 {
			return fmt.Errorf("usage: bm2-probe failed PROJECT-INDEX")
		}
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		return hooks.Failed(ctx, args[1], hooks.BusFacts, time.Now(), state.Default, crashes, events)
	}
	return probehelper.Main(ctx, args, os.Getenv, os.Stdout)
}
