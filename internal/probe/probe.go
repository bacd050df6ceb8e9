package probe

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/bm2dev/bm2/internal/crashlog"
	"github.com/bm2dev/bm2/internal/identity"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/reuseport"
	"github.com/bm2dev/bm2/internal/state"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// The probe's timing, from the seed: every 500 ms, for at most 60 s from the
// instance coming online. Between those bind tests it looks for the
// instance's listener (sock_diag, cheap) every DefaultWatch while the run
// is young, then every WatchShare of the run's age (at most Interval), and
// tests at once when one appears: a verdict comes within DefaultWatch of a
// quick app's listen(), and within a sixteenth of its start time of a slow
// one's.
//
// The share keeps a boot's probes from costing n². Each look costs the probe a
// wake-up and a dump; n instances started at once take about n times as
// long to listen on a loaded host, so looks at a fixed rate would cost n
// probes × n times as long: n². A share of the age makes a probe's looks
// grow with the log of its wait instead (a run that listens after 10 s
// is looked at about a hundred times, not 400, and systemd asked about
// it some 15 times, not 20). Until the run starts, it asks systemd
// after a StartShare of the time the instance has been in its state
// (startWait), at most every Interval.
const (
	DefaultInterval = 500 * time.Millisecond
	DefaultWindow   = 60 * time.Second
	DefaultWatch    = 25 * time.Millisecond
	WatchShare      = 16
	StartShare      = 4
)

// Systemd is the part of systemd the probe talks to (*sysd.Conn). Its
// stops are queued, not waited for: the probe is ordered after its
// instance, whose stop therefore waits for the probe's to end.
type Systemd interface {
	sysd.UnitReader
	sysd.StopQueuer
	sysd.Resetter
	sysd.Starter
	sysd.Idler
}

// Outcome is how a probe run ended.
type Outcome int

const (
	Confirmed      Outcome = iota // the port group is joinable: reusePort is on
	Missing                       // exclusive: this run stopped the project
	AlreadyErrored                // exclusive, but another probe run reacted first
	Stopped                       // nobody listened within the window
	Gone                          // the instance stopped or failed; nothing to probe
	Listening                     // fork mode: the instance listens on its port
	Running                       // a worker (no port): the instance runs
)

func (o Outcome) String() string {
	return [...]string{"confirmed", "missing", "already-errored", "stopped", "gone", "listening", "running"}[o]
}

// Probe watches one instance run after run. In cluster mode it checks
// that the port is shared (reusePort); in both modes it resets the
// instance's restart budget once a run is healthy: it listened on its
// port (in cluster mode: and was confirmed) and then stayed up for
// MinUptime. A run that never listens within Window counts as healthy at
// the end of the window (it has run far longer than min_uptime_ms).
type Probe struct {
	Project   string
	Index     int
	Instances int // in the project, for crash.log lines
	Port      int
	Fork      bool          // fork mode: no reusePort check
	Worker    bool          // a worker: no port, no listener to look for (Fork too)
	MinUptime time.Duration // how long a run must stay up after it listens

	Interval, Window, Watch time.Duration

	Systemd Systemd
	Clock   sysd.Clock
	Check   func(id identity.Identity, port int) (reuseport.PortState, error) // reuseport.CheckPortAs
	// Listeners reports the socket inodes of the TCP listeners on port
	// owned by uid (sock_diag); nil, or an error, leaves the probe to its
	// bind tests every Interval.
	Listeners func(port int, uid uint32) ([]uint64, error)
	// Owns tells whether one of the instance's processes holds one of
	// the listening sockets, looked at as the instance's user; nil means
	// any listener of the instance's user counts.
	Owns func(id identity.Identity, st sysd.Status, inodes []uint64) (bool, error)
	// Addrs reports the addresses the TCP listeners on port owned by uid
	// are bound to (sock_diag), to tell an app alone on a loopback
	// address (loopback_only) from one alone on every address
	// (reuseport_missing); nil leaves every exclusive listener
	// reuseport_missing.
	Addrs func(port int, uid uint32) ([]netip.Addr, error)
	// Runtime is "node" or "bun", for the wording of the verdict.
	Runtime string
	// Preload: the instance runs with bm2's reusePort preload (reuseport
	// = "preload"), so the verdict does not offer it as the fix.
	Preload bool
	// Steer queues a start of the instance's steering step
	// (bm2-steer@<project>-<i>.service, not waited for) once a run is
	// confirmed: cluster mode in system scope; nil elsewhere.
	Steer func(ctx context.Context) error
	// Owner is who runs the instances when systemd does not say (user
	// scope: the user); nil in system scope.
	Owner  *identity.Identity
	Events journal.Sink
	// Relay asks for the relay spool to be sent to journald, not waited
	// for (package relay): the probe calls it when a run it was judging
	// has ended, as the exit hook has left that run's crash there; nil
	// does nothing. The probe's process drains the spool as it starts too.
	Relay func()
	// Verdicts keeps each verdict (reuseport_confirmed, reuseport_missing,
	// reuseport_probe_stopped) beside the journal for the waits that read
	// it (relay.Verdicts); nil keeps them in the journal only.
	Verdicts interface{ Put(journal.Event) error }
	Crashes  crashlog.Logs
	State    state.Dir
	Log      journal.Logf

	invocation string                // of the instance run being judged: BM2_INVOCATION
	seen       map[uint64]socketKind // listening sockets looked at in this run
	// Reset is whether the last run's restart budget was reset.
	Reset bool
}

func (p *Probe) instanceID() string { return units.InstanceID(p.Project, p.Index) }

// socketKind is what the probe found a listening socket to be.
type socketKind int

const (
	unseen        socketKind = iota
	foreignSocket            // another process's (a sibling instance's)
	ownSocket                // the run's own
)

// run is what the probe knows of the instance run it is judging.
type run struct {
	windowEnd time.Duration
	nextBind  time.Duration // the next bind test when no listener is seen
	verdict   Outcome
	judged    bool          // verdict is set
	healthyAt time.Duration // when the run counts as healthy (judged)
}

// Run probes until the run is judged and healthy (or found exclusive, or
// the instance goes away). Every run of the instance gets its own verdict:
// an instance that restarts while the probe waits (or just as it reached a
// verdict, when systemd merges the new start into this still running
// probe) is probed afresh, with a fresh window. A run that finds the
// instance dead ends quietly.
//
// It checks as the instance's user, by the UID and GID systemd reports for
// the running unit (DynamicUser= included): no user database is read, and
// a run that cannot take that identity says so instead of checking as
// root.
func (p *Probe) Run(ctx context.Context) (Outcome, error) {
	unit := units.Instance(p.Project, p.Index)
	p.invocation = ""
	p.Reset = false
	var r run
	begun := p.Clock.Now()
	for {
		st, err := p.Systemd.Unit(ctx, unit)
		if err != nil {
			return Gone, fmt.Errorf("ask systemd about %s: %w", unit, err)
		}
		switch {
		case st.Gone():
			if r.judged {
				return r.verdict, nil
			}
			return Gone, nil
		case !st.Running() || st.InvocationID == "":
			if p.invocation != "" && p.Relay != nil {
				p.Relay() // the run ended: its exit hook's event waits
			}
			p.invocation = "" // restarting: the next run gets a new window
			// Not running yet (starting, waiting for the units it needs,
			// between restarts): look again after a share of the time
			// it has been so (see startWait).
			if err := p.sleep(ctx, p.startWait(st, p.Clock.Now(), begun)); err != nil {
				return Gone, err
			}
			continue
		default:
			if st.InvocationID != p.invocation {
				if p.invocation != "" && p.Relay != nil {
					p.Relay() // a run ended between two looks
				}
				p.invocation = st.InvocationID
				r = run{windowEnd: st.ActiveEnterMonotonic + p.Window}
				p.seen = nil
			}
			if (st.UID == sysd.NoID || st.GID == sysd.NoID) && p.Owner != nil {
				// A user's manager runs services as the user without
				// User=, and reports no UID for them.
				st.UID, st.GID = uint32(p.Owner.UID), uint32(p.Owner.GID)
			}
			if st.UID == sysd.NoID || st.GID == sysd.NoID {
				return Gone, fmt.Errorf("systemd reports no UID for running %s", unit)
			}
			id := identity.Identity{UID: int(st.UID), GID: int(st.GID)}
			now := p.Clock.Now()
			if !r.judged {
				out, done, err := p.judge(ctx, &r, st, id, now)
				if done || err != nil {
					return out, err
				}
			}
			if r.judged {
				if now < r.healthyAt {
					if err := p.sleep(ctx, r.healthyAt-now); err != nil {
						return Gone, err
					}
					continue
				}
				if !p.settled(ctx, unit) {
					continue // a new run: judge it
				}
				if err := p.Systemd.ResetFailed(ctx, unit); err != nil {
					return r.verdict, fmt.Errorf("reset the restart budget of %s: %w", unit, err)
				}
				p.Reset = true
				return r.verdict, p.afterReset(ctx, unit)
			}
			if p.Worker {
				// Not settled yet (a new run): look again.
				if err := p.sleep(ctx, p.Interval); err != nil {
					return Gone, err
				}
				continue
			}
			// Until the next look at systemd, watch for a listener.
			if err := p.await(ctx, st, id, min(now+p.lookAt(now-st.ActiveEnterMonotonic), r.windowEnd)); err != nil {
				return Gone, err
			}
			continue
		}
	}
}

// sleep waits d holding no connection to systemd: systemd sends each of
// its connections every unit's every change, and a boot's probes, all
// waiting for their apps at once, would each be sent every other
// instance's start while they wait (n² messages from PID 1).
func (p *Probe) sleep(ctx context.Context, d time.Duration) error {
	p.Systemd.Idle()
	return p.Clock.Sleep(ctx, d)
}

// watch is how often the probe looks for a listener: Watch with
// sock_diag, Interval (the bind tests) without.
func (p *Probe) watch() time.Duration {
	if p.Watch <= 0 || p.Listeners == nil {
		return p.Interval
	}
	return p.Watch
}

// afterReset closes the one gap of a reset while the run goes on: had the
// app crashed between the last look and the reset, systemd would have
// taken the reset for the crash's result (success) and neither restarted
// the instance nor recorded anything. So: look once more; an instance on
// its way down with a clean result although its main process did not end
// cleanly is recorded as the crash it was and started again.
func (p *Probe) afterReset(ctx context.Context, unit string) error {
	st, err := p.Systemd.Unit(ctx, unit)
	if err != nil || st.Running() || st.SubState == "auto-restart" || st.JobPending {
		return nil
	}
	if st.Result != "success" || !uncleanExit(st) {
		return nil
	}
	for !st.Gone() {
		if err := p.sleep(ctx, p.watch()); err != nil {
			return err
		}
		if st, err = p.Systemd.Unit(ctx, unit); err != nil || st.JobPending {
			return err
		}
	}
	id := p.instanceID()
	detail := fmt.Sprintf("exit code %d/status %d as the probe reset its restart budget", st.ExecMainCode, st.ExecMainStatus)
	c := crashlog.Crash{Time: time.Now(), Reason: reason.Exited, Detail: detail}
	werr := p.Crashes.Append(p.Project, id, c)
	errs := []error{
		p.Events.Emit(journal.Event{Kind: journal.InstanceCrashed, Project: p.Project, Instance: id, Invocation: p.invocation,
			Reason: reason.Exited, Message: fmt.Sprintf("%s crashed as its healthy run was counted (%s); starting it again", id, detail)}),
		p.crashLogFailed(id, c, werr),
		p.Systemd.Start(ctx, unit),
	}
	return errors.Join(errs...)
}

// crashLogFailed says that instance's crash.log line c could not be
// written (err; nil is nothing to say): the probe goes on without it.
func (p *Probe) crashLogFailed(instance string, c crashlog.Crash, err error) error {
	return journal.ReportWriteFailure(p.Events, p.Project, instance, p.Crashes.Path(p.Project, instance), err,
		fmt.Sprintf("its crash.log misses the line reason=%s, which the journal has", c.Reason))
}

// markFailed says that the project's errored mark could not be written
// where it belongs (and where it went instead, if anywhere).
func (p *Probe) markFailed(m *state.MarkError) error {
	switch m.Held {
	case m.Fallback:
		return journal.ReportWriteFailure(p.Events, p.Project, "", m.Path, m.Err,
			fmt.Sprintf("marked errored in %s instead: project %s is errored until `bm2 start %s` or the next boot, not across a reboot; its units are stopped as usual",
				m.Fallback, p.Project, p.Project))
	case m.Path:
		return journal.ReportWriteFailure(p.Events, p.Project, "", m.Path, m.Err,
			"the mark is there, but may not be on disk: after a power loss the project may not be errored")
	}
	return errors.Join(
		journal.ReportWriteFailure(p.Events, p.Project, "", m.Path, m.Err,
			fmt.Sprintf("nor could %s, which stands in for it: project %s is stopped as usual, but marked errored nowhere", m.Fallback, p.Project)),
		journal.ReportWriteFailure(p.Events, p.Project, "", m.Fallback, m.FallbackErr,
			fmt.Sprintf("it stands in for %s, which could not be written either: project %s is stopped as usual, but marked errored nowhere", m.Path, p.Project)))
}

// uncleanExit tells whether the main process ended otherwise than with
// status 0 or one of the signals systemd counts as clean.
func uncleanExit(st sysd.Status) bool {
	switch st.ExecMainCode {
	case 1: // CLD_EXITED
		return st.ExecMainStatus != 0
	case 2, 3: // CLD_KILLED, CLD_DUMPED
		switch syscall.Signal(st.ExecMainStatus) {
		case syscall.SIGHUP, syscall.SIGINT, syscall.SIGTERM, syscall.SIGPIPE:
			return st.ExecMainCode == 3
		}
		return true
	}
	return false
}

// watchAt is how long the probe waits before its next look for a
// listener of a run active for up: watch() while the run is young, then
// a WatchShare of its age, at most Interval.
func (p *Probe) watchAt(up time.Duration) time.Duration {
	w := p.watch()
	if w >= p.Interval {
		return w
	}
	return min(max(w, up/WatchShare), p.Interval)
}

// startWait is how long the probe waits before it asks systemd again
// about an instance that is not running yet (st): a StartShare of the time
// since the unit's state last changed, at least watch() and at most
// Interval. While the unit is still down (its start job queued: the state
// is what its last stop left, maybe long ago) the time counts from when
// the probe began (begun), which the same start queued. A start under way
// (the port fence, the sandbox, the exec) is looked at often, so that a
// reload's next step does not wait a probe's back-off after the run
// began: a start that took 160 ms is seen within 40 ms of running. A
// start waiting long (a boot's queue, RestartSec=, the units it is
// ordered after) is looked at less and less often, every Interval from
// two seconds on, as before: about 19 looks in its first 2.3 s where the
// doubling made 9, the same pace after.
func (p *Probe) startWait(st sysd.Status, now, begun time.Duration) time.Duration {
	w := p.watch()
	if w >= p.Interval {
		return w
	}
	since := st.StateChangeMonotonic
	if since <= 0 || st.Down() {
		since = max(since, begun)
	}
	return min(max(w, (now-since)/StartShare), p.Interval)
}

// lookAt is how long the probe watches for a listener before it looks at
// systemd again (a restart, a stop), a run being active for up:
// Interval, or with sock_diag a WatchShare of the run's age up to 4 ×
// Interval (each look is a connection and two reads for PID 1). Without
// sock_diag every look is a bind test, every Interval.
func (p *Probe) lookAt(up time.Duration) time.Duration {
	if p.watch() >= p.Interval {
		return p.Interval
	}
	return min(max(p.Interval, up/WatchShare), 4*p.Interval)
}

// await polls for a listener of the run until one appears or the clock
// reaches until.
func (p *Probe) await(ctx context.Context, st sysd.Status, id identity.Identity, until time.Duration) error {
	for {
		now := p.Clock.Now()
		if now >= until {
			return nil
		}
		if err := p.sleep(ctx, min(p.watchAt(now-st.ActiveEnterMonotonic), until-now)); err != nil {
			return err
		}
		if l, known := p.listening(st, id); l || !known {
			return nil
		}
	}
}

// judge looks at the current run once: whether it listens, and in cluster
// mode whether the port is shared. done means the probe is over (the
// project was stopped).
func (p *Probe) judge(ctx context.Context, r *run, st sysd.Status, id identity.Identity, now time.Duration) (Outcome, bool, error) {
	unit := units.Instance(p.Project, p.Index)
	if p.Worker {
		// No port to look at: a run that stays up min_uptime_ms is
		// healthy.
		if p.settled(ctx, unit) {
			r.verdict, r.judged, r.healthyAt = Running, true, max(now, st.ActiveEnterMonotonic+p.MinUptime)
		}
		return Running, false, nil
	}
	listening, known := p.listening(st, id)
	if now >= r.windowEnd && !listening {
		var err error
		if !p.Fork {
			err = p.emit(journal.Event{
				Kind: journal.ReuseportProbeStopped, Reason: reason.NoListener,
				Message: fmt.Sprintf("%s: nobody listens on port %d %v after start; reusePort probe stopped, instance left alone",
					p.instanceID(), p.Port, p.Window),
			})
		}
		if !p.settled(ctx, unit) {
			return Gone, false, err
		}
		r.verdict, r.judged = Stopped, true
		r.healthyAt = max(now, st.ActiveEnterMonotonic+p.MinUptime)
		return Stopped, false, err
	}
	if p.Fork {
		if !known && now >= r.nextBind {
			// No sock_diag: a bind test tells whether anyone listens.
			r.nextBind = now + p.Interval
			s, err := p.Check(id, p.Port)
			if err != nil {
				return Gone, true, err
			}
			listening = s != reuseport.Free
		}
		if listening && p.settled(ctx, unit) {
			r.verdict, r.judged, r.healthyAt = Listening, true, now+p.MinUptime
		}
		return Listening, false, nil
	}
	if !listening && now < r.nextBind {
		return Gone, false, nil
	}
	r.nextBind = now + p.Interval
	s, err := p.Check(id, p.Port)
	if err != nil {
		return Gone, true, err
	}
	switch s {
	case reuseport.Shared:
		if known && !listening {
			// Another instance's socket makes the port joinable: that says
			// nothing of this run yet.
			return Gone, false, nil
		}
		err := p.emit(journal.Event{
			Kind:    journal.ReuseportConfirmed,
			Message: fmt.Sprintf("%s: port %d is shared with SO_REUSEPORT: cluster mode confirmed", p.instanceID(), p.Port),
		})
		if p.settled(ctx, unit) {
			r.verdict, r.judged, r.healthyAt = Confirmed, true, now+p.MinUptime
			if p.Steer != nil {
				// The run's listener into the port's kernel-steered turn;
				// without it the port keeps the kernel's hash.
				if serr := p.Steer(ctx); serr != nil {
					p.Log.Printf("%s: cannot start %s (%v); port %d keeps the kernel's hash", p.instanceID(), units.Steer(p.Project, p.Index), serr, p.Port)
				}
			}
		}
		return Confirmed, false, err
	case reuseport.Exclusive:
		if known && !listening {
			// Someone else holds the port alone (an old fork-mode
			// instance, another program): not this run's doing. If the
			// app cannot listen, it exits and its budget decides.
			return Gone, false, nil
		}
		// A verdict about a run that has since gone is stale.
		if p.settled(ctx, unit) {
			out, err := p.react(ctx, p.loopbackOnly(st.UID))
			return out, true, err
		}
	}
	return Gone, false, nil
}

// listening tells whether the run holds a listener on the port, and
// whether that is known at all (sock_diag and the instance's sockets
// readable).
func (p *Probe) listening(st sysd.Status, id identity.Identity) (listening, known bool) {
	if p.Listeners == nil {
		return false, false
	}
	inodes, err := p.Listeners(p.Port, st.UID)
	if err != nil {
		p.Log.Printf("%s: cannot list listeners (%v); bind tests only", p.instanceID(), err)
		p.Listeners = nil
		return false, false
	}
	if len(inodes) == 0 {
		return false, true
	}
	if p.Owns == nil {
		return true, true
	}
	// Sockets already found to be someone else's (a sibling instance's)
	// are not looked for again: only new ones are.
	var fresh []uint64
	for _, in := range inodes {
		switch p.seen[in] {
		case ownSocket:
			return true, true
		case unseen:
			fresh = append(fresh, in)
		}
	}
	if len(fresh) == 0 {
		return false, true
	}
	owns, err := p.Owns(id, st, fresh)
	if err != nil {
		p.Log.Printf("%s: cannot read the instance's sockets (%v); any listener of its user counts", p.instanceID(), err)
		p.Owns = nil
		return true, true
	}
	if p.seen == nil {
		p.seen = map[uint64]socketKind{}
	}
	kind := foreignSocket
	if owns {
		// Which of the fresh ones is its own is not known; a sibling's
		// were all seen before, so they all count as its own.
		kind = ownSocket
	}
	for _, in := range fresh {
		p.seen[in] = kind
	}
	return owns, true
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

// loopbackOnly names the loopback addresses the instance's user listens
// on, when it listens on nothing else ("127.0.0.1", "::1", "127.0.0.1 and
// ::1"); "" otherwise or when that cannot be told.
func (p *Probe) loopbackOnly(uid uint32) string {
	if p.Addrs == nil {
		return ""
	}
	addrs, err := p.Addrs(p.Port, uid)
	if err != nil || len(addrs) == 0 {
		return ""
	}
	var names []string
	for _, a := range addrs {
		a = a.Unmap()
		if !a.IsLoopback() {
			return ""
		}
		if !slices.Contains(names, a.String()) {
			names = append(names, a.String())
		}
	}
	return strings.Join(names, " and ")
}

// react is the project-level answer to an exclusive listener: errored mark
// (first run wins), event (and so its notification, spooled by
// Events: package notify), crash.log lines, stop the slice. An app alone
// on a loopback address (loopback, "::1") is errored as loopback_only: it
// needs another address as well as reusePort.
func (p *Probe) react(ctx context.Context, loopback string) (Outcome, error) {
	// Once the project is marked errored the reaction must finish, even if
	// this probe run is being stopped.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	why := reason.ReuseportMissing
	if loopback != "" {
		why = reason.LoopbackOnly
	}
	// A mark that cannot be written (a full /var) is said, and the
	// reaction goes on: the mark falls back to the run directory (package
	// state), and when it cannot be written anywhere, nothing holds the
	// first verdict, and this run reacts rather than leave the project
	// serving without reusePort.
	first, err := p.State.SetErrored(p.Project, string(why))
	var unmarked *state.MarkError
	if err != nil && !errors.As(err, &unmarked) {
		return Missing, err
	}
	if unmarked != nil && unmarked.Held == "" {
		first = true
	}
	if !first {
		if unmarked != nil {
			return AlreadyErrored, p.markFailed(unmarked)
		}
		return AlreadyErrored, nil
	}
	// The fixes in order: the preload (no code change), the code change,
	// fork mode; with the preload on already, what it cannot reach.
	detail := fmt.Sprintf("cluster mode needs reusePort: port %d is held by a listener that does not allow SO_REUSEPORT; "+
		"set reuseport = \"preload\" in bm2.toml, and bm2 supplies reusePort with no code change "+
		"(to Node.js's http and the frameworks on it, and to Bun.serve; not to Bun's node:http); "+
		"or listen with reusePort: true (Bun.serve({reusePort: true}) or server.listen({port, reusePort: true})); "+
		"or use exec_mode = \"fork\"; then run bm2 serve again", p.Port)
	if p.Preload {
		detail = fmt.Sprintf("cluster mode needs reusePort: port %d is held by a listener that does not allow SO_REUSEPORT, "+
			"although reuseport = \"preload\" is set: a listener the preload does not reach "+
			"(a child process, a native addon, an explicit reusePort: false, Bun's node:http); "+
			"listen with reusePort: true in the process bm2 starts, or use exec_mode = \"fork\"; then run bm2 serve again", p.Port)
	}
	ev := journal.Event{
		Kind: journal.ReuseportMissing, Reason: why, Detail: detail,
		Message: fmt.Sprintf("%s: port %d is bound exclusively: cluster mode lacks reusePort; stopping project %s",
			p.instanceID(), p.Port, p.Project),
	}
	if loopback != "" {
		e, _ := reason.Explain(why, reason.Facts{Project: p.Project, Instance: p.instanceID(), Port: p.Port,
			Runtime: p.Runtime, Detail: loopback})
		ev.Message, ev.Detail = e.Message, "listens on "+loopback+" only; "+e.Fix
		detail = ev.Detail
	}
	errs := []error{p.emit(ev)}
	if unmarked != nil {
		errs = append(errs, p.markFailed(unmarked))
	}
	now := time.Now()
	for i := 0; i < p.Instances; i++ {
		id := units.InstanceID(p.Project, i)
		c := crashlog.Crash{Time: now, Reason: why, Detail: detail}
		errs = append(errs, p.crashLogFailed(id, c, p.Crashes.Append(p.Project, id, c)))
	}
	// Queued, not waited for: the stop of the slice stops this probe
	// first (its unit is ordered after the instance), and a probe that
	// waited for it would wait for itself.
	errs = append(errs, p.Systemd.StopQueued(ctx, units.Target(p.Project), units.Slice(p.Project)))
	return Missing, errors.Join(errs...)
}

func (p *Probe) emit(e journal.Event) error {
	e.Project, e.Instance, e.Port = p.Project, p.instanceID(), p.Port
	// Ties the verdict to one run of the instance (its InvocationID).
	e.Invocation = p.invocation
	err := p.Events.Emit(e)
	if p.Verdicts != nil && slices.Contains(journal.VerdictKinds, e.Kind) {
		if verr := p.Verdicts.Put(e); verr != nil {
			// The journal has it: a wait reads it there, a little later.
			p.Log.Printf("%s: verdict kept in the journal only: %v", p.instanceID(), verr)
		}
	}
	return err
}
