package health

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

func port(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := strconv.Atoi(p)
	return n
}

// A check asks for the path on loopback, follows no redirect and names
// why an answer did not come.
func TestGet(t *testing.T) {
	var asked string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked = r.URL.RequestURI() + " " + r.UserAgent()
		switch r.URL.Path {
		case "/healthz":
			w.WriteHeader(http.StatusNoContent)
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
		case "/elsewhere":
			t.Error("a redirect was followed")
		case "/hang":
			<-r.Context().Done()
		case "/close":
			hj, _ := w.(http.Hijacker)
			c, _, _ := hj.Hijack()
			c.Close()
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	p := port(t, srv.Listener.Addr().String())
	ctx := context.Background()
	if r := Get(ctx, p, "/healthz?deep=1&%41", time.Second); r.Status != 204 || !r.Healthy() || asked != "/healthz?deep=1&%41 "+UserAgent {
		t.Errorf("healthz: %+v, asked %q", r, asked)
	}
	if r := Get(ctx, p, "/moved", time.Second); r.Status != 302 || !r.Healthy() {
		t.Errorf("moved: %+v", r)
	}
	if r := Get(ctx, p, "/busy", time.Second); r.Status != 503 || r.Healthy() {
		t.Errorf("busy: %+v", r)
	}
	start := time.Now()
	if r := Get(ctx, p, "/hang", 300*time.Millisecond); r.Failure != Timeout || time.Since(start) > 2*time.Second || r.Latency < 300*time.Millisecond {
		t.Errorf("hang: %+v after %v", r, time.Since(start))
	}
	if r := Get(ctx, p, "/close", time.Second); r.Failure != Reset {
		t.Errorf("close: %+v", r)
	}
	// A port nobody listens on, on 127.0.0.1 nor ::1.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := port(t, l.Addr().String())
	l.Close()
	if r := Get(ctx, free, "/healthz", time.Second); r.Failure != Refused {
		t.Errorf("free port: %+v", r)
	}
}

// An app whose event loop is blocked still has its port open: the kernel
// accepts the connection and nothing answers. That is a timeout.
func TestGetBlockedApp(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close() // listening, never accepting
	if r := Get(context.Background(), port(t, l.Addr().String()), "/healthz", 200*time.Millisecond); r.Failure != Timeout {
		t.Errorf("%+v", r)
	}
}

// An app bound to ::1 alone is found there.
func TestGetIPv6Loopback(t *testing.T) {
	l, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		testutil.Skip(t, testutil.Need{What: "no IPv6 loopback (::1)", Fix: "sudo sysctl -w net.ipv6.conf.lo.disable_ipv6=0"}, err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}
	go srv.Serve(l)
	defer srv.Close()
	if r := Get(context.Background(), port(t, l.Addr().String()), "/", time.Second); r.Status != 200 {
		t.Errorf("%+v", r)
	}
}
