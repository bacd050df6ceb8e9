// Command bm2-probe is bm2's helper for systemd, installed in /usr/lib/bm2;
// package probehelper does all the work (see probehelper.Main for its
// subcommands).
//
// It is linked statically (no dynamic loader reads LD_PRELOAD, LD_AUDIT or
// LD_LIBRARY_PATH for it), and every root subcommand drops its
// environment before it does anything else: one run in an instance's
// cgroup by starting over without it (probehelper.CleanEnv).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/bm2dev/bm2/probehelper"
)

func main() {
	if err := probehelper.CleanEnv(os.Args); err != nil {
		fmt.Fprintf(os.Stderr, "bm2-probe: %v\n", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := probehelper.Main(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
