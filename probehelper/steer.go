package probehelper

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/bm2dev/bm2/internal/layout"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/steer"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// steerCommand is `bm2-probe steer add|drain|prepare`: add as
// bm2-steer@<project>-<i>.service (root, CAP_BPF, CAP_SYS_PTRACE,
// CAP_DAC_READ_SEARCH), drain as the ExecStop=+ of the instance's drop-in
// (root), prepare as the ExecStartPre=+ of bm2-steer@.service. A drain
// never fails the stop: whatever goes wrong is said and it exits 0.
func steerCommand(ctx context.Context, args []string, out io.Writer, events journal.Sink, scope layout.Layout) error {
	usage := fmt.Errorf("usage: bm2-probe steer add|drain PROJECT-INDEX | steer prepare")
	if len(args) == 1 && args[0] == "prepare" {
		return steer.Prepare(out)
	}
	if len(args) != 2 || (args[0] != "add" && args[0] != "drain") {
		return usage
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
	if scope.IsUser() {
		// A user's manager cannot load BPF programs: its ports keep the
		// kernel's hash, and nothing of it is pinned.
		if verb == "add" {
			fmt.Fprintf(out, "%s: user scope: port steering is system scope's; the port keeps the kernel's hash\n", units.InstanceID(project, index))
		}
		return nil
	}
	err := steerRun(ctx, verb, project, index, out, events, scope)
	if err != nil && verb == "drain" {
		fmt.Fprintf(out, "%s: drain: %v; stopping it as it is\n", units.InstanceID(project, index), err)
		return nil
	}
	return err
}

func steerRun(ctx context.Context, verb, project string, index int, out io.Writer, events journal.Sink, scope layout.Layout) error {
	// Bounded: a drain waits at most drain_ms (a minute at most) inside
	// the instance's stop timeout.
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	bus, err := Connect(ctx, scope)
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
		Store:   steer.Store{Pins: steer.PinRoot, Run: scope.SteerDir()},
		Sockets: steer.HostSockets{Diag: diag}, Take: steer.TakeFD, Events: events, Clock: sysd.MonotonicClock{},
		Log: journal.LogTo(out),
	}
	if verb == "add" {
		return s.Add(ctx)
	}
	return s.Drain(ctx)
}
