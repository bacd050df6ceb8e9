// Command bm2-probe checks that a cluster-mode instance really shares its
// port with SO_REUSEPORT, and stops the whole project when it does not; see
// package probehelper. systemd runs it as bm2-probe@<project>-<i>.service.
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
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := probehelper.Main(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "bm2-probe: %v\n", err)
		os.Exit(1)
	}
}
