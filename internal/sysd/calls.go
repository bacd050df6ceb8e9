package sysd

import (
	"context"
	"time"

	"golang.org/x/sys/unix"
)

// The calls bm2's helpers make, one interface each, which *[Conn]
// satisfies and a test fake can: a helper's own Systemd is composed of
// the calls it makes, so that each call is declared, and said, here once
// (*Conn's methods say what each one does).

// UnitReader reads the state of one unit ([Conn.Unit]).
type UnitReader interface {
	Unit(ctx context.Context, name string) (Status, error)
}

// UnitsReader reads several units, their calls in flight together
// ([Conn.Units]).
type UnitsReader interface {
	Units(ctx context.Context, names []string) ([]Status, error)
}

// Lister lists the loaded units whose names match patterns, with Name
// and the states only ([Conn.Loaded]).
type Lister interface {
	Loaded(ctx context.Context, patterns []string) ([]Status, error)
}

// Briefer reads several units' states, timestamps, runs and figures
// only, at a fraction of Units' cost ([Conn.Brief]).
type Briefer interface {
	Brief(ctx context.Context, names []string) ([]Status, error)
}

// Reader reads units: one, several, and the loaded ones whose names
// match patterns.
type Reader interface {
	UnitReader
	UnitsReader
	Lister
}

// Reloader is `systemctl daemon-reload`, waited for ([Conn.Reload]).
type Reloader interface {
	Reload(ctx context.Context) error
}

// Stopper stops a unit and waits for its job ([Conn.Stop]).
type Stopper interface {
	Stop(ctx context.Context, unit string) error
}

// Restarter restarts a unit and waits for its job ([Conn.Restart]).
type Restarter interface {
	Restart(ctx context.Context, unit string) error
}

// Resetter resets a unit's result, its NRestarts and its start counter:
// its restart budget ([Conn.ResetFailed]).
type Resetter interface {
	ResetFailed(ctx context.Context, unit string) error
}

// Starter starts a unit and waits for its job ([Conn.Start]).
type Starter interface {
	Start(ctx context.Context, unit string) error
}

// StartQueuer queues a start of a unit and does not wait for it
// ([Conn.StartQueued]).
type StartQueuer interface {
	StartQueued(ctx context.Context, unit string) error
}

// RestartQueuer queues a restart of a unit ("replace") and does not wait for
// it ([Conn.RestartQueued]).
type RestartQueuer interface {
	RestartQueued(ctx context.Context, unit string) error
}

// StopQueuer queues a stop job for each unit and waits for none
// ([Conn.StopQueued]).
type StopQueuer interface {
	StopQueued(ctx context.Context, units ...string) error
}

// Idler lets go of the connection until the next call ([Conn.Idle]).
type Idler interface {
	Idle()
}

var (
	_ Reader        = (*Conn)(nil)
	_ Briefer       = (*Conn)(nil)
	_ Reloader      = (*Conn)(nil)
	_ Stopper       = (*Conn)(nil)
	_ Restarter     = (*Conn)(nil)
	_ Resetter      = (*Conn)(nil)
	_ Starter       = (*Conn)(nil)
	_ StartQueuer   = (*Conn)(nil)
	_ RestartQueuer = (*Conn)(nil)
	_ StopQueuer    = (*Conn)(nil)
	_ Idler         = (*Conn)(nil)
)

// Clock is the monotonic clock (the one systemd's *Monotonic timestamps
// use) and a way to wait on it: [MonotonicClock] on the host, a fake in
// tests.
type Clock interface {
	Now() time.Duration
	Sleep(ctx context.Context, d time.Duration) error
}

// MonotonicClock is CLOCK_MONOTONIC, the clock of systemd's *Monotonic
// timestamps.
type MonotonicClock struct{}

func (MonotonicClock) Now() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		panic(err) // cannot fail on Linux
	}
	return time.Duration(ts.Nano())
}

// Sleep waits d, or until ctx ends (its error).
func (MonotonicClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
