package control

import (
	"context"

	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/internal/view"
)

// Systemd is the part of systemd's D-Bus API the bm2 command uses; the
// real one is *sysd.Conn (see ConnectSystemd), tests use a fake.
type Systemd interface {
	// Reload is `systemctl daemon-reload`: generators run again and unit
	// files are re-read. It returns when the reload is complete.
	Reload(ctx context.Context) error
	// Start, Stop and Restart enqueue a job for the unit in "replace" mode
	// and wait until it finishes (StartQueued and StopQueued only until
	// systemd has it); a job that does not end "done" (or
	// "skipped") is an error naming the unit and the job's result. Stopping
	// a unit systemd has not loaded is not an error.
	Start(ctx context.Context, unit string) error
	Stop(ctx context.Context, unit string) error
	Restart(ctx context.Context, unit string) error
	// StartQueued: a oneshot that runs for a while (the probe).
	StartQueued(ctx context.Context, unit string) error
	// StopQueued: a stop that serves nobody waiting (a reload's surge).
	StopQueued(ctx context.Context, units ...string) error
	// ResetFailed is `systemctl reset-failed UNIT`: it forgets a failed
	// state and the start-limit counter. A unit systemd does not know is
	// not an error.
	ResetFailed(ctx context.Context, unit string) error
	// Units reports the state of each named unit, in the order given. Units
	// systemd does not know come back with LoadState "not-found".
	Units(ctx context.Context, names []string) ([]view.UnitStatus, error)
	// Brief is Units with only the states, timestamps and a service's
	// run and figures filled in (sysd.Conn.Brief says which): what a
	// Snapshot needs, at a fraction of the cost.
	Brief(ctx context.Context, names []string) ([]view.UnitStatus, error)
	// Loaded lists the units systemd currently has loaded whose names match
	// any of the glob patterns (e.g. "bm2@api-*.service"), sorted by name.
	// Only Name, LoadState, ActiveState and SubState are filled in.
	Loaded(ctx context.Context, patterns []string) ([]view.UnitStatus, error)
	// Close releases the connection.
	Close() error
}

// ConnectSystemd connects to the system manager (sysd.Connect).
func ConnectSystemd(ctx context.Context) (Systemd, error) {
	c, err := sysd.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}
