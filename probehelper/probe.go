package probehelper

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/state"
	"github.com/bm2dev/bm2/units"
)

// The probe's timing, from the seed: every 500 ms, for at most 60 s from the
// instance coming online.
const (
	DefaultInterval = 500 * time.Millisecond
	DefaultWindow   = 60 * time.Second
)

// ReasonReuseportMissing is the errored reason the probe records.
const ReasonReuseportMissing = "reuseport_missing"

// Instance is what the probe needs to know of the instance it watches.
type Instance struct {
	// Online: the instance's process runs (ActiveState=active, SubState=running).
	Online bool
	// Gone: the instance is inactive or failed with no job pending; it will
	// not come back by itself, so there is nothing left to probe.
	Gone bool
	// Invocation changes with every start of the instance (InvocationID).
	Invocation string
	// OnlineAt is when the current invocation came online, on the
	// monotonic clock (ActiveEnterTimestampMonotonic).
	OnlineAt time.Duration
}

// Systemd is the part of systemd the probe talks to.
type Systemd interface {
	// Instance reports the state of a unit.
	Instance(ctx context.Context, unit string) (Instance, error)
	// Stop stops the units and waits until their jobs finish.
	Stop(ctx context.Context, units ...string) error
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
	UID, GID  int // the app's user: SO_REUSEPORT joins only for the same user

	Interval, Window time.Duration

	Systemd  Systemd
	Clock    Clock
	Check    func(uid, gid, port int) (PortState, error) // CheckPortAs
	Events   journal.Sink
	Crashes  journal.CrashLog
	State    state.Dir
	Notifier Notifier // nil: notifications disabled

	invocation string // of the instance start being probed: BM2_INVOCATION
}

func (p *Probe) instanceID() string { return units.InstanceID(p.Project, p.Index) }

// Run probes until the port is confirmed, found exclusive, the window runs
// out or the instance goes away. It tolerates the extra runs systemd makes
// (a run that finds the instance dead ends quietly) and restarts of the
// instance while it waits: each new invocation gets a fresh window.
func (p *Probe) Run(ctx context.Context) (Outcome, error) {
	unit := units.Instance(p.Project, p.Index)
	invocation := ""
	var windowEnd time.Duration
	for {
		inst, err := p.Systemd.Instance(ctx, unit)
		if err != nil {
			return Gone, fmt.Errorf("ask systemd about %s: %w", unit, err)
		}
		switch {
		case inst.Gone:
			return Gone, nil
		case !inst.Online:
			invocation = "" // restarting: the next invocation gets a new window
		default:
			if inst.Invocation != invocation {
				invocation = inst.Invocation
				p.invocation = invocation
				windowEnd = inst.OnlineAt + p.Window
			}
			if p.Clock.Now() >= windowEnd {
				return Stopped, p.emit(journal.Event{
					Kind: journal.ReuseportProbeStopped, Reason: "no_listener",
					Message: fmt.Sprintf("%s: nobody listens on port %d %v after start; reusePort probe stopped, instance left alone",
						p.instanceID(), p.Port, p.Window),
				})
			}
			s, err := p.Check(p.UID, p.GID, p.Port)
			if err != nil {
				return Gone, err
			}
			switch s {
			case Shared:
				return Confirmed, p.emit(journal.Event{
					Kind:    journal.ReuseportConfirmed,
					Message: fmt.Sprintf("%s: port %d is shared with SO_REUSEPORT: cluster mode confirmed", p.instanceID(), p.Port),
				})
			case Exclusive:
				// A verdict about an invocation that has since gone is stale.
				again, err := p.Systemd.Instance(ctx, unit)
				if err != nil {
					return Gone, fmt.Errorf("ask systemd about %s: %w", unit, err)
				}
				if again.Online && again.Invocation == invocation {
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

// react is the project-level answer to an exclusive listener: errored mark
// (first run wins), event, crash.log lines, stop the slice, notify.
func (p *Probe) react(ctx context.Context) (Outcome, error) {
	// Once the project is marked errored the reaction must finish, even if
	// this probe run is being stopped (a restart of its unit).
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	first, err := p.State.SetErrored(p.Project, ReasonReuseportMissing)
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
		Kind: journal.ReuseportMissing, Reason: ReasonReuseportMissing, Detail: detail,
		Message: fmt.Sprintf("%s: port %d is bound exclusively: cluster mode lacks reusePort; stopping project %s",
			p.instanceID(), p.Port, p.Project),
		Fields: map[string]string{"BM2_PORT": strconv.Itoa(p.Port)},
	}
	var errs []error
	errs = append(errs, p.emit(ev))
	now := time.Now()
	for i := 0; i < p.Instances; i++ {
		errs = append(errs, p.Crashes.Append(p.Project, units.InstanceID(p.Project, i),
			journal.Crash{Time: now, Reason: ReasonReuseportMissing, Detail: detail}))
	}
	// The notification goes out beside the stop, never in front of it.
	notified := make(chan error, 1)
	if p.Notifier != nil {
		ev.Project, ev.Instance, ev.Time = p.Project, p.instanceID(), now
		go func() { notified <- p.Notifier.Notify(ctx, ev) }()
	} else {
		notified <- nil
	}
	errs = append(errs, p.Systemd.Stop(ctx, units.Target(p.Project), units.Slice(p.Project)))
	errs = append(errs, <-notified)
	return Missing, errors.Join(errs...)
}

func (p *Probe) emit(e journal.Event) error {
	e.Project, e.Instance = p.Project, p.instanceID()
	e.Fields = withPort(e.Fields, p.Port)
	if p.invocation != "" {
		// Ties the verdict to one start of the instance (its InvocationID).
		e.Fields["BM2_INVOCATION"] = p.invocation
	}
	return p.Events.Emit(e)
}

func withPort(f map[string]string, port int) map[string]string {
	if f == nil {
		f = map[string]string{}
	}
	f["BM2_PORT"] = strconv.Itoa(port)
	return f
}
