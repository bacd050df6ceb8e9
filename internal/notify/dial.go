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

// Targets is where bm2-notify may connect: never to a link-local address
// (the metadata service 169.254.169.254, fe80::/10), a multicast or an
// unspecified one; to this host itself (a loopback address, or any other
// address the kernel delivers locally: every address of every interface)
// only with AllowLocal ([notify] allow_local in a file root wrote).
type Targets struct {
	AllowLocal bool
	// Local tells whether a connection to an address reaches this host
	// itself; nil is [Local], the kernel's answer at the moment of the
	// dial. Tests put a host of their own here.
	Local func(netip.Addr) (bool, error)
}

// CheckTarget is [Targets.Check] with the kernel's answers: whether
// bm2-notify may connect to addr, the address a webhook's host resolved
// to.
func CheckTarget(addr netip.Addr, allowLocal bool) error {
	return Targets{AllowLocal: allowLocal}.Check(addr)
}

// localOnly ends every refusal of this host's own addresses.
const localOnly = "allowed only by [notify] allow_local = true in a project file root wrote"

// Check tells whether bm2-notify may connect to addr. The error wraps
// [ErrTargetRefused].
func (t Targets) Check(addr netip.Addr) error {
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
	case t.AllowLocal:
		return nil
	case a.IsLoopback():
		return fmt.Errorf("%w: %s is a loopback address (%s)", ErrTargetRefused, a, localOnly)
	default:
		return t.checkOwn(addr.Unmap(), a)
	}
	return fmt.Errorf("%w: %s is %s", ErrTargetRefused, a, why)
}

// checkOwn refuses an address of this host's (dialled, or reached: a),
// which the kernel delivers to whatever listens there, as it does
// loopback; and one it cannot tell.
func (t Targets) checkOwn(dialled, a netip.Addr) error {
	local := t.Local
	if local == nil {
		local = Local
	}
	for _, x := range []netip.Addr{a, dialled} {
		own, err := local(x)
		if err != nil {
			return fmt.Errorf("%w: cannot tell whether %s is one of this host's own addresses (%v), so it is refused as they are (%s)",
				ErrTargetRefused, x, err, localOnly)
		}
		if own {
			return fmt.Errorf("%w: %s is one of this host's own addresses, which the kernel delivers locally as it does loopback (%s)",
				ErrTargetRefused, x, localOnly)
		}
		if dialled == a {
			break
		}
	}
	return nil
}

// control is a net.Dialer's Control: it runs on every address a dial
// tries, after DNS, so a name that resolves to a refused address (or a
// redirect to one) is refused too.
func (t Targets) control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %q is not an IP address and port", ErrTargetRefused, address)
	}
	return t.Check(ap.Addr())
}

// Transport is the HTTP transport bm2-notify posts through:
// [Targets.Transport] with the kernel's answers.
func Transport(allowLocal bool, r *net.Resolver) *http.Transport {
	return Targets{AllowLocal: allowLocal}.Transport(r)
}

// Transport is an HTTP transport whose every connection is checked by
// [Targets.Check] on the address it dials, and that uses no proxy (a
// proxy would dial in its stead, unchecked). r resolves names (nil: the
// system's resolver).
func (t Targets) Transport(r *net.Resolver) *http.Transport {
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: r, Control: t.control}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
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
	return tr
}
