package wait

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/health"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/view"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// This file is the one wait loop of serve, start, restart and reload, as a
// pure step function: a Waiter holds what it has seen, step takes a
// snapshot of the world (unit states, the errored mark, the probe's
// verdicts, whether a process listens) and says what to print, whether the
// wait is over, why it failed, and what to look at next time. The driver
// (Drive, in drive.go) has a looker (look.go) do the looking.

// Mode is what a wait waits for.
type Mode int

const (
	// UntilOnline: every instance running and listening on its port and,
	// in cluster mode, confirmed by the reusePort probe; one line per step
	// ("api-0 online (pid 12)", "api-0 confirmed (reusePort)"). A crash
	// after that is the restart budget's business, not a reason to wait
	// for min_uptime_ms.
	UntilOnline Mode = iota
	// UntilBack: one instance after its restart: a new run, online,
	// listening again (when it listened before), confirmed; on one line
	// ("api-0 restarting… online, listening, confirmed (0.4s)").
	UntilBack
)

// Waiter is the state of one wait.
type Waiter struct {
	mode    Mode
	p       *config.Project
	ids     []int
	probe   bool // cluster mode: wait for the reusePort probe's verdict
	started time.Time

	// UntilBack
	before      view.UnitStatus // the run before the restart
	checkListen bool            // it listened before, so it must listen again

	online    []bool
	verdictOf []string // the run (invocationKey) the probe gave a verdict on
	listenOf  []string // UntilOnline: the run seen listening on its port
	reprobed  []string // the run whose lost probe was started again
	// slowSaid: UntilOnline: "not listening yet" was said for the
	// instance since it was last online (once for a crash loop, not once
	// per run).
	slowSaid []bool

	// UntilOnline: the runs that ended while waited for, said once per
	// distinct exit. exitOf is the last run seen ended (invocationKey),
	// lastExit how the last one said ended ("exit status 1: Error: ..."),
	// repeats how many ended the same way since, restartsAt the
	// instance's NRestarts when the last one was seen.
	exitOf     []string
	lastExit   []string
	repeats    []int
	restartsAt []uint32

	listening bool // UntilBack: the new run listens
	lineOpen  bool // UntilBack: the progress line is not finished

	// health: the project has an HTTP health check (health_path), and an
	// instance is done only once it has answered healthy (online means
	// healthy); healthyOf is the run found so. lastHealth is the last
	// state file read, for the timeout's message.
	health     bool
	healthyOf  []string
	lastHealth *health.State
	lastUnit   view.UnitStatus // UntilBack: the instance as last seen
}

// New is a wait in mode for instances ids of p, started at started.
func New(mode Mode, p *config.Project, ids []int, started time.Time) *Waiter {
	n := len(ids)
	return &Waiter{
		mode: mode, p: p, ids: ids, probe: p.Mode == config.Cluster, started: started,
		online: make([]bool, n), verdictOf: make([]string, n),
		listenOf: make([]string, n), slowSaid: make([]bool, n), reprobed: make([]string, n),
		exitOf: make([]string, n), lastExit: make([]string, n), repeats: make([]int, n), restartsAt: make([]uint32, n),
		health: p.HealthChecked(), healthyOf: make([]string, n),
	}
}

// snapshot is what the driver saw at one tick.
type snapshot struct {
	now     time.Time
	units   []view.UnitStatus // one per waited-for instance
	errored string            // the project's errored mark, "" if none
	// events are the probe's verdicts since needs.since; eventsErr why
	// they could not be read. Both empty when not asked for.
	events    []journal.Event
	eventsErr error
	// listen is whether the instance listens on its port (UntilBack,
	// when asked for); listenErr why that cannot be told. listens and
	// listenErrs are the same per instance (UntilOnline), for the running
	// instances not yet seen listening.
	listen     bool
	listenErr  error
	listens    []bool
	listenErrs []error
	// probes are the states of the waited-for instances' probe units
	// (bm2-probe@…), read with the verdicts; nil when they could not be.
	probes []view.UnitStatus
	// health is the health check's state file, read after a run of its
	// service (needs.health); nil, with healthErr, when it could not be
	// read (not there yet: no run has written it).
	health    *health.State
	healthErr error
	asked     needs
}

// needs is what the next snapshot must include besides unit states and
// the errored mark.
type needs struct {
	events bool      // the probe's verdicts...
	since  time.Time // ...logged since then
	listen bool      // whether the instance(s) listen
	health bool      // a run of the health check, and its state file
}

// failKind says why a wait ended without success.
type failKind int

const (
	failNone       failKind = iota
	failProject             // the project became errored (the errored mark)
	failInstance            // an instance failed or stopped
	failNotBack             // UntilBack: the restarted instance crashed
	failTimeout             // the driver's deadline (never from step)
	failJournalOff          // not a failure: verdicts cannot be read; warn and go on
)

// failure is what step found wrong, for the driver to explain.
type failure struct {
	kind   failKind
	k      int // index into ids
	unit   view.UnitStatus
	reason string // the instance's reason, or the errored mark
}

// stepResult is one step's outcome.
type stepResult struct {
	out  []string // text to print, as is
	done bool
	fail failure
	next needs
	// reprobe are the instances (indexes into ids) whose probe ended
	// without a verdict on their current run, to be started again.
	reprobe []int
	// exits are the runs found ended (and restarting), for the driver to
	// read what each logged and hand to Waiter.exited.
	exits []runEnded
}

// runEnded is a run of instance k (an index into ids) that ended: its
// state when seen so, and whether its lines are worth waiting for (see
// Waiter.exited).
type runEnded struct {
	k      int
	unit   view.UnitStatus
	settle bool
}

// lostProbe is ProbeLost for instance k, unless its probe was started
// again for this run already.
func (w *Waiter) lostProbe(s snapshot, k int, u view.UnitStatus) bool {
	if k >= len(s.probes) || w.reprobed[k] == invocationKey(u) {
		return false
	}
	return view.ProbeLost(u, s.probes[k], s.now)
}

// invocationKey identifies one run of a unit.
func invocationKey(u view.UnitStatus) string {
	if u.InvocationID != "" {
		return u.InvocationID
	}
	return u.ActiveEnter.UTC().Format(time.RFC3339Nano)
}

// settled tells whether an instance has run for min_uptime_ms: running,
// with a main process, for at least that long.
func settled(u view.UnitStatus, p *config.Project, now time.Time) bool {
	return view.Up(u) && now.Sub(u.ActiveEnter) >= p.MinUptime
}

// needsListen tells which instances the driver must look at for a
// listener: running ones not yet seen listening in this run.
func (w *Waiter) needsListen(k int, u view.UnitStatus) bool {
	return view.Up(u) && w.listenOf[k] != invocationKey(u)
}

// seenListening tells whether instance k's run u has been seen listening on
// its port in this run (a worker: has stayed up min_uptime_ms); what the
// driver must look at next for it goes into r.
func (w *Waiter) seenListening(k int, u view.UnitStatus, s snapshot, r *stepResult) bool {
	id := units.InstanceID(w.p.Name, w.ids[k])
	key := invocationKey(u)
	if w.listenOf[k] != key && w.p.IsWorker() {
		// No port to listen on: a worker is online once its run
		// has stayed up min_uptime_ms.
		if !settled(u, w.p, s.now) {
			return false
		}
		w.listenOf[k] = key
	}
	if w.listenOf[k] == key {
		return true
	}
	if !s.asked.listen || k >= len(s.listens) {
		r.next.listen = true
		return false
	}
	switch {
	case s.listens[k]:
		w.listenOf[k] = key
	case s.listenErrs[k] != nil && settled(u, w.p, s.now):
		// Its sockets cannot be read: min_uptime_ms it is.
		w.listenOf[k] = key
	case settled(u, w.p, s.now) && !w.slowSaid[k]:
		r.out = append(r.out, fmt.Sprintf("%s running (pid %d), not listening on port %d yet\n", id, u.MainPID, w.p.InstancePort(w.ids[k])))
		w.slowSaid[k] = true
	}
	if w.listenOf[k] != key {
		r.next.listen = true
		return false
	}
	return true
}

// confirm reads the probe's verdicts for the online instances unconfirmed
// (events were asked for), starts again a probe that ended without one,
// and returns those still unconfirmed.
func (w *Waiter) confirm(s snapshot, unconfirmed []int, r *stepResult) []int {
	r.out = append(r.out, w.verdicts(s, unconfirmed)...)
	if s.eventsErr != nil {
		r.fail.kind = failJournalOff
	}
	var still []int
	for _, k := range unconfirmed {
		if w.probe && w.verdictOf[k] != invocationKey(s.units[k]) {
			still = append(still, k)
		}
	}
	for _, k := range still {
		if u := s.units[k]; w.lostProbe(s, k, u) {
			w.reprobed[k] = invocationKey(u)
			r.reprobe = append(r.reprobe, k)
			r.out = append(r.out, fmt.Sprintf("%s: its reusePort probe ended without a verdict; starting the probe again\n",
				units.InstanceID(w.p.Name, w.ids[k])))
		}
	}
	return still
}

// step advances the wait by one snapshot.
func (w *Waiter) step(s snapshot) stepResult {
	if s.errored != "" {
		return w.failed(failure{kind: failProject, reason: s.errored})
	}
	if w.mode == UntilBack {
		return w.stepBack(s)
	}
	var r stepResult
	var unconfirmed []int
	for k, u := range s.units {
		id := units.InstanceID(w.p.Name, w.ids[k])
		st, reason := view.ProjectInstanceState(u, w.p.MaxRestarts)
		switch st {
		case view.StateOnline:
			if !view.Up(u) || !w.seenListening(k, u, s, &r) {
				break
			}
			key := invocationKey(u)
			if !w.online[k] {
				r.out = append(r.out, w.flushExits(k)...)
				r.out = append(r.out, fmt.Sprintf("%s online (pid %d)\n", id, u.MainPID))
				w.online[k] = true
				w.lastExit[k], w.slowSaid[k] = "", false // a crash after this is news
			}
			if w.probe && w.verdictOf[k] != key {
				unconfirmed = append(unconfirmed, k)
			}
			continue
		case view.StateErrored, view.StateStopped:
			r.fail = failure{kind: failInstance, k: k, unit: u, reason: reason}
			r.out = append(r.out, w.flushAllExits()...)
			return r
		case view.StateWaiting:
			// Said once per distinct exit, once the driver has read what
			// the run logged (Waiter.exited).
			if key := invocationKey(u); w.exitOf[k] != key {
				w.exitOf[k] = key
				r.exits = append(r.exits, runEnded{k: k, unit: u, settle: w.lastExit[k] == "" || w.lastExit[k] != ExitText(u, "")})
			}
		}
		w.online[k] = false
	}
	if len(unconfirmed) > 0 && s.asked.events {
		unconfirmed = w.confirm(s, unconfirmed, &r)
	}
	r.out = append(r.out, w.healthy(s, &r)...)
	if len(unconfirmed) > 0 {
		// Ask for the verdicts since the oldest unconfirmed run came online.
		since := s.units[unconfirmed[0]].ActiveEnter
		for _, k := range unconfirmed {
			if s.units[k].ActiveEnter.Before(since) {
				since = s.units[k].ActiveEnter
			}
		}
		r.next.events, r.next.since = true, since
	}
	r.done = true
	for k := range s.units {
		key := invocationKey(s.units[k])
		r.done = r.done && w.online[k] && (!w.probe || w.verdictOf[k] == key) && (!w.health || w.healthyOf[k] == key)
	}
	return r
}

// exited says, for run u of instance k that ended and is restarting,
// what to print: "api-0 exited (exit-code, exit status 1), restarting:
// Error: Cannot find module './config.json'" for an exit unlike the last
// one said (its exit status and first error line: firstErr, escaped and
// cut here), nothing for the same again (counted, and said by
// flushExits). Runs that ended between two looks count too (NRestarts).
func (w *Waiter) exited(k int, u view.UnitStatus, firstErr string) []string {
	n := 1
	if w.exitOf[k] != "" && u.NRestarts > w.restartsAt[k] && w.lastExit[k] != "" {
		n = int(u.NRestarts - w.restartsAt[k])
	}
	w.restartsAt[k] = u.NRestarts
	kind := ExitText(u, "")
	if firstErr != "" {
		kind += ": " + reason.Clean(firstErr)
	}
	if kind == w.lastExit[k] {
		w.repeats[k] += n
		return nil
	}
	out := w.flushExits(k)
	w.lastExit[k], w.repeats[k] = kind, n-1
	how := ExitText(u, view.ResultReason(u.Result))
	if how != "" {
		how = " (" + how + ")"
	}
	line := fmt.Sprintf("%s exited%s, restarting", units.InstanceID(w.p.Name, w.ids[k]), how)
	if firstErr != "" {
		line += ": " + reason.Clean(firstErr)
	}
	return append(out, line+"\n")
}

// flushExits says how many more runs of instance k ended as the last
// exit said: "api-0 exited the same way 15 more times".
func (w *Waiter) flushExits(k int) []string {
	n := w.repeats[k]
	w.repeats[k] = 0
	switch {
	case n <= 0:
		return nil
	case n == 1:
		return []string{fmt.Sprintf("%s exited the same way once more\n", units.InstanceID(w.p.Name, w.ids[k]))}
	}
	return []string{fmt.Sprintf("%s exited the same way %d more times\n", units.InstanceID(w.p.Name, w.ids[k]), n)}
}

// flushAllExits is flushExits for every instance, as the wait ends.
func (w *Waiter) flushAllExits() []string {
	var out []string
	for k := range w.repeats {
		out = append(out, w.flushExits(k)...)
	}
	return out
}

// healthy records, for every online instance the probe is done with
// whose current run has not answered healthy yet, whether the health
// check's state file says it has now, and asks for another run of the
// check while any has not. It returns what to print: "api-0 healthy
// (200 in 3ms)".
func (w *Waiter) healthy(s snapshot, r *stepResult) []string {
	if !w.health {
		return nil
	}
	if s.asked.health && s.health != nil {
		w.lastHealth = s.health
	}
	var out []string
	for k, u := range s.units {
		key := invocationKey(u)
		if !w.online[k] || (w.probe && w.verdictOf[k] != key) || w.healthyOf[k] == key {
			continue
		}
		id := units.InstanceID(w.p.Name, w.ids[k])
		if s.asked.health && s.health != nil {
			if e, ok := s.health.Of(id, u.InvocationID); ok && e.Status == health.Healthy {
				w.healthyOf[k] = key
				out = append(out, fmt.Sprintf("%s healthy (%s in %dms)\n", id, e.Last, e.LatencyMS))
				continue
			}
		}
		r.next.health = true
	}
	return out
}

// healthWord is what the last state file read says of the current run
// u of instance k: "starting, last check refused"; "" when it says
// nothing of it.
func (w *Waiter) healthWord(k int, u view.UnitStatus) string {
	if w.lastHealth == nil {
		return ""
	}
	e, ok := w.lastHealth.Of(units.InstanceID(w.p.Name, w.ids[k]), u.InvocationID)
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s, last check %s", view.HealthCell(string(e.Status), &e.Failures, &e.Limit), e.Last)
}

// verdicts prints and records the verdicts found for unconfirmed
// instances. Without a journal there is nothing to wait for: the wait goes
// on without the probe.
func (w *Waiter) verdicts(s snapshot, unconfirmed []int) []string {
	var out []string
	if s.eventsErr != nil {
		w.probe = false
		for _, k := range unconfirmed {
			w.verdictOf[k] = invocationKey(s.units[k])
		}
		return nil
	}
	for _, k := range unconfirmed {
		u, id := s.units[k], units.InstanceID(w.p.Name, w.ids[k])
		v, ev := view.ReuseportVerdict(u, id, s.events)
		switch v {
		case view.VerdictConfirmed:
			out = append(out, fmt.Sprintf("%s confirmed (reusePort)\n", id))
		case view.VerdictNoListener:
			out = append(out, fmt.Sprintf("%s not confirmed: %s\n", id, ev.Message))
		default:
			continue // missing: the errored mark ends the wait
		}
		w.verdictOf[k] = invocationKey(u)
	}
	return out
}

// stepBack is step for one restarted instance.
func (w *Waiter) stepBack(s snapshot) stepResult {
	var r stepResult
	u := s.units[0]
	w.lastUnit = u
	id := units.InstanceID(w.p.Name, w.ids[0])
	state, reason := view.ProjectInstanceState(u, w.p.MaxRestarts)
	newRun := invocationKey(u) != invocationKey(w.before) || w.before.MainPID == 0
	switch {
	case state == view.StateWaiting || state == view.StateErrored || state == view.StateStopped:
		return w.failed(failure{kind: failNotBack, unit: u, reason: reason})
	case !w.online[0] && newRun && view.Up(u):
		w.online[0] = true
		r.out = append(r.out, "online")
	}
	if !w.online[0] {
		return r
	}
	if !w.listening {
		if !s.asked.listen {
			r.next.listen = true
			return r
		}
		switch {
		case s.listenErr != nil:
			w.listening = true
			r.out = append(r.out, fmt.Sprintf(", listening unknown (%v)", s.listenErr))
		case s.listen:
			w.listening = true
			r.out = append(r.out, ", listening")
		default:
			r.next.listen = true
			return r
		}
	}
	if w.probe && w.verdictOf[0] != invocationKey(u) {
		if !s.asked.events {
			r.next = needs{events: true, since: u.ActiveEnter}
			return r
		}
		v, ev := view.ReuseportVerdict(u, id, s.events)
		switch {
		case s.eventsErr != nil:
			w.verdictOf[0] = invocationKey(u)
			r.out = append(r.out, fmt.Sprintf(", not confirmed (cannot read the journal: %v)", s.eventsErr))
		case v == view.VerdictConfirmed:
			w.verdictOf[0] = invocationKey(u)
			r.out = append(r.out, ", confirmed")
		case v == view.VerdictNoListener:
			w.verdictOf[0] = invocationKey(u)
			r.out = append(r.out, fmt.Sprintf(", not confirmed (%s)", ev.Message))
		default:
			if w.lostProbe(s, 0, u) {
				// Not said: the progress line is open; the new verdict is.
				w.reprobed[0] = invocationKey(u)
				r.reprobe = []int{0}
			}
			r.next = needs{events: true, since: u.ActiveEnter}
			return r
		}
	}
	if w.health && w.healthyOf[0] != invocationKey(u) {
		if s.asked.health && s.health != nil {
			w.lastHealth = s.health
			if e, ok := s.health.Of(id, u.InvocationID); ok && e.Status == health.Healthy {
				w.healthyOf[0] = invocationKey(u)
				r.out = append(r.out, ", healthy")
			}
		}
		if w.healthyOf[0] != invocationKey(u) {
			r.next = needs{health: true}
			return r
		}
	}
	w.lineOpen = false
	r.out = append(r.out, fmt.Sprintf(" (%s)\n", Seconds(s.now.Sub(w.started))))
	r.done = true
	return r
}

// failed ends the wait; an unfinished progress line is closed first,
// and the exits not said yet are.
func (w *Waiter) failed(f failure) stepResult {
	return stepResult{fail: f, out: append(w.closeLine(), w.flushAllExits()...)}
}

// openLine begins an UntilBack wait's one progress line, "<id> <doing>…
// ", which the steps go on and closeLine ends.
func (w *Waiter) openLine(doing string) string {
	w.lineOpen = true
	return fmt.Sprintf("%s %s… ", units.InstanceID(w.p.Name, w.ids[0]), doing)
}

// closeLine finishes an open UntilBack line with "failed".
func (w *Waiter) closeLine() []string {
	if w.mode != UntilBack || !w.lineOpen {
		return nil
	}
	w.lineOpen = false
	if w.online[0] {
		return []string{", failed\n"}
	}
	return []string{"failed\n"}
}

// waitingFor says, for a timeout, what an UntilBack wait was still
// waiting for.
func (w *Waiter) waitingFor() string {
	switch {
	case !w.online[0]:
		return "to come online"
	case !w.listening:
		return fmt.Sprintf("to listen on port %d", w.p.InstancePort(w.ids[0]))
	case w.probe && w.verdictOf[0] != invocationKey(w.lastUnit):
		return fmt.Sprintf("for the reusePort probe to confirm it (`journalctl -u %s` shows the probe)", units.Probe(w.p.Name, w.ids[0]))
	}
	return "to answer " + w.healthWait(0, w.lastUnit)
}

// healthWait names the health check instance k waits to answer for the
// first time, and what its last check found: "its health check (GET
// /healthz on port 3101) with 2xx or 3xx: starting, last check refused
// (...)".
func (w *Waiter) healthWait(k int, u view.UnitStatus) string {
	found := w.healthWord(k, u)
	if found == "" {
		found = "not checked yet"
	}
	return fmt.Sprintf("its health check (GET %s on port %d) with 2xx or 3xx: %s (`journalctl -u %s` shows the checks)",
		w.p.Health.Path, w.p.HealthPort(w.ids[k]), found, units.HealthService(w.p.Name))
}

// healthyNow tells, for the timeout's message, which instances have
// answered healthy in their current run (all, without a check).
func (w *Waiter) healthyNow(last []view.UnitStatus) []bool {
	out := make([]bool, len(last))
	for k, u := range last {
		out[k] = !w.health || w.healthyOf[k] == invocationKey(u)
	}
	return out
}

// listened tells, for the timeout's message, which instances were seen
// listening in their current run.
func (w *Waiter) listened(last []view.UnitStatus) []bool {
	out := make([]bool, len(last))
	for k, u := range last {
		out[k] = view.Up(u) && w.listenOf[k] == invocationKey(u)
	}
	return out
}

// judged tells, for the timeout's message, which instances the probe has
// given a verdict on in their current run.
func (w *Waiter) judged(last []view.UnitStatus) []bool {
	out := make([]bool, len(last))
	for k, u := range last {
		out[k] = !w.probe || w.verdictOf[k] == invocationKey(u)
	}
	return out
}

// ExitText explains how an instance's last run ended: the reason (Result)
// and, when known, the exit status or signal.
func ExitText(u view.UnitStatus, reason string) string {
	var detail string
	switch u.ExecMainCode {
	case 1: // CLD_EXITED
		detail = fmt.Sprintf("exit status %d", u.ExecMainStatus)
		if name := spawnStatus[u.ExecMainStatus]; name != "" {
			detail += "/" + name
		}
	case 2, 3: // CLD_KILLED, CLD_DUMPED
		detail = "signal " + signalName(u.ExecMainStatus)
	}
	switch {
	case reason == "" && detail == "":
		return ""
	case reason == "":
		return detail
	case detail == "" || (reason == "exit-code" && u.ExecMainCode != 1):
		return reason
	}
	return reason + ", " + detail
}

// spawnStatus names the exit statuses systemd gives a process it could
// not start (systemd.exec(5), "Process Exit Codes"), as systemctl shows
// them: "exit status 233/RUNTIME_DIRECTORY".
var spawnStatus = map[int32]string{
	200: "CHDIR", 201: "NICE", 202: "FDS", 203: "EXEC", 204: "MEMORY", 205: "LIMITS", 206: "OOM_ADJUST",
	207: "SIGNAL_MASK", 208: "STDIN", 209: "STDOUT", 210: "CHROOT", 211: "IOPRIO", 212: "TIMERSLACK",
	213: "SECUREBITS", 214: "SETSCHEDULER", 215: "CPUAFFINITY", 216: "GROUP", 217: "USER",
	218: "CAPABILITIES", 219: "CGROUP", 220: "SETSID", 221: "CONFIRM", 222: "STDERR", 224: "PAM",
	225: "NETWORK", 226: "NAMESPACE", 227: "NO_NEW_PRIVILEGES", 228: "SECCOMP", 229: "SELINUX_CONTEXT",
	230: "PERSONALITY", 231: "APPARMOR_PROFILE", 232: "ADDRESS_FAMILIES", 233: "RUNTIME_DIRECTORY",
	235: "CHOWN", 236: "SMACK_PROCESS_LABEL", 237: "KEYRING", 238: "STATE_DIRECTORY",
	239: "CACHE_DIRECTORY", 240: "LOGS_DIRECTORY", 241: "CONFIGURATION_DIRECTORY", 242: "NUMA_POLICY",
	243: "CREDENTIALS", 245: "BPF",
}

// signalName names a signal number, "SIGKILL"; a number it does not know
// stays a number.
func signalName(n int32) string {
	if s := unix.SignalName(syscall.Signal(n)); s != "" {
		return s
	}
	return fmt.Sprint(n)
}

// Seconds renders a duration as "1.2s".
func Seconds(d time.Duration) string {
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// JoinIDs is instances ids of p by their ids, "api-0, api-1".
func JoinIDs(p *config.Project, ids []int) string {
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = units.InstanceID(p.Name, id)
	}
	return strings.Join(names, ", ")
}
