package gateway

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/config"
	"github.com/bm2dev/bm2/internal/testutil"
)

// freePort finds a TCP port free on every address given.
func freePort(t *testing.T, addrs ...string) int {
	t.Helper()
	for range 50 {
		l, err := net.Listen("tcp", addrs[0]+":0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		ok := true
		var held []net.Listener
		for _, a := range addrs[1:] {
			o, err := net.Listen("tcp", fmt.Sprintf("%s:%d", a, port))
			if err != nil {
				ok = false
				break
			}
			held = append(held, o)
		}
		l.Close()
		for _, o := range held {
			o.Close()
		}
		if ok {
			return port
		}
	}
	t.Fatal("no port free on " + strings.Join(addrs, ", "))
	return 0
}

// app is a host of the fleet: an HTTP server that says who it is.
type app struct {
	addr string
	srv  *http.Server
}

func startApp(t *testing.T, addr string) *app {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	a := &app{addr: addr, srv: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, addr)
	})}}
	go a.srv.Serve(l)
	t.Cleanup(func() { a.srv.Close() })
	return a
}

// runNginx runs a real nginx on a snippet, from a private prefix, until
// the test ends; get sends one request to the gateway (a new connection
// each time) and returns the status and body.
func runNginx(t *testing.T, snippet []byte, gwPort int) (get func() (int, string), errorLog func() string) {
	t.Helper()
	nginx := needTool(t, "nginx", "nginx")
	dir := nginxDir(t, snippet)
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, nginx, "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", filepath.Join(dir, "error.log"),
		"-g", "pid "+filepath.Join(dir, "nginx.pid")+"; daemon off; master_process off;")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	errorLog = func() string {
		data, _ := os.ReadFile(filepath.Join(dir, "error.log"))
		return string(data)
	}
	return gatewayUp(t, "nginx", gwPort, 5*time.Second, errorLog), errorLog
}

// gatewayUp waits until the gateway on gwPort answers at all, whatever
// the upstream says, and returns a function that sends it one request (a
// new connection each time) and returns the status and body.
func gatewayUp(t *testing.T, name string, gwPort int, timeout time.Duration, output func() string) func() (int, string) {
	t.Helper()
	client := &http.Client{Timeout: timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	get := func() (int, string) {
		resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/", gwPort))
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code, _ := get(); code != 0 {
			return get
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer:\n%s", name, output())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A real nginx over a fleet of two hosts (127.0.0.1 and 127.0.0.2, both
// loopback) with the configuration Nginx prints: when every server has
// been marked down and one host comes back within fail_timeout, the
// request is served at once through the never-marked backups, instead of
// nginx's "no live upstreams" 502. This is what keeps a fleet serving
// when reloads on several hosts overlap.
func TestNginxFleetNeverRunsOutOfServers(t *testing.T) {
	hosts := []string{"127.0.0.1", "127.0.0.2"}
	port := freePort(t, hosts...)
	gwPort := freePort(t, "127.0.0.1")
	p := &config.Project{Name: "fleet", Instances: 2, Port: port, Mode: config.Cluster}
	snippet, err := Nginx([]*config.Project{p}, Options{Hosts: hosts, Listen: fmt.Sprintf("127.0.0.1:%d", gwPort)})
	if err != nil {
		t.Fatal(err)
	}
	apps := []*app{startApp(t, fmt.Sprintf("%s:%d", hosts[0], port)), startApp(t, fmt.Sprintf("%s:%d", hosts[1], port))}
	get, errorLog := runNginx(t, snippet, gwPort)
	seen := map[string]bool{}
	for range 10 {
		code, body := get()
		if code != 200 {
			t.Fatalf("with both hosts up: %d %s", code, body)
		}
		seen[body] = true
	}
	if len(seen) != 2 {
		t.Errorf("requests reached %v, want both hosts", seen)
	}

	// Both hosts down: every server fails and is marked.
	for _, a := range apps {
		a.srv.Close()
	}
	for range 10 {
		if code, body := get(); code != 502 {
			t.Fatalf("with both hosts down: %d %s, want 502", code, body)
		}
	}
	// One comes back, well within fail_timeout of the marks.
	back := startApp(t, apps[1].addr)
	for i := range 5 {
		if code, body := get(); code != 200 || body != back.addr {
			t.Fatalf("request %d after %s came back: %d %q, want 200 from it at once (the backups)\nnginx error log:\n%s", i, back.addr, code, body, errorLog())
		}
	}
}

// A rolling restart of a fork-mode project's 3 instances, each port dark
// in turn and back before the next goes, as bm2 reload does it, behind a
// real nginx: every request is answered with what Nginx prints. With
// nginx's default max_fails=1 fail_timeout=10s instead, the restarted
// instances stay marked down and the last step finds no live server: the
// outage of a hand-written configuration, shown here as the control.
func TestNginxForkRollingRestart(t *testing.T) {
	for _, c := range []struct {
		name    string
		edit    func(string) string
		wantAll bool
	}{
		{"generated", func(s string) string { return s }, true},
		{"max_fails=1 fail_timeout=10s (nginx's default)", func(s string) string { return strings.ReplaceAll(s, " max_fails=0;", ";") }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var port int
			for range 50 {
				port = freePort(t, "127.0.0.1")
				if port+2 <= 65535 && freeOn("127.0.0.1", port+1) && freeOn("127.0.0.1", port+2) {
					break
				}
			}
			gwPort := freePort(t, "127.0.0.1")
			p := &config.Project{Name: "fk", Instances: 3, Port: port, Mode: config.Fork}
			snippet, err := Nginx([]*config.Project{p}, Options{Listen: fmt.Sprintf("127.0.0.1:%d", gwPort)})
			if err != nil {
				t.Fatal(err)
			}
			snippet = []byte(c.edit(string(snippet)))
			apps := make([]*app, 3)
			for i := range apps {
				apps[i] = startApp(t, fmt.Sprintf("127.0.0.1:%d", port+i))
			}
			get, errorLog := runNginx(t, snippet, gwPort)
			failed := 0
			for i := range apps {
				apps[i].srv.Close() // instance i restarts: its port is dark
				for range 6 {
					if code, _ := get(); code != 200 {
						failed++
					}
				}
				apps[i] = startApp(t, apps[i].addr) // back; the next one goes
			}
			for range 6 {
				if code, _ := get(); code != 200 {
					failed++
				}
			}
			switch {
			case c.wantAll && failed > 0:
				t.Errorf("%d of 24 requests failed during the rolling restart\nnginx error log:\n%s", failed, errorLog())
			case !c.wantAll && failed == 0:
				t.Errorf("the control failed no request: the test no longer shows what max_fails=0 is for")
			}
			t.Logf("%s: %d of 24 requests failed", c.name, failed)
		})
	}
}

func freeOn(addr string, port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("%s:%d", addr, port))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

// runCaddy runs a real Caddy on a Caddyfile (with its admin endpoint off
// and its storage in the test's directory) until the test ends; get is
// runNginx's.
func runCaddy(t *testing.T, caddyfile []byte, gwPort int) (get func() (int, string), output func() string) {
	t.Helper()
	caddy := needTool(t, "caddy", "caddy")
	dir := t.TempDir()
	file := filepath.Join(dir, "Caddyfile")
	full := append([]byte("{\n\tadmin off\n}\n\n"), caddyfile...)
	if err := os.WriteFile(file, full, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, caddy, "run", "--config", file, "--adapter", "caddyfile")
	cmd.Env = []string{"HOME=" + dir, "XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	var out testutil.SyncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); cmd.Wait() })
	return gatewayUp(t, "caddy", gwPort, 10*time.Second, out.String), out.String
}

// consecutivePorts finds n consecutive ports free on 127.0.0.1.
func consecutivePorts(t *testing.T, n int) int {
	t.Helper()
	for range 50 {
		port := freePort(t, "127.0.0.1")
		ok := port+n-1 <= 65535
		for i := 1; i < n && ok; i++ {
			ok = freeOn("127.0.0.1", port+i)
		}
		if ok {
			return port
		}
	}
	t.Fatalf("no %d consecutive free ports", n)
	return 0
}

// The rolling restart of TestNginxForkRollingRestart behind a real Caddy
// with what Caddy prints: a dark port's requests go to another upstream.
// And over a fleet whose upstreams have all been marked (passive health
// checks), a request waits for a host to come back rather than failing.
func TestCaddyForkRollingRestartAndFleet(t *testing.T) {
	port := consecutivePorts(t, 3)
	gwPort := freePort(t, "127.0.0.1")
	p := &config.Project{Name: "fk", Instances: 3, Port: port, Mode: config.Fork}
	caddyfile, err := Caddy([]*config.Project{p}, Options{Listen: fmt.Sprintf("127.0.0.1:%d", gwPort)})
	if err != nil {
		t.Fatal(err)
	}
	apps := make([]*app, 3)
	for i := range apps {
		apps[i] = startApp(t, fmt.Sprintf("127.0.0.1:%d", port+i))
	}
	get, output := runCaddy(t, caddyfile, gwPort)
	failed := 0
	for i := range apps {
		apps[i].srv.Close()
		for range 6 {
			if code, _ := get(); code != 200 {
				failed++
			}
		}
		apps[i] = startApp(t, apps[i].addr)
	}
	if failed > 0 {
		t.Errorf("%d of 18 requests failed during the rolling restart behind Caddy\n%s", failed, output())
	}

	hosts := []string{"127.0.0.1", "127.0.0.2"}
	fport := freePort(t, hosts...)
	fgw := freePort(t, "127.0.0.1")
	fp := &config.Project{Name: "fleet", Instances: 2, Port: fport, Mode: config.Cluster}
	caddyfile, err = Caddy([]*config.Project{fp}, Options{Hosts: hosts, Listen: fmt.Sprintf("127.0.0.1:%d", fgw)})
	if err != nil {
		t.Fatal(err)
	}
	fleet := []*app{startApp(t, fmt.Sprintf("%s:%d", hosts[0], fport)), startApp(t, fmt.Sprintf("%s:%d", hosts[1], fport))}
	get, output = runCaddy(t, caddyfile, fgw)
	for _, a := range fleet {
		a.srv.Close()
	}
	// Both hosts down: the request's tries mark every upstream (three
	// failures each, within its first second); one host comes back after
	// a second, and the request waits for its mark to expire.
	back := make(chan *app, 1)
	go func() {
		time.Sleep(time.Second)
		back <- startApp(t, fleet[1].addr)
	}()
	start := time.Now()
	code, body := get()
	b := <-back
	if code != 200 || body != b.addr {
		t.Fatalf("with every upstream marked and %s back: %d %q after %v, want 200 from it\n%s", b.addr, code, body, time.Since(start), output())
	}
	t.Logf("answered after %v", time.Since(start).Round(10*time.Millisecond))
}
