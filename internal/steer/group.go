package steer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// A Group steers the connections of one SO_REUSEPORT port group: the
// program, the table it reads and the sockarray of the instances'
// listeners. Its methods may be called from several goroutines; two
// processes changing one pinned group must hold a lock of their own (bm2's
// project lock).
type Group struct {
	mu    sync.Mutex
	prog  *ebpf.Program
	table *ebpf.Map
	socks *ebpf.Map
	mem   []byte   // the table, mapped
	tbl   []uint64 // mem as entries
	dir   string   // where it is pinned, or ""
}

// New loads the program and creates its maps for the group on port. A
// host that cannot (no CAP_BPF, an old kernel) gets an *UnavailableError,
// which matches ErrUnavailable.
func New(port int) (*Group, error) {
	if port < 1 || port > 65535 {
		return nil, fmt.Errorf("port %d is not between 1 and 65535", port)
	}
	table, err := ebpf.NewMap(TableSpec())
	if err != nil {
		return nil, classify("create the table", err)
	}
	socks, err := ebpf.NewMap(SocksSpec())
	if err != nil {
		table.Close()
		return nil, classify("create the sockarray", err)
	}
	prog, err := ebpf.NewProgram(Spec(table.FD(), socks.FD()))
	if err != nil {
		table.Close()
		socks.Close()
		return nil, classify("load the program", err)
	}
	g := &Group{prog: prog, table: table, socks: socks}
	if err := g.mapTable(); err != nil {
		g.Close()
		return nil, classify("map the table", err)
	}
	g.store(idxPort, uint64(port))
	return g, nil
}

func (g *Group) mapTable() error {
	size := (tableSize*entrySize + os.Getpagesize() - 1) &^ (os.Getpagesize() - 1)
	mem, err := unix.Mmap(g.table.FD(), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("mmap: %w", err)
	}
	g.mem = mem
	g.tbl = unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), tableSize)
	return nil
}

func (g *Group) load(i int) uint64     { return atomic.LoadUint64(&g.tbl[i]) }
func (g *Group) store(i int, v uint64) { atomic.StoreUint64(&g.tbl[i], v) }

// Port is the group's port.
func (g *Group) Port() int { return int(g.load(idxPort)) }

// Runs is how many times the program has run: once per connection the
// kernel placed in the group (and per queued connection a closing
// listener handed on), whether it picked a live slot or fell back.
func (g *Group) Runs() uint64 { return g.load(idxRuns) }

// Live is the live slots, in the order the program takes them.
func (g *Group) Live() []int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.live()
}

func (g *Group) live() []int {
	n := min(int(g.load(idxLive)), MaxSlots)
	out := make([]int, n)
	for i := range out {
		out[i] = int(g.load(idxSlots + i))
	}
	return out
}

// Attach makes the program the one of fd's port group
// (SO_ATTACH_REUSEPORT_EBPF): from now on the kernel asks it where each
// new connection goes. Any listener of the group will do, and the program
// stays with the group when that listener closes, until Detach or until
// the group's last listener is gone. It replaces a program attached
// before (one of an earlier bm2, say).
func (g *Group) Attach(fd int) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	fam, err := g.check(fd)
	if err != nil {
		return err
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ATTACH_REUSEPORT_EBPF, g.prog.FD()); err != nil {
		return classify(fmt.Sprintf("attach the program to fd %d", fd), err)
	}
	g.learn(fam)
	return nil
}

// Detach takes the program off fd's port group
// (SO_DETACH_REUSEPORT_BPF): the kernel's hash places connections again.
// A group without a program gives an error matching fs.ErrNotExist.
func Detach(fd int) error {
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DETACH_REUSEPORT_BPF, 0); err != nil {
		return fmt.Errorf("detach the program from fd %d: %w", fd, err)
	}
	return nil
}

// Add puts the listener fd in slot (the instance's number) and makes the
// slot live: the program gives it its turn from the next connection on.
// The sockarray does not keep the socket open: fd may be closed after Add
// (a copy taken with pidfd_getfd, say), and when the instance's own last
// fd closes, the kernel empties the slot itself. Adding a live slot again
// replaces its listener (a restarted instance) without a gap.
//
// The order of the writes is what keeps a connection arriving meanwhile
// safe: the socket first, then the slot at position n of the live list,
// which the program does not read yet, then n+1.
func (g *Group) Add(slot, fd int) error {
	if slot < 0 || slot >= MaxSlots {
		return fmt.Errorf("slot %d is not between 0 and %d", slot, MaxSlots-1)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	fam, err := g.check(fd)
	if err != nil {
		return err
	}
	if err := g.socks.Update(uint32(slot), uint64(fd), ebpf.UpdateAny); err != nil {
		if !errors.Is(err, unix.EBUSY) {
			return classify(fmt.Sprintf("put fd %d in slot %d", fd, slot), err)
		}
		// The socket is in a sockarray already: this slot (nothing to
		// do), another slot, or another group's map.
		if in, ok := g.slotOf(fd); !ok || in != slot {
			where := "another group's map"
			if ok {
				where = fmt.Sprintf("slot %d", in)
			}
			return &ListenerError{FD: fd, Err: fmt.Errorf("%w: it is in %s", ErrSteered, where)}
		}
	}
	g.learn(fam)
	live := g.live()
	for _, s := range live {
		if s == slot {
			return nil
		}
	}
	n := len(live)
	g.store(idxSlots+n, uint64(slot))
	g.store(idxLive, uint64(n+1))
	return nil
}

// slotOf finds the slot holding the socket of fd, by its cookie.
func (g *Group) slotOf(fd int) (int, bool) {
	cookie, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_COOKIE)
	if err != nil {
		return 0, false
	}
	var key uint32
	var val uint64
	it := g.socks.Iterate()
	for it.Next(&key, &val) {
		if val == cookie {
			return int(key), true
		}
	}
	return 0, false
}

// Remove takes slot out of the turn (the drain): the connections that
// follow go round-robin to the other live slots, and the instance keeps
// what it has. It is O(1) in writes: the last live slot moves into the
// hole, then the count drops, then the socket leaves the sockarray. A
// connection the program places meanwhile picks a live slot; one that
// read the old list and then finds the socket gone falls back to the
// kernel's hash, which may still choose the removed listener: it listens
// until its instance stops, so nothing is refused. Removing a slot that
// is not live is not an error.
//
// When no slot is live the program selects nothing and the kernel's hash
// spreads connections over every listener of the group, drained ones
// too: leave one live.
func (g *Group) Remove(slot int) error {
	if slot < 0 || slot >= MaxSlots {
		return fmt.Errorf("slot %d is not between 0 and %d", slot, MaxSlots-1)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	live := g.live()
	for p, s := range live {
		if s != slot {
			continue
		}
		n := len(live)
		if p != n-1 {
			g.store(idxSlots+p, uint64(live[n-1]))
		}
		g.store(idxLive, uint64(n-1))
		break
	}
	if err := g.socks.Delete(uint32(slot)); err != nil && !errors.Is(err, ebpf.ErrKeyNotExist) {
		return fmt.Errorf("empty slot %d: %w", slot, err)
	}
	return nil
}

// Filled tells whether slot holds a listener in the sockarray: false once
// its instance closed the socket, live or not.
func (g *Group) Filled(slot int) bool {
	var cookie uint64
	return g.socks.Lookup(uint32(slot), &cookie) == nil
}

// Close releases this process's hold on the program and maps; the Group
// is not to be used after. It changes
// nothing in the kernel: an attached program goes on steering with the
// table as it is, for as long as the group has a listener (Detach stops
// it), and pinned objects stay until Unpin.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	var err error
	if g.mem != nil {
		err = unix.Munmap(g.mem)
		g.mem, g.tbl = nil, nil
	}
	for _, c := range []interface{ Close() error }{g.prog, g.table, g.socks} {
		if c != nil {
			err = errors.Join(err, c.Close())
		}
	}
	return err
}

// Pinned objects, in the directory given to Pin and Open.
const (
	pinProg  = "prog"
	pinTable = "table"
	pinSocks = "socks"
)

// Pin keeps the program and maps in dir (a directory on a bpf
// filesystem, such as /sys/fs/bpf/bm2/<project>, created 0700 if needed)
// so that a later process can Open the group and Add or Remove slots.
// Without a bpf filesystem there it returns an *UnavailableError
// (ReasonNoBPFFS).
func (g *Group) Pin(dir string) error {
	if err := CheckPinDir(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	pins := []struct {
		name string
		pin  func(string) error
	}{{pinTable, g.table.Pin}, {pinSocks, g.socks.Pin}, {pinProg, g.prog.Pin}}
	for i, p := range pins {
		if err := p.pin(filepath.Join(dir, p.name)); err != nil {
			for _, q := range pins[:i] {
				os.Remove(filepath.Join(dir, q.name))
			}
			return fmt.Errorf("pin the group in %s: %w", dir, err)
		}
	}
	g.dir = dir
	return nil
}

// Open takes up a group pinned in dir by Pin. It needs no capability, only
// read and write permission on the pins; a directory holding no group
// gives an error matching fs.ErrNotExist.
func Open(dir string) (*Group, error) {
	if err := CheckPinDir(dir); err != nil {
		return nil, err
	}
	g := &Group{dir: dir}
	var err error
	if g.table, err = ebpf.LoadPinnedMap(filepath.Join(dir, pinTable), nil); err != nil {
		return nil, fmt.Errorf("open the group in %s: %w", dir, err)
	}
	if g.socks, err = ebpf.LoadPinnedMap(filepath.Join(dir, pinSocks), nil); err != nil {
		g.Close()
		return nil, fmt.Errorf("open the group in %s: %w", dir, err)
	}
	if g.prog, err = ebpf.LoadPinnedProgram(filepath.Join(dir, pinProg), nil); err != nil {
		g.Close()
		return nil, fmt.Errorf("open the group in %s: %w", dir, err)
	}
	if err := g.pinnedCompatible(); err != nil {
		g.Close()
		return nil, fmt.Errorf("open the group in %s: %w", dir, err)
	}
	if err := g.mapTable(); err != nil {
		g.Close()
		return nil, fmt.Errorf("open the group in %s: %w", dir, err)
	}
	return g, nil
}

// ErrIncompatible is what Open says of pins of another shape than this
// bm2's (another version's layout): not a group it can change.
var ErrIncompatible = errors.New("not a group of this bm2's layout")

// pinnedCompatible refuses pins of another shape (another bm2's layout).
func (g *Group) pinnedCompatible() error {
	for _, c := range []struct {
		m    *ebpf.Map
		spec *ebpf.MapSpec
	}{{g.table, TableSpec()}, {g.socks, SocksSpec()}} {
		m, s := c.m, c.spec
		if m.Type() != s.Type || m.KeySize() != s.KeySize || m.ValueSize() != s.ValueSize || m.MaxEntries() != s.MaxEntries || m.Flags() != s.Flags {
			return fmt.Errorf("%w: %s is a %s map (key %d, value %d, %d entries, flags %#x), not bm2's %s",
				ErrIncompatible, s.Name, m.Type(), m.KeySize(), m.ValueSize(), m.MaxEntries(), m.Flags(), s.Type)
		}
	}
	if g.prog.Type() != ebpf.SkReuseport {
		return fmt.Errorf("%w: the pinned program is a %s program", ErrIncompatible, g.prog.Type())
	}
	return nil
}

// Unpin removes the pins and their directory. The program goes on
// steering while attached; the kernel frees it and the maps with the
// group's last listener.
func (g *Group) Unpin() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dir == "" {
		return nil
	}
	err := errors.Join(g.prog.Unpin(), g.table.Unpin(), g.socks.Unpin())
	if err == nil {
		err = os.Remove(g.dir)
		g.dir = ""
	}
	return err
}
