package reuseport

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// PortState is what the kernel says about a TCP port on 0.0.0.0 and [::].
type PortState int

const (
	// Free: nobody listens; a plain SO_REUSEADDR bind succeeds.
	Free PortState = iota
	// Shared: a listener holds the port with SO_REUSEPORT (for this
	// effective UID), so another socket may join its group.
	Shared
	// Exclusive: a listener holds the port without SO_REUSEPORT, or as
	// another user: nobody can join.
	Exclusive
)

func (s PortState) String() string {
	switch s {
	case Free:
		return "free"
	case Shared:
		return "shared"
	case Exclusive:
		return "exclusive"
	}
	return fmt.Sprintf("PortState(%d)", int(s))
}

// ReuseAddr and ReusePort are socket-option setters in the shape
// net.ListenConfig.Control and syscall.RawConn.Control expect.
func ReuseAddr(fd uintptr) error {
	return unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1)
}

func ReusePort(fd uintptr) error {
	return unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
}

// ListenControl is a net.ListenConfig Control function that sets
// SO_REUSEADDR and SO_REUSEPORT, as a reusePort app's listener does.
func ListenControl(network, address string, c syscall.RawConn) error {
	var serr error
	if err := c.Control(func(fd uintptr) {
		if serr = ReuseAddr(fd); serr == nil {
			serr = ReusePort(fd)
		}
	}); err != nil {
		return err
	}
	return serr
}

// CheckPort tells whether TCP port is free, shared or exclusive, as seen
// by this process's effective UID, on IPv4 (0.0.0.0) and IPv6 ([::] with
// IPV6_V6ONLY, so that each family is asked on its own):
//
//  1. bind with only SO_REUSEADDR: success means nobody listens (Free);
//  2. otherwise bind with SO_REUSEADDR and SO_REUSEPORT: success means the
//     listener lets others join (Shared); EADDRINUSE means it does not
//     (Exclusive).
//
// Both binds set SO_REUSEADDR so that only listeners answer: a socket on
// the port that does not listen (a TIME_WAIT one a stopped server left, a
// connection it still has) stands in the way of such a bind only if it
// lacks SO_REUSEADDR itself, and servers set it (Node, Bun and Go do; their
// connections inherit it). With SO_REUSEPORT alone, the second bind
// collided with the TIME_WAIT sockets of an earlier listener without
// SO_REUSEPORT (PM2's, just after `pm2 kill`) and took a shared listener
// for an exclusive one. (TIME_WAIT sockets of a server that did not set
// SO_REUSEADDR still fail both binds, and the port reads Exclusive for
// their minute; an app's own bind on their address fails as well.)
//
// The port is Exclusive when either family says so, Shared when either
// is shared and neither exclusive. A wildcard bind conflicts with a
// listener on any address of its family, so an app alone on [::1] or
// 127.0.0.1 is seen too. A host without IPv6 is asked on IPv4 only.
//
// It never calls listen(2) and closes each socket at once, so it cannot
// take a connection away from the app.
func CheckPort(port int) (PortState, error) {
	if port < 1 || port > 65535 {
		return Free, fmt.Errorf("port %d out of range", port)
	}
	v4, err := checkFamily(port, unix.AF_INET)
	if err != nil {
		return Free, err
	}
	if v4 == Exclusive {
		return Exclusive, nil
	}
	v6, err := checkFamily(port, unix.AF_INET6)
	if errors.Is(err, errNoIPv6) {
		return v4, nil
	}
	if err != nil {
		return Free, err
	}
	return max(v4, v6), nil
}

var errNoIPv6 = errors.New("no IPv6")

func checkFamily(port, family int) (PortState, error) {
	err := tryBind(port, family, ReuseAddr)
	if err == nil {
		return Free, nil
	}
	if !errors.Is(err, unix.EADDRINUSE) {
		return Free, fmt.Errorf("probe port %d: %w", port, err)
	}
	err = tryBind(port, family, ReuseAddr, ReusePort)
	if err == nil {
		return Shared, nil
	}
	if errors.Is(err, unix.EADDRINUSE) {
		return Exclusive, nil
	}
	return Free, fmt.Errorf("probe port %d: %w", port, err)
}

func tryBind(port, family int, opts ...func(uintptr) error) error {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if family == unix.AF_INET6 && (errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.EPROTONOSUPPORT)) {
		return errNoIPv6
	}
	if err != nil {
		return fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(fd)
	for _, opt := range opts {
		if err := opt(uintptr(fd)); err != nil {
			return fmt.Errorf("setsockopt: %w", err)
		}
	}
	if family == unix.AF_INET6 {
		if err := unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 1); err != nil {
			return fmt.Errorf("setsockopt IPV6_V6ONLY: %w", err)
		}
		err := unix.Bind(fd, &unix.SockaddrInet6{Port: port})
		if errors.Is(err, unix.EADDRNOTAVAIL) {
			return errNoIPv6 // IPv6 disabled on this host
		}
		return err
	}
	return unix.Bind(fd, &unix.SockaddrInet4{Port: port})
}
