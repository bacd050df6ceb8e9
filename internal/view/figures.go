package view

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/internal/wording"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// Figures are what the kernel and the probe's events say of each instance
// of a [Snapshot], beyond its unit's status: what bm2 metrics and bm2 top
// show next to state, memory and CPU. Reading them ([ReadFigures]) is
// I/O; rendering them is a pure function of a Snapshot and its Figures.
type Figures struct {
	// Projects holds one entry per Snapshot.Projects, in order, and
	// within it one InstanceFigures per ProjectSnapshot.IDs, in order
	// (nil for a project that is invalid or whose states are unknown).
	Projects [][]InstanceFigures
	// Warnings say what could not be read, one line each.
	Warnings []string
}

// InstanceFigures are one instance's figures. A figure that could not be
// read is -1 (counts) or 0 (durations): unknown, never a made-up zero.
// An instance without a running main process has none.
type InstanceFigures struct {
	// Connections is how many established TCP connections the instance's
	// processes hold on its port: accepted ones (those still in the
	// accept queue are in AcceptQueued).
	Connections int
	// AcceptQueued and AcceptLimit are its listeners' accept queue on its
	// port, summed over them (an app may listen on IPv4 and IPv6 apart):
	// the connections the kernel completed that the app has not accepted
	// yet, and the backlog the app asked for (capped by
	// net.core.somaxconn). Unknown (-1) when it holds no listener there.
	AcceptQueued, AcceptLimit int
	// ConfirmLatency is, in cluster mode, the time from the start of the
	// instance's current run (its main process, ExecMainStart) to the
	// probe's reuseport_confirmed event on that run.
	ConfirmLatency time.Duration
}

// UnknownFigures are the figures of an instance nothing could be read of.
var UnknownFigures = InstanceFigures{Connections: -1, AcceptQueued: -1, AcceptLimit: -1}

// Sockets is what [ReadFigures] reads of the kernel and of /proc: the
// real thing ([HostSockets]) but in tests.
type Sockets interface {
	// PIDs are the processes of a unit's control group, or its main
	// process when the group cannot be read (sysd.Status.PIDs).
	PIDs(u UnitStatus) []uint32
	// SocketsOf lists the socket inodes among a process's first limit
	// descriptors and how many it read (sockdiag.SocketsOf).
	SocketsOf(pid uint32, limit int) (inodes []uint64, n int, err error)
	// Listeners and Established are the host's TCP sockets listening
	// and established, on every port (sockdiag.AllListeners,
	// sockdiag.AllEstablished): one walk of each of the kernel's tables
	// per Figures, however many ports the instances have.
	// Established keeps the connections of the ports keep picks.
	Listeners() ([]sockdiag.Listener, error)
	Established(keep func(port int) bool) ([]sockdiag.Connection, error)
}

// HostSockets is this host's kernel and /proc.
type HostSockets struct{}

func (HostSockets) PIDs(u UnitStatus) []uint32 { return u.PIDs() }
func (HostSockets) SocketsOf(pid uint32, limit int) ([]uint64, int, error) {
	return sockdiag.SocketsOf(pid, limit)
}
func (HostSockets) Listeners() ([]sockdiag.Listener, error) { return sockdiag.AllListeners() }
func (HostSockets) Established(keep func(port int) bool) ([]sockdiag.Connection, error) {
	return sockdiag.AllEstablished(keep)
}

// ReadFigures reads the figures of snap's instances that have a running
// main process. The sockets of an instance are those its processes hold (the
// processes of its control group): its connections are the ones
// established on its port (fork mode: port+i; cluster mode: the port its
// instances share), its accept queue that of its listeners there; a
// worker has no port, and none of these figures. At most
// sockdiag.MaxFDs descriptors are read of one instance, whatever its
// number of processes. What cannot be read stays unknown and is said in
// Warnings; reading the descriptors of another user's processes takes
// root, and without it every such figure is unknown, in one warning.
func ReadFigures(ctx context.Context, sockets Sockets, snap Snapshot) Figures {
	f := readSockets(ctx, sockets, snap)
	confirmLatencies(&f, snap)
	return f
}

// confirmLatencies fills in the ConfirmLatency of f's cluster-mode
// instances from snap's events.
func confirmLatencies(f *Figures, snap Snapshot) {
	for j, ps := range snap.Projects {
		p := ps.Entry.Project
		if j >= len(f.Projects) || f.Projects[j] == nil || p == nil || p.Mode != config.Cluster {
			continue
		}
		for k, i := range ps.IDs {
			if k < len(f.Projects[j]) && Up(ps.Statuses[k]) {
				f.Projects[j][k].ConfirmLatency = ConfirmLatency(ps.Statuses[k], units.InstanceID(p.Name, i), snap.Events)
			}
		}
	}
}

// readSockets reads the figures of snap's instances but ConfirmLatency:
// the kernel's and /proc's, which need the instances' statuses only.
func readSockets(ctx context.Context, sockets Sockets, snap Snapshot) Figures {
	r := figureReader{sockets: sockets, ports: map[int]*portSockets{}, left: MaxScrapeFDs, want: map[int]bool{}}
	for _, ps := range snap.Projects {
		if p := ps.Entry.Project; ps.Entry.Err == nil && p != nil && !p.IsWorker() {
			for _, i := range ps.IDs {
				r.want[p.InstancePort(i)] = true
			}
		}
	}
	out := Figures{Projects: make([][]InstanceFigures, len(snap.Projects))}
	for j, ps := range snap.Projects {
		p := ps.Entry.Project
		if ps.Entry.Err != nil || p == nil || ps.Statuses == nil {
			continue
		}
		figs := make([]InstanceFigures, len(ps.IDs))
		for k, i := range ps.IDs {
			figs[k] = UnknownFigures
			u := ps.Statuses[k]
			if !Up(u) || ctx.Err() != nil || p.IsWorker() {
				continue // a worker has no port: nothing to ask the kernel
			}
			r.read(&figs[k], units.InstanceID(p.Name, i), u, p.InstancePort(i))
		}
		out.Projects[j] = figs
	}
	out.Warnings = r.warnings
	if r.denied > 0 {
		their := "their"
		if r.denied == 1 {
			their = "its"
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf("cannot read the sockets of %s (permission denied: reading another user's processes takes root): %s connections and accept queues are unknown",
			wording.Plural(r.denied, "instance", "instances"), their))
	}
	if err := ctx.Err(); err != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("figures not read: %v", err))
	}
	return out
}

// ConfirmLatency is the time from the start of u's main process to the
// first reuseport_confirmed event of instance id on u's current run (the
// event's Invocation is u's InvocationID); 0 when there is none.
func ConfirmLatency(u UnitStatus, id string, evs []journal.Event) time.Duration {
	if u.InvocationID == "" || u.ExecMainStart.IsZero() {
		return 0
	}
	var first time.Time
	for _, ev := range evs {
		if ev.Kind == journal.ReuseportConfirmed && ev.Instance == id && ev.Invocation == u.InvocationID &&
			!ev.Time.IsZero() && (first.IsZero() || ev.Time.Before(first)) {
			first = ev.Time
		}
	}
	if d := first.Sub(u.ExecMainStart); !first.IsZero() && d > 0 {
		return d
	}
	return 0
}

// figureReader reads the sockets of one Figures call: the kernel is
// asked once for every port's, when the first instance needs them.
type figureReader struct {
	sockets  Sockets
	ports    map[int]*portSockets
	dumped   bool
	lerr     error // why the listeners could not be listed
	eerr     error // why the connections could not be listed
	warnings []string
	seen     map[string]bool
	denied   int          // instances whose descriptors this user may not read
	left     int          // descriptors this Figures may still read, of all instances
	want     map[int]bool // the ports of the instances whose figures are read
}

// MaxScrapeFDs bounds the descriptors one Figures reads, all instances
// together (a quarter million: about a second of readlink): an app is
// untrusted code, and however many descriptors its instances open, a
// scrape of every other project still answers in time. Past it, the
// remaining instances' socket figures are unknown, and said.
const MaxScrapeFDs = 1 << 18

// portSockets are the sockets on one port; an error leaves its half
// unknown.
type portSockets struct {
	listeners   []sockdiag.Listener
	established []sockdiag.Connection
	lerr, eerr  error
}

func (r *figureReader) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if r.seen == nil {
		r.seen = map[string]bool{}
	}
	if !r.seen[w] {
		r.seen[w] = true
		r.warnings = append(r.warnings, w)
	}
}

func (r *figureReader) port(port int) *portSockets {
	if !r.dumped {
		r.dumped = true
		var ls []sockdiag.Listener
		var es []sockdiag.Connection
		ls, r.lerr = r.sockets.Listeners()
		es, r.eerr = r.sockets.Established(func(port int) bool { return r.want[port] })
		for _, err := range []error{r.lerr, r.eerr} {
			if err != nil {
				r.warn("%v", err)
			}
		}
		at := func(port int) *portSockets {
			ps, ok := r.ports[port]
			if !ok {
				ps = &portSockets{}
				r.ports[port] = ps
			}
			return ps
		}
		for _, l := range ls {
			ps := at(l.Port)
			ps.listeners = append(ps.listeners, l)
		}
		for _, e := range es {
			ps := at(e.Port)
			ps.established = append(ps.established, e)
		}
	}
	ps, ok := r.ports[port]
	if !ok {
		ps = &portSockets{}
		r.ports[port] = ps
	}
	ps.lerr, ps.eerr = r.lerr, r.eerr
	return ps
}

// read fills in f's socket figures for instance id, unit u, on port.
func (r *figureReader) read(f *InstanceFigures, id string, u UnitStatus, port int) {
	if port < 1 || port > 65535 {
		return
	}
	held, ok := r.held(id, u)
	if !ok {
		return
	}
	ps := r.port(port)
	if ps.eerr == nil {
		f.Connections = 0
		for _, c := range ps.established {
			if c.Inode != 0 && held[c.Inode] {
				f.Connections++
			}
		}
	}
	if ps.lerr == nil {
		for _, l := range ps.listeners {
			if l.Inode == 0 || !held[l.Inode] {
				continue
			}
			if f.AcceptQueued < 0 {
				f.AcceptQueued, f.AcceptLimit = 0, 0
			}
			f.AcceptQueued += int(l.Queued)
			f.AcceptLimit += int(l.Backlog)
		}
	}
}

// held is the set of socket inodes the processes of u hold; ok is false
// when it could not be read whole.
func (r *figureReader) held(id string, u UnitStatus) (map[uint64]bool, bool) {
	scrapeFull := func() {
		r.warn("this scrape read %d file descriptors: the connections and accept queues of the instances it did not finish are unknown", MaxScrapeFDs)
	}
	if r.left <= 0 {
		scrapeFull()
		return nil, false
	}
	pids := r.sockets.PIDs(u)
	held := map[uint64]bool{}
	start := min(sockdiag.MaxFDs, r.left)
	budget, read := start, 0
	defer func() { r.left -= start - budget }()
	tooMany := func(pid uint32) {
		if start < sockdiag.MaxFDs {
			scrapeFull()
			return
		}
		what := fmt.Sprintf("pid %d holds", pid)
		if len(pids) > 1 {
			what = fmt.Sprintf("its %d processes hold", len(pids))
		}
		r.warn("%s: %s more than %d file descriptors, and bm2 reads no more of one instance: its connections and accept queue are unknown",
			id, what, sockdiag.MaxFDs)
	}
	for _, pid := range pids {
		if budget <= 0 {
			tooMany(pid)
			return nil, false
		}
		inodes, used, err := r.sockets.SocketsOf(pid, budget)
		budget -= used
		switch {
		case errors.Is(err, sockdiag.ErrTooManyFDs):
			tooMany(pid)
			return nil, false
		case errors.Is(err, fs.ErrNotExist):
			continue // exited meanwhile
		case errors.Is(err, fs.ErrPermission):
			r.denied++
			return nil, false
		case err != nil:
			r.warn("%s: %v", id, err)
			return nil, false
		}
		read++
		for _, in := range inodes {
			held[in] = true
		}
	}
	return held, read > 0
}
