package steer

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// What makes a socket unfit for a group; a *ListenerError wraps one.
var (
	// ErrMPTCP: an MPTCP listener (IPPROTO_MPTCP), which is what Go 1.24
	// and later make of net.Listen("tcp", ...) where the kernel has
	// MPTCP on. The kernel keeps only TCP and UDP sockets in a sockarray
	// and refuses others with ENOTSUPP, which cilium/ebpf reports as
	// "not supported".
	ErrMPTCP = errors.New("an MPTCP listener (Go 1.24+ net.Listen makes one; ListenConfig.SetMultipathTCP(false) or GODEBUG=multipathtcp=0 does not): the kernel's sockarray takes TCP sockets only")
	// ErrNotTCP: not an IPv4 or IPv6 TCP socket.
	ErrNotTCP = errors.New("not an IPv4 or IPv6 TCP socket")
	// ErrNotListening: bound, or not even that, but not listening; the
	// kernel makes a TCP socket part of a port group at listen(2).
	ErrNotListening = errors.New("not listening")
	// ErrNoReusePort: a listener without SO_REUSEPORT, alone on its port.
	ErrNoReusePort = errors.New("listening without SO_REUSEPORT")
	// ErrOtherPort: a listener on another port than the group's.
	ErrOtherPort = errors.New("listening on another port")
	// ErrOtherFamily: an IPv4 listener in an IPv6 group or the reverse;
	// the kernel keeps them in two groups.
	ErrOtherFamily = errors.New("of another address family than the group")
	// ErrSteered: the socket is in a sockarray already (a socket can be
	// in one slot of one map: EBUSY).
	ErrSteered = errors.New("already steered")
)

// A ListenerError is a file descriptor that cannot join the group, and
// why.
type ListenerError struct {
	FD  int
	Err error
}

func (e *ListenerError) Error() string { return fmt.Sprintf("fd %d: %v", e.FD, e.Err) }
func (e *ListenerError) Unwrap() error { return e.Err }

// check tells whether fd is a listener the group can steer to: what the
// kernel would refuse with EINVAL or ENOTSUPP, named, and what it would
// take but never select (another port or family). A group learns its
// family from its first listener.
// It returns the family for learn once the kernel took the socket.
func (g *Group) check(fd int) (family int, err error) {
	fam, err := CheckListener(fd, g.Port())
	if err != nil {
		return 0, err
	}
	if want := int(g.load(idxFamily)); want != 0 && want != fam {
		return 0, &ListenerError{FD: fd, Err: fmt.Errorf("%w (%s, the group's is %s)", ErrOtherFamily, familyName(fam), familyName(want))}
	}
	return fam, nil
}

// learn records the group's family from its first listener.
func (g *Group) learn(family int) {
	if g.load(idxFamily) == 0 {
		g.store(idxFamily, uint64(family))
	}
}

// CheckListener tells whether fd is a TCP listener with SO_REUSEPORT on
// port, and returns its address family (AF_INET or AF_INET6).
func CheckListener(fd, port int) (family int, err error) {
	fail := func(e error) (int, error) { return 0, &ListenerError{FD: fd, Err: e} }
	dom, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return fail(fmt.Errorf("not a socket: %w", err))
	}
	typ, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE)
	if err != nil {
		return fail(err)
	}
	proto, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL)
	if err != nil {
		return fail(err)
	}
	if proto == unix.IPPROTO_MPTCP {
		return fail(ErrMPTCP)
	}
	if (dom != unix.AF_INET && dom != unix.AF_INET6) || typ != unix.SOCK_STREAM || proto != unix.IPPROTO_TCP {
		return fail(fmt.Errorf("%w (domain %d, type %d, protocol %d)", ErrNotTCP, dom, typ, proto))
	}
	if on, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ACCEPTCONN); err != nil {
		return fail(err)
	} else if on == 0 {
		return fail(ErrNotListening)
	}
	if on, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT); err != nil {
		return fail(err)
	} else if on == 0 {
		return fail(ErrNoReusePort)
	}
	sa, err := unix.Getsockname(fd)
	if err != nil {
		return fail(err)
	}
	var got int
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		got = a.Port
	case *unix.SockaddrInet6:
		got = a.Port
	}
	if got != port {
		return fail(fmt.Errorf("%w (%d, the group's is %d)", ErrOtherPort, got, port))
	}
	return dom, nil
}

func familyName(f int) string {
	switch f {
	case unix.AF_INET:
		return "IPv4"
	case unix.AF_INET6:
		return "IPv6"
	}
	return fmt.Sprintf("family %d", f)
}
