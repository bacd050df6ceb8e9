package view

import (
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// UnitStatus is what bm2 reads about one unit.
type UnitStatus = sysd.Status

// Unknown marks a counter systemd does not know (it reports 2^64-1).
const Unknown = sysd.Unknown

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
			return StateWaiting, ResultReason(u.Result)
		}
		return StateLaunching, ""
	case "deactivating":
		return StateStopping, ""
	case "failed":
		r := ResultReason(u.Result)
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

// ResultReason turns systemd's Result property into a reason: systemd's
// own word, success being no reason at all and start-limit-hit the
// restart budget.
func ResultReason(result string) string {
	switch result {
	case "", "success":
		return ""
	case "start-limit-hit":
		return string(reason.Budget)
	}
	return result
}

// reprobeAfter is how long a run must have been up, with its probe
// ended and no verdict, before the probe is taken for lost (its process
// killed, or its job dropped, across a systemd re-exec) and started
// again. It leaves a verdict just logged the time to reach the journal.
const reprobeAfter = 2 * time.Second

// probeGoneFor is how long a probe must have ended before it is taken
// for lost: a verdict it logged just before it ended may not be in the
// journal yet when the wait reads it.
const probeGoneFor = time.Second

// ProbeLost tells whether the probe (unit probe) of an instance whose
// current run u has no verdict ended without giving one: the probe unit
// is loaded (bm2's own; a host without it has nothing to start) and
// gone for probeGoneFor, while the run has been up for reprobeAfter.
func ProbeLost(u, probe UnitStatus, now time.Time) bool {
	return probe.LoadState == "loaded" && probe.Gone() && Up(u) && now.Sub(u.ActiveEnter) >= reprobeAfter &&
		(probe.InactiveEnter.IsZero() || now.Sub(probe.InactiveEnter) >= probeGoneFor)
}

// Up tells whether an instance is running with a main process.
func Up(u UnitStatus) bool {
	st, _ := InstanceState(u)
	return st == StateOnline && u.MainPID != 0
}

// The reusePort probe's verdicts on one run of an instance.
const (
	VerdictConfirmed  = "confirmed"   // reuseport_confirmed
	VerdictMissing    = "missing"     // reuseport_missing: the probe stopped the project
	VerdictNoListener = "no_listener" // reuseport_probe_stopped: nobody listened within 60 s
	VerdictPending    = "pending"     // online, no verdict yet
	// VerdictUnprobed: online, no verdict, and its probe ended without
	// one (stopped by hand, or failed); `bm2 start` probes it again.
	VerdictUnprobed = "unprobed"
)

// ReuseportVerdicts are the verdicts bm2 list and bm2 metrics show, in
// the order of bm2(1).
var ReuseportVerdicts = []string{VerdictConfirmed, VerdictPending, VerdictUnprobed, VerdictNoListener, VerdictMissing}

// ReuseportKinds are the probe's verdicts (journal.VerdictKinds).
var ReuseportKinds = journal.VerdictKinds

// ReuseportVerdict is the probe's latest verdict on the current run of
// instance id (unit u) among evs, and the event that gave it; "" when there
// is none. An event belongs to the run when it records the run's
// InvocationID, or, without one, when it was logged after the run came
// online (the probe only judges a running instance).
func ReuseportVerdict(u UnitStatus, id string, evs []journal.Event) (string, journal.Event) {
	var v string
	var last journal.Event
	for _, ev := range evs {
		if ev.Instance != id {
			continue
		}
		if ev.Invocation != "" && u.InvocationID != "" {
			if ev.Invocation != u.InvocationID {
				continue
			}
		} else if u.ActiveEnter.IsZero() || ev.Time.Before(u.ActiveEnter) {
			continue
		}
		switch ev.Kind {
		case journal.ReuseportConfirmed:
			v = VerdictConfirmed
		case journal.ReuseportMissing:
			v = VerdictMissing
		case journal.ReuseportProbeStopped:
			v = VerdictNoListener
		default:
			continue
		}
		last = ev
	}
	return v, last
}

// SurgeActive tells whether the surge unit has a run or a job.
func SurgeActive(u UnitStatus) bool {
	return u.LoadState == "loaded" && !u.Down() || u.JobPending
}

// InstanceNames are the units of p's instances, 0..N-1.
func InstanceNames(p *config.Project) []string {
	names := make([]string, p.Instances)
	for i := range names {
		names[i] = units.Instance(p.Name, i)
	}
	return names
}

// AllInstances are the indexes of p's instances, 0..N-1.
func AllInstances(p *config.Project) []int {
	ids := make([]int, p.Instances)
	for i := range ids {
		ids[i] = i
	}
	return ids
}
