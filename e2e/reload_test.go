package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/internal/testutil"
)

// wrkScript paces wrk and makes it print one machine-readable summary
// line. Each connection waits 2 ms after every answer (at most ~8000
// requests a second over 16 connections): a steady load that leaves the
// host CPU to run systemd. Unpaced, two of these loads saturate both CPUs
// of a small VM for a minute with loopback traffic, the kernel's per-CPU
// workers starve (dmesg: "BUG: workqueue lockup") and PID 1 stalls for
// tens of seconds in cgroup and namespace teardown; the reload then
// measures the host, not bm2. The pause also leaves keep-alive connections
// idle between requests, where closing them races the next request.
const wrkScript = `delay = function() return 2 end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("WRK requests=%d connect=%d read=%d write=%d status=%d timeout=%d maxus=%d\n",
    summary.requests, e.connect, e.read, e.write, e.status, e.timeout, latency.max))
end
`

// wrkResult is wrk's summary: requests completed, errors of each kind
// (status: responses that are not 2xx or 3xx) and the slowest answer.
type wrkResult struct {
	requests, connect, read, write, status, timeout int
	slowest                                         time.Duration
}

func (w wrkResult) errors() int { return w.connect + w.read + w.write + w.status + w.timeout }

func (w wrkResult) String() string {
	return fmt.Sprintf("%d requests, %d errors (connect %d, read %d, write %d, timeout %d, non-2xx/3xx %d), slowest answer %v",
		w.requests, w.errors(), w.connect, w.read, w.write, w.timeout, w.status, w.slowest.Round(time.Millisecond))
}

var wrkLine = regexp.MustCompile(`WRK requests=(\d+) connect=(\d+) read=(\d+) write=(\d+) status=(\d+) timeout=(\d+) maxus=(\d+)`)

// parseWrk reads the summary line wrkScript makes wrk print.
func parseWrk(out string) (wrkResult, bool) {
	w := wrkLine.FindStringSubmatch(out)
	if w == nil {
		return wrkResult{}, false
	}
	n := func(s string) int { v, _ := strconv.Atoi(s); return v }
	return wrkResult{n(w[1]), n(w[2]), n(w[3]), n(w[4]), n(w[5]), n(w[6]), time.Duration(n(w[7])) * time.Microsecond}, true
}

// reloadUnderLoad runs wrk against port (16 connections, HTTP keep-alive
// or "Connection: close" on every request) and `bm2 reload project` one
// second into it, so the load covers the whole reload however long it
// takes — about 4 s for 4 instances. A request counts as lost when it has
// no answer after 5 s (wrk --timeout), and wrk stops (SIGINT makes it stop
// and report) 6 s after the reload ends: every request sent during the
// reload is either answered or counted. A busy host may answer slowly; it
// may not drop a request. It returns wrk's summary, reload's output and
// how long reload took.
func (b *bed) reloadUnderLoad(project string, port int, keepAlive bool) (wrkResult, string, time.Duration) {
	b.t.Helper()
	return b.reloadCmdUnderLoad("bm2 reload "+project, port, keepAlive)
}

// reloadCmdUnderLoad is reloadUnderLoad with the reload's command line
// (a shell command: a user's `su -l alice -c 'bm2 reload web'`, say).
func (b *bed) reloadCmdUnderLoad(reload string, port int, keepAlive bool) (wrkResult, string, time.Duration) {
	b.t.Helper()
	if _, err := b.try(`command -v wrk && command -v nstat`); err != nil {
		testutil.Skip(b.t, testutil.Need{What: "no wrk or nstat", Fix: "sudo apt-get install wrk iproute2"}, err)
	}
	header := ""
	if !keepAlive {
		header = `-H "Connection: close"`
	}
	out := b.sh(fmt.Sprintf(`cat >/tmp/report.lua <<'EOF'
%sEOF
nstat -n
wrk -t2 -c16 -d120s --timeout 5s %s -s /tmp/report.lua http://127.0.0.1:%d/ >/tmp/wrk.out 2>&1 &
wrk=$!
sleep 1
start=$(date +%%s%%N)
%s >/tmp/reload.out 2>&1
rc=$?
end=$(date +%%s%%N)
sleep 6
kill -INT $wrk
wait $wrk
echo "TCP $(nstat -z TcpExtTCPMigrateReqSuccess TcpExtTCPMigrateReqFailure TcpExtListenOverflows TcpExtListenDrops TcpExtTCPReqQFullDrop TcpAttemptFails TcpEstabResets TcpOutRsts TcpRetransSegs TcpExtTCPTimeouts | awk 'NR>1 && $2 != 0 {printf "%%s=%%s ", $1, $2}')"
echo "RELOAD rc=$rc ms=$(( (end - start) / 1000000 ))"
cat /tmp/reload.out
echo "--- wrk"
cat /tmp/wrk.out`, wrkScript, header, port, reload))
	m := regexp.MustCompile(`RELOAD rc=(\d+) ms=(\d+)`).FindStringSubmatch(out)
	res, ok := parseWrk(out)
	if m == nil || !ok {
		b.t.Fatalf("no result:\n%s", out)
	}
	if m[1] != "0" {
		b.t.Fatalf("%s exited %s:\n%s", reload, m[1], out)
	}
	ms, _ := strconv.Atoi(m[2])
	reloadOut, _, _ := strings.Cut(out[strings.Index(out, m[0])+len(m[0])+1:], "--- wrk")
	if tcp := regexp.MustCompile(`(?m)^TCP .*$`).FindString(out); tcp != "" {
		reloadOut = "kernel counters (nstat): " + strings.TrimPrefix(tcp, "TCP ") + "\n" + reloadOut
	}
	return res, reloadOut, time.Duration(ms) * time.Millisecond
}

const apiNodeToml = `name = "api"
script = "server.js"
runtime = "node"
instances = 4
port = 3000
min_uptime_ms = 500
`

// A rolling reload of 4 Node.js instances under steady load: every
// instance is replaced, one at a time, and not one request fails, with
// keep-alive connections and with a new connection per request. (make
// bench's figure reloadmatrix measures the same without
// net.ipv4.tcp_migrate_req and with apps that do less on SIGTERM.)
func TestReload(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	// make install applied packaging/sysctl.d/50-bm2.conf in the sandbox's
	// own network namespace.
	if v := strings.TrimSpace(b.sh(`sysctl -n net.ipv4.tcp_migrate_req`)); v != "1" {
		t.Fatalf("net.ipv4.tcp_migrate_req = %s after make install, want 1", v)
	}
	b.app("/srv/api", "graceful-server.js", "server.js")
	// min_uptime_ms = 500: online means up for half a second (the default
	// is a second), to keep the test short.
	b.write("/srv/api/bm2.toml", apiNodeToml)
	b.must(0, "/srv/api", "serve")
	b.eventually(10*time.Second, "api answers", `curl -sf --max-time 2 http://127.0.0.1:3000/`)

	for _, keepAlive := range []bool{true, false} {
		name := "keep-alive"
		if !keepAlive {
			name = "connection close"
		}
		t.Run(name, func(t *testing.T) {
			b := b.in(t)
			before := b.pids("api", 4)
			res, out, _ := b.reloadUnderLoad("api", 3000, keepAlive)
			if res.errors() != 0 {
				t.Errorf("%v during the reload; reload said:\n%s", res, out)
			}
			if res.requests < 1000 {
				t.Errorf("only %d requests: the load was not steady", res.requests)
			}
			for i := 0; i < 4; i++ {
				if !regexp.MustCompile(fmt.Sprintf(`(?m)^api-%d restarting… online, listening, confirmed \(\d+\.\ds\)$`, i)).MatchString(out) {
					t.Errorf("reload's output for api-%d:\n%s", i, out)
				}
			}
			if !strings.Contains(out, "api reloaded: 4 instances in ") {
				t.Errorf("reload's output:\n%s", out)
			}
			b.restartedAll("api", before)
			b.confirmedNow("api", 4)
		})
	}
}

// The same with Bun 1.4.4 and HTTP keep-alive. (Bun keeps a connection
// open after a request that says "Connection: close", which wrk counts as
// a read error on every request, reload or not; so that case is measured
// with Node.js only.)
func TestReloadBun(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/api", "graceful-bun.ts", "index.ts")
	b.write("/srv/api/bm2.toml", `name = "api"
script = "index.ts"
instances = 4
port = 3000
min_uptime_ms = 500
`)
	b.must(0, "/srv/api", "serve")
	b.eventually(10*time.Second, "api answers", `curl -sf --max-time 2 http://127.0.0.1:3000/`)
	res, out, _ := b.reloadUnderLoad("api", 3000, true)
	if res.errors() != 0 {
		t.Errorf("%v during the reload; reload said:\n%s", res, out)
	}
	if !strings.Contains(out, "api reloaded: 4 instances in ") {
		t.Errorf("reload's output:\n%s", out)
	}
}
