package notify

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Loopback only with allow_local; link-local (the metadata service among
// them), multicast and unspecified addresses never; anything else, a LAN
// address too, always.
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
			err := CheckTarget(a, allow)
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
	events := &lockedRecorder{}
	res, err := Deliverer{Spool: s, Policy: fast, Events: events}.Run(context.Background())
	if err != nil || res.Delivered != 1 || res.Dropped != 1 || hits.Load() != 1 {
		t.Fatalf("Run = %+v, %v, %d requests; want the allowed one delivered, the other dropped", res, err, hits.Load())
	}
	if got := events.all(); len(got) != 1 || !strings.Contains(got[0].Message, "at attempt 1") || !strings.Contains(got[0].Message, "loopback") {
		t.Errorf("events %+v, want one notification_dropped at the first attempt", got)
	}
}
