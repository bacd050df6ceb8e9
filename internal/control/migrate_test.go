package control

import (
	"net"
	"net/netip"
	"testing"
)

func TestLoopbackURL(t *testing.T) {
	for u, want := range map[string]bool{
		"http://127.0.0.1:9000/hook": true, "http://127.9.9.9/": true, "http://[::1]:80/": true, "http://localhost/x": true,
		"http://LOCALHOST./x": true, "http://api.localhost/": true, "http://[::ffff:127.0.0.1]/": true,
		"https://hooks.example.com/x": false, "http://10.0.0.1/": false, "http://169.254.169.254/": false, "::": false,
	} {
		if got := loopbackURL(u); got != want {
			t.Errorf("loopbackURL(%q) = %v", u, got)
		}
	}
}

// A webhook on one of this machine's own addresses is on this host as
// loopback is; the rest is not.
func TestLocalURL(t *testing.T) {
	for u, want := range map[string]string{
		"http://127.0.0.1:9000/hook": "loopback", "http://localhost/x": "loopback", "": "",
		"http://198.51.100.7/": "", "http://0.0.0.0/": "", "http://169.254.169.254/": "", "https://hooks.example.com/x": "",
	} {
		if got := localURL(u); got != want {
			t.Errorf("localURL(%q) = %q, want %q", u, got, want)
		}
	}
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, ia := range ifaddrs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, _ := netip.AddrFromSlice(n.IP)
		if a = a.Unmap(); a.IsLoopback() || a.IsLinkLocalUnicast() {
			continue
		}
		u := "http://" + netip.AddrPortFrom(a, 9000).String() + "/hook"
		if got := localURL(u); got != "this host's own address "+a.String() {
			t.Errorf("localURL(%q), an address of this machine = %q", u, got)
		}
	}
}
