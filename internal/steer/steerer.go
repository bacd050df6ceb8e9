package steer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"time"

	"golang.org/x/sys/unix"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/reason"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/sysd"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// The drain's timing: it looks at the instance's sockets every
// DrainPoll, and calls it idle once DrainSettle looks in a row found
// nothing queued, unread or unsent (a connection accepted just before
// the first look may have its request on the way).
const (
	DrainPoll   = 10 * time.Millisecond
	DrainSettle = 2
)

// Sockets is what steer add and drain read of the kernel's sockets
// (HostSockets: sock_diag and /proc).
type Sockets interface {
	Listeners(port int) ([]sockdiag.Listener, error)
	Established(port int) ([]sockdiag.Connection, error)
	// Holder finds a descriptor of one of the sockets among the
	// processes' (sockdiag.Holder).
	Holder(pids []uint32, inodes []uint64) (sockdiag.Holding, bool, error)
	// SocketsOf lists the socket inodes among a process's descriptors.
	SocketsOf(pid uint32) ([]uint64, error)
}

// Steerer is `bm2-probe steer add|drain <project>-<i>` for one instance
// of a cluster-mode project (system scope): Add puts the instance's
// listener in its port's kernel-steered turn (a [Group]), Drain takes
// it out before the instance stops and waits for its requests.
type Steerer struct {
	Project string
	Index   int // units.Surge for the surge
	// Systemd tells what the instance runs with (BM2_APP_PORT,
	// BM2_APP_INSTANCE, BM2_EXEC_MODE, BM2_DRAIN_MS), its processes, its
	// run (InvocationID) and, for the drain, its running peers.
	Systemd sysd.Reader
	Store   Store
	Sockets Sockets
	// Take copies descriptor fd of process pid into this one
	// (pidfd_open, pidfd_getfd: TakeFD).
	Take   func(pid uint32, fd int) (int, error)
	Events journal.Sink
	Clock  sysd.Clock
	Log    journal.Logf
}

func (s *Steerer) id() string { return units.InstanceID(s.Project, s.Index) }

// steered is what steer add and drain know of the instance.
type steered struct {
	st    sysd.Status
	port  int
	slot  int // BM2_APP_INSTANCE
	drain time.Duration
}

// instance reads the instance from systemd; ok is false (and said) when
// it is not a cluster-mode instance bm2 can steer.
func (s *Steerer) instance(ctx context.Context) (steered, bool, error) {
	unit := units.Instance(s.Project, s.Index)
	st, err := s.Systemd.Unit(ctx, unit)
	if err != nil {
		return steered{}, false, fmt.Errorf("ask systemd about %s: %w", unit, err)
	}
	return s.instanceOf(st)
}

// instanceOf is instance from a state of its unit read already.
func (s *Steerer) instanceOf(st sysd.Status) (steered, bool, error) {
	unit := units.Instance(s.Project, s.Index)
	var err error
	if st.LoadState != "" && st.LoadState != "loaded" {
		s.Log.Printf("%s is %s: nothing to steer", unit, st.LoadState)
		return steered{}, false, nil
	}
	if mode := st.Env("BM2_EXEC_MODE"); mode != string(config.Cluster) {
		s.Log.Printf("%s is not in cluster mode (BM2_EXEC_MODE=%q): its port is its own, nothing to steer", unit, mode)
		return steered{}, false, nil
	}
	in := steered{st: st}
	in.port, err = strconv.Atoi(st.Env("BM2_APP_PORT"))
	if err != nil || in.port < 1 || in.port > 65535 {
		return steered{}, false, fmt.Errorf("%s has no BM2_APP_PORT (is it a bm2 instance? run systemctl daemon-reload)", unit)
	}
	in.slot, err = strconv.Atoi(st.Env("BM2_APP_INSTANCE"))
	if err != nil || in.slot < 0 || in.slot >= MaxSlots {
		return steered{}, false, fmt.Errorf("%s has no BM2_APP_INSTANCE between 0 and %d", unit, MaxSlots-1)
	}
	in.drain = config.DefaultDrain
	if ms, err := strconv.ParseInt(st.Env("BM2_DRAIN_MS"), 10, 64); err == nil && ms >= 0 {
		in.drain = time.Duration(ms) * time.Millisecond
	}
	in.drain = drainBound(in.drain, st.TimeoutStop)
	return in, true, nil
}

// drainBound is how long a drain waits: drain_ms, but no longer than the
// instance's stop timeout (0: not known) less config.DrainMargin, since
// systemd's TimeoutStopSec= bounds the drain's ExecStop= too and a stop
// whose ExecStop= it cuts short fails.
func drainBound(drain, stopTimeout time.Duration) time.Duration {
	if stopTimeout > 0 {
		drain = min(drain, stopTimeout-config.DrainMargin)
	}
	return max(drain, 0)
}

// maxAddRounds bounds how often Add starts again because the instance
// restarted (a new InvocationID) while it was being added.
const maxAddRounds = 3

// Add puts the instance's listener in the project's group: the group
// pinned in Store (made, and pinned, when there is none or it is for
// another port), its program attached to the port, the listener in slot
// BM2_APP_INSTANCE and live. Where the host cannot steer it marks the
// project (once a boot, with a steering_unavailable event) and returns
// nil: the port keeps the kernel's hash.
func (s *Steerer) Add(ctx context.Context) error {
	for round := 1; ; round++ {
		in, ok, err := s.instance(ctx)
		if !ok || err != nil {
			return err
		}
		if !in.st.Running() {
			s.Log.Printf("%s is not running (%s/%s): nothing to steer", s.id(), in.st.ActiveState, in.st.SubState)
			return nil
		}
		if err := s.add(in); err != nil {
			return err
		}
		// A run that started meanwhile has a listener of its own: its
		// probe queues another start of this unit, which systemd merges
		// into this one while it runs, so this one adds it.
		now, err := s.Systemd.Unit(ctx, units.Instance(s.Project, s.Index))
		if err != nil || now.InvocationID == in.st.InvocationID || round == maxAddRounds {
			return nil
		}
		s.Log.Printf("%s restarted while it was added: adding its new run", s.id())
	}
}

func (s *Steerer) add(in steered) error {
	fd, ok, err := s.take(in)
	var te *takeError
	switch {
	case errors.As(err, &te) && (errors.Is(err, unix.EPERM) || errors.Is(err, unix.EACCES)):
		return s.unavailable(in, reason.NoPermission, fmt.Errorf("%w (copying another user's descriptor needs CAP_SYS_PTRACE and kernel.yama.ptrace_scope below 3)", te.err))
	case errors.As(err, &te) && errors.Is(err, unix.ENOSYS):
		return s.unavailable(in, reason.KernelTooOld, fmt.Errorf("%w (pidfd_getfd needs Linux 5.6; steering needs 5.14)", te.err))
	case errors.As(err, &te):
		return te.err
	case err != nil:
		return s.refused(in, err)
	case !ok:
		return nil
	}
	defer unix.Close(fd)
	unlock, err := s.Store.Lock(s.Project)
	if err != nil {
		return err
	}
	defer unlock()
	g, created, err := s.Store.Group(s.Project, in.port)
	if err != nil {
		return s.refused(in, err)
	}
	defer g.Close()
	how := ""
	if created {
		how = ", group pinned in " + s.Store.Dir(s.Project)
	}
	return s.refused(in, s.put(g, in, fd, how))
}

// takeError is pidfd_getfd's refusal, which Add tells apart from the
// rest (a host or a kernel that cannot steer).
type takeError struct{ err error }

func (e *takeError) Error() string { return e.err.Error() }
func (e *takeError) Unwrap() error { return e.err }

// take copies the instance's listener on its port into this process: ok
// is false (and said) when it holds none, or the descriptor changed
// before it was copied. A listener the group cannot take is an error
// (CheckListener), and so is a refused copy (*takeError).
func (s *Steerer) take(in steered) (fd int, ok bool, err error) {
	ls, err := s.Sockets.Listeners(in.port)
	if err != nil {
		return -1, false, err
	}
	inodes := make([]uint64, 0, len(ls))
	for _, l := range ls {
		inodes = append(inodes, l.Inode)
	}
	pids := in.st.PIDs()
	h, found, err := s.Sockets.Holder(pids, inodes)
	if err != nil {
		return -1, false, fmt.Errorf("find %s's listener on port %d: %w", s.id(), in.port, err)
	}
	if !found {
		s.Log.Printf("%s holds no listener on port %d (processes %v): nothing to steer", s.id(), in.port, pids)
		return -1, false, nil
	}
	fd, err = s.Take(h.PID, h.FD)
	if err != nil {
		return -1, false, &takeError{err}
	}
	// The descriptor may have been closed and its number reused since it
	// was looked at.
	var fst unix.Stat_t
	if err := unix.Fstat(fd, &fst); err != nil || fst.Ino != h.Inode {
		unix.Close(fd)
		s.Log.Printf("%s: fd %d of pid %d changed before it was copied: not steered this time", s.id(), h.FD, h.PID)
		return -1, false, nil
	}
	if _, err := CheckListener(fd, in.port); err != nil {
		unix.Close(fd)
		return -1, false, err
	}
	return fd, true, nil
}

// put puts the listener fd in the instance's slot of g, under the
// project's lock, attaching g's program to its port group first.
func (s *Steerer) put(g *Group, in steered, fd int, how string) error {
	if err := g.Attach(fd); err != nil {
		return err
	}
	if err := g.Add(in.slot, fd); err != nil {
		return err
	}
	// A live slot whose listener closed (an instance that crashed, or
	// was the last one in the turn when it stopped) would leave its
	// turns to the kernel's hash: out with it, now that this one is in.
	for _, other := range g.Live() {
		if other != in.slot && !g.Filled(other) {
			if err := g.Remove(other); err != nil {
				return err
			}
			s.Log.Printf("%s: slot %d has no listener: out of the turn", s.id(), other)
		}
	}
	s.Log.Printf("%s steered: slot %d, live %d%s", s.id(), in.slot, len(g.Live()), how)
	return nil
}

// refused is unavailable for what the group refuses: a host that
// cannot steer (*UnavailableError) or a listener it cannot take
// (*ListenerError); other errors are returned.
func (s *Steerer) refused(in steered, err error) error {
	if err == nil {
		return nil
	}
	var ue *UnavailableError
	var le *ListenerError
	switch {
	case errors.As(err, &ue):
		return s.unavailable(in, reason.Reason(ue.Reason), ue.Err)
	case errors.As(err, &le):
		return s.unavailable(in, reason.ListenerNotSteerable, le.Err)
	}
	return err
}

// unavailable says that the project's port keeps the kernel's hash, and
// why: in the instance's journal each time, as a steering_unavailable
// event the first time this boot (the project's mark in Store).
func (s *Steerer) unavailable(in steered, why reason.Reason, err error) error {
	s.Log.Printf("%s not steered (%s): %v; port %d keeps the kernel's hash", s.id(), why, err, in.port)
	first, merr := s.Store.MarkUnavailable(s.Project, string(why), err.Error())
	if merr != nil {
		// Said every time rather than never.
		s.Log.Printf("%s: cannot mark steering unavailable: %v", s.id(), merr)
		first = true
	}
	if !first {
		return nil
	}
	e, _ := reason.Explain(why, reason.Facts{Project: s.Project, Instance: s.id(), Port: in.port, Detail: err.Error()})
	return s.Events.Emit(journal.Event{
		Kind: journal.SteeringUnavailable, Project: s.Project, Instance: s.id(), Port: in.port,
		Invocation: in.st.InvocationID, Reason: why,
		Message: e.Message, Detail: fmt.Sprintf("%v; %s", err, e.FixLine()),
	})
}

// Drain takes the instance out of its port's turn before it stops, when
// it is in it and another instance is too (with none live the kernel's
// hash would place connections on every listener, this one too), and
// waits up to BM2_DRAIN_MS until it is idle: nothing in its listener's
// accept queue, and none of its connections on the port with bytes unread
// or unsent. A request the app has read and not answered yet has neither:
// the app's SIGTERM handler finishes it. Without a pinned group there is
// nothing to do.
func (s *Steerer) Drain(ctx context.Context) error {
	in, ok, err := s.instance(ctx)
	if !ok || err != nil {
		return err
	}
	g, err := Open(s.Store.Dir(s.Project))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUnavailable) {
		return nil // not steered: the kernel's hash, nothing to take out
	}
	if err != nil {
		return err
	}
	defer g.Close()
	// The drain's time counts from here: the catch-up is inside drain_ms,
	// which stays inside the stop timeout.
	start := s.Clock.Now()
	if in.st.MainPID != 0 && g.Port() == in.port {
		// (After a crash nothing is drained; a group for another port is
		// a port change's, whose new instances steer themselves.)
		s.catchUp(ctx, g, in)
	}
	removed, live, err := s.remove(g, in.slot)
	if err != nil || !removed {
		return err
	}
	s.Log.Printf("%s out of port %d's turn: slot %d removed, live %d", s.id(), in.port, in.slot, live)
	if in.drain <= 0 {
		return nil
	}
	if in.st.MainPID == 0 {
		// The stop after a crash (systemd runs ExecStop= then too): the
		// app is gone, and its listener with it; what was queued on it
		// went to the others (tcp_migrate_req). Nothing to wait for on
		// the restart's path.
		s.Log.Printf("%s has no main process (it exited): nothing to wait for", s.id())
		return nil
	}
	deadline := start + in.drain
	var st drainState
	for {
		sample, err := s.measure(in)
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		now := s.Clock.Now()
		var v drainVerdict
		st, v = drainStep(st, sample, now, deadline)
		switch v {
		case drainIdle:
			s.Log.Printf("%s drained in %v", s.id(), (now - start).Round(time.Millisecond))
			return nil
		case drainTimedOut:
			s.Log.Printf("%s not idle after drain_ms (%v): %d queued, %d connections with bytes unread or unsent; stopping it anyway",
				s.id(), in.drain, sample.Queued, sample.Busy)
			return nil
		}
		if err := s.Clock.Sleep(ctx, min(DrainPoll, deadline-now)); err != nil {
			return err
		}
	}
}

// catchUp puts into g's turn, before this instance leaves it, the
// project's other running instances whose listener is not in it yet: each
// joins through its own steering step (bm2-steer@), which a probe queues
// once it has confirmed the run, and which may not have run yet when this
// drain begins. A reload stops the instance it restarts as soon as the
// surge is confirmed, and retires the surge as soon as the instance is:
// without this, the one left would still be outside the turn, the one
// leaving the last live slot, and its drain skipped ("the last live one"),
// so an app without a SIGTERM handler would lose the requests it had.
//
// It costs one socket dump in the usual case: only when the port has more
// listeners than the turn has filled slots does it ask systemd which
// peers run, and then it reads only those that may be outside the turn,
// together: not a numbered instance whose slot (its index, the
// BM2_APP_INSTANCE the generator gives it) is live and holds a listener.
// A reload's drain finds one such peer, the instance the step before
// restarted, among the project's others, and each read is two calls
// that PID 1 answers on the reload's path. Only the project's own
// instances are peers (not those of a project whose name begins with
// this one's), on this port; one that is stopping (deactivating) is not
// added back (putPeer).
func (s *Steerer) catchUp(ctx context.Context, g *Group, in steered) {
	ls, err := s.Sockets.Listeners(in.port)
	if err != nil {
		return // the drain's own look says it
	}
	filled := 0
	for _, slot := range g.Live() {
		if g.Filled(slot) {
			filled++
		}
	}
	if len(ls) <= filled {
		return
	}
	peers, err := s.Systemd.Loaded(ctx, []string{units.InstancePattern(s.Project)})
	if err != nil {
		s.Log.Printf("%s: cannot list the project's instances: %v", s.id(), err)
		return
	}
	live := g.Live()
	var names []string
	var indexes []int
	for _, u := range peers {
		project, i, ok := units.ParseInstance(u.Name)
		if !ok || project != s.Project || i == s.Index || u.ActiveState != "active" || u.SubState != "running" {
			continue
		}
		if i >= 0 && slices.Contains(live, i) && g.Filled(i) {
			continue
		}
		names, indexes = append(names, u.Name), append(indexes, i)
	}
	if len(names) == 0 {
		return
	}
	sts, err := s.Systemd.Units(ctx, names)
	if err != nil {
		s.Log.Printf("%s: cannot read the project's instances: %v", s.id(), err)
		return
	}
	for k, i := range indexes {
		peer := *s
		peer.Index = i
		pin, ok, err := peer.instanceOf(sts[k])
		if !ok || err != nil || !pin.st.Running() || pin.port != in.port ||
			(slices.Contains(g.Live(), pin.slot) && g.Filled(pin.slot)) {
			continue
		}
		s.Log.Printf("%s: %s runs outside port %d's turn: adding it first", s.id(), peer.id(), in.port)
		if err := s.putPeer(ctx, g, &peer, pin); err != nil {
			s.Log.Printf("%s: %s not steered: %v", s.id(), peer.id(), err)
		}
	}
}

// putPeer is catchUp's add of one peer: its listener into g, the group
// this drain opened (never one made or pinned for it: a port change's
// old instances leave the new port's group alone), under the project's
// lock and only while the peer still runs the run it was found in (one
// that began to stop meanwhile has had its own drain, which found it
// outside the turn; adding it now would send connections to a process
// about to exit). What it cannot do it says; it never marks the project
// unavailable, nor fails the drain.
func (s *Steerer) putPeer(ctx context.Context, g *Group, peer *Steerer, pin steered) error {
	fd, ok, err := peer.take(pin)
	if !ok || err != nil {
		return err
	}
	defer unix.Close(fd)
	unlock, err := s.Store.Lock(s.Project)
	if err != nil {
		return err
	}
	defer unlock()
	now, err := s.Systemd.Unit(ctx, units.Instance(s.Project, peer.Index))
	if err != nil || !now.Running() || now.InvocationID != pin.st.InvocationID {
		s.Log.Printf("%s: %s is no longer the run that was found: not added", s.id(), peer.id())
		return nil
	}
	return peer.put(g, pin, fd, "")
}

// remove takes slot out of g's turn under the project's lock, unless it
// is not live or is the last live one.
func (s *Steerer) remove(g *Group, slot int) (removed bool, live int, err error) {
	unlock, err := s.Store.Lock(s.Project)
	if err != nil {
		return false, 0, err
	}
	defer unlock()
	now := g.Live()
	switch {
	case !slices.Contains(now, slot):
		s.Log.Printf("%s: slot %d is not in the turn (live %v): nothing to drain", s.id(), slot, now)
		return false, len(now), nil
	case len(now) == 1:
		s.Log.Printf("%s: slot %d is the last live one: it stays (the port has no other instance to steer to)", s.id(), slot)
		return false, 1, nil
	}
	if err := g.Remove(slot); err != nil {
		return false, len(now), err
	}
	return true, len(now) - 1, nil
}

// drainSample is one look at a draining instance's sockets on its port.
type drainSample struct {
	Queued int // connections in its listeners' accept queues
	Busy   int // its connections with bytes unread or unsent
	// Conns are those busy connections' byte counts, when the kernel
	// gives them (see drainStep); nil leaves every busy one to wait for.
	Conns []drainConn
	// Seen are the counts of all its connections on the port, busy or
	// not (when the kernel gives them): the first look at each is where
	// its progress counts from.
	Seen []drainConn
}

// drainConn is a busy connection's life-long byte counts (tcp_info).
type drainConn struct {
	Inode           uint64
	Received, Acked uint64
}

// drainState is what the drain remembers between looks.
type drainState struct {
	idle  int                  // looks in a row that found it idle
	first map[uint64]drainConn // each connection's counts when first seen
}

// idle tells whether nothing is left that waiting could see through: no
// connection queued, and no busy one but those still carrying request
// after request. A connection that, since the drain first saw it (busy
// or not), has both received more (a new request) and had more
// acknowledged (a response) is a keep-alive connection in use: it belongs
// to its process and stays busy as long as its client sends, so waiting
// cannot drain it; the app's SIGTERM handling ends it either way. One
// still receiving a request body, or sending a response, has not done
// both, and is waited for; so is one busy the first time it is seen.
//
// Every connection's first look counts, not only a busy one's, once it
// has carried a request and a response: under keep-alive load each look
// finds a few of the instance's connections busy, others than the last
// look's, and counting from their first busy look kept the drain waiting
// until it had caught every one of them busy twice.
func (st *drainState) idleNow(d drainSample) bool {
	if d.Queued != 0 {
		return false
	}
	if d.Conns == nil {
		return d.Busy == 0
	}
	if st.first == nil {
		st.first = map[uint64]drainConn{}
	}
	waiting := 0
	for _, c := range d.Conns {
		f, seen := st.first[c.Inode]
		if !seen || !(c.Received > f.Received && c.Acked > f.Acked) {
			waiting++
		}
	}
	for _, c := range d.Conns {
		if _, seen := st.first[c.Inode]; !seen {
			st.first[c.Inode] = c
		}
	}
	for _, c := range d.Seen {
		// An idle first look counts only once the connection has carried
		// a request and a response: one opened ahead of its request (a
		// browser's preconnect) would otherwise take its first exchange
		// for keep-alive traffic.
		if _, seen := st.first[c.Inode]; !seen && c.Received > 0 && c.Acked > 0 {
			st.first[c.Inode] = c
		}
	}
	return waiting == 0
}

type drainVerdict int

const (
	drainWaiting  drainVerdict = iota // look again after DrainPoll
	drainIdle                         // idle for DrainSettle looks: let systemd stop it
	drainTimedOut                     // drain_ms is over: stop it as it is
)

// drainStep is the drain's pure core: given its state, one look at the
// sockets, the time of the look and the deadline, it says whether to go
// on, and the next state.
func drainStep(st drainState, d drainSample, now, deadline time.Duration) (drainState, drainVerdict) {
	if st.idleNow(d) {
		st.idle++
	} else {
		st.idle = 0
	}
	switch {
	case st.idle >= DrainSettle:
		return st, drainIdle
	case now >= deadline:
		return st, drainTimedOut
	}
	return st, drainWaiting
}

// measure looks once at the instance's listeners and connections on its
// port: those whose socket one of its processes holds.
func (s *Steerer) measure(in steered) (drainSample, error) {
	own := map[uint64]bool{}
	for _, pid := range in.st.PIDs() {
		inodes, err := s.Sockets.SocketsOf(pid)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return drainSample{}, err
		}
		for _, ino := range inodes {
			own[ino] = true
		}
	}
	var d drainSample
	ls, err := s.Sockets.Listeners(in.port)
	if err != nil {
		return d, err
	}
	for _, l := range ls {
		if own[l.Inode] {
			d.Queued += int(l.Queued)
		}
	}
	cs, err := s.Sockets.Established(in.port)
	if err != nil {
		return d, err
	}
	counted := true
	for _, c := range cs {
		if !own[c.Inode] {
			continue
		}
		dc := drainConn{Inode: c.Inode, Received: c.Received, Acked: c.Acked}
		if c.Counted {
			d.Seen = append(d.Seen, dc)
		}
		if c.Unread > 0 || c.Unsent > 0 {
			d.Busy++
			d.Conns = append(d.Conns, dc)
			counted = counted && c.Counted
		}
	}
	if !counted {
		d.Conns = nil // without tcp_info every busy connection is waited for
	} else if d.Conns == nil {
		d.Conns = []drainConn{}
	}
	return d, nil
}

// HostSockets is Sockets on this host: one sock_diag socket (Diag), and
// /proc.
type HostSockets struct{ Diag *sockdiag.Conn }

func (h HostSockets) Listeners(port int) ([]sockdiag.Listener, error) { return h.Diag.Listeners(port) }
func (h HostSockets) Established(port int) ([]sockdiag.Connection, error) {
	return h.Diag.Established(port)
}
func (HostSockets) Holder(pids []uint32, inodes []uint64) (sockdiag.Holding, bool, error) {
	return sockdiag.Holder(pids, inodes)
}
func (HostSockets) SocketsOf(pid uint32) ([]uint64, error) {
	inodes, _, err := sockdiag.SocketsOf(pid, 0)
	return inodes, err
}

// TakeFD copies descriptor fd of process pid (pidfd_open, pidfd_getfd:
// Linux 5.6; another user's process takes CAP_SYS_PTRACE). The copy is
// close-on-exec.
func TakeFD(pid uint32, fd int) (int, error) {
	pidfd, err := unix.PidfdOpen(int(pid), 0)
	if err != nil {
		return -1, fmt.Errorf("pidfd_open of pid %d: %w", pid, err)
	}
	defer unix.Close(pidfd)
	n, err := unix.PidfdGetfd(pidfd, fd, 0)
	if err != nil {
		return -1, fmt.Errorf("pidfd_getfd of fd %d of pid %d: %w", fd, pid, err)
	}
	return n, nil
}

// Prepare is `bm2-probe steer prepare`, bm2-steer@.service's
// ExecStartPre=+: it creates PinRoot (0700) where its parent is on
// a bpf filesystem, so that the unit's ReadWritePaths= finds it. Where
// there is none it does nothing: steer add says so.
func Prepare(out io.Writer) error {
	if err := CheckPinDir(PinRoot); err != nil {
		fmt.Fprintf(out, "%v\n", err)
		return nil
	}
	if err := os.Mkdir(PinRoot, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	// Another user may have made it first on a bpffs anyone may write.
	return OwnDir(PinRoot)
}
