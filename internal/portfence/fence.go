package portfence

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
	"golang.org/x/sys/unix"
)

// UnsupportedError is a fence the kernel cannot give (no cgroup BPF, no
// bind hooks): the instance starts without it.
type UnsupportedError struct{ Err error }

func (e *UnsupportedError) Error() string { return "the kernel cannot attach it: " + e.Err.Error() }
func (e *UnsupportedError) Unwrap() error { return e.Err }

// Apply attaches the fence for ports (Ports; none: port 0 only, for a
// worker's instance) to the cgroup v2 directory
// dir, for IPv4 and IPv6 binds, and then detaches the fence programs of
// earlier starts from it (a restart may reuse the cgroup, and the ports
// may have changed), so exactly one fence of each type stays.
func Apply(dir string, ports []int) error {
	if len(ports) > 0 { // none: a worker's instance, an ephemeral port only
		var err error
		if ports, err = Ports(ports); err != nil {
			return err
		}
	}
	return applyRecording(dir, ports)
}

// applyRecording attaches, for each of AttachTypes, the fence allowing
// ports and port 0 that records a denied bind in a map of its own
// (DeniedMapSpec), which DeniedPort reads.
func applyRecording(dir string, ports []int) error {
	cg, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer cg.Close()
	for _, at := range AttachTypes {
		m, err := ebpf.NewMap(DeniedMapSpec())
		if err != nil {
			if unsupported(err) {
				return &UnsupportedError{err}
			}
			return fmt.Errorf("attach to %s (%s): the map of denied binds: %w", dir, at, err)
		}
		err = attach(int(cg.Fd()), at, instructions(ports, true, m.FD()))
		m.Close() // the program holds it now
		if err != nil {
			return fmt.Errorf("attach to %s (%s): %w", dir, at, err)
		}
	}
	return nil
}

// DeniedPort is the port of the last bind the fence attached to the
// cgroup v2 directory dir denied (IPv4 or IPv6), 0 when none was: read
// from the fence's map, which only the fence writes. It needs root.
func DeniedPort(dir string) (int, error) {
	cg, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return 0, err
	}
	defer cg.Close()
	port := 0
	for _, at := range AttachTypes {
		fs, err := fences(int(cg.Fd()), at)
		if err != nil {
			return 0, err
		}
		for _, f := range fs {
			if p := deniedOf(f); p != 0 {
				port = p
			}
			f.Close()
		}
	}
	return port, nil
}

// deniedOf reads the denied-bind map of one fence program, 0 if it has
// none or nothing was denied.
func deniedOf(f fence) int {
	info, err := f.Info()
	if err != nil {
		return 0
	}
	ids, _ := info.MapIDs()
	for _, id := range ids {
		m, err := ebpf.NewMapFromID(id)
		if err != nil {
			continue
		}
		var v uint32
		mi, err := m.Info()
		if err == nil && mi.Name == DeniedMapName && m.Lookup(uint32(0), &v) == nil && v != 0 {
			m.Close()
			return int(v)
		}
		m.Close()
	}
	return 0
}

// ApplyNoBind attaches to the cgroup v2 directory dir the fence that
// allows no bind() at all (NoBindInstructions), in place of any earlier
// one, as Apply does.
func ApplyNoBind(dir string) error { return apply(dir, NoBindInstructions()) }

func apply(dir string, insns asm.Instructions) error {
	cg, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	defer cg.Close()
	for _, at := range AttachTypes {
		if err := attach(int(cg.Fd()), at, insns); err != nil {
			return fmt.Errorf("attach to %s (%s): %w", dir, at, err)
		}
	}
	return nil
}

func attach(cg int, at ebpf.AttachType, insns asm.Instructions) error {
	prog, err := ebpf.NewProgram(spec(at, insns))
	if err != nil {
		if unsupported(err) {
			return &UnsupportedError{err}
		}
		return fmt.Errorf("load: %w", err)
	}
	defer prog.Close()
	info, err := prog.Info()
	if err != nil {
		return err
	}
	id, _ := info.ID()
	err = link.RawAttachProgram(link.RawAttachProgramOptions{
		Target: cg, Program: prog, Attach: at, Flags: unix.BPF_F_ALLOW_MULTI,
	})
	if err != nil {
		if unsupported(err) {
			return &UnsupportedError{err}
		}
		return err
	}
	old, err := fences(cg, at)
	if err != nil {
		return err
	}
	for _, p := range old {
		if pid, _ := p.id(); pid != id {
			err = errors.Join(err, link.RawDetachProgram(link.RawDetachProgramOptions{
				Target: cg, Program: p.Program, Attach: at, Flags: unix.BPF_F_ALLOW_MULTI,
			}))
		}
		p.Close()
	}
	return err
}

type fence struct{ *ebpf.Program }

func (f fence) id() (ebpf.ProgramID, bool) {
	info, err := f.Info()
	if err != nil {
		return 0, false
	}
	return info.ID()
}

// fences opens the programs attached to cgroup cg for at (not those
// inherited from its parents) that are bm2 fences.
func fences(cg int, at ebpf.AttachType) ([]fence, error) {
	res, err := link.QueryPrograms(link.QueryOptions{Target: cg, Attach: at})
	if err != nil {
		return nil, err
	}
	var out []fence
	for _, ap := range res.Programs {
		p, err := ebpf.NewProgramFromID(ap.ID)
		if errors.Is(err, os.ErrNotExist) {
			continue // detached meanwhile
		}
		if err != nil {
			for _, f := range out {
				f.Close()
			}
			return nil, err
		}
		if info, err := p.Info(); err == nil && info.Name == ProgName {
			out = append(out, fence{p})
			continue
		}
		p.Close()
	}
	return out, nil
}

// Attached tells whether a fence is attached to the cgroup v2 directory dir
// for IPv4 and IPv6 binds both. It needs root (BPF_PROG_QUERY and
// BPF_PROG_GET_FD_BY_ID).
func Attached(dir string) (bool, error) {
	if os.Geteuid() != 0 {
		// BPF_PROG_QUERY needs CAP_NET_ADMIN; cilium/ebpf's feature
		// probe would then call it "not supported".
		return false, fmt.Errorf("query the programs of %s: %w", dir, fs.ErrPermission)
	}
	cg, err := os.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return false, err
	}
	defer cg.Close()
	for _, at := range AttachTypes {
		fs, err := fences(int(cg.Fd()), at)
		if err != nil {
			return false, err
		}
		for _, f := range fs {
			f.Close()
		}
		if len(fs) == 0 {
			return false, nil
		}
	}
	return true, nil
}

// unsupported tells whether err means the kernel has no cgroup BPF or no
// bind hooks, rather than refusing this attach.
func unsupported(err error) bool {
	return errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, unix.ENOSYS)
}
