package cli

import (
	"context"
	"errors"
	"math"
	"time"
)

// Systemd is the part of systemd's D-Bus API the bm2 command uses. The real
// implementation talks to PID 1 over the system bus (see [ConnectSystemd]);
// tests use a fake.
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
	// ResetFailed is `systemctl reset-failed UNIT`: it forgets a failed
	// state and the start-limit counter. A unit systemd does not know is
	// not an error.
	ResetFailed(ctx context.Context, unit string) error
	// Units reports the state of each named unit, in the order given. Units
	// systemd does not know come back with LoadState "not-found".
	Units(ctx context.Context, names []string) ([]UnitStatus, error)
	// Loaded lists the units systemd currently has loaded whose names match
	// any of the glob patterns (e.g. "bm2@api-*.service"), sorted by name.
	// Only Name, LoadState, ActiveState and SubState are filled in.
	Loaded(ctx context.Context, patterns []string) ([]UnitStatus, error)
	// Close releases the connection.
	Close() error
}

// Unknown marks a counter systemd does not know (it reports 2^64-1).
const Unknown = math.MaxUint64

// UnitStatus is what bm2 reads about one unit.
type UnitStatus struct {
	Name             string
	LoadState        string // loaded, not-found, masked, ...
	ActiveState      string // active, activating, deactivating, inactive, failed, reloading
	SubState         string // running, start, auto-restart, dead, failed, ...
	NeedDaemonReload bool   // a unit file or its source changed since systemd read it

	// Service properties.
	Result         string    // success, exit-code, signal, core-dump, timeout, start-limit-hit, ...
	MainPID        uint32    // 0 when none
	NRestarts      uint32    // automatic restarts since the unit was last started by hand
	ExecMainCode   int32     // how the last main process ended: CLD_EXITED (1), CLD_KILLED (2), CLD_DUMPED (3)
	ExecMainStatus int32     // its exit status, or the signal number that ended it
	ActiveEnter    time.Time // when the unit last became active; zero if never
	InvocationID   string    // changes with every start of the unit (hex); "" if never started
	ControlGroup   string    // e.g. /bm2.slice/bm2-api.slice/bm2@api-0.service; "" when it has none
	MemoryCurrent  uint64    // bytes; Unknown when not accounted or not running
	CPUUsageNSec   uint64    // cumulative CPU time; Unknown when not accounted
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

// ReasonBudget is the reason of an instance that used up its restart
// budget (systemd's start-limit-hit).
const ReasonBudget = "restart_budget_exhausted"

// ReasonNotLoaded is the reason of an instance systemd has no unit for:
// the generator has not run since the project was registered.
const ReasonNotLoaded = "not_loaded"

// InstanceState maps a unit's state to bm2's words and a reason.
func InstanceState(u UnitStatus) (state, reason string) {
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

// projectInstanceState is InstanceState for an instance of a project
// with a restart budget of maxRestarts: an instance that failed after
// using up its budget is restart_budget_exhausted even when systemd (252,
// for automatic restarts) reports the result of the last crash rather
// than start-limit-hit.
func projectInstanceState(u UnitStatus, maxRestarts int) (state, reason string) {
	state, reason = InstanceState(u)
	if state == StateErrored && reason != ReasonBudget && u.NRestarts > 0 && int64(u.NRestarts) >= int64(maxRestarts) {
		reason = ReasonBudget
	}
	return state, reason
}

// resultReason turns systemd's Result property into a reason; success is
// no reason at all.
func resultReason(result string) string {
	switch result {
	case "", "success":
		return ""
	case "start-limit-hit":
		return ReasonBudget
	}
	return result
}

// systemdError marks errors that mean systemd could not be reached at all
// (as opposed to systemd refusing or failing a request).
type systemdError struct{ err error }

func (e *systemdError) Error() string {
	return "systemd is not reachable: " + e.err.Error()
}

func (e *systemdError) Unwrap() error { return e.err }

// unreachable wraps err so that [ExitCode] maps it to [ExitNoSystemd].
func unreachable(err error) error { return &systemdError{err: err} }

func isUnreachable(err error) bool {
	var se *systemdError
	return errors.As(err, &se)
}
