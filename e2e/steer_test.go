package e2e

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// spreadScript opens n keep-alive connections to port at once (Node.js's
// agent, one socket each), asks each for its instance and prints the
// count per instance: "<instance> <count>" lines.
const spreadScript = `const http = require("node:http");
const [port, n] = [Number(process.argv[2]), Number(process.argv[3])];
const agent = new http.Agent({ keepAlive: true, maxSockets: n });
const counts = {};
let left = n;
for (let i = 0; i < n; i++) {
  http.get({ port, host: "127.0.0.1", agent }, (res) => {
    let body = "";
    res.on("data", (d) => (body += d));
    res.on("end", () => {
      const inst = body.split(" ")[1];
      counts[inst] = (counts[inst] || 0) + 1;
      if (--left === 0) {
        for (const [k, v] of Object.entries(counts)) console.log(k + " " + v);
        agent.destroy();
      }
    });
  }).on("error", (e) => { console.log("error " + e.message); process.exit(1); });
}
`

// spread is how many of n keep-alive connections each instance got.
func (b *bed) spread(port, n int) map[string]int {
	b.t.Helper()
	b.write("/tmp/spread.js", spreadScript)
	out := b.sh("node /tmp/spread.js " + strconv.Itoa(port) + " " + strconv.Itoa(n))
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) == 2 {
			got[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	return got
}

// The kernel-steered port: with a bpf file system (as systemd mounts it
// on a host), bm2-steer@ puts each confirmed instance's listener in the
// project's SO_REUSEPORT program, so new connections go round-robin: 64
// keep-alive connections over 2 instances split 32/32 (the kernel's hash
// gave 27/37). A reload of an app with no SIGTERM handler at all, under
// unpaced Connection: close load, fails no request: each instance is
// taken out of the turn and drained before systemd's SIGTERM; under
// keep-alive load the drain does not wait for connections in use. Without
// bpffs, a project gets steering_unavailable once and serves by hash.
func TestSteering(t *testing.T) {
	t.Parallel()
	b := newBed(t) // with bpffs, as a host has it

	b.app("/srv/st", "graceful-server.js", "server.js")
	b.write("/srv/st/bm2.toml", "name = \"st\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3490\n")
	b.must(0, "/srv/st", "serve")
	b.eventually(30*time.Second, "st steered", `bm2 status st | grep -q 'round-robin over 2'`)
	t.Logf("status:\n%s", b.sh(`bm2 status st`))
	got := b.spread(3490, 64)
	if d := got["0"] - got["1"]; got["0"]+got["1"] != 64 || d < -1 || d > 1 {
		t.Errorf("64 keep-alive connections split %v, want 32/32 ± 1", got)
	}
	t.Logf("64 keep-alive connections: %v", got)

	// An app with no SIGTERM handler: the signal kills it at once.
	b.app("/srv/sn", "node-server.js", "server.js")
	b.write("/srv/sn/bm2.toml", "name = \"sn\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3492\n")
	b.must(0, "/srv/sn", "serve")
	b.eventually(30*time.Second, "sn steered", `bm2 status sn | grep -q 'round-robin over 2'`)
	b.settledProject("sn", 2)
	res, out, took := b.reloadCmdUnderLoad("bm2 reload sn", 3492, false)
	t.Logf("reload of an app with no SIGTERM handler took %v under Connection: close load: %v\n%s", took, res, out)
	if res.errors() != 0 {
		t.Errorf("%v during the reload of an app with no SIGTERM handler", res)
	}
	if res.requests < 1000 {
		t.Errorf("only %d requests: the load was not steady", res.requests)
	}
	b.eventually(30*time.Second, "sn steered again", `bm2 status sn | grep -q 'round-robin over 2'`)

	// One instance: the reload stops it as soon as the surge is
	// confirmed, and retires the surge as soon as it is back, each time
	// before the other's steering step may have run (here always: the
	// steps are made late). Each drain adds the running peer to the turn
	// first, so both are drained, never kept as "the last live one" and
	// killed with their requests.
	b.app("/srv/s1", "node-server.js", "server.js")
	b.write("/srv/s1/bm2.toml", "name = \"s1\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 1\nport = 3498\n")
	b.must(0, "/srv/s1", "serve")
	b.eventually(30*time.Second, "s1 steered", `bm2 status s1 | grep -q 'round-robin over 1'`)
	b.settledProject("s1", 1)
	// Each steering step 3 s late, so that every drain of this reload
	// begins before the peer's step has run, as it often does by itself.
	for _, id := range []string{"s1-0", "s1-surge"} {
		b.write("/run/systemd/system/bm2-steer@"+id+".service.d/late.conf", "[Service]\nExecStartPre=/bin/sleep 3\n")
	}
	b.sh(`systemctl daemon-reload`)
	since := strings.TrimSpace(b.sh(`date +@%s.%N | cut -c1-17`))
	res, out, took = b.reloadCmdUnderLoad("bm2 reload s1", 3498, false)
	t.Logf("reload of one instance with no SIGTERM handler took %v under Connection: close load: %v\n%s", took, res, out)
	if res.errors() != 0 {
		t.Errorf("%v during the reload of one instance with no SIGTERM handler", res)
	}
	drains := b.sh(`journalctl -q -o cat --since=` + since + ` -u 'bm2@s1-*' | grep -E 'drained in|last live one|adding it first' || true`)
	t.Logf("drains:\n%s", drains)
	for _, id := range []string{"s1-0", "s1-surge"} {
		if !strings.Contains(drains, id+" drained in ") {
			t.Errorf("%s was not drained before its SIGTERM:\n%s", id, drains)
		}
	}
	b.sh(`rm -r /run/systemd/system/bm2-steer@s1-*.service.d && systemctl daemon-reload`)

	// Under keep-alive load a busy connection is never idle: the drain
	// takes it for one in use (it receives and answers request after
	// request) and does not wait for it, where it waited all of
	// drain_ms (here 5 s) before. The app's SIGTERM handling ends it.
	b.app("/srv/sk", "graceful-server.js", "server.js")
	b.write("/srv/sk/bm2.toml", "name = \"sk\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3496\ndrain_ms = 5000\nstop_timeout_ms = 8000\n")
	b.must(0, "/srv/sk", "serve")
	b.eventually(30*time.Second, "sk steered", `bm2 status sk | grep -q 'round-robin over 2'`)
	b.settledProject("sk", 2)
	since = strings.TrimSpace(b.sh(`date +@%s.%N | cut -c1-17`))
	res, out, took = b.reloadCmdUnderLoad("bm2 reload sk", 3496, true)
	t.Logf("reload under keep-alive load took %v: %v\n%s", took, res, out)
	drains = b.sh(`journalctl -q -o cat --since=` + since + ` -u 'bm2@sk-*' | grep -E 'drained in|not idle after' || true`)
	t.Logf("drains:\n%s", drains)
	for _, id := range []string{"sk-0", "sk-1"} {
		if !strings.Contains(drains, id+" drained in ") {
			t.Errorf("%s's drain under keep-alive load did not end before drain_ms:\n%s", id, drains)
		}
	}
	if strings.Contains(drains, "not idle after drain_ms") {
		t.Errorf("a drain waited all of drain_ms under keep-alive load:\n%s", drains)
	}

	// Without bpffs: once steering_unavailable, and the hash serves.
	b.sh(`umount /sys/fs/bpf`)
	b.app("/srv/sh", "node-server.js", "server.js")
	b.write("/srv/sh/bm2.toml", "name = \"sh\"\nscript = \"server.js\"\nruntime = \"node\"\ninstances = 2\nport = 3494\n")
	b.must(0, "/srv/sh", "serve")
	es := b.waitEvents(30*time.Second, "steering_unavailable", "sh", 1)
	if r := es[0].str("BM2_REASON"); r != "no_bpffs" {
		t.Errorf("steering_unavailable: %v", es[0])
	}
	if out := b.sh(`bm2 status sh`); !regexp.MustCompile(`kernel hash \(steering unavailable: [^)]*\)`).MatchString(out) {
		t.Errorf("bm2 status sh:\n%s", out)
	}
	for i := 0; i < 10; i++ {
		if out := b.sh(`curl -sf --max-time 2 http://127.0.0.1:3494/`); !strings.HasPrefix(out, "sh ") {
			t.Fatalf("sh answered %q", out)
		}
	}
	b.must(0, "/", "restart", "sh")
	b.settledProject("sh", 2)
	if n := len(b.events("steering_unavailable", "sh")); n != 1 {
		t.Errorf("%d steering_unavailable events after a restart, want 1 (once per project per boot)", n)
	}
}
