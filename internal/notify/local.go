package notify

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// Local tells whether the kernel delivers a connection to a to this host
// itself, asking it at the moment of the call: a connection there reaches
// whatever listens on the host, as one to loopback does. The kernel's own
// route lookup (a netlink RTM_GETROUTE, what `ip route get` asks) decides,
// for this process as a connect(2) of it would be routed: true when the
// route is local (or anycast), which covers every address of every
// interface, IPv4 and IPv6 (an address on eth0 as much as one added to
// lo), every address of a prefix on lo (10.77.0.0/24 on lo makes all of
// it local) and the local routes root added. No route at all is not
// local: a connection there fails anyway. An error means the kernel could
// not be asked.
func Local(a netip.Addr) (bool, error) {
	a = a.Unmap()
	fam, bits := unix.AF_INET, 32
	if a.Is6() {
		fam, bits = unix.AF_INET6, 128
	}
	if !a.IsValid() {
		return false, errors.New("not an IP address")
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return false, fmt.Errorf("open a netlink socket: %w", err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(routeTimeout.Nanoseconds())
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return false, fmt.Errorf("netlink: set receive timeout: %w", err)
	}
	seq := routeSeq.Add(1)
	if err := unix.Sendto(fd, routeRequest(fam, bits, a.AsSlice(), seq), 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return false, fmt.Errorf("netlink: ask for the route to %s: %w", a, err)
	}
	buf := make([]byte, 8192)
	for {
		n, from, err := unix.Recvfrom(fd, buf, 0)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return false, fmt.Errorf("netlink: read the route to %s: %w", a, err)
		}
		if nl, ok := from.(*unix.SockaddrNetlink); !ok || nl.Pid != 0 {
			continue // only the kernel answers
		}
		local, done, err := routeReply(buf[:n], seq)
		if done || err != nil {
			return local, err
		}
	}
}

// routeTimeout bounds the wait for the kernel's answer.
const routeTimeout = 2 * time.Second

var routeSeq atomic.Uint32

// routeRequest is an RTM_GETROUTE request for the route to one address
// (dst, of family fam and bits long): a struct nlmsghdr, a struct rtmsg
// and an RTA_DST attribute, in the host's byte order.
func routeRequest(fam, bits int, dst []byte, seq uint32) []byte {
	attr := unix.SizeofRtAttr + len(dst)
	b := make([]byte, unix.SizeofNlMsghdr+unix.SizeofRtMsg+nlAlign(attr))
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.RTM_GETROUTE)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(b[8:], seq)
	m := b[unix.SizeofNlMsghdr:]
	m[0] = byte(fam)  // rtm_family
	m[1] = byte(bits) // rtm_dst_len
	o := unix.SizeofNlMsghdr + unix.SizeofRtMsg
	ne.PutUint16(b[o:], uint16(attr))
	ne.PutUint16(b[o+2:], unix.RTA_DST)
	copy(b[o+unix.SizeofRtAttr:], dst)
	return b
}

// routeReply reads the kernel's answer to the request seq: whether the
// route is local, and whether the answer was found (done). No route is
// not local; any other error is an error.
func routeReply(b []byte, seq uint32) (local, done bool, err error) {
	ne := binary.NativeEndian
	for len(b) >= unix.SizeofNlMsghdr {
		l := int(ne.Uint32(b[0:]))
		typ := ne.Uint16(b[4:])
		if l < unix.SizeofNlMsghdr || l > len(b) {
			return false, true, errors.New("netlink: a truncated answer")
		}
		body := b[unix.SizeofNlMsghdr:l]
		if ne.Uint32(b[8:]) == seq {
			switch typ {
			case unix.NLMSG_ERROR:
				if len(body) < 4 {
					return false, true, errors.New("netlink: a truncated error")
				}
				switch errno := unix.Errno(-int32(ne.Uint32(body))); errno {
				case unix.ENETUNREACH, unix.EHOSTUNREACH, unix.EACCES:
					// No route (none, unreachable, prohibit): a
					// connect(2) fails the same way.
					return false, true, nil
				default:
					return false, true, fmt.Errorf("netlink: the route: %w", errno)
				}
			case unix.RTM_NEWROUTE:
				if len(body) < unix.SizeofRtMsg {
					return false, true, errors.New("netlink: a truncated route")
				}
				t := body[7] // rtm_type
				return t == unix.RTN_LOCAL || t == unix.RTN_ANYCAST, true, nil
			}
		}
		b = b[min(nlAlign(l), len(b)):]
	}
	return false, false, nil
}

// nlAlign rounds n up to the 4-byte alignment of netlink messages and
// attributes (NLMSG_ALIGN, RTA_ALIGN).
func nlAlign(n int) int {
	return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1)
}
