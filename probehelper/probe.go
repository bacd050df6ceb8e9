package probehelper

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bm2dev/bm2/identity"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/reuseport"
	"github.com/bm2dev/bm2/state"
	"github.com/bm2dev/bm2/sysd"
	"github.com/bm2dev/bm2/units"
)

// The probe's timing, from the seed: every 500 ms, for at most 60 s from the
// instance coming online.
const (
	DefaultInterval = 500 * time.Millisecond
	DefaultWindow   = 60 * time.Second
)

// Systemd is the part of systemd the probe talks to (*sysd.Conn).
type Systemd interface {
	// Unit reports the state of a unit.
	Unit(ctx context.Context, name string) (sysd.Status, error)
	// StopAll stops the units and waits until their jobs finish.
	StopAll(ctx context.Context, units ...string) error
}

// Clock is the monotonic clock (the one systemd's *Monotonic timestamps
// use) and a way to wait on it.
type Clock interface {
	Now() time.Duration
	Sleep(ctx context.Context, d time.Duration) error
}

// Notifier sends a notification for an event; it must not block for long.
type Notifier interface {
	Notify(ctx context.Context, e journal.Event) error
}

// Outcome is how a probe run ended.
type Outcome int

const (
	Confirmed      Outcome = iota // the port group is joinable: reusePort is on
	Missing                       // exclusive: this run stopped the project
	AlreadyErrored                // exclusive, but another probe run reacted first
	Stopped                       // nobody listened within the window
	Gone                          // the instance stopped or failed; nothing to probe
)

func (o Outcome) String() string {
	return [...]string{"confirmed", "missing", "already-errored", "stopped", "gone"}[o]
}

// Probe checks one cluster-mode instance.
type Probe struct {
	Project   string
	Index     int
	Instances int // in the project, for crash.log lines
	Port      int

	Interval, Window time.Duration

	Systemd  Systemd
	Clock    Clock
	Check    func(id identity.Identity, port int) (reuseport.PortState, error) // reuseport.CheckPortAs
	Events   journal.Sink
	Crashes  journal.CrashLog
	State    state.Dir
	Notifier Notifier // nil: notifications disabled

	invocation string // of the instance run being judged: BM2_INVOCATION
}

func (p *Probe) instanceID() string { return units.InstanceID(p.Project, p.Index) }

// Run probes until the port is confirmed, found exclusive, the window runs
// out or the instance goes away. Every run of the instance gets its own
// verdict: an instance that restarts while the probe waits (or just as it
// reached a verdict, when systemd merges the new start into this still
// running probe) is probed afresh, with a fresh window. A run that finds
// the instance dead ends quietly.
//
// It checks as the instance's user, by the UID and GID systemd reports for
// the running unit (DynamicUser= included): no user database is read, and
// a run that cannot take that identity says so instead of checking as
// root.
func (p *Probe) Run(ctx context.Context) (Outcome, error) {
	unit := units.Instance(p.Project, p.Index)
	var windowEnd time.Duration
	p.invocation = ""
	for {
		st, err := p.Systemd.Unit(ctx, unit)
		if err != nil {
			return Gone, fmt.Errorf("ask systemd about %s: %w", unit, err)
		}
		switch {
		case st.Gone():
			return Gone, nil
		case !st.Running() || st.InvocationID == "":
			p.invocation = "" // restarting: the next run gets a new window
		default:
			if st.InvocationID != p.invocation {
				p.invocation = st.InvocationID
				windowEnd = st.ActiveEnterMonotonic + p.Window
			}
			if p.Clock.Now() >= windowEnd {
				err := p.emit(journal.Event{
					Kind: journal.ReuseportProbeStopped, Reason: journal.ReasonNoListener,
					Message: fmt.Sprintf("%s: nobody listens on port %d %v after start; reusePort probe stopped, instance left alone",
						p.instanceID(), p.Port, p.Window),
				})
				if p.settled(ctx, unit) {
					return Stopped, err
				}
				continue
			}
			id := identity.Identity{UID: int(st.UID), GID: int(st.GID)}
			if st.UID == sysd.NoID || st.GID == sysd.NoID {
				return Gone, fmt.Errorf("systemd reports no UID for running %s", unit)
			}
			s, err := p.Check(id, p.Port)
			if err != nil {
				return Gone, err
			}
			switch s {
			case reuseport.Shared:
				err := p.emit(journal.Event{
					Kind:    journal.ReuseportConfirmed,
					Message: fmt.Sprintf("%s: port %d is shared with SO_REUSEPORT: cluster mode confirmed", p.instanceID(), p.Port),
				})
				if p.settled(ctx, unit) {
					return Confirmed, err
				}
				continue
			case reuseport.Exclusive:
				// A verdict about a run that has since gone is stale.
				if p.settled(ctx, unit) {
					return p.react(ctx)
				}
				continue
			}
		}
		if err := p.Clock.Sleep(ctx, p.Interval); err != nil {
			return Gone, err
		}
	}
}

// settled tells whether the run just judged is still the instance's
// current one (or the instance is gone): then the verdict stands and the
// probe is done. Otherwise the instance restarted meanwhile, and its new
// run needs a verdict of its own.
func (p *Probe) settled(ctx context.Context, unit string) bool {
	st, err := p.Systemd.Unit(ctx, unit)
	if err != nil || st.Gone() {
		return true
	}
	return st.Running() && st.InvocationID == p.invocation
}

// react is the project-level answer to an exclusive listener: errored mark
// (first run wins), event, crash.log lines, stop the slice, notify.
func (p *Probe) react(ctx context.Context) (Outcome, error) {
	// Once the project is marked errored the reaction must finish, even if
	// this probe run is being stopped.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	first, err := p.State.SetErrored(p.Project, string(journal.ReasonReuseportMissing))
	if err != nil {
		return Missing, err
	}
	if !first {
		return AlreadyErrored, nil
	}
	detail := fmt.Sprintf("cluster mode needs reusePort: port %d is held by a listener that does not allow SO_REUSEPORT; "+
		"listen with reusePort: true (Bun.serve({reusePort: true}) or server.listen({port, reusePort: true})), "+
		"or use exec_mode = \"fork\"; then run bm2 serve again", p.Port)
	ev := journal.Event{
		Kind: journal.ReuseportMissing, Reason: journal.ReasonReuseportMissing, Detail: detail,
		Message: fmt.Sprintf("%s: port %d is bound exclusively: cluster mode lacks reusePort; stopping project %s",
			p.instanceID(), p.Port, p.Project),
	}
	var errs []error
	errs = append(errs, p.emit(ev))
	now := time.Now()
	for i := 0; i < p.Instances; i++ {
		errs = append(errs, p.Crashes.Append(p.Project, units.InstanceID(p.Project, i),
			journal.Crash{Time: now, Reason: journal.ReasonReuseportMissing, Detail: detail}))
	}
	// The notification goes out beside the stop, never in front of it.
	notified := make(chan error, 1)
	if p.Notifier != nil {
		ev.Project, ev.Instance, ev.Time = p.Project, p.instanceID(), now
		go func() { notified <- p.Notifier.Notify(ctx, ev) }()
	} else {
		notified <- nil
	}
	errs = append(errs, p.Systemd.StopAll(ctx, units.Target(p.Project), units.Slice(p.Project)))
	errs = append(errs, <-notified)
	return Missing, errors.Join(errs...)
}

func (p *Probe) emit(e journal.Event) error {
	e.Project, e.Instance, e.Port = p.Project, p.instanceID(), p.Port
	// Ties the verdict to one run of the instance (its InvocationID).
	e.Invocation = p.invocation
	return p.Events.Emit(e)
}
