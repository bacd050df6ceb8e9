// Command bm2 is the friendly face of bm2 over systemd: it registers
// projects, starts and stops them and shows their state. See bm2(1) and
// package cli, which does all the work.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/bm2dev/bm2/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Main(ctx, os.Args[1:], cli.Stdio{In: os.Stdin, Out: os.Stdout, Err: os.Stderr})
	stop()
	os.Exit(code)
}
