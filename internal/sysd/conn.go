package sysd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	sddbus "github.com/coreos/go-systemd/v22/dbus"
	"github.com/godbus/dbus/v5"
)

// ConnectTimeout bounds how long one connection attempt waits before it
// decides that systemd is not reachable.
const ConnectTimeout = 10 * time.Second

// ReconnectWindow is how long a call keeps trying after the connection
// to systemd was lost, or could not be made, on a host booted with
// systemd. `systemctl daemon-reexec` (which Debian's systemd package runs
// on every upgrade) closes every connection and leaves the manager
// unreachable for a moment, and a restart of dbus-daemon does the same
// to the system bus; neither means systemd is gone. Past the window the
// call fails as unreachable.
const ReconnectWindow = 15 * time.Second

// pollEvery is how often a job wait looks at the unit as well as for
// the job's JobRemoved signal: a signal sent while the waiter was
// disconnected (a re-exec, a bus restart), or before systemd was back on
// the bus, is never delivered, and only the unit's state tells.
const pollEvery = time.Second

// manager is the part of go-systemd's connection bm2 uses; *sddbus.Conn
// is one, and the tests fake it to lose the connection at will.
type manager interface {
	ReloadContext(ctx context.Context) error
	StartUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	StopUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	RestartUnitContext(ctx context.Context, name, mode string, ch chan<- string) (int, error)
	ResetFailedUnitContext(ctx context.Context, name string) error
	GetUnitPropertiesContext(ctx context.Context, unit string) (map[string]any, error)
	GetUnitTypePropertiesContext(ctx context.Context, unit, unitType string) (map[string]any, error)
	ListUnitsByPatternsContext(ctx context.Context, states, patterns []string) ([]sddbus.UnitStatus, error)
	ListUnitsByNamesContext(ctx context.Context, units []string) ([]sddbus.UnitStatus, error)
	GetUnitPropertyContext(ctx context.Context, unit, property string) (*sddbus.Property, error)
	GetServicePropertyContext(ctx context.Context, service, property string) (*sddbus.Property, error)
	Connected() bool
	Close()
}

// Conn is a connection to systemd's manager. It outlives the D-Bus
// connection under it: a call that finds the connection lost dials
// again and runs again (see [ReconnectWindow]), and a job wait that lost
// its signal reads the unit's state instead.
type Conn struct {
	what   string
	dial   func(context.Context) (manager, error)
	retry  func() bool // whether a failed dial is worth another try
	window time.Duration
	poll   time.Duration
	grace  time.Duration // signalGrace

	mu     sync.Mutex
	m      manager
	busy   int // calls and job waits under way (Idle leaves their connection be)
	closed bool
	dialed bool // a connection was made once: a missing socket is then a gap
	// absent tells whether a first dial's error means the socket is not
	// there for good (nil: every first failure is a gap too).
	absent func(error) bool
}

// errClosed is a call on a Conn after Close: not a gap to wait out.
var errClosed = errors.New("the connection to systemd was closed")

// Connect connects to the system manager as systemctl does: as root over
// systemd's private socket, else (or when that socket cannot be reached)
// over the system bus. An error means systemd is not reachable
// ([IsUnreachable]). The connection lives until Close; a lost one is
// made again by the next call.
//
// Root goes straight to systemd: through the bus every call and answer
// is relayed by dbus-daemon, which took a third of a hundred projects'
// `bm2 list` (measured in bench/, "One scrape of bm2 metrics").
func Connect(ctx context.Context) (*Conn, error) {
	root := os.Geteuid() == 0
	// A user's first connection finding no bus socket: no bus daemon on
	// this host (dbus.socket keeps the socket across a restart of the
	// daemon), not a gap to wait out.
	absent := func(err error) bool { return !root && errors.Is(err, syscall.ENOENT) }
	what := "the system bus"
	if root {
		what = "systemd (its private socket, or the system bus)"
	}
	return open(ctx, what, Booted, absent, func(ctx context.Context) (*sddbus.Conn, error) {
		if root {
			conn, err := privateConnection(ctx, SystemPrivateSocket, os.Getuid())
			if err == nil {
				return conn, nil
			}
			// While systemd re-executes its socket refuses for a moment;
			// the bus (dbus.socket keeps it) may answer, or refuse too:
			// then the private socket's error says more.
			if bus, berr := sddbus.NewSystemConnectionContext(ctx); berr == nil {
				return bus, nil
			}
			return nil, err
		}
		return sddbus.NewSystemConnectionContext(ctx)
	})
}

// ConnectPrivate connects to systemd's private socket, /run/systemd/private:
// root only, no bus daemon, no environment.
func ConnectPrivate(ctx context.Context) (*Conn, error) {
	return open(ctx, "systemd's private socket", Booted, nil, func(ctx context.Context) (*sddbus.Conn, error) {
		return privateConnection(ctx, SystemPrivateSocket, os.Getuid())
	})
}

// SystemPrivateSocket is the system manager's private socket.
const SystemPrivateSocket = "/run/systemd/private"

// privateConnection connects to a manager's private socket (no bus
// daemon, no Hello) with one D-Bus connection for calls and signals
// alike, authenticated as uid with EXTERNAL, as systemctl does.
// go-systemd would dial two (calls on one, the signals it dispatches on
// the other), but systemd sends every signal to each connection on its
// private socket, asked for or not: a second connection doubles what PID
// 1 sends and what this process reads, for nothing (godbus serves calls
// and signals on one connection, and closing it twice is harmless).
func privateConnection(ctx context.Context, socket string, uid int) (*sddbus.Conn, error) {
	var conn *dbus.Conn
	return sddbus.NewConnection(func() (*dbus.Conn, error) {
		if conn != nil {
			return conn, nil
		}
		c, err := dbus.Dial("unix:path="+socket, dbus.WithContext(ctx))
		if err != nil {
			return nil, err
		}
		if err := c.Auth([]dbus.Auth{dbus.AuthExternal(strconv.Itoa(uid))}); err != nil {
			c.Close()
			return nil, err
		}
		conn = c
		return c, nil
	})
}

// ConnectUser connects to a user's own manager (systemd --user) through
// its private socket, $XDG_RUNTIME_DIR/systemd/private: systemd's own
// socket, which needs no bus daemon (so no dbus-user-session package) and
// no environment. Only the user (and root) may connect to it.
func ConnectUser(ctx context.Context, socket string) (*Conn, error) {
	if _, err := os.Stat(socket); err != nil {
		return nil, unreachable(fmt.Errorf("your systemd user manager is not running (no %s)", socket))
	}
	// The manager re-executing removes and re-creates its socket: retry
	// while its runtime directory (the user's session) is still there.
	alive := func() bool { _, err := os.Stat(filepath.Dir(filepath.Dir(socket))); return err == nil }
	return open(ctx, "your systemd user manager ("+socket+")", alive, nil, func(ctx context.Context) (*sddbus.Conn, error) {
		return privateConnection(ctx, socket, os.Geteuid())
	})
}

// Booted tells whether this host (this mount namespace) was booted with
// systemd as PID 1, as sd_booted(3) does: /run/systemd/system exists.
func Booted() bool {
	fi, err := os.Lstat("/run/systemd/system")
	return err == nil && fi.IsDir()
}

// open makes the first connection, with the same retries as a lost one:
// a command started while systemd re-executes waits for it.
func open(ctx context.Context, what string, retry func() bool, absent func(error) bool, connect func(context.Context) (*sddbus.Conn, error)) (*Conn, error) {
	c := &Conn{
		what:   what,
		retry:  retry,
		absent: absent,
		window: ReconnectWindow,
		poll:   pollEvery,
		grace:  signalGrace,
		dial: func(ctx context.Context) (manager, error) {
			m, err := dial(ctx, what, connect)
			if err != nil {
				return nil, err
			}
			return m, nil
		},
	}
	if err := c.call(ctx, "connect to "+what, func(manager) error { return nil }); err != nil {
		return nil, err
	}
	return c, nil
}

func dial(ctx context.Context, what string, connect func(context.Context) (*sddbus.Conn, error)) (*sddbus.Conn, error) {
	type result struct {
		conn *sddbus.Conn
		err  error
	}
	// The connection must outlive this call (godbus closes it when its
	// context ends), so it gets a context of its own.
	ch := make(chan result, 1)
	go func() {
		c, err := connect(context.WithoutCancel(ctx))
		ch <- result{c, err}
	}()
	timer := time.NewTimer(ConnectTimeout)
	defer timer.Stop()
	late := func() {
		go func() { // do not leak a connection that arrives late
			if r := <-ch; r.conn != nil {
				r.conn.Close()
			}
		}()
	}
	select {
	case r := <-ch:
		if r.err != nil {
			return nil, unreachable(fmt.Errorf("connect to %s: %w", what, r.err))
		}
		return r.conn, nil
	case <-timer.C:
		late()
		return nil, unreachable(fmt.Errorf("connect to %s: no answer within %s", what, ConnectTimeout))
	case <-ctx.Done():
		late()
		return nil, ctx.Err()
	}
}

// live returns the current connection, dialling a new one when there is
// none or it was lost.
func (c *Conn) live(ctx context.Context) (manager, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	if c.m != nil && c.m.Connected() {
		return c.m, nil
	}
	if c.m != nil {
		c.m.Close()
		c.m = nil
	}
	m, err := c.dial(ctx)
	if err != nil {
		if !c.dialed && c.absent != nil && c.absent(err) {
			return nil, &firstDialError{err}
		}
		return nil, err
	}
	c.m, c.dialed = m, true
	return m, nil
}

// firstDialError is a first connection refused for good (see live).
type firstDialError struct{ err error }

func (e *firstDialError) Error() string { return e.err.Error() }
func (e *firstDialError) Unwrap() error { return e.err }

// drop forgets m after it failed as a lost connection, so that the next
// call dials again.
func (c *Conn) drop(m manager) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == m {
		c.m.Close()
		c.m = nil
	}
}

// call runs fn on a live connection. When the connection is lost, or
// cannot be made, and the host runs systemd, it waits a little and runs
// fn again on a new one, for up to the window from the first failure;
// any other failure is returned at once, as mapErr words it. Only calls
// that may be repeated go through call as they are (reads, start, stop,
// reset-failed, daemon-reload); restart checks first (see job).
func (c *Conn) call(ctx context.Context, what string, fn func(manager) error) error {
	defer c.hold()()
	var deadline time.Time
	backoff := 20 * time.Millisecond
	for {
		m, err := c.live(ctx)
		if err == nil {
			if err = fn(m); err == nil {
				return nil
			}
			if !lost(err) {
				return mapErr(what, err)
			}
			c.drop(m)
		} else if !lost(err) {
			return err
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(c.window)
		}
		if !c.retry() || !time.Now().Before(deadline) {
			if !IsUnreachable(err) {
				err = unreachable(fmt.Errorf("%s: %w", what, err))
			}
			if c.retry() {
				return &UnreachableError{err: fmt.Errorf("%w (tried again for %s)", errors.Unwrap(err), c.window), Retried: true}
			}
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", what, ctx.Err())
		}
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// lost tells whether err means the connection went away (or systemd was
// not on the bus for a moment), as opposed to an answer.
func lost(err error) bool {
	var first *firstDialError
	if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) || errors.Is(err, errClosed) || errors.As(err, &first) {
		return false // a refusal, not a gap
	}
	// net.ErrClosed: a read in flight on a connection that another
	// read of the same Units found lost, and closed (drop).
	if IsUnreachable(err) || errors.Is(err, dbus.ErrClosed) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ENOENT) {
		return true
	}
	switch errorName(err) {
	case "org.freedesktop.DBus.Error.ServiceUnknown",
		"org.freedesktop.DBus.Error.NameHasNoOwner",
		"org.freedesktop.DBus.Error.NoReply",
		"org.freedesktop.DBus.Error.Disconnected":
		return true
	}
	return false
}

// Close releases the connection.
func (c *Conn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.m != nil {
		c.m.Close()
		c.m = nil
	}
	return nil
}

// Idle closes the connection under c until its next call, which dials
// again; c stays usable. systemd sends every signal (each unit's every
// change, every job) to each connection on its private socket, asked for
// or not, and builds each message once per connection: n processes that
// each hold a connection while they wait for something else make every
// change cost PID 1 n messages, and a boot of n instances n² of them. A
// holder that waits between calls (the probe while its app starts)
// should hold none. A call or job wait under way keeps its connection.
func (c *Conn) Idle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy == 0 && c.m != nil {
		c.m.Close()
		c.m = nil
	}
}

// hold counts a call or job wait under way until the returned func runs.
func (c *Conn) hold() func() {
	c.mu.Lock()
	c.busy++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.busy--
		c.mu.Unlock()
	}
}

// Reload is `systemctl daemon-reload`: generators run again and unit files
// are re-read. It returns when the reload is complete.
func (c *Conn) Reload(ctx context.Context) error {
	return c.call(ctx, "reload systemd (daemon-reload)", func(m manager) error { return m.ReloadContext(ctx) })
}

type jobFunc func(m manager) func(ctx context.Context, name, mode string, ch chan<- string) (int, error)

func startFn(m manager) func(context.Context, string, string, chan<- string) (int, error) {
	return m.StartUnitContext
}

func stopFn(m manager) func(context.Context, string, string, chan<- string) (int, error) {
	return m.StopUnitContext
}

func restartFn(m manager) func(context.Context, string, string, chan<- string) (int, error) {
	return m.RestartUnitContext
}

// pendingJob is a job systemd accepted, to be waited for.
type pendingJob struct {
	verb, unit string
	id         uint32        // 0: a job found on the unit after a reconnect
	ch         <-chan string // its JobRemoved result, on the connection that queued it
	on         manager       // that connection; nil when the job was queued on a lost one
	before     string        // the unit's InvocationID before the job
}

// signalGrace is how long a wait gives a job's JobRemoved signal once the
// job is no longer on the unit while the connection that queued it is
// still up: go-systemd reads signals on a connection of their own, so
// the answer to the poll may come first.
const signalGrace = 2 * time.Second

// job enqueues a job in "replace" mode and waits for its result.
func (c *Conn) job(ctx context.Context, verb, unit string, fn jobFunc) error {
	defer c.hold()()
	j, err := c.enqueue(ctx, verb, unit, fn, true)
	if err != nil || j == nil {
		return err
	}
	return c.wait(ctx, *j)
}

func (c *Conn) enqueue(ctx context.Context, verb, unit string, fn jobFunc, wait bool) (*pendingJob, error) {
	// A restart asked for again after the connection was lost in the
	// middle of asking could restart the unit twice: first look whether
	// the first request got through (a job on the unit, or a new run).
	// The start of a unit systemd has not loaded is its own error; a
	// stop of one, nothing to do: neither needs the state before. Nor
	// does a start not waited for (StartQueued): only a wait that lost its
	// signal infers the result from it, and reading a unit systemd has
	// not loaded (a oneshot collected since its last run) loads it, once
	// more for every connection to hear of.
	var before string
	if verb == "restart" || (wait && verb != "stop") {
		st, err := c.Unit(ctx, unit)
		if err != nil {
			return nil, err
		}
		before = st.InvocationID
	}
	// Buffered: go-systemd blocks its signal dispatch until the result is
	// read, and the caller may stop reading when ctx ends.
	ch := make(chan string, 1)
	j := &pendingJob{verb: verb, unit: unit, ch: ch, before: before}
	tries := 0
	err := c.call(ctx, verb+" "+unit, func(m manager) error {
		tries++
		if tries > 1 && verb == "restart" {
			props, err := m.GetUnitPropertiesContext(ctx, unit)
			if err != nil {
				return err
			}
			var st Status
			st.fill(props)
			if st.JobPending || st.InvocationID != before {
				j.ch, j.on = nil, nil // queued on the lost connection: its signal is gone
				return nil
			}
		}
		id, err := fn(m)(ctx, unit, "replace", ch)
		j.id, j.on = uint32(id), m
		return err
	})
	if err != nil {
		if verb == "stop" && IsNoSuchUnit(err) {
			return nil, nil // not loaded: nothing runs
		}
		return nil, err
	}
	return j, nil
}

// wait waits for the job's JobRemoved signal. Every poll it also reads
// the unit: once the job is no longer on it and no signal came, the
// signal was lost (systemd re-executed, or the bus restarted, in
// between), and the result is read from the unit's state instead.
func (c *Conn) wait(ctx context.Context, j pendingJob) error {
	t := time.NewTicker(c.poll)
	defer t.Stop()
	for {
		select {
		case res := <-j.ch:
			return jobResult(j.verb, j.unit, res)
		case <-ctx.Done():
			return fmt.Errorf("%s %s: waiting for the job: %w", j.verb, j.unit, ctx.Err())
		case <-t.C:
		}
		st, err := c.Unit(ctx, j.unit)
		if err != nil {
			return err
		}
		if (j.id != 0 && st.JobID == j.id) || (j.id == 0 && st.JobPending) {
			continue // still queued or running
		}
		if c.current(j.on) {
			// Its signal may be on its way: it still wins.
			g := time.NewTimer(c.grace)
			select {
			case res := <-j.ch:
				g.Stop()
				return jobResult(j.verb, j.unit, res)
			case <-ctx.Done():
				g.Stop()
				return fmt.Errorf("%s %s: waiting for the job: %w", j.verb, j.unit, ctx.Err())
			case <-g.C:
			}
			if st, err = c.Unit(ctx, j.unit); err != nil {
				return err
			}
		}
		return jobResult(j.verb, j.unit, inferResult(j.verb, j.before, st))
	}
}

// current tells whether m is the connection in use and up.
func (c *Conn) current(m manager) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return m != nil && c.m == m && m.Connected()
}

// inferResult is the result of a finished job whose JobRemoved signal
// was lost, as the unit's state tells it; before is the unit's
// InvocationID before a start or restart.
func inferResult(verb, before string, st Status) string {
	switch verb {
	case "stop":
		if st.ActiveState == "inactive" || st.ActiveState == "failed" {
			return "done"
		}
		return "canceled" // started again since
	default:
		switch {
		case st.ActiveState == "failed" || st.SubState == "auto-restart":
			return "failed"
		case st.ActiveState == "inactive" && st.InvocationID == before:
			return "canceled" // it never ran: replaced, or a dependency failed
		}
		return "done"
	}
}

func jobResult(verb, unit, res string) error {
	if res == "done" || res == "skipped" {
		return nil
	}
	return &JobError{Verb: verb, Unit: unit, Result: res}
}

// JobError is a job that did not end "done" (or "skipped").
type JobError struct {
	Verb, Unit string
	Result     string // canceled, timeout, failed, dependency, ...
}

func (e *JobError) Error() string {
	if e.Result == "dependency" {
		return fmt.Sprintf("%s %s: a unit it depends on failed (job result %q)", e.Verb, e.Unit, e.Result)
	}
	return fmt.Sprintf("%s %s: job %s", e.Verb, e.Unit, e.Result)
}

// Start starts a unit and waits for the job to finish.
func (c *Conn) Start(ctx context.Context, unit string) error {
	return c.job(ctx, "start", unit, startFn)
}

// StartQueued enqueues a start job for a unit and returns without waiting
// for it to finish.
func (c *Conn) StartQueued(ctx context.Context, unit string) error {
	_, err := c.enqueue(ctx, "start", unit, startFn, false)
	return err
}

// RestartQueued enqueues a restart job for a unit in "replace" mode and
// returns once systemd has it, without waiting for the stop (which may
// take the unit's whole stop timeout) or the start: the health check
// restarts one instance and goes on with the others. As with Restart, a
// request whose answer was lost is not asked for again when it got
// through.
func (c *Conn) RestartQueued(ctx context.Context, unit string) error {
	_, err := c.enqueue(ctx, "restart", unit, restartFn, false)
	return err
}

// Stop stops a unit and waits; stopping a unit systemd has not loaded is
// not an error.
func (c *Conn) Stop(ctx context.Context, unit string) error {
	return c.job(ctx, "stop", unit, stopFn)
}

// Restart restarts a unit and waits.
func (c *Conn) Restart(ctx context.Context, unit string) error {
	return c.job(ctx, "restart", unit, restartFn)
}

// StopQueued enqueues a stop job for every unit, in order, in "replace"
// mode, and returns once systemd has them, waiting for none of the stops:
// a reload retires its surge so, as the stop (a drain, then SIGTERM)
// serves nobody waiting, and the probe stops its project's target and
// slice so, which its instance's own stop is ordered after. Stopping a
// unit systemd has not loaded is not an error.
func (c *Conn) StopQueued(ctx context.Context, units ...string) error {
	var errs []error
	for _, u := range units {
		_, err := c.enqueue(ctx, "stop", u, stopFn, false)
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// ResetFailed is `systemctl reset-failed UNIT`: it forgets a failed state
// and the start-limit counter. A unit systemd does not know is not an
// error.
func (c *Conn) ResetFailed(ctx context.Context, unit string) error {
	err := c.call(ctx, "reset-failed "+unit, func(m manager) error { return m.ResetFailedUnitContext(ctx, unit) })
	if err == nil || IsNoSuchUnit(err) {
		return nil
	}
	return err
}

// unitsInFlight is how many units Units reads at once. Each read is two
// calls, answered in turn by systemd; with several in flight, bm2 decodes
// one answer while systemd writes the next, and the wire is never idle.
const unitsInFlight = 8

// Units reports the state of each named unit, in the order given. Units
// systemd does not know come back with LoadState "not-found". The units
// are read several at a time on the one connection; the first error ends
// the call.
func (c *Conn) Units(ctx context.Context, names []string) ([]Status, error) {
	out := make([]Status, len(names))
	err := each(ctx, len(names), unitsInFlight, func(ctx context.Context, k int) error {
		st, err := c.Unit(ctx, names[k])
		out[k] = st
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// each runs fn for k = 0..n-1, inFlight at a time (the calls share one
// connection, whose answers come in turn: with several in flight, bm2
// decodes one while systemd writes the next). The first error cancels
// the rest and is returned.
func each(ctx context.Context, n, inFlight int, fn func(ctx context.Context, k int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		once     sync.Once
		firstErr error
	)
	for range min(inFlight, n) {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, k); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// Unit reports the state of one unit.
func (c *Conn) Unit(ctx context.Context, name string) (Status, error) {
	var s Status
	// Both reads on one connection, again together after a reconnect, so
	// that the two halves describe the same moment as nearly as they can.
	err := c.call(ctx, "read the state of "+name, func(m manager) error {
		props, err := m.GetUnitPropertiesContext(ctx, name)
		if err != nil {
			return err
		}
		s = Status{Name: name, MemoryCurrent: Unknown, CPUUsageNSec: Unknown, TasksCurrent: Unknown, UID: NoID, GID: NoID}
		s.fill(props)
		// A unit systemd has no file for still has its type's interface,
		// but ask only services for theirs, and sockets and timers when
		// loaded: the other units bm2 reads are targets and slices.
		if IsService(name) {
			sp, err := m.GetUnitTypePropertiesContext(ctx, name, "Service")
			if err != nil {
				return err
			}
			s.fillService(sp)
		}
		if IsSocket(name) && s.LoadState == "loaded" {
			sp, err := m.GetUnitTypePropertiesContext(ctx, name, "Socket")
			if err != nil {
				return err
			}
			s.fillSocket(sp)
		}
		if IsTimer(name) && s.LoadState == "loaded" {
			tp, err := m.GetUnitTypePropertiesContext(ctx, name, "Timer")
			if err != nil {
				return err
			}
			s.fillTimer(tp)
		}
		return nil
	})
	if err != nil {
		return Status{}, err
	}
	return s, nil
}

// Loaded lists the units systemd currently has loaded whose names match
// any of the glob patterns (e.g. "bm2@api-*.service"), sorted by name.
// Only Name, LoadState, ActiveState and SubState are filled in.
func (c *Conn) Loaded(ctx context.Context, patterns []string) ([]Status, error) {
	var list []sddbus.UnitStatus
	err := c.call(ctx, "list units", func(m manager) (err error) {
		list, err = m.ListUnitsByPatternsContext(ctx, nil, patterns)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make([]Status, 0, len(list))
	for _, u := range list {
		out = append(out, Status{
			Name: u.Name, LoadState: u.LoadState, ActiveState: u.ActiveState, SubState: u.SubState,
			MemoryCurrent: Unknown, CPUUsageNSec: Unknown, TasksCurrent: Unknown, UID: NoID, GID: NoID,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Error names of systemd's and the bus's refusals.
const (
	errNoSuchUnit = "org.freedesktop.systemd1.NoSuchUnit"
)

// errorName returns the D-Bus error name of err, or "".
func errorName(err error) string {
	var v dbus.Error
	if errors.As(err, &v) {
		return v.Name
	}
	var p *dbus.Error
	if errors.As(err, &p) && p != nil {
		return p.Name
	}
	return ""
}

// IsNoSuchUnit tells whether systemd answered that it has no such unit.
func IsNoSuchUnit(err error) bool { return errorName(err) == errNoSuchUnit }

// DeniedError is a request the caller is not allowed to make (polkit or
// the bus said no): managing system services needs root.
type DeniedError struct{ err error }

func (e *DeniedError) Error() string { return e.err.Error() }
func (e *DeniedError) Unwrap() error { return e.err }

// UnreachableError means systemd could not be reached at all, as opposed
// to systemd refusing or failing a request. Retried is set when it was
// tried again for the whole ReconnectWindow on a host that runs systemd.
type UnreachableError struct {
	err     error
	Retried bool
}

func (e *UnreachableError) Error() string { return "systemd is not reachable: " + e.err.Error() }
func (e *UnreachableError) Unwrap() error { return e.err }

func unreachable(err error) error { return &UnreachableError{err: err} }

// Unreachable marks err as systemd not being reachable (for fakes).
func Unreachable(err error) error { return unreachable(err) }

// IsUnreachable tells whether err means systemd could not be reached.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}

// Retried tells whether err is systemd not answering on a host that runs
// it, after ReconnectWindow of trying again.
func Retried(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u) && u.Retried
}

// IsDenied tells whether err is a refusal for lack of privilege.
func IsDenied(err error) bool {
	var d *DeniedError
	return errors.As(err, &d)
}

// mapErr wraps a D-Bus failure with what bm2 was doing, classifying the
// refusals and the lost connections.
func mapErr(what string, err error) error {
	switch errorName(err) {
	case "org.freedesktop.DBus.Error.AccessDenied",
		"org.freedesktop.DBus.Error.InteractiveAuthorizationRequired":
		return &DeniedError{err: fmt.Errorf("%s: permission denied: %w", what, err)}
	case "org.freedesktop.DBus.Error.ServiceUnknown",
		"org.freedesktop.DBus.Error.NoReply",
		"org.freedesktop.DBus.Error.Disconnected":
		return unreachable(fmt.Errorf("%s: %w", what, err))
	}
	if errors.Is(err, dbus.ErrClosed) {
		return unreachable(fmt.Errorf("%s: %w", what, err))
	}
	return fmt.Errorf("%s: %w", what, err)
}
