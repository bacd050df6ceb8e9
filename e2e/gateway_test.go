package e2e

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/sandbox"
	"github.com/bm2dev/bm2/internal/gateway"
	"github.com/bm2dev/bm2/internal/testutil"
)

// upstreamLog is the access log format of the test gateways: which
// server answered, and how.
const upstreamLog = `$upstream_addr $status`

// needNginx skips the test when nginx is not installed (with CI=true it
// fails: .ci/run installs it). Sandboxes see the host's /usr/sbin/nginx
// through their overlay root.
func needNginx(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/usr/sbin/nginx"); err != nil {
		testutil.Skip(t, testutil.Need{What: "no nginx", Fix: "sudo apt-get install nginx"})
	}
}

// startNginx runs nginx inside the bed in front of what `bm2 gateway
// nginx args` prints, from a private prefix (/tmp/gw, the bed's own
// tmpfs), and waits until it answers on url.
func (b *bed) startNginx(args, url string) string {
	b.t.Helper()
	conf := gateway.NginxStandalone("/tmp/gw", upstreamLog, "    include /tmp/gw/bm2.conf;")
	b.write("/tmp/gw/nginx.conf", conf)
	b.sh(fmt.Sprintf(`set -e
bm2 gateway nginx %s --out /tmp/gw/bm2.conf
nginx -t -q -p /tmp/gw -c /tmp/gw/nginx.conf -e stderr -g 'pid /tmp/gw/nginx.pid;'
nginx -p /tmp/gw -c /tmp/gw/nginx.conf -e /tmp/gw/error.log -g 'pid /tmp/gw/nginx.pid;'`, args))
	b.eventually(10*time.Second, "nginx answers", fmt.Sprintf(`curl -sf --max-time 2 %s`, url))
	return b.sh(`cat /tmp/gw/bm2.conf`)
}

// upstreamCounts reads a gateway's access log: answers per upstream
// address (the last one nginx tried), and the statuses that were not 200.
// 499 is not among them: nginx logs it for a request whose client went
// away first, which is what wrk does with the requests it has in flight
// when it is stopped (and does not count them).
func upstreamCounts(log string) (byAddr map[string]int, bad map[string]int) {
	byAddr, bad = map[string]int{}, map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(log))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		status := f[len(f)-1]
		addr := strings.TrimSuffix(f[len(f)-2], ",")
		byAddr[addr]++
		if status != "200" && status != "499" {
			bad[status]++
		}
	}
	return byAddr, bad
}

const gwForkToml = `name = "fk"
script = "server.js"
runtime = "node"
instances = 3
port = 4000
exec_mode = "fork"
min_uptime_ms = 500
`

// nginx in front of a fork-mode project of 3 instances, configured by
// bm2 gateway nginx, and bm2 reload under steady load through it: the
// restarting instance's port is dark for a moment, nginx passes its
// requests to the others, and not one fails. (A hand-written nginx with
// the default max_fails=1 fail_timeout=10s turned most of such a reload's
// requests into 502s; make bench's figure gwdefault measures that.)
func TestGatewayNginxForkReload(t *testing.T) {
	needNginx(t)
	t.Parallel()
	b := newBed(t)
	b.app("/srv/fk", "graceful-server.js", "server.js")
	b.write("/srv/fk/bm2.toml", gwForkToml)
	b.must(0, "/srv/fk", "serve")
	for port := 4000; port <= 4002; port++ {
		b.eventually(10*time.Second, "fk answers", fmt.Sprintf(`curl -sf --max-time 2 http://127.0.0.1:%d/`, port))
	}
	conf := b.startNginx("fk --listen 127.0.0.1:8080", "http://127.0.0.1:8080/")
	for _, s := range []string{"server 127.0.0.1:4000 max_fails=0;", "server 127.0.0.1:4002 max_fails=0;", "proxy_next_upstream error timeout;"} {
		if !strings.Contains(conf, s) {
			t.Fatalf("bm2 gateway nginx printed no %q:\n%s", s, conf)
		}
	}

	before := b.pids("fk", 3)
	b.sh(`: >/tmp/gw/access.log; nginx -p /tmp/gw -c /tmp/gw/nginx.conf -g 'pid /tmp/gw/nginx.pid;' -s reopen`)
	res, out, _ := b.reloadUnderLoad("fk", 8080, true)
	if res.errors() != 0 {
		t.Errorf("%v during the reload behind nginx; reload said:\n%s", res, out)
	}
	if res.requests < 1000 {
		t.Errorf("only %d requests: the load was not steady", res.requests)
	}
	after := b.pids("fk", 3)
	for i := range after {
		if after[i] == before[i] {
			t.Errorf("fk-%d was not restarted (pid %s)", i, after[i])
		}
	}
	time.Sleep(1500 * time.Millisecond) // the log is flushed every second
	byAddr, bad := upstreamCounts(b.sh(`cat /tmp/gw/access.log`))
	t.Logf("answers per upstream: %v; not 200: %v", byAddr, bad)
	for port := 4000; port <= 4002; port++ {
		if byAddr[fmt.Sprintf("127.0.0.1:%d", port)] == 0 {
			t.Errorf("no request reached the instance on port %d: %v", port, byAddr)
		}
	}
	if len(bad) > 0 {
		t.Errorf("nginx answered %v", bad)
	}
}

// The same for a cluster-mode project of 4 instances: one upstream line,
// and the port never without listeners during the reload.
func TestGatewayNginxClusterReload(t *testing.T) {
	needNginx(t)
	t.Parallel()
	b := newBed(t)
	b.app("/srv/api", "graceful-server.js", "server.js")
	b.write("/srv/api/bm2.toml", apiNodeToml)
	b.must(0, "/srv/api", "serve")
	b.eventually(10*time.Second, "api answers", `curl -sf --max-time 2 http://127.0.0.1:3000/`)
	conf := b.startNginx("api --listen 127.0.0.1:8080", "http://127.0.0.1:8080/")
	if n := strings.Count(conf, "\n    server "); n != 1 || !strings.Contains(conf, "    server 127.0.0.1:3000;\n") {
		t.Fatalf("want one server line for the cluster port, got %d:\n%s", n, conf)
	}
	res, out, _ := b.reloadUnderLoad("api", 8080, true)
	if res.errors() != 0 {
		t.Errorf("%v during the reload behind nginx; reload said:\n%s", res, out)
	}
	if res.requests < 1000 {
		t.Errorf("only %d requests: the load was not steady", res.requests)
	}
	if !strings.Contains(out, "api reloaded: 4 instances in ") {
		t.Errorf("reload's output:\n%s", out)
	}
	b.confirmedNow("api", 4)
}

// fleetNet is the test's own network: 10.213.0.1 is the gateway's
// namespace, the hosts are .2 and .3. These addresses exist only in the
// namespaces the test creates.
var fleetNet = netip.MustParsePrefix("10.213.0.0/24")

// hostGateway is nginx running in the fleet network's own namespace, as a
// host program in a private prefix dir.
type hostGateway struct {
	t    *testing.T
	net  *sandbox.Net
	dir  string
	cmd  *exec.Cmd
	errs bytes.Buffer
}

// startGateway starts nginx in the network's namespace on the snippet;
// it is stopped by t.Cleanup or by stop.
func startGateway(t *testing.T, n *sandbox.Net, snippet string) *hostGateway {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	g := &hostGateway{t: t, net: n, dir: dir}
	if err := os.WriteFile(filepath.Join(dir, "bm2.conf"), []byte(snippet), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := gateway.NginxStandalone(dir, upstreamLog, "    include "+filepath.Join(dir, "bm2.conf")+";")
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	// One process (master_process off), so that it dies with the test
	// process; its temporary files, pid and logs stay in dir.
	g.cmd = n.Command(context.Background(), "nginx", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"), "-e", "stderr",
		"-g", "pid "+filepath.Join(dir, "nginx.pid")+"; daemon off; master_process off;")
	g.cmd.Stdout, g.cmd.Stderr = &g.errs, &g.errs
	if err := g.cmd.Start(); err != nil {
		t.Fatalf("start nginx: %v", err)
	}
	t.Cleanup(g.stop)
	if err := netWait(n, 10*time.Second, fmt.Sprintf("http://%s:8080/", n.Addr())); err != nil {
		g.stop() // its output is read once it is done
		t.Fatalf("the gateway: %v\nnginx: %s", err, g.errs.String())
	}
	return g
}

func (g *hostGateway) stop() {
	if g.cmd == nil || g.cmd.Process == nil || g.cmd.ProcessState != nil {
		return
	}
	g.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { g.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		g.cmd.Process.Kill()
		<-done
	}
}

// log returns the access log so far (nginx flushes it every second).
func (g *hostGateway) log() string {
	time.Sleep(1500 * time.Millisecond)
	data, _ := os.ReadFile(filepath.Join(g.dir, "access.log"))
	return string(data)
}

// truncate empties the access log (nginx appends: O_APPEND).
func (g *hostGateway) truncate() {
	time.Sleep(1500 * time.Millisecond)
	os.Truncate(filepath.Join(g.dir, "access.log"), 0)
}

// load is wrk running against the gateway from the network's namespace,
// paced as reloadUnderLoad's is; stop ends it and returns its summary.
type load struct {
	t   *testing.T
	cmd *exec.Cmd
	out bytes.Buffer
}

func startLoad(t *testing.T, n *sandbox.Net) *load {
	t.Helper()
	script := filepath.Join(t.TempDir(), "report.lua")
	if err := os.WriteFile(script, []byte(wrkScript), 0o644); err != nil {
		t.Fatal(err)
	}
	l := &load{t: t}
	l.cmd = n.Command(context.Background(), "wrk", "-t2", "-c16", "-d120s", "--timeout", "5s", "-s", script,
		fmt.Sprintf("http://%s:8080/", n.Addr()))
	l.cmd.Stdout, l.cmd.Stderr = &l.out, &l.out
	if err := l.cmd.Start(); err != nil {
		t.Fatalf("start wrk: %v", err)
	}
	t.Cleanup(func() {
		if l.cmd.ProcessState == nil {
			l.cmd.Process.Kill()
			l.cmd.Wait()
		}
	})
	time.Sleep(time.Second)
	return l
}

func (l *load) stop() wrkResult {
	l.t.Helper()
	l.cmd.Process.Signal(syscall.SIGINT)
	l.cmd.Wait()
	res, ok := parseWrk(l.out.String())
	if !ok {
		l.t.Fatalf("wrk printed no summary:\n%s", l.out.String())
	}
	return res
}

// netWait waits until url answers from the network's namespace.
func netWait(n *sandbox.Net, timeout time.Duration, url string) error {
	deadline := time.Now().Add(timeout)
	for {
		out, err := n.Command(context.Background(), "curl", "-sf", "--max-time", "2", url).CombinedOutput()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s does not answer after %v: %v %s", url, timeout, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A fleet on one machine: two sandboxes as two hosts on a bridge in the
// test's own network namespaces, the same project file on both, and nginx
// in a third namespace with the configuration `bm2 gateway nginx --host
// A --host B` prints. Requests reach both hosts; bm2 stop on one host and
// bm2 reload on each host in turn lose no request. First in cluster mode
// (one upstream line per host), then in fork mode (one per instance).
func TestGatewayFleet(t *testing.T) {
	needNginx(t)
	testutil.Command(t, "wrk", "sudo apt-get install wrk")
	t.Parallel()
	n := sandbox.NewNet(t, fleetNet)
	hostA, hostB := netip.MustParseAddr("10.213.0.2"), netip.MustParseAddr("10.213.0.3")
	beds := []*bed{newBed(t), newBed(t)}
	for i, addr := range []netip.Addr{hostA, hostB} {
		if err := n.Attach(beds[i].Machine, addr); err != nil {
			t.Fatal(err)
		}
	}

	for _, mode := range []struct{ name, toml string }{
		{"cluster", "instances = 2\n"},
		{"fork", "instances = 2\nexec_mode = \"fork\"\n"},
	} {
		t.Run(mode.name, func(t *testing.T) {
			toml := "name = \"fleet\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3000\nmin_uptime_ms = 500\n" + mode.toml
			ports := []int{3000}
			if mode.name == "fork" {
				ports = []int{3000, 3001}
			}
			hosts := make([]*bed, len(beds))
			for i, b := range beds {
				b = b.in(t)
				hosts[i] = b
				b.app("/srv/fleet", "graceful-server.js", "server.js")
				b.write("/srv/fleet/bm2.toml", toml) // the same file on every host
				b.must(0, "/srv/fleet", "serve")
			}
			// Over the bridge, the hosts reach each other and the gateway's
			// namespace reaches both.
			for _, p := range ports {
				hosts[0].eventually(10*time.Second, "A reaches B", fmt.Sprintf("curl -sf --max-time 2 http://%s:%d/", hostB, p))
				hosts[1].eventually(10*time.Second, "B reaches A", fmt.Sprintf("curl -sf --max-time 2 http://%s:%d/", hostA, p))
			}
			// The gateway's configuration, from either host: the same bytes.
			args := []string{"gateway", "nginx", "fleet", "--host", hostA.String(), "--host", hostB.String(), "--listen", n.Addr().String() + ":8080"}
			snippet := hosts[0].must(0, "/srv/fleet", args...).stdout
			if other := hosts[1].must(0, "/srv/fleet", args...).stdout; other != snippet {
				t.Fatalf("the two hosts print different gateways:\n%s\n---\n%s", snippet, other)
			}
			for _, addr := range []netip.Addr{hostA, hostB} {
				for _, p := range ports {
					for _, want := range []string{fmt.Sprintf("server %s:%d max_fails=3 fail_timeout=2s;", addr, p), fmt.Sprintf("server %s:%d backup max_fails=0;", addr, p)} {
						if !strings.Contains(snippet, want) {
							t.Fatalf("no %q in:\n%s", want, snippet)
						}
					}
				}
			}
			g := startGateway(t, n, snippet)

			// Requests reach every instance port of both hosts.
			l := startLoad(t, n)
			time.Sleep(2 * time.Second)
			res := l.stop()
			byAddr, bad := upstreamCounts(g.log())
			t.Logf("steady load: %v; answers per upstream: %v", res, byAddr)
			for _, addr := range []netip.Addr{hostA, hostB} {
				for _, p := range ports {
					if byAddr[fmt.Sprintf("%s:%d", addr, p)] == 0 {
						t.Errorf("no request reached %s:%d: %v", addr, p, byAddr)
					}
				}
			}
			if res.errors() != 0 || len(bad) > 0 {
				t.Errorf("steady load: %v; not 200: %v", res, bad)
			}

			// bm2 stop on one host: the other takes everything.
			g.truncate()
			l = startLoad(t, n)
			hosts[0].must(0, "/", "stop", "fleet")
			time.Sleep(3 * time.Second)
			res = l.stop()
			byAddr, bad = upstreamCounts(g.log())
			if res.errors() != 0 || len(bad) > 0 {
				t.Errorf("bm2 stop on host A lost requests: %v; not 200: %v; answers per upstream: %v", res, bad, byAddr)
			}
			if res.requests < 1000 {
				t.Errorf("only %d requests: the load was not steady", res.requests)
			}
			hosts[0].must(0, "/", "start", "fleet")
			for _, p := range ports {
				if err := netWait(n, 15*time.Second, fmt.Sprintf("http://%s:%d/", hostA, p)); err != nil {
					t.Fatalf("host A after bm2 start: %v", err)
				}
			}
			time.Sleep(2500 * time.Millisecond) // past fail_timeout: nginx tries host A again

			// bm2 reload on each host in turn.
			g.truncate()
			l = startLoad(t, n)
			for _, b := range hosts {
				b.must(0, "/", "reload", "fleet")
			}
			time.Sleep(3 * time.Second)
			res = l.stop()
			byAddr, bad = upstreamCounts(g.log())
			if res.errors() != 0 || len(bad) > 0 {
				t.Errorf("the reloads lost requests: %v; not 200: %v; answers per upstream: %v", res, bad, byAddr)
			}
			if res.requests < 1000 {
				t.Errorf("only %d requests: the load was not steady", res.requests)
			}
			for _, addr := range []netip.Addr{hostA, hostB} {
				if c := countHost(byAddr, addr); c == 0 {
					t.Errorf("no request reached %s during the reloads: %v", addr, byAddr)
				}
			}
			g.stop()
			for _, b := range hosts {
				b.must(0, "/", "delete", "fleet")
			}
		})
	}
}

var hostPort = regexp.MustCompile(`^(.*):(\d+)$`)

func countHost(byAddr map[string]int, addr netip.Addr) int {
	n := 0
	for a, c := range byAddr {
		if m := hostPort.FindStringSubmatch(a); m != nil && m[1] == addr.String() {
			n += c
		}
	}
	return n
}
