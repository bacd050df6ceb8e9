package control

import (
	"context"

	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
)

// Systemd is the part of systemd's D-Bus API the bm2 command uses; the
// real one is *sysd.Conn (see ConnectSystemd), tests use a fake.
type Systemd interface {
	// Reload is `systemctl daemon-reload`: generators run again and unit
	// files are re-read. It returns when the reload is complete.
	Reload(ctx context.Context) error
	// Start, Stop and Restart enqueue a job for the unit in "replace" mode
	// and wait until it finishes; a job that does not end "done" (or
	// "skipped") is an error naming the unit and the job's result. Stopping
	// a unit systemd has not loaded is not an error.
	Start(ctx context.Context, unit string) error
	Stop(ctx context.Context, unit string) error
	Restart(ctx context.Context, unit string) error
	// Trigger enqueues a start job for the unit and returns once systemd
	// has it, without waiting for it to finish (a oneshot that runs for
	// a while: the probe).
	Trigger(ctx context.Context, unit string) error
	// StopQueued enqueues a stop job for the unit and returns once
	// systemd has it, without waiting for the stop.
	StopQueued(ctx context.Context, unit string) error
	// ResetFailed is `systemctl reset-failed UNIT`: it forgets a failed
	// state and the start-limit counter. A unit systemd does not know is
	// not an error.
	ResetFailed(ctx context.Context, unit string) error
	// Units reports the state of each named unit, in the order given. Units
	// systemd does not know come back with LoadState "not-found".
	Units(ctx context.Context, names []string) ([]UnitStatus, error)
	// Brief is Units with only the states, timestamps and a service's
	// run and figures filled in (sysd.Conn.Brief says which): what a
	// Snapshot needs, at a fraction of the cost.
	Brief(ctx context.Context, names []string) ([]UnitStatus, error)
	// Loaded lists the units systemd currently has loaded whose names match
	// any of the glob patterns (e.g. "bm2@api-*.service"), sorted by name.
	// Only Name, LoadState, ActiveState and SubState are filled in.
	Loaded(ctx context.Context, patterns []string) ([]UnitStatus, error)
	// Close releases the connection.
	Close() error
}

// UnitStatus is what bm2 reads about one unit.
type UnitStatus = sysd.Status

// Unknown marks a counter systemd does not know (it reports 2^64-1).
const Unknown = sysd.Unknown

// ConnectSystemd connects to the system manager (sysd.Connect).
func ConnectSystemd(ctx context.Context) (Systemd, error) {
	c, err := sysd.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Instance states shown by bm2 list and bm2 status.
const (
	StateOnline    = "online"
	StateLaunching = "launching"
	StateWaiting   = "waiting restart"
	StateStopping  = "stopping"
	StateStopped   = "stopped"
	StateErrored   = "errored"
	StateInvalid   = "invalid"
	StateUnknown   = "unknown"
)

// InstanceStates are the states an instance of a valid project can be in,
// as bm2 list shows them (StateInvalid is a project's).
var InstanceStates = []string{StateOnline, StateLaunching, StateWaiting, StateStopping, StateStopped, StateErrored, StateUnknown}

// ReasonNotLoaded is the reason of an instance systemd has no unit for:
// the generator has not run since the project was registered.
const ReasonNotLoaded = "not_loaded"

// InstanceState maps a unit's state to bm2's words and a reason.
func InstanceState(u UnitStatus) (state, why string) {
	switch u.ActiveState {
	case "active", "reloading":
		return StateOnline, ""
	case "activating":
		if u.SubState == "auto-restart" {
			return StateWaiting, resultReason(u.Result)
		}
		return StateLaunching, ""
	case "deactivating":
		return StateStopping, ""
	case "failed":
		r := resultReason(u.Result)
		if u.ExecMainCode == 1 && u.ExecMainStatus == 78 {
			r = string(reason.Rejected)
		}
		if r == "" {
			r = "failed"
		}
		return StateErrored, r
	case "inactive", "maintenance":
		if u.LoadState != "" && u.LoadState != "loaded" {
			return StateStopped, ReasonNotLoaded
		}
		return StateStopped, ""
	case "":
		return StateUnknown, ""
	}
	return u.ActiveState, u.SubState
}

// ProjectInstanceState is InstanceState for an instance of a project
// with a restart budget of maxRestarts: an instance that failed after
// using up its budget is restart_budget_exhausted even when systemd (252,
// for automatic restarts) reports the result of the last crash rather
// than start-limit-hit.
func ProjectInstanceState(u UnitStatus, maxRestarts int) (state, why string) {
	state, why = InstanceState(u)
	if state == StateErrored && why != string(reason.Budget) && why != string(reason.Rejected) &&
		u.NRestarts > 0 && int64(u.NRestarts) >= int64(maxRestarts) {
		why = string(reason.Budget)
	}
	return state, why
}

// resultReason turns systemd's Result property into a reason: systemd's
// own word, success being no reason at all and start-limit-hit the
// restart budget.
func resultReason(result string) string {
	switch result {
	case "", "success":
		return ""
	case "start-limit-hit":
		return string(reason.Budget)
	}
	return result
}
