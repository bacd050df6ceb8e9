package notify

import (
	"context"
	"encoding/binary"
	"errors"
	"github.com/bm2dev/bm2/internal/journaltest"
	"github.com/bm2dev/bm2/internal/testutil"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// noHost is a host that owns no address but loopback: the rules alone,
// whatever this machine's interfaces are.
func noHost(netip.Addr) (bool, error) { return false, nil }

// Loopback only with allow_local; link-local (the metadata service among
// them), multicast and unspecified addresses never; anything else, a LAN
// address too, always (on a host that owns none of them).
func TestCheckTarget(t *testing.T) {
	for _, c := range []struct {
		addr          string
		strict, loose bool // allowed without and with allow_local
		why           string
	}{
		{"127.0.0.1", false, true, "loopback"},
		{"127.1.2.3", false, true, "loopback"},
		{"::1", false, true, "loopback"},
		{"::ffff:127.0.0.1", false, true, "loopback"},
		{"169.254.169.254", false, false, "metadata"},
		{"::ffff:169.254.169.254", false, false, "metadata"},
		{"fd00:ec2::254", false, false, "metadata"},
		{"100.100.100.200", false, false, "metadata"},
		{"64:ff9b::a9fe:a9fe", false, false, "metadata"},
		{"64:ff9b::7f00:1", false, true, "loopback"},
		{"64:ff9b::808:808", true, true, ""},
		{"169.254.1.1", false, false, "link-local"},
		{"fe80::1", false, false, "link-local"},
		{"fe80::1%eth0", false, false, "link-local"},
		{"224.0.0.1", false, false, "multicast"},
		{"239.1.1.1", false, false, "multicast"},
		{"ff02::1", false, false, "multicast"},
		{"ff05::2", false, false, "multicast"},
		{"0.0.0.0", false, false, "unspecified"},
		{"::", false, false, "unspecified"},
		{"10.0.0.7", true, true, ""},
		{"192.168.1.20", true, true, ""},
		{"93.184.216.34", true, true, ""},
		{"2001:db8::1", true, true, ""},
	} {
		a := netip.MustParseAddr(c.addr)
		for _, allow := range []bool{false, true} {
			want := c.strict
			if allow {
				want = c.loose
			}
			err := Targets{AllowLocal: allow, Local: noHost}.Check(a)
			if (err == nil) != want {
				t.Errorf("%s (allow_local %v): %v, want allowed=%v", c.addr, allow, err, want)
			}
			if err != nil && (!errors.Is(err, ErrTargetRefused) || !strings.Contains(err.Error(), c.why)) {
				t.Errorf("%s: %v, want ErrTargetRefused saying %s", c.addr, err, c.why)
			}
		}
	}
}

// fakeDNS answers every A query with 127.0.0.1 and every other one with
// nothing: a name that resolves to loopback, without /etc/hosts.
func fakeDNS(t *testing.T) *net.Resolver {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			if len(q) < 12 {
				continue
			}
			end := 12 // the question: labels, then type and class
			for end < len(q) && q[end] != 0 {
				end += int(q[end]) + 1
			}
			end += 5
			if end > len(q) {
				continue
			}
			qtype := binary.BigEndian.Uint16(q[end-4:])
			resp := append([]byte(nil), q[:end]...)
			binary.BigEndian.PutUint16(resp[2:], 0x8180) // a response, recursion available
			binary.BigEndian.PutUint16(resp[10:], 0)     // no additional records
			if qtype == 1 {
				binary.BigEndian.PutUint16(resp[6:], 1)
				resp = append(resp, 0xc0, 0x0c, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
			} else {
				binary.BigEndian.PutUint16(resp[6:], 0)
			}
			pc.WriteTo(resp, from)
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// The check runs on the address dialled, after DNS: a name that resolves
// to 127.0.0.1 is refused as 127.0.0.1 is, for good (not retried), and
// the receiver sees nothing; allowed, the same name is delivered.
func TestTransportChecksResolvedAddress(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	r := fakeDNS(t)
	if addrs, err := r.LookupHost(context.Background(), "hook.bm2.test"); err != nil || len(addrs) != 1 || addrs[0] != "127.0.0.1" {
		t.Fatalf("the fake DNS answers %v, %v", addrs, err)
	}
	for _, url := range []string{"http://hook.bm2.test:" + port + "/x", srv.URL + "/x", "http://[::1]:" + port + "/x"} {
		w := Webhook{URL: url, Timeout: time.Minute, Client: &http.Client{Transport: Transport(false, r)}}
		err := w.Post(context.Background(), Payload{Event: "e"})
		var pe *PostError
		if !errors.As(err, &pe) || !pe.Permanent() || !strings.Contains(err.Error(), "refused to connect: 127.0.0.1 is a loopback address") &&
			!strings.Contains(err.Error(), "refused to connect: ::1 is a loopback address") {
			t.Errorf("%s without allow_local: %v, want a permanent refusal", url, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback receiver got %d requests", hits.Load())
	}
	w := Webhook{URL: "http://hook.bm2.test:" + port + "/x", Timeout: time.Minute, Client: &http.Client{Transport: Transport(true, r)}}
	if err := w.Post(context.Background(), Payload{Event: "e"}); err != nil || hits.Load() != 1 {
		t.Fatalf("with allow_local: %v, %d requests", err, hits.Load())
	}
	// The metadata service stays refused with allow_local.
	w = Webhook{URL: "http://169.254.169.254/latest/meta-data/", Timeout: time.Minute, Client: &http.Client{Transport: Transport(true, r)}}
	if err := w.Post(context.Background(), Payload{Event: "e"}); err == nil || !strings.Contains(err.Error(), "metadata") {
		t.Fatalf("metadata with allow_local: %v", err)
	}
}

// The deliverer's own clients refuse loopback unless the notification
// allows it (a spool file written from a root file's allow_local).
func TestDeliverRefusesLoopback(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	s := testSpool(t)
	n := note(srv.URL+"/strict", "instance_errored")
	n.AllowLocal = false
	s.Put(n, time.Now(), nil)
	s.Put(note(srv.URL+"/allowed", "instance_errored"), time.Now(), nil)
	events := &journaltest.Recorder{}
	res, err := Deliverer{Spool: s, Policy: fast, Events: events}.Run(context.Background())
	if err != nil || res.Delivered != 1 || res.Dropped != 1 || hits.Load() != 1 {
		t.Fatalf("Run = %+v, %v, %d requests; want the allowed one delivered, the other dropped", res, err, hits.Load())
	}
	if got := events.All(); len(got) != 1 || !strings.Contains(got[0].Message, "at attempt 1") || !strings.Contains(got[0].Message, "loopback") {
		t.Errorf("events %+v, want one notification_dropped at the first attempt", got)
	}
}

// ownHost is a host that owns 192.0.2.9, 2001:db8::9 and, as a prefix on
// its lo, 10.77.0.0/24.
func ownHost(a netip.Addr) (bool, error) {
	if !a.Is4() && !a.Is6() || a.Zone() != "" {
		return false, errors.New("asked about " + a.String())
	}
	return a == netip.MustParseAddr("192.0.2.9") || a == netip.MustParseAddr("2001:db8::9") ||
		netip.MustParsePrefix("10.77.0.0/24").Contains(a), nil
}

// Every address the host owns is as loopback: refused without
// allow_local, saying so and what allows it; allowed with it. One the
// host cannot tell about is refused too.
func TestCheckTargetOwnAddresses(t *testing.T) {
	for _, c := range []struct {
		addr string
		own  bool
	}{
		{"192.0.2.9", true},
		{"::ffff:192.0.2.9", true},
		{"64:ff9b::c000:209", true}, // NAT64 of 192.0.2.9
		{"2001:db8::9", true},
		{"10.77.0.1", true},
		{"10.77.0.200", true},
		{"192.0.2.10", false},
		{"10.78.0.1", false},
		{"2001:db8::10", false},
	} {
		a := netip.MustParseAddr(c.addr)
		err := Targets{Local: ownHost}.Check(a)
		if (err != nil) != c.own {
			t.Errorf("%s without allow_local: %v, want refused=%v", c.addr, err, c.own)
		}
		if c.own && (!errors.Is(err, ErrTargetRefused) || !strings.Contains(err.Error(), "is one of this host's own addresses") ||
			!strings.Contains(err.Error(), "allowed only by [notify] allow_local = true in a project file root wrote")) {
			t.Errorf("%s: %v, want a refusal that says it is the host's own and what allows it", c.addr, err)
		}
		if err := (Targets{AllowLocal: true, Local: ownHost}).Check(a); err != nil {
			t.Errorf("%s with allow_local: %v", c.addr, err)
		}
	}
	broken := func(netip.Addr) (bool, error) { return false, errors.New("netlink: no") }
	err := Targets{Local: broken}.Check(netip.MustParseAddr("203.0.113.5"))
	if !errors.Is(err, ErrTargetRefused) || !strings.Contains(err.Error(), "cannot tell whether 203.0.113.5 is one of this host's own addresses (netlink: no)") {
		t.Errorf("a host that cannot tell: %v, want refused", err)
	}
	if err := (Targets{AllowLocal: true, Local: broken}).Check(netip.MustParseAddr("203.0.113.5")); err != nil {
		t.Errorf("allow_local asks nothing of the host: %v", err)
	}
}

// The check runs on the address dialled, with the host's own addresses:
// one of them is refused before any packet is sent (192.0.2.9 is
// nowhere here: a connection would time out instead).
func TestTransportRefusesOwnAddress(t *testing.T) {
	w := Webhook{URL: "http://192.0.2.9:9/x", Timeout: 2 * time.Second, Client: &http.Client{Transport: Targets{Local: ownHost}.Transport(nil)}}
	err := w.Post(context.Background(), Payload{Event: "e"})
	var pe *PostError
	if !errors.As(err, &pe) || !pe.Permanent() || !strings.Contains(err.Error(), "refused to connect: 192.0.2.9 is one of this host's own addresses") {
		t.Fatalf("a URL on the host's own address: %v, want a permanent refusal", err)
	}
}

// hostAddrs are this machine's own addresses other than loopback and
// link-local ones, as its interfaces list them.
func hostAddrs(t *testing.T) []netip.Addr {
	t.Helper()
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var out []netip.Addr
	for _, ia := range ifaddrs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(n.IP)
		if a = a.Unmap(); ok && !a.IsLoopback() && !a.IsLinkLocalUnicast() {
			out = append(out, a)
		}
	}
	return out
}

// Local asks the kernel: loopback and every address of this machine's
// interfaces are local, IPv4 and IPv6; an address of the documentation
// ranges is not.
func TestLocalAsksTheKernel(t *testing.T) {
	for _, s := range []string{"127.0.0.1", "127.3.2.1"} {
		if own, err := Local(netip.MustParseAddr(s)); err != nil || !own {
			t.Errorf("Local(%s) = %v, %v; want true", s, own, err)
		}
	}
	if own, err := Local(netip.MustParseAddr("::1")); err == nil && !own {
		t.Errorf("Local(::1) = false") // an error: no IPv6 here
	}
	for _, s := range []string{"198.51.100.7", "2001:db8:ffff::7"} {
		if own, err := Local(netip.MustParseAddr(s)); err != nil || own {
			t.Errorf("Local(%s) = %v, %v; want false", s, own, err)
		}
	}
	addrs := hostAddrs(t)
	if len(addrs) == 0 {
		testutil.Skip(t, testutil.Need{What: "no address but loopback on this machine", Fix: "run on a machine with a network interface"})
	}
	for _, a := range addrs {
		if own, err := Local(a); err != nil || !own {
			t.Errorf("Local(%s), an address of this machine = %v, %v; want true", a, own, err)
		}
		if err := CheckTarget(a, false); err == nil || !strings.Contains(err.Error(), "one of this host's own addresses") {
			t.Errorf("CheckTarget(%s, false), an address of this machine: %v; want refused", a, err)
		}
	}
}

// A receiver on every address (0.0.0.0, as most listen) gets nothing
// posted to one of this machine's own addresses without allow_local, and
// the post with it: the host's addresses are as loopback.
func TestTransportRefusesHostAddress(t *testing.T) {
	addrs := hostAddrs(t)
	if len(addrs) == 0 {
		testutil.Skip(t, testutil.Need{What: "no address but loopback on this machine", Fix: "run on a machine with a network interface"})
	}
	var hits atomic.Int32
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	for _, a := range addrs {
		url := "http://" + netip.AddrPortFrom(a, uint16(port)).String() + "/x"
		w := Webhook{URL: url, Timeout: 5 * time.Second, Client: &http.Client{Transport: Transport(false, nil)}}
		err := w.Post(context.Background(), Payload{Event: "e"})
		var pe *PostError
		if !errors.As(err, &pe) || !pe.Permanent() || !strings.Contains(err.Error(), "refused to connect: "+a.String()+" is one of this host's own addresses") {
			t.Errorf("%s without allow_local: %v, want a permanent refusal", url, err)
		}
		if n := hits.Load(); n != 0 {
			t.Fatalf("the receiver got %d requests at %s", n, url)
		}
		w.Client = &http.Client{Transport: Transport(true, nil)}
		if err := w.Post(context.Background(), Payload{Event: "e"}); err != nil || hits.Load() != 1 {
			t.Fatalf("%s with allow_local: %v, %d requests", url, err, hits.Load())
		}
		hits.Store(0)
	}
}
