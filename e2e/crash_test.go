package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bm2dev/bm2/e2e/runtimes"
)

// serveCount polls url every 100 ms until stop is closed and returns how
// many requests succeeded and failed.
func (b *bed) serveCount(url string, stop <-chan struct{}) (ok, failed int) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if out, err := b.try(`curl -sf --max-time 1 ` + url); err == nil && out != "" {
			ok++
		} else {
			failed++
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// Instance 1 crashes 200 ms after every start; with max_restarts = 3 it is
// started exactly 4 times, then errored, while instance 0 serves throughout.
func TestRestartBudget(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.nodeProject("crashy", 2, 3000, "CRASH_INSTANCE = \"1\"\nCRASH_AFTER_MS = \"200\"", "max_restarts = 3\nexec_mode = \"fork\"")
	stop := make(chan struct{})
	counts := make(chan [2]int)
	b.sh(`systemctl daemon-reload && systemctl start bm2-crashy.target`)
	b.eventually(10*time.Second, "crashy-0 serves", `curl -sf --max-time 1 http://127.0.0.1:3000/`)
	go func() { ok, failed := b.serveCount("http://127.0.0.1:3000/", stop); counts <- [2]int{ok, failed} }()

	b.eventually(30*time.Second, "crashy-1 failed", `test "$(systemctl show -P ActiveState bm2@crashy-1.service)" = failed`)
	time.Sleep(time.Second) // instance 0 keeps serving after its neighbour gave up
	close(stop)
	c := <-counts
	if c[1] != 0 || c[0] < 5 {
		t.Errorf("instance 0 while its neighbour crashed: %d ok, %d failed requests", c[0], c[1])
	}
	n, _ := strconv.Atoi(strings.TrimSpace(b.sh(`journalctl --no-pager -o cat -u bm2@crashy-1.service | grep -c 'listening on 3001' || true`)))
	if n != 4 {
		t.Errorf("crashy-1 started %d times, want 4 (the first start and exactly 3 restarts)", n)
	}
	// systemd 252 counts the refused fifth start in NRestarts (4 here).
	t.Logf("crashy-1: %d starts, NRestarts=%s, Result=%s", n, b.show("bm2@crashy-1.service", "NRestarts"), b.show("bm2@crashy-1.service", "Result"))
	log := b.sh(`cat /var/log/bm2/crashy/crashy-1.crash.log`)
	if got := strings.Count(log, "reason=exited code=1"); got != 4 {
		t.Errorf("crash.log has %d exit lines, want 4:\n%s", got, log)
	}
	if !strings.Contains(log, "reason=restart_budget_exhausted") {
		t.Errorf("crash.log lacks the errored line:\n%s", log)
	}
	// Root's alone: the project's own account is a dynamic user, whose
	// GID may be another project's tomorrow; no other app reads it.
	if got := strings.TrimSpace(b.sh(`stat -c '%a %U %G' /var/log/bm2/crashy /var/log/bm2/crashy/crashy-1.crash.log`)); got != "750 root root\n640 root root" {
		t.Errorf("crash log modes %q, want 750 and 640, root's", got)
	}
	if out, err := b.try(`setpriv --reuid=65534 --regid=65534 --clear-groups cat /var/log/bm2/crashy/crashy-1.crash.log`); err == nil {
		t.Errorf("nobody reads crashy's crash log:\n%s", out)
	}
	es := b.waitEvents(10*time.Second, "instance_errored", "crashy", 1)
	if es[0].str("BM2_INSTANCE") != "crashy-1" || es[0].str("BM2_REASON") != "restart_budget_exhausted" || es[0].str("PRIORITY") != "3" {
		t.Errorf("instance_errored: %v", es[0])
	}
	// The exit hook's events come through bm2-events.service: the last
	// may follow the errored state by a few milliseconds.
	if n := len(b.waitEvents(10*time.Second, "instance_crashed", "crashy", 4)); n != 4 {
		t.Errorf("%d instance_crashed events, want 4", n)
	}
	if s := b.show("bm2@crashy-0.service", "SubState"); s != "running" {
		t.Errorf("crashy-0 is %s; the project must not be stopped", s)
	}
	if out := b.sh(`bm2 list --json crashy`); !strings.Contains(out, `"restart_budget_exhausted"`) {
		t.Errorf("bm2 list --json does not show the reason:\n%s", out)
	}
}

// An instance whose runs are healthy (it listens, then stays up for
// min_uptime_ms) never uses up its budget: here it crashes 2 s after every
// start, far more often than max_restarts = 3 in total, and keeps being
// restarted; the probe resets the count after each healthy run.
func TestRestartBudgetResets(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.nodeProject("flaky", 1, 3000, "CRASH_INSTANCE = \"0\"\nCRASH_AFTER_MS = \"2000\"", "max_restarts = 3\nmin_uptime_ms = 1000")
	b.sh(`systemctl daemon-reload && systemctl start bm2-flaky.target`)
	// Twice the budget's worth of restarts: a busy host only makes the
	// runs longer, which never brings the instance closer to its budget.
	deadline := time.Now().Add(3 * time.Minute)
	maxRestarts := 0
	for {
		n, _ := strconv.Atoi(b.show("bm2@flaky-0.service", "NRestarts"))
		maxRestarts = max(maxRestarts, n)
		if st := b.show("bm2@flaky-0.service", "ActiveState"); st == "failed" {
			t.Fatalf("flaky-0 gave up (NRestarts %d) although each run listened and lasted 2 s", n)
		}
		starts, _ := strconv.Atoi(strings.TrimSpace(b.sh(`journalctl --no-pager -o cat -u bm2@flaky-0.service | grep -c 'listening on 3000' || true`)))
		if starts >= 8 {
			t.Logf("flaky-0 started %d times, still going; NRestarts never above %d", starts, maxRestarts)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d starts in 3 minutes", starts)
		}
		time.Sleep(time.Second)
	}
	if maxRestarts > 2 {
		t.Errorf("NRestarts reached %d: the healthy runs did not reset the count", maxRestarts)
	}
	if n := strings.Count(b.sh(`journalctl --no-pager -o cat -u bm2-probe@flaky-0.service`), "restart budget reset"); n < 3 {
		t.Errorf("the probe reset the budget %d times, want one per healthy run", n)
	}
	if len(b.events("instance_errored", "flaky")) != 0 {
		t.Error("instance_errored for an instance within its budget")
	}
}

// A crash loop that a slow start stretches (here each run crashes 1.2 s
// after Node.js starts, before it listens: longer than min_uptime_ms, as a
// loaded host makes a quick crash) still uses up the budget: only a run
// that listened and stayed up counts as healthy.
func TestRestartBudgetSlowStart(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.nodeProject("slow", 1, 3000, "CRASH_INSTANCE = \"0\"\nCRASH_AFTER_MS = \"1200\"\nLISTEN_DELAY_MS = \"5000\"",
		"max_restarts = 2\nmin_uptime_ms = 300\nexec_mode = \"fork\"")
	b.sh(`systemctl daemon-reload && systemctl start bm2-slow.target`)
	b.eventually(90*time.Second, "slow-0 gave up", `test "$(systemctl show -P ActiveState bm2@slow-0.service)" = failed`)
	n := strings.Count(b.sh(`journalctl --no-pager -o cat -u bm2@slow-0.service`), "crashing on purpose")
	if n != 3 {
		t.Errorf("slow-0 crashed %d times, want 3 (the first start and max_restarts = 2 restarts)", n)
	}
	b.waitEvents(10*time.Second, "instance_errored", "slow", 1)
}

// An app that ignores SIGTERM and has a child: stopping takes about
// stop_timeout_ms, then SIGKILL takes the whole tree, child included.
func TestStopTimeoutKillsTree(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.app("/srv/stubborn", "stubborn.js", "server.js")
	b.write("/etc/bm2/stubborn.toml", `name = "stubborn"
script = "server.js"
cwd = "/srv/stubborn"
runtime = "node"
port = 3000
stop_timeout_ms = 1000
`)
	b.sh(`systemctl daemon-reload && systemctl start bm2-stubborn.target`)
	out := b.eventually(15*time.Second, "child started", `journalctl --no-pager -o cat -u bm2@stubborn-0.service | grep -o 'child pid [0-9]*' | tail -1 | grep .`)
	child := strings.TrimPrefix(strings.TrimSpace(out), "child pid ")
	b.sh(`kill -0 ` + child)
	start := time.Now()
	b.sh(`systemctl stop bm2@stubborn-0.service`)
	took := time.Since(start)
	if took < 900*time.Millisecond || took > 5*time.Second {
		t.Errorf("stop took %v, want about 1 s (SIGTERM ignored, SIGKILL after stop_timeout_ms)", took)
	}
	if _, err := b.try(`kill -0 ` + child); err == nil {
		t.Errorf("child %s survived the stop", child)
	}
	if out := b.sh(`cat /sys/fs/cgroup/systemd/bm2.slice/bm2-stubborn.slice/bm2@stubborn-0.service/cgroup.procs 2>/dev/null || true`); strings.TrimSpace(out) != "" {
		t.Errorf("processes left in the cgroup: %s", out)
	}
	if _, err := b.try(`curl -sf --max-time 1 http://127.0.0.1:3000/`); err == nil {
		t.Error("port 3000 still answers")
	}
	if !strings.Contains(b.sh(`journalctl --no-pager -o cat -u bm2@stubborn-0.service`), "ignoring SIGTERM") {
		t.Error("the app never saw SIGTERM")
	}
	// A stop that ends in SIGKILL fails the unit, which fires OnFailure=;
	// and so does one inside `bm2 restart`, which brings it back. Neither
	// is an instance that gave up.
	b.sh(`systemctl start bm2@stubborn-0.service`)
	b.eventually(15*time.Second, "stubborn answers", `curl -sf --max-time 1 http://127.0.0.1:3000/`)
	r := b.must(0, "/", "restart", "stubborn")
	t.Logf("bm2 restart stubborn:\n%s%s", r.stdout, r.stderr)
	b.eventually(15*time.Second, "stubborn answers after the restart", `curl -sf --max-time 1 http://127.0.0.1:3000/`)
	b.eventually(15*time.Second, "OnFailure= ran for both", `test "$(journalctl --no-pager -o cat -u bm2-failed@stubborn-0.service | grep -c 'Deactivated successfully')" -ge 2`)
	if es := b.events("instance_errored", "stubborn"); len(es) != 0 {
		t.Errorf("a stopped or restarted instance recorded as errored: %v", es[0].str("MESSAGE"))
	}
	if log := b.sh(`cat /var/log/bm2/stubborn/stubborn-0.crash.log 2>/dev/null || true`); strings.Contains(log, "restart_budget_exhausted") {
		t.Errorf("crash.log says the budget ran out:\n%s", log)
	}
	for _, row := range b.listJSON("stubborn") {
		if row.State != "online" {
			t.Errorf("bm2 list after the restart: %+v", row)
		}
	}
}

// Runtimes below the floors (Node 20, Bun 1.3) and missing ones are refused
// before the app starts, without a restart loop; Node 24.0.0 and Bun 1.4.0
// are accepted.
func TestRuntimeFloors(t *testing.T) {
	// In parallel again: the refusal is judged by the failure hook, off
	// the stop path (TimeoutStopSec=, 1.6 s by default, bounds the exit
	// hook; beside the suite's heavy tests five confined --version runs
	// did not finish in it and the event said "unconfirmed").
	t.Parallel()
	b := newBed(t)
	ctx := t.Context()
	for _, rt := range []struct{ name, version, dir string }{
		{runtimes.Bun, runtimes.Bun13, "/opt/bun13"},
		{runtimes.Bun, runtimes.Bun140, "/opt/bun140"},
		{runtimes.Node, runtimes.Node2400, "/opt/node2400"},
	} {
		p, err := runtimes.Path(ctx, rt.name, rt.version)
		if err != nil {
			t.Fatal(err)
		}
		b.sh(fmt.Sprintf(`install -D -m 0755 %q %s/%s`, p, rt.dir, rt.name))
	}
	project := func(name, runtime, path, app string, port int) {
		script := "server.js"
		if runtime == "bun" {
			script = "index.ts"
		}
		b.app("/srv/"+name, app, script)
		b.write("/etc/bm2/"+name+".toml", fmt.Sprintf("name = %q\nscript = %q\ncwd = \"/srv/%s\"\nruntime = %q\nruntime_path = %q\nport = %d\n",
			name, script, name, runtime, path, port))
	}
	project("node20", "node", "/usr/bin/node", "node-server.js", 3000)
	project("bun13", "bun", "/opt/bun13/bun", "bun-reuseport.ts", 3001)
	project("nonode", "node", "/opt/nowhere/node", "node-server.js", 3002)
	project("node2400", "node", "/opt/node2400/node", "node-server.js", 3003)
	project("bun140", "bun", "/opt/bun140/bun", "bun-reuseport.ts", 3004)
	b.sh(`systemctl daemon-reload && systemctl start bm2-node20.target bm2-bun13.target bm2-nonode.target bm2-node2400.target bm2-bun140.target`)

	for _, c := range []struct{ name, want, reason string }{
		{"node20", "runtime /usr/bin/node is Node.js v20.", "runtime_below_floor"},
		{"bun13", "runtime /opt/bun13/bun is Bun 1.3.14, below the floor 1.4.0", "runtime_below_floor"},
		{"nonode", "runtime /opt/nowhere/node does not exist", "runtime_missing"},
	} {
		unit := "bm2@" + c.name + "-0.service"
		b.eventually(15*time.Second, c.name+" refused", `test "$(systemctl show -P ActiveState `+unit+`)" = failed`)
		status := b.sh(`systemctl status --no-pager -n 20 ` + unit + ` || true`)
		if !strings.Contains(status, c.want) || !strings.Contains(status, "status=78") {
			t.Errorf("%s: systemctl status lacks %q / status=78:\n%s", c.name, c.want, status)
		}
		if n := b.show(unit, "NRestarts"); n != "0" {
			t.Errorf("%s restarted %s times; a refused runtime must not loop", c.name, n)
		}
		// Said by root (the exit hook, which checked the runtime itself as
		// the app's user), never by the app's user: the wrapper ran as that.
		es := b.waitEvents(10*time.Second, "runtime_rejected", c.name, 1)
		if !strings.Contains(es[0].str("MESSAGE"), c.want) || es[0].str("_UID") != "0" || es[0].str("BM2_REASON") != c.reason {
			t.Errorf("%s: runtime_rejected %v", c.name, es[0])
		}
		if log := b.sh(`cat /var/log/bm2/` + c.name + `/` + c.name + `-0.crash.log`); !strings.Contains(log, "reason="+c.reason+" code=78") {
			t.Errorf("%s crash.log: %q", c.name, log)
		}
		if out := b.sh(`journalctl --no-pager -o cat -u ` + unit + ` | grep -c 'listening' || true`); strings.TrimSpace(out) != "0" {
			t.Errorf("%s: the app started", c.name)
		}
	}
	for _, name := range []string{"node2400", "bun140"} {
		b.waitEvents(20*time.Second, "reuseport_confirmed", name, 1)
		b.waitActive(5*time.Second, "bm2@"+name+"-0.service")
	}
	if !strings.HasPrefix(strings.TrimSpace(b.sh(`/opt/node2400/node --version`)), "v24.0.0") {
		t.Error("not Node 24.0.0")
	}
}

// A crash at start shows its cause: a Node.js app whose
// require("./config.json") finds no file crash-loops until its budget is
// used up. bm2 serve says the exit once, with the first error its run
// logged, and counts the rest; its error quotes the failed run from
// "Error: Cannot find module './config.json'" down its stack; the reason
// names that error, not an older crash.log line; and bm2 logs shows the
// app's lines, not systemd's, unless --systemd.
func TestCrashAtStartShowsItsError(t *testing.T) {
	t.Parallel()
	b := newBed(t)
	b.write("/srv/cfg/server.js", `const config = require("./config.json");
require("node:http").createServer((q, r) => r.end(config.greeting))
  .listen({ port: Number(process.env.BM2_APP_PORT), reusePort: true });
`)
	b.write("/srv/cfg/bm2.toml", "name = \"cfg\"\nscript = \"server.js\"\nruntime = \"node\"\nport = 3700\nmax_restarts = 4\n")
	const missing = "Error: Cannot find module './config.json'"
	r := b.must(1, "/srv/cfg", "serve")
	if n := strings.Count(r.stdout, "cfg-0 exited"); n > 2 ||
		!strings.Contains(r.stdout, "cfg-0 exited (exit-code, exit status 1), restarting: "+missing+"\n") {
		t.Errorf("serve's progress: the exit once, with its error, then a count:\n%s", r.stdout)
	}
	if strings.Count(r.stdout, "not listening on port 3700 yet") > 1 {
		t.Errorf("\"not listening yet\" said for every run:\n%s", r.stdout)
	}
	for _, want := range []string{
		"bm2: instance cfg-0 errored: restart_budget_exhausted: cfg-0 crashed again and again and gave up (restart budget exhausted); last exit: exit status 1: " + missing + "\n",
		"bm2: its last run's output, from its first error (journalctl _SYSTEMD_INVOCATION_ID=",
		"bm2:   " + missing + "\nbm2:   Require stack:\nbm2:   - /srv/cfg/server.js\nbm2:       at ",
		"bm2:       at Object.<anonymous> (/srv/cfg/server.js:1:",
	} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("serve's error lacks %q:\n%s", want, r.stderr)
		}
	}
	// The command it names shows the whole run.
	if m := regexp.MustCompile(`journalctl _SYSTEMD_INVOCATION_ID=([0-9a-f]{32}) shows all`).FindStringSubmatch(r.stderr); m == nil {
		t.Errorf("no run named:\n%s", r.stderr)
	} else if out := b.sh(`journalctl --no-pager -o cat _SYSTEMD_INVOCATION_ID=` + m[1]); !strings.Contains(out, missing) {
		t.Errorf("the run's journal lacks the error:\n%s", out)
	}
	if out := b.must(0, "/", "status", "cfg").stdout; !strings.Contains(out, "last exit: exit status 1: "+missing) {
		t.Errorf("bm2 status:\n%s", out)
	}

	// bm2 logs: the last 20 lines are the app's, its error among them.
	logs := b.must(0, "/", "logs", "cfg").stdout
	if !strings.Contains(logs, "cfg-0 | "+missing+"\n") || strings.Contains(logs, "systemd:") {
		t.Errorf("bm2 logs cfg:\n%s", logs)
	}
	if logs := b.must(0, "/", "logs", "cfg", "--systemd", "-n", "all").stdout; !strings.Contains(logs, "systemd: bm2@cfg-0.service: Main process exited") {
		t.Errorf("bm2 logs cfg --systemd:\n%s", logs)
	}

	// Fixed, the project comes up.
	b.write("/srv/cfg/config.json", `{"greeting": "hello\n"}`)
	if r := b.must(0, "/srv/cfg", "serve"); !strings.Contains(r.stdout, "cfg online and confirmed") {
		t.Errorf("serve after the fix:\n%s", r.stdout)
	}
}
