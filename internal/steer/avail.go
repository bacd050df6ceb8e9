package steer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cilium/ebpf"
	"golang.org/x/sys/unix"
)

// ErrUnavailable is what every error meaning "this host cannot steer"
// matches with errors.Is; the error is an *UnavailableError, whose
// Reason is the word for bm2's steering_unavailable event.
var ErrUnavailable = errors.New("connection steering is unavailable")

// Reasons steering is unavailable.
const (
	// ReasonNoPermission: the kernel refused the bpf() call (EPERM):
	// the process lacks CAP_BPF (a user manager's bm2, a service with
	// CapabilityBoundingSet= without it), or an LSM said no.
	ReasonNoPermission = "no_permission"
	// ReasonKernel: the kernel lacks SK_REUSEPORT programs, the
	// sockarray, mappable arrays, BPF atomics with fetch or the
	// SELECT_OR_MIGRATE attach type: Linux before 5.14.
	ReasonKernel = "kernel_too_old"
	// ReasonNoBPFFS: the pin directory is on no bpf filesystem (mount -t
	// bpf bpf /sys/fs/bpf); the group works but cannot outlive the
	// process that made it.
	ReasonNoBPFFS = "no_bpffs"
)

// An UnavailableError says why this host cannot steer.
type UnavailableError struct {
	Reason string // ReasonNoPermission, ReasonKernel, ReasonNoBPFFS
	Err    error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%v (%s): %v", ErrUnavailable, e.Reason, e.Err)
}
func (e *UnavailableError) Unwrap() error        { return e.Err }
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// classify turns the host's refusals into an *UnavailableError and leaves
// other errors as they are.
func classify(what string, err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		// Not cilium/ebpf's text, whose hint at RLIMIT_MEMLOCK is for
		// kernels before 5.11, older than steering needs.
		return &UnavailableError{Reason: ReasonNoPermission, Err: fmt.Errorf("%s: %w (steering needs CAP_BPF)", what, unix.EPERM)}
	}
	err = fmt.Errorf("%s: %w", what, err)
	switch {
	case errors.Is(err, unix.EACCES):
		return &UnavailableError{Reason: ReasonNoPermission, Err: fmt.Errorf("%w (steering needs CAP_BPF)", err)}
	case errors.Is(err, ebpf.ErrNotSupported) || errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ENOPROTOOPT):
		return &UnavailableError{Reason: ReasonKernel, Err: fmt.Errorf("%w (Linux %s; steering needs 5.14)", err, release())}
	}
	return err
}

func release() string {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return "?"
	}
	return unix.ByteSliceToString(u.Release[:])
}

// CheckPinDir tells whether dir is, or would be created, on a bpf
// filesystem: the nearest existing directory of dir must be on one. Not,
// it is an *UnavailableError with ReasonNoBPFFS.
func CheckPinDir(dir string) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir {
		return fmt.Errorf("pin directory %q is not a clean absolute path", dir)
	}
	p := dir
	for {
		var st unix.Statfs_t
		err := unix.Statfs(p, &st)
		if err == nil {
			if st.Type != unix.BPF_FS_MAGIC {
				return &UnavailableError{Reason: ReasonNoBPFFS, Err: fmt.Errorf("%s is on no bpf filesystem (mount -t bpf -o mode=0700 bpf /sys/fs/bpf)", p)}
			}
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) || p == "/" {
			return fmt.Errorf("pin directory %s: %w", dir, err)
		}
		p = filepath.Dir(p)
	}
}

// Available is nil when this host can steer (and pin in pinDir, unless it
// is ""), or the *UnavailableError saying why not. It does for real what
// a group does, on a loopback listener of its own on a port the kernel
// picks: load the program, create the maps, attach, fill a slot.
func Available(pinDir string) error {
	if err := probe(); err != nil {
		return err
	}
	if pinDir != "" {
		return CheckPinDir(pinDir)
	}
	return nil
}

func probe() error {
	fd, port, err := probeListener()
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	defer unix.Close(fd)
	g, err := New(port)
	if err != nil {
		return err
	}
	defer g.Close()
	if err := g.Attach(fd); err != nil {
		return err
	}
	if err := g.Add(0, fd); err != nil {
		var le *ListenerError
		if errors.As(err, &le) {
			return fmt.Errorf("probe: %w", err)
		}
		return err
	}
	return nil
}

// probeListener is a TCP listener with SO_REUSEPORT on 127.0.0.1 and a
// port the kernel picks.
func probeListener() (fd, port int, err error) {
	fd, err = unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return -1, 0, err
	}
	err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	if err == nil {
		err = unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}})
	}
	if err == nil {
		err = unix.Listen(fd, 1)
	}
	var sa unix.Sockaddr
	if err == nil {
		sa, err = unix.Getsockname(fd)
	}
	if err != nil {
		unix.Close(fd)
		return -1, 0, err
	}
	return fd, sa.(*unix.SockaddrInet4).Port, nil
}
