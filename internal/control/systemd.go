package control

import (
	"context"
	"io"

	"github.com/bm2dev/bm2/internal/sysd"
)

// Systemd is the part of systemd's D-Bus API the bm2 command uses,
// composed of sysd's calls (each said there, on *sysd.Conn's method);
// the real one is *sysd.Conn (see ConnectSystemd), tests use a fake.
// Start, Stop and Restart wait for their job, StartQueued and StopQueued
// only until systemd has it.
type Systemd interface {
	sysd.Reloader
	sysd.Starter
	sysd.Stopper
	sysd.Restarter
	sysd.StartQueuer
	sysd.StopQueuer
	sysd.Resetter
	sysd.UnitsReader
	sysd.Briefer
	sysd.Lister
	io.Closer
}

// ConnectSystemd connects to the system manager (sysd.Connect).
func ConnectSystemd(ctx context.Context) (Systemd, error) {
	c, err := sysd.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}
