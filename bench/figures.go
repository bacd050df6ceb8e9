package main

import (
	"fmt"
	"strconv"
	"strings"
)

// Sample is one measurement of a figure without a result type of its own
// (stop, probe, security, reloadmatrix, fleet, package): the figure's
// table has a row per variant and a column per metric, and every cell is
// the median (min–max) of the samples in it.
type Sample struct {
	Figure  string  `json:"figure"`
	Variant string  `json:"variant"`
	Metric  string  `json:"metric"`
	Rep     int     `json:"rep"`
	Value   float64 `json:"value"`
}

// sampleFigure is how RESULTS.md shows a figure of Samples.
type sampleFigure struct {
	key   string // its scenario (-only), Sample.Figure and commands section
	num   string // its section number
	title string
	intro string
	prec  int // decimals of its cells
}

// sampleFigures are the figures of Samples (report.markdown places them).
var sampleFigures = []sampleFigure{
	{key: "spread", num: "1b", title: "How connections split over 2 instances", prec: 0,
		intro: "64 keep-alive connections to a 2-instance project, all opened before the first request (as wrk opens " +
			"them), then one request on each; the pid in each answer says which instance accepted it (bench-helper " +
			"spread). Three contenders, each started afresh per repetition, in rotating order: bm2's cluster mode " +
			"(the throughput figure's project, once `bm2 status` says its port is steered round-robin over both " +
			"instances: bm2-steer@'s SK_REUSEPORT program), PM2's node:cluster (its primary, the God daemon, accepts and " +
			"hands connections round-robin to the workers), and the same 2 reusePort processes bare, which the kernel " +
			"spreads by a hash of each connection: what bm2's cluster mode does where BPF is unavailable (user scope, " +
			"a container without bpffs). The goal is 32/32 ± 1."},
	{key: "reloadmatrix", num: "4c", title: "Reload under load: the app's shutdown and tcp_migrate_req (bm2)", prec: 0,
		intro: "What the kernel setting bm2 ships and the app's SIGTERM handling are worth: the reload figure of §4 (2 " +
			"cluster-mode instances, the same wrk run, the reload 2 s in), bm2 only (PM2 has neither setting), for the app " +
			"of §4, which drains on SIGTERM, for one whose only shutdown code is `server.close()` (`SHUTDOWN=close`) and " +
			"for one that does nothing (`SHUTDOWN=none`: SIGTERM kills it), each with `net.ipv4.tcp_migrate_req` as bm2 " +
			"ships it (1) and the first two also without it (0); the last rows are the 1-instance project of §5 " +
			"(reloaded through its surge instance) with the `server.close()` app."},
	{key: "reloadphases", num: "4e", title: "Where a reload's time goes (4 instances, bm2, beside systemd's floor and PM2's time per worker)", prec: 0,
		intro: "Each bm2 run of §4d broken down, instance by instance, from the sandbox's journal: systemd's \"Stopping\" " +
			"(the restart job begins), the drain's \"drained in\" line (its ExecStop= has been spawned and the instance is " +
			"out of the port's turn and idle), systemd's \"Stopped\" (SIGTERM, the app's exit, then the exit hook, " +
			"ExecStopPost=), \"Starting\" and \"Started\" (the port fence, ExecStartPre=, then the sandboxed exec and the " +
			"run wrapper), the app's \"listening\" line (its own clock), the probe's reuseport_confirmed event, and the next " +
			"instance's \"Stopping\", which the CLI asks for once it has seen the verdict (the last step's: the surge's). " +
			"A step is one instance; the rows are every step of every run, median (min–max). PM2's row is its whole " +
			"reload's time over its 4 workers: per worker it starts a new one, waits for it to listen and stops the old " +
			"one, in one process. The floor's row is the same rolling restart with nothing of bm2's on its path, run " +
			"interleaved with both under the same load, in bm2's sandbox: 4 hand-written units of the app with bm2's " +
			"sandbox directives and a fifth as the surge, on a port of their own, the surge started, each unit restarted " +
			"with `systemctl restart` and waited for until its new process listens (`ss`, every 5 ms), the surge's stop " +
			"queued (no hooks, no port fence, no probe, no drain, no run wrapper; the kernel's hash, not steered): its " +
			"whole time over its 4 units, which is what systemd itself takes for the same work."},
	{key: "fleet", num: "5e", title: "A fleet of two hosts behind one gateway (bm2)", prec: 0,
		intro: "Two more bm2 sandboxes as two hosts on a bridge in network namespaces of their own (e2e/sandbox's Net), " +
			"the same project file on both (2 instances on port 3000, cluster mode, then fork mode), and nginx in a third " +
			"namespace with what `bm2 gateway nginx fleet --host A --host B` prints; wrk runs in that namespace against " +
			"nginx. 2 s into each wrk run, `bm2 stop fleet` on host A (and afterwards, not timed, `bm2 start fleet` and " +
			"a wait past the gateway's fail_timeout), or `bm2 reload fleet` on host A and then on host B. Failed " +
			"requests are every error wrk counts. bm2 only: PM2 has no fleet."},
	{key: "stop", num: "9", title: "Stop", prec: 0,
		intro: "How long the stop command keeps its caller waiting: `bm2 stop NAME` and `pm2 stop NAME`, from a started, " +
			"settled project (wall time of the command). Three apps: the app of the other figures, which drains and " +
			"exits at once when idle; the same app ignoring SIGTERM and SIGINT (`IGNORE_TERM=1`), so that the stop " +
			"waits for `stop_timeout_ms = 1000` (bm2) or `--kill-timeout 1000` (PM2) and kills it; and, bm2 only, the " +
			"draining app of a project whose every event (level info) is notified to a webhook that accepts the " +
			"connection and never answers, with those notifications under way as it stops (bm2-notify.service " +
			"delivers them; a stop must not wait for it). After each stop the port is checked to be silent."},
	{key: "probe", num: "10", title: "The reusePort probe (bm2)", prec: 0,
		intro: "The probe's two verdicts, from the journal and systemd's timestamps. Confirmed: `bm2 start` of a stopped " +
			"project of 4 cluster-mode instances; for each instance, from the app's `listen()` callback (the at_ms of " +
			"its \"listening\" line) to its `reuseport_confirmed` event. Exclusive: a project of 2 instances whose app " +
			"listens without reusePort (`REUSE_PORT=0`), started with `bm2 start`; from the first instance's start " +
			"(ActiveEnterTimestampMonotonic) to the `reuseport_missing` event, and from that event to the last " +
			"instance stopped (InactiveEnterTimestampMonotonic). bm2 only: PM2 has no probe."},
	{key: "security", num: "11", title: "systemd-analyze security (bm2)", prec: 1,
		intro: "The exposure level `systemd-analyze security` gives the units of a running project (0 is the best, 10 " +
			"the worst): a default Node.js project, the same with `user =` a static " +
			"account, its probe and failure units (root), and bm2-notify.service. One run: the levels do not vary."},
	{key: "metrics", num: "11b", title: "One scrape of bm2 metrics with 100 projects (bm2)", prec: 1,
		intro: "100 registered projects of one running Node.js instance each (cluster mode, the app of the other figures), " +
			"online and probed, then one scrape, three ways: `bm2 metrics` (every series of every instance: systemd's " +
			"figures over D-Bus, the probe's verdicts from the journal, the kernel's sockets through sock_diag and /proc); " +
			"`bm2 --system metrics --http`, one exchange with a request on stdin (the scrape's own work, without " +
			"systemd's spawn); and `curl` through bm2-metrics.socket (wall time only, from the connection to the last " +
			"byte: the first scrape starts bm2-metrics.service, which serves the socket until it has been idle for 10 s " +
			"and computes the exposition at most once a second). Beside them, `bm2 list` " +
			"of the same projects (the same snapshot, without the kernel's figures). Wall and CPU (user + " +
			"system, bash's `time`) of the command; the goal is below 100 ms. bm2 only: PM2 keeps a daemon for this."},
	{key: "health", num: "11c", title: "The HTTP health check: a hung event loop found and restarted (bm2)", prec: 0,
		intro: "A cluster project of 2 instances (e2e/apps/health-server.js: its port, and /healthz on BM2_HEALTH_PORT) " +
			"with health_path and two checks: every 1000 ms, 500 ms timeout, 3 failures; every 500 ms, 250 ms timeout, 2 failures. " +
			"Instance 1 blocks its event loop forever (both ports stay open); the time from that to the instance's new " +
			"run (a new InvocationID, running), polled every 20 ms. The bound is interval × failures plus the last " +
			"check's timeout, plus at most one interval for the first failed check to come. Then the cost of one check " +
			"of both instances: `systemctl start bm2-bhc-health.service` (systemd's spawn of the sandboxed oneshot, " +
			"bm2-probe and its child as the app's user, two GETs). bm2 only: PM2 has no HTTP health check."},
	{key: "memrestart", num: "11d", title: "The graceful memory restart: an instance above memory_restart found and reloaded (bm2)", prec: 0,
		intro: "A cluster project of 2 instances (e2e/apps/leak-server.js) with memory_restart = \"160M\" and memory_max = \"600M\", " +
			"at the default memory_check_interval_ms of 5000 and at 1000. Instance 1 keeps 20 MB more every second; from " +
			"the moment its cgroup's memory (systemd's MemoryCurrent, polled every 20 ms) is above the limit, the time to the " +
			"memory_restart event (its journal timestamp) and to the instance's new run (a new InvocationID, running). The " +
			"bound for the event is one interval plus the second reading a second later, plus the oneshot's start; the new " +
			"run then takes the reload's own time (the surge's start and confirmation, then the instance's). Then the cost " +
			"of one check while both are below: `systemctl start bm2-bmr-memory.service`, at the default interval (at 1000 ms the " +
			"timer's own runs meet it). The growth starts at a random point of the interval. PM2 checks every 30 s."},
	{key: "phases", num: "11e", title: "Where a crash recovery's time goes (bm2, and the physical limit beside it)", prec: 1,
		intro: "The app of the other figures, SIGKILLed, then its port polled until a new process answers, in three units " +
			"on the same systemd: bm2's instance (fork mode, one instance, the defaults: restart_delay_ms = 100), a " +
			"hand-written unit of the same app with bm2's sandbox directives and the same RestartSec=100ms (no exit hook, " +
			"no port fence, no probe, no ExecStart wrapper), and the same unit without the sandbox. Each phase ends at a " +
			"journal line's timestamp: systemd's \"Main process exited\", \"Failed with result\" (after ExecStopPost=), " +
			"\"Scheduled restart job\", \"Starting\", \"Started\" (after ExecStartPre= and the exec), the app's " +
			"\"listening\" line, then the first answer of the poll. The journal's stream from the app adds its own latency " +
			"to \"listening\"; the poll is a loop of curl (a few ms each). The rows with restart_delay_ms = 0 (RestartSec=0) are " +
			"the same at PM2's setting, and PM2's row the same app under PM2 (fork mode, 1 instance, its defaults: " +
			"restart_delay 0) in its own sandbox, killed and polled the same way, interleaved with the others (PM2 logs " +
			"nothing to the journal: only its total). The last row is the sandboxed unit at RestartSec=0 with one no-op " +
			"`ExecStopPost=+/bin/true`: the least any crash record on the restart path costs (systemd runs ExecStopPost= " +
			"between the exit and the restart; systemd 252 starts OnFailure= units only when a unit gives up, not when it " +
			"restarts)."},
	{key: "boot", num: "11f", title: "Starting many instances at once, as a boot does (bm2, and the physical limit beside it)", prec: 1,
		intro: "4, 20, 80 and 200 instances of the app of the other figures, in projects of 4 (cluster mode, one port each, " +
			"files in /etc/bm2, daemon-reload before, not timed), every project's target started at once with " +
			"`systemctl start --no-block`, as a boot starts them. From that command, the time until every instance " +
			"listens (`ss` counts the listeners on the ports, every 50 ms) and until every instance's " +
			"`reuseport_confirmed` event is in the journal (polled every 200 ms), and the CPU time the whole sandbox " +
			"spent until then (its root cgroup's usage: PID 1, journald, the probes, the apps, the polls). Beside it two " +
			"controls: the same apps as hand-written units with bm2's sandbox directives (§11e's unit: no hook, no fence, " +
			"no probe, no steering, no wrapper), all started at once, until every one listens; and the same apps started " +
			"as bare processes by one shell (root, no unit, no sandbox), until every one listens. Interleaved, the order " +
			"rotating, 3 repetitions per size. The goal is a cost linear in the number of instances."},
	{key: "package", num: "12", title: "Building and installing the Debian package", prec: 0,
		intro: "`make deb` of this tree and `debian/build-deb` of the 0.1.0 release (e2e/testdata/bm2-0.1.0.tar.xz), " +
			"on the host (wall time); then `dpkg -i` of this tree's package in a fresh sandbox (wall time, the " +
			"package purged again between runs, not timed)."},
}

// sample records one measurement.
func (r *runner) sample(figure, variant, metric string, rep int, v float64) {
	r.res.Samples = append(r.res.Samples, Sample{Figure: figure, Variant: variant, Metric: metric, Rep: rep, Value: v})
}

// note records a remark on a figure (shown under its table).
func (r *runner) note(figure, text string) {
	if r.res.Notes == nil {
		r.res.Notes = map[string][]string{}
	}
	r.res.Notes[figure] = append(r.res.Notes[figure], text)
}

// timedScript runs cmd between two clock readings and prints
// "T <µs> rc=<exit status>".
func timedScript(cmd string) string {
	return fmt.Sprintf(`s=$(date +%%s%%N)
%s
rc=$?
e=$(date +%%s%%N)
echo "T $(( (e - s) / 1000 )) rc=$rc"`, cmd)
}

// parseTimed reads timedScript's line: the time in ms and the exit status.
func parseTimed(out string) (ms float64, rc int, err error) {
	for _, l := range strings.Split(out, "\n") {
		rest, ok := strings.CutPrefix(l, "T ")
		if !ok {
			continue
		}
		us, st, _ := strings.Cut(rest, " rc=")
		n, err := strconv.ParseInt(us, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("timing %q: %w", l, err)
		}
		rc, err := strconv.Atoi(strings.TrimSpace(st))
		if err != nil {
			return 0, 0, fmt.Errorf("timing %q: %w", l, err)
		}
		return float64(n) / 1000, rc, nil
	}
	return 0, 0, fmt.Errorf("no timing line in:\n%s", out)
}

// samplesMD writes the figure of Samples named key: a table with a row
// per variant and a column per metric (both in the order first
// measured), its notes and its commands.
func (rp *report) samplesMD(b *strings.Builder, key string) {
	var f sampleFigure
	for _, sf := range sampleFigures {
		if sf.key == key {
			f = sf
		}
	}
	var variants, metrics []string
	cells := map[[2]string][]float64{}
	for _, s := range rp.res.Samples {
		if s.Figure != f.key {
			continue
		}
		k := [2]string{s.Variant, s.Metric}
		if !contains(variants, s.Variant) {
			variants = append(variants, s.Variant)
		}
		if !contains(metrics, s.Metric) {
			metrics = append(metrics, s.Metric)
		}
		cells[k] = append(cells[k], s.Value)
	}
	notes := rp.res.Notes[f.key]
	if len(variants) == 0 && len(notes) == 0 {
		return
	}
	fmt.Fprintf(b, "## %s. %s\n\n%s\n\n", f.num, f.title, f.intro)
	if len(variants) > 0 {
		header := []string{"variant", "samples"}
		for _, m := range metrics {
			header = append(header, m+": median (min–max)")
		}
		var rows [][]string
		for _, v := range variants {
			n := 0
			row := []string{v, ""}
			for _, m := range metrics {
				xs := cells[[2]string{v, m}]
				n = max(n, len(xs))
				row = append(row, cellText(xs, f.prec))
			}
			row[1] = fmt.Sprint(n)
			rows = append(rows, row)
		}
		table(b, header, rows)
	}
	for _, n := range notes {
		b.WriteString(n + "\n\n")
	}
	commands(b, rp.res, f.key)
}

// cellText is "median (min–max)", or the one value, or "—".
func cellText(xs []float64, prec int) string {
	switch len(xs) {
	case 0:
		return "—"
	case 1:
		return fnum(xs[0], prec)
	}
	lo, med := minMed(xs)
	return fmt.Sprintf("%s (%s–%s)", fnum(med, prec), fnum(lo, prec), fnum(maxOf(xs), prec))
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
