package view

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/sockdiag"
	"github.com/bm2dev/bm2/journal"
	"github.com/bm2dev/bm2/units"
)

// fakeSockets is a host's sockets: the processes of each unit, the
// descriptors of each process, the sockets on each port.
type fakeSockets struct {
	pids        map[string][]uint32 // unit name -> its processes
	fds         map[uint32][]uint64 // pid -> socket inodes
	nfds        map[uint32]int      // pid -> descriptors it holds (default: its sockets)
	errs        map[uint32]error    // pid -> why it cannot be read
	listeners   map[int][]sockdiag.Listener
	established map[int][]sockdiag.Connection
	listenErr   error

	dumps  int      // times the listeners were asked for
	limits []int    // the limit of each SocketsOf, in order
	read   []uint32 // the processes read, in order
	kept   []int    // the ports whose connections Established kept
}

func (f *fakeSockets) PIDs(u UnitStatus) []uint32 { return f.pids[u.Name] }

func (f *fakeSockets) SocketsOf(pid uint32, limit int) ([]uint64, int, error) {
	f.limits = append(f.limits, limit)
	f.read = append(f.read, pid)
	if err := f.errs[pid]; err != nil {
		return nil, 0, err
	}
	n, ok := f.nfds[pid]
	if !ok {
		n = len(f.fds[pid])
	}
	if n > limit {
		return f.fds[pid], limit, fmt.Errorf("sock_diag: pid %d: %w", pid, sockdiag.ErrTooManyFDs)
	}
	return f.fds[pid], n, nil
}

func (f *fakeSockets) Listeners() ([]sockdiag.Listener, error) {
	f.dumps++
	if f.listenErr != nil {
		return nil, f.listenErr
	}
	var out []sockdiag.Listener
	for _, port := range slices.Sorted(maps.Keys(f.listeners)) {
		for _, l := range f.listeners[port] {
			l.Port = port
			out = append(out, l)
		}
	}
	return out, nil
}

func (f *fakeSockets) Established(keep func(port int) bool) ([]sockdiag.Connection, error) {
	var out []sockdiag.Connection
	for _, port := range slices.Sorted(maps.Keys(f.established)) {
		if keep != nil && !keep(port) {
			continue
		}
		f.kept = append(f.kept, port)
		for _, c := range f.established[port] {
			c.Port = port
			out = append(out, c)
		}
	}
	return out, nil
}

// running is a unit with its main process up since start.
func runningSince(name, invocation string, pid uint32, start time.Time) UnitStatus {
	return UnitStatus{Name: name, ActiveState: "active", SubState: "running", MainPID: pid,
		InvocationID: invocation, ExecMainStart: start, ActiveEnter: start.Add(10 * time.Millisecond)}
}

func projectSnap(p *config.Project, ids []int, statuses []UnitStatus) ProjectSnapshot {
	return ProjectSnapshot{Entry: config.Entry{Name: p.Name, Project: p}, IDs: ids, Statuses: statuses}
}

func TestFigures(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	api := &config.Project{Name: "api", Mode: config.Cluster, Port: 3000, Instances: 2}
	web := &config.Project{Name: "web", Mode: config.Fork, Port: 4000, Instances: 3}
	host := &fakeSockets{
		pids: map[string][]uint32{
			"bm2@api-0.service":     {100, 101},
			"bm2@api-1.service":     {200},
			"bm2@api-surge.service": {300},
			"bm2@web-0.service":     {400},
			"bm2@web-1.service":     {500},
		},
		fds: map[uint32][]uint64{
			100: {10, 11, 12},
			101: {13, 99, 11}, // 11 again: inherited from its parent
			200: {20, 21, 22},
			300: {},
			400: {40, 41},
			500: {50},
		},
		listeners: map[int][]sockdiag.Listener{
			3000: {
				{Inode: 10, Queued: 2, Backlog: 511},
				{Inode: 20, Queued: 0, Backlog: 511},
				{Inode: 21, Queued: 1, Backlog: 128}, // api-1 listens on IPv6 apart
				{Inode: 77, Queued: 5, Backlog: 5},   // somebody else's
			},
			4000: {{Inode: 40, Queued: 0, Backlog: 4096}},
			4001: {{Inode: 50, Queued: 3, Backlog: 4096}},
		},
		established: map[int][]sockdiag.Connection{
			3000: {{Inode: 11}, {Inode: 12}, {Inode: 13}, {Inode: 22}, {Inode: 0}, {Inode: 0}, {Inode: 88}},
			4000: {{Inode: 41}, {Inode: 0}},
			4001: {},
		},
	}
	snap := Snapshot{
		Now: t0.Add(time.Minute),
		Projects: []ProjectSnapshot{
			{Entry: config.Entry{Name: "bad", Err: errors.New("invalid")}},
			projectSnap(api, []int{0, 1, units.Surge}, []UnitStatus{
				runningSince("bm2@api-0.service", "aa", 100, t0),
				runningSince("bm2@api-1.service", "bb", 200, t0),
				runningSince("bm2@api-surge.service", "cc", 300, t0),
			}),
			projectSnap(web, []int{0, 1, 2}, []UnitStatus{
				runningSince("bm2@web-0.service", "dd", 400, t0),
				runningSince("bm2@web-1.service", "ee", 500, t0),
				{Name: "bm2@web-2.service", ActiveState: "failed", SubState: "failed", InvocationID: "ff", ExecMainStart: t0},
			}),
			{Entry: config.Entry{Name: "down", Project: &config.Project{Name: "down", Port: 5000, Instances: 1}}, IDs: []int{0}},
		},
		Events: []journal.Event{
			{Kind: journal.ReuseportConfirmed, Instance: "api-0", Invocation: "zz", Time: t0.Add(500 * time.Millisecond)}, // an older run
			{Kind: journal.ReuseportConfirmed, Instance: "api-0", Invocation: "aa", Time: t0.Add(3 * time.Second)},        // probed again
			{Kind: journal.ReuseportConfirmed, Instance: "api-0", Invocation: "aa", Time: t0.Add(1500 * time.Millisecond)},
			{Kind: journal.ReuseportMissing, Instance: "api-1", Invocation: "bb", Time: t0.Add(time.Second)},
			{Kind: journal.ReuseportConfirmed, Instance: "api-2", Invocation: "bb", Time: t0.Add(time.Second)},      // another instance
			{Kind: journal.ReuseportConfirmed, Instance: "api-surge", Invocation: "cc", Time: t0.Add(-time.Second)}, // before its start: nonsense
		},
		EventsRead: true,
	}
	sockets := host
	got := ReadFigures(context.Background(), sockets, snap)

	want := [][]InstanceFigures{
		nil,
		{
			{Connections: 3, AcceptQueued: 2, AcceptLimit: 511, ConfirmLatency: 1500 * time.Millisecond},
			{Connections: 1, AcceptQueued: 1, AcceptLimit: 639},
			{Connections: 0, AcceptQueued: -1, AcceptLimit: -1}, // no listener yet
		},
		{
			{Connections: 1, AcceptQueued: 0, AcceptLimit: 4096},
			{Connections: 0, AcceptQueued: 3, AcceptLimit: 4096}, // port+1
			UnknownFigures, // not running
		},
		nil,
	}
	if fmt.Sprint(got.Projects) != fmt.Sprint(want) {
		t.Errorf("figures\n got %v\nwant %v", got.Projects, want)
	}
	if len(got.Warnings) != 0 {
		t.Errorf("warnings: %q", got.Warnings)
	}
	if host.dumps != 1 {
		t.Errorf("the kernel was asked for its listeners %d times, want once for every port", host.dumps)
	}
	for _, pid := range host.read {
		if pid == 0 {
			t.Errorf("read pid 0")
		}
	}
}

func TestFiguresUnreadable(t *testing.T) {
	// Another user's processes: every figure of theirs unknown, one
	// warning however many; the journal's figure still known.
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	api := &config.Project{Name: "api", Mode: config.Cluster, Port: 3000, Instances: 3}
	denied := fmt.Errorf("sock_diag: read the descriptors of pid 1: %w", fs.ErrPermission)
	f := &fakeSockets{
		pids: map[string][]uint32{"bm2@api-0.service": {100}, "bm2@api-1.service": {200}, "bm2@api-2.service": {300, 301}},
		errs: map[uint32]error{100: denied, 200: denied, 300: fmt.Errorf("gone: %w", fs.ErrNotExist), 301: denied},
	}
	snap := Snapshot{Projects: []ProjectSnapshot{projectSnap(api, []int{0, 1, 2}, []UnitStatus{
		runningSince("bm2@api-0.service", "aa", 100, t0), runningSince("bm2@api-1.service", "bb", 200, t0), runningSince("bm2@api-2.service", "cc", 300, t0),
	})}, Events: []journal.Event{{Kind: journal.ReuseportConfirmed, Instance: "api-1", Invocation: "bb", Time: t0.Add(time.Second)}}}
	got := ReadFigures(context.Background(), f, snap)
	want := UnknownFigures
	for k, fig := range got.Projects[0] {
		w := want
		if k == 1 {
			w.ConfirmLatency = time.Second
		}
		if fig != w {
			t.Errorf("api-%d: %+v, want %+v", k, fig, w)
		}
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "cannot read the sockets of 3 instances (permission denied") {
		t.Errorf("warnings %q, want one saying 3 instances", got.Warnings)
	}
	if f.dumps != 0 {
		t.Errorf("asked the kernel %d times for nothing", f.dumps)
	}

	// Processes that are all gone: unknown, and nothing to warn about.
	f.errs = map[uint32]error{100: fmt.Errorf("gone: %w", fs.ErrNotExist)}
	snap.Projects[0] = projectSnap(api, []int{0}, []UnitStatus{runningSince("bm2@api-0.service", "aa", 100, t0)})
	got = ReadFigures(context.Background(), f, snap)
	if got.Projects[0][0] != UnknownFigures || len(got.Warnings) != 0 {
		t.Errorf("a process gone: %+v %q", got.Projects[0][0], got.Warnings)
	}
}

func TestFiguresBoundTheDescriptorsRead(t *testing.T) {
	// One process with too many descriptors, or an instance whose
	// processes hold too many together: unknown, and said.
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	p := &config.Project{Name: "big", Mode: config.Fork, Port: 3000, Instances: 2}
	f := &fakeSockets{
		pids:      map[string][]uint32{"bm2@big-0.service": {100}, "bm2@big-1.service": {200, 201, 202, 203}},
		fds:       map[uint32][]uint64{100: {1}, 200: {2}, 201: {3}, 202: {4}, 203: {5}},
		nfds:      map[uint32]int{100: 1 << 20, 200: 30000, 201: 30000, 202: 30000, 203: 30000},
		listeners: map[int][]sockdiag.Listener{3001: {{Inode: 2}}},
	}
	snap := Snapshot{Projects: []ProjectSnapshot{projectSnap(p, []int{0, 1}, []UnitStatus{
		runningSince("bm2@big-0.service", "aa", 100, t0), runningSince("bm2@big-1.service", "bb", 200, t0),
	})}}
	got := ReadFigures(context.Background(), f, snap)
	for k, fig := range got.Projects[0] {
		if fig != UnknownFigures {
			t.Errorf("big-%d: %+v, want unknown", k, fig)
		}
	}
	wantLimits := []int{sockdiag.MaxFDs, sockdiag.MaxFDs, sockdiag.MaxFDs - 30000, sockdiag.MaxFDs - 60000}
	if fmt.Sprint(f.limits) != fmt.Sprint(wantLimits) {
		t.Errorf("limits %v, want %v: one budget per instance", f.limits, wantLimits)
	}
	if len(got.Warnings) != 2 ||
		!strings.HasPrefix(got.Warnings[0], fmt.Sprintf("big-0: pid 100 holds more than %d file descriptors", sockdiag.MaxFDs)) ||
		!strings.HasPrefix(got.Warnings[1], fmt.Sprintf("big-1: its 4 processes hold more than %d file descriptors", sockdiag.MaxFDs)) {
		t.Errorf("warnings %q", got.Warnings)
	}
}

func TestFiguresKernelError(t *testing.T) {
	// sock_diag failing for listeners leaves the accept queue unknown,
	// the connections known; the error is said once.
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	p := &config.Project{Name: "api", Mode: config.Cluster, Port: 3000, Instances: 2}
	f := &fakeSockets{
		pids:        map[string][]uint32{"bm2@api-0.service": {100}, "bm2@api-1.service": {200}},
		fds:         map[uint32][]uint64{100: {1, 2}, 200: {3}},
		established: map[int][]sockdiag.Connection{3000: {{Inode: 2}}},
		listenErr:   errors.New("sock_diag: open netlink socket: EPROTONOSUPPORT"),
	}
	snap := Snapshot{Projects: []ProjectSnapshot{projectSnap(p, []int{0, 1}, []UnitStatus{
		runningSince("bm2@api-0.service", "aa", 100, t0), runningSince("bm2@api-1.service", "bb", 200, t0),
	})}}
	got := ReadFigures(context.Background(), f, snap)
	want := []InstanceFigures{{Connections: 1, AcceptQueued: -1, AcceptLimit: -1}, {Connections: 0, AcceptQueued: -1, AcceptLimit: -1}}
	if fmt.Sprint(got.Projects[0]) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got.Projects[0], want)
	}
	if len(got.Warnings) != 1 || got.Warnings[0] != "sock_diag: open netlink socket: EPROTONOSUPPORT" {
		t.Errorf("warnings %q", got.Warnings)
	}

	// A context ended: nothing more is read.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	f.read = nil
	got = ReadFigures(ctx, f, snap)
	if len(f.read) != 0 || got.Projects[0][0] != UnknownFigures {
		t.Errorf("read %v after the context ended: %+v", f.read, got.Projects[0])
	}
}

func TestConfirmLatency(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	u := runningSince("bm2@api-0.service", "aa", 100, t0)
	ev := journal.Event{Kind: journal.ReuseportConfirmed, Instance: "api-0", Invocation: "aa", Time: t0.Add(800 * time.Millisecond)}
	if d := ConfirmLatency(u, "api-0", []journal.Event{ev}); d != 800*time.Millisecond {
		t.Errorf("latency %v", d)
	}
	noInvocation := ev
	noInvocation.Invocation = ""
	for name, c := range map[string]struct {
		u   UnitStatus
		evs []journal.Event
	}{
		"no event":              {u, nil},
		"event without its run": {u, []journal.Event{noInvocation}},
		"unit never started":    {UnitStatus{InvocationID: "aa"}, []journal.Event{ev}},
		"no invocation":         {UnitStatus{ExecMainStart: t0}, []journal.Event{noInvocation}},
		"another kind":          {u, []journal.Event{{Kind: journal.ReuseportMissing, Instance: "api-0", Invocation: "aa", Time: ev.Time}}},
	} {
		if d := ConfirmLatency(c.u, "api-0", c.evs); d != 0 {
			t.Errorf("%s: latency %v, want 0 (unknown)", name, d)
		}
	}
}

func TestFiguresOfThisProcess(t *testing.T) {
	// The real kernel and /proc: this test is the instance, its main
	// process (no control group to read), listening on its port with one
	// connection accepted and one waiting.
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	for range 2 {
		c, err := net.Dial("tcp4", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	accepted, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	p := &config.Project{Name: "self", Mode: config.Cluster, Port: port, Instances: 1}
	u := runningSince("bm2@self-0.service", "aa", uint32(os.Getpid()), time.Now())
	snap := Snapshot{Projects: []ProjectSnapshot{projectSnap(p, []int{0}, []UnitStatus{u})}}
	sockets := HostSockets{}
	var got InstanceFigures
	for range 200 {
		f := ReadFigures(context.Background(), sockets, snap)
		if len(f.Warnings) != 0 {
			t.Fatalf("warnings: %q", f.Warnings)
		}
		if got = f.Projects[0][0]; got.AcceptQueued == 1 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got.Connections != 1 || got.AcceptQueued != 1 || got.AcceptLimit < 1 {
		t.Errorf("figures %+v, want 1 connection, 1 queued", got)
	}
}

func TestFiguresBoundTheScrape(t *testing.T) {
	// Instances that each stay within their own bound but together hold
	// more than one scrape reads: the first ones are counted, the rest
	// unknown, in one warning.
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const n, each = 6, 60000
	p := &config.Project{Name: "many", Mode: config.Fork, Port: 3000, Instances: n}
	f := &fakeSockets{pids: map[string][]uint32{}, fds: map[uint32][]uint64{}, nfds: map[uint32]int{}}
	var ids []int
	var st []UnitStatus
	for i := range n {
		pid := uint32(100 + i)
		name := fmt.Sprintf("bm2@many-%d.service", i)
		f.pids[name], f.fds[pid], f.nfds[pid] = []uint32{pid}, []uint64{uint64(pid)}, each
		ids, st = append(ids, i), append(st, runningSince(name, "aa", pid, t0))
	}
	got := ReadFigures(context.Background(), f, Snapshot{Projects: []ProjectSnapshot{projectSnap(p, ids, st)}})
	known := MaxScrapeFDs / each
	for i, fig := range got.Projects[0] {
		if (fig.Connections >= 0) != (i < known) {
			t.Errorf("many-%d: %+v; want the first %d known", i, fig, known)
		}
	}
	read := 0
	for _, l := range f.limits {
		read += min(l, each)
	}
	if read > MaxScrapeFDs {
		t.Errorf("read up to %d descriptors, more than %d", read, MaxScrapeFDs)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], fmt.Sprintf("this scrape read %d file descriptors", MaxScrapeFDs)) {
		t.Errorf("warnings %q", got.Warnings)
	}
}

// A worker has no port: bm2 never asks the kernel for its sockets, nor
// for those of port 0, and its figures are unknown, never 0.
func TestFiguresOfAWorker(t *testing.T) {
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	queue := &config.Project{Name: "queue", Mode: config.Worker, Instances: 2}
	api := &config.Project{Name: "api", Mode: config.Cluster, Port: 3000, Instances: 1}
	host := &fakeSockets{
		pids: map[string][]uint32{"bm2@queue-0.service": {100}, "bm2@queue-1.service": {200}, "bm2@api-0.service": {300}},
		fds:  map[uint32][]uint64{100: {10}, 200: {20}, 300: {30, 31}},
		listeners: map[int][]sockdiag.Listener{
			0:    {{Inode: 10, Queued: 1, Backlog: 1}},
			3000: {{Inode: 30, Queued: 0, Backlog: 511}},
		},
		established: map[int][]sockdiag.Connection{0: {{Inode: 20}}, 3000: {{Inode: 31}}},
	}
	workers := projectSnap(queue, []int{0, 1}, []UnitStatus{
		runningSince("bm2@queue-0.service", "aa", 100, t0),
		runningSince("bm2@queue-1.service", "bb", 200, t0),
	})
	sockets := host

	// Workers alone: the kernel is not asked at all.
	got := ReadFigures(context.Background(), sockets, Snapshot{Now: t0.Add(time.Minute), Projects: []ProjectSnapshot{workers}})
	if want := [][]InstanceFigures{{UnknownFigures, UnknownFigures}}; fmt.Sprint(got.Projects) != fmt.Sprint(want) || len(got.Warnings) != 0 {
		t.Errorf("figures %v, warnings %q; want %v", got.Projects, got.Warnings, want)
	}
	if host.dumps != 0 || len(host.read) != 0 || len(host.kept) != 0 {
		t.Errorf("the kernel was asked: %d dumps, pids read %v, ports kept %v", host.dumps, host.read, host.kept)
	}

	// Beside a project with a port: its sockets alone, and never port 0.
	got = ReadFigures(context.Background(), sockets, Snapshot{Now: t0.Add(time.Minute), Projects: []ProjectSnapshot{
		workers, projectSnap(api, []int{0}, []UnitStatus{runningSince("bm2@api-0.service", "cc", 300, t0)}),
	}})
	want := [][]InstanceFigures{{UnknownFigures, UnknownFigures}, {{Connections: 1, AcceptQueued: 0, AcceptLimit: 511}}}
	if fmt.Sprint(got.Projects) != fmt.Sprint(want) {
		t.Errorf("figures\n got %v\nwant %v", got.Projects, want)
	}
	if !slices.Equal(host.read, []uint32{300}) || slices.Contains(host.kept, 0) {
		t.Errorf("pids read %v, ports kept %v: a worker's", host.read, host.kept)
	}
}
