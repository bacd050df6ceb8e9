package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"
)

// metadata are the cloud instance metadata addresses outside the
// link-local ranges (169.254.169.254 is link-local): AWS's over IPv6 and
// Alibaba's. A webhook never needs them, and what answers there hands out
// the machine's credentials.
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// nat64 is the well-known NAT64 prefix (RFC 6052): 64:ff9b::a.b.c.d
// reaches the IPv4 address a.b.c.d, so it is checked as that address.
var nat64 = netip.MustParsePrefix("64:ff9b::/96")

// unwrap is the address a dial to a really reaches: IPv4-mapped and
// NAT64 addresses are their IPv4 address.
func unwrap(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if a.Is6() && nat64.Contains(a) {
		b := a.As16()
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	return a
}

// CheckTarget tells whether bm2-notify may connect to addr, the address
// a webhook's host resolved to: never to a link-local address (the
// metadata service 169.254.169.254, fe80::/10), a multicast or an
// unspecified one; to a loopback address only when allowLocal
// ([notify] allow_local in a file root wrote). The error wraps
// [ErrTargetRefused].
func CheckTarget(addr netip.Addr, allowLocal bool) error {
	a := unwrap(addr)
	why := ""
	switch {
	case !a.IsValid():
		why = "not an IP address"
	case slices.Contains(metadata, a):
		why = "the cloud metadata service"
	case a.IsLinkLocalUnicast():
		why = "a link-local address"
	case a.IsMulticast():
		why = "a multicast address"
	case a.IsUnspecified():
		why = "an unspecified address"
	case a.IsLoopback() && !allowLocal:
		return fmt.Errorf("%w: %s is a loopback address (allowed only by [notify] allow_local = true in a project file root wrote)",
			ErrTargetRefused, a)
	default:
		return nil
	}
	return fmt.Errorf("%w: %s is %s", ErrTargetRefused, a, why)
}

// control is a net.Dialer's Control: it runs on every address a dial
// tries, after DNS, so a name that resolves to a refused address (or a
// redirect to one) is refused too.
func control(allowLocal bool) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %q is not an IP address and port", ErrTargetRefused, address)
		}
		return CheckTarget(ap.Addr(), allowLocal)
	}
}

// Transport is the HTTP transport bm2-notify posts through: every
// connection is checked by CheckTarget on the address it dials, and no
// proxy is used (a proxy would dial in its stead, unchecked). r resolves
// names (nil: the system's resolver).
func Transport(allowLocal bool, r *net.Resolver) *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: r, Control: control(allowLocal)}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil && errors.Is(err, ErrTargetRefused) {
			// Only the reason: the *net.OpError repeats the address.
			var oe *net.OpError
			if errors.As(err, &oe) {
				return nil, oe.Err
			}
		}
		return c, err
	}
	return t
}
