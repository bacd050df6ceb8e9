package main

import (
	"encoding/json"
	"fmt"
	"html"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// write puts RESULTS.md, results.svg and results.json side by side.
func (r *runner) write(out string) error {
	dir := filepath.Dir(out)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r.res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	rep := newReport(r.res)
	md := rep.markdown()
	if err := os.WriteFile(filepath.Join(dir, "results.svg"), []byte(rep.svg()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(md), 0o644)
}

// report derives every figure from Results.
type report struct {
	res  *Results
	head [][]string // the headline table's rows
	svgP []panel
}

func newReport(res *Results) *report { return &report{res: res} }

// Formatting.

func fnum(x float64, prec int) string {
	if math.IsNaN(x) {
		return "—"
	}
	if math.IsInf(x, 0) {
		return "∞"
	}
	s := fmt.Sprintf("%.*f", prec, x)
	intPart, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	s = b.String()
	if neg {
		s = "-" + s
	}
	if frac != "" {
		s += "." + frac
	}
	return s
}

func ratioText(rs []float64) string {
	if len(rs) == 0 {
		return "—"
	}
	lo, med := minMed(rs)
	pairs := "pairs"
	if len(rs) == 1 {
		pairs = "pair"
	}
	return fmt.Sprintf("**%s×** (min %s×, %d %s)", fnum(med, 2), fnum(lo, 2), len(rs), pairs)
}

func runsText(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}

func minMedText(xs []float64, prec int, unit string) (string, string) {
	lo, med := minMed(xs)
	return fnum(lo, prec) + unit, fnum(med, prec) + unit
}

func table(b *strings.Builder, header []string, rows [][]string) {
	b.WriteString("| " + strings.Join(header, " | ") + " |\n|")
	for range header {
		b.WriteString(" --- |")
	}
	b.WriteString("\n")
	for _, r := range rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	b.WriteString("\n")
}

func commands(b *strings.Builder, res *Results, section string) {
	// A figure of Samples writes its notes under its table; every other
	// section's come here, before its commands.
	sample := false
	for _, f := range sampleFigures {
		sample = sample || f.key == section
	}
	if !sample {
		for _, n := range res.Notes[section] {
			b.WriteString(n + "\n\n")
		}
	}
	cmds := res.Commands[section]
	if len(cmds) == 0 {
		return
	}
	where := "Commands, run inside the sandboxes (`bench-helper` is this driver's own executable, copied in; see bench/helper.go):"
	switch section {
	case "generator":
		where = "Commands, run on the host as root (`bench-helper` is this driver's own executable; see bench/helper.go):"
	case "daemonreload":
		where = "Commands, run inside the bm2 sandbox:"
	}
	b.WriteString(where + "\n\n```sh\n")
	for _, c := range cmds {
		b.WriteString(c + "\n")
	}
	b.WriteString("```\n\n")
}

func (rp *report) markdown() string {
	res := rp.res
	var body strings.Builder
	rp.throughputMD(&body)
	rp.samplesMD(&body, "spread")
	rp.spreadHead()
	rp.memoryMD(&body)
	rp.startMD(&body)
	rp.reloadMD(&body)
	rp.reloadSection(&body, rp.res.ReloadBun, 2, "4b", "reloadbun", "2 Bun instances")
	rp.samplesMD(&body, "reloadmatrix")
	rp.reloadSection(&body, rp.res.Reload4, 4, "4d", "reload4", "")
	rp.samplesMD(&body, "reloadphases")
	rp.reload1MD(&body)
	rp.gatewayReloadMD(&body)
	rp.reloadSection(&body, rp.res.GatewayCluster, 2, "5c", "gwcluster", "2 cluster-mode instances behind nginx")
	rp.reloadSection(&body, rp.res.GatewayDefault, 3, "5d", "gwdefault", "3 fork-mode instances behind nginx with its defaults")
	rp.samplesMD(&body, "fleet")
	rp.generatorMD(&body)
	rp.daemonReloadMD(&body)
	rp.crashMD(&body)
	for _, k := range []string{"stop", "probe", "security", "metrics", "health", "memrestart", "phases", "boot", "package"} {
		rp.samplesMD(&body, k)
	}

	var b strings.Builder
	b.WriteString("# bm2 vs PM2: benchmark results\n\n")
	took := res.Finished.Sub(res.Started).Round(time.Second)
	mode := "full run"
	if res.Settings.Quick {
		mode = "**quick run (-quick: short, single runs; for development only)**"
	}
	if len(res.Settings.Only) > 0 {
		mode += ", subset: " + strings.Join(res.Settings.Only, ", ")
	}
	fmt.Fprintf(&b, "Written by `make bench` (`./bench/run`, bench/main.go) on %s; %s, which took %s.\n\n",
		res.Started.UTC().Format("2006-01-02 15:04 MST"), mode, took)
	b.WriteString("**It ran on a 2-core VM that other engineers' test runs share**: absolute numbers are modest and somewhat " +
		"noisy, and the load generator (wrk) competes with the servers for the same 2 cores. The comparisons to read are the " +
		"ratios: bm2 and PM2 ran back to back (interleaved: A B A B …, the order rotating), each repetition yields one " +
		"bm2/PM2 ratio, and the tables give the median and the minimum of those ratios. Ratios are written so that " +
		"**> 1× favours bm2** (throughput: bm2 ÷ PM2; times and memory: PM2 ÷ bm2). Nothing here asserts a time: these " +
		"are measurements, not tests.\n\n")
	b.WriteString("![bm2 vs PM2, medians (a thin mark shows the minimum)](results.svg)\n\n")
	b.WriteString("## Headlines\n\n")
	table(&b, []string{"figure", "bm2", "PM2", "ratio: median (min) of interleaved pairs", "goal"}, rp.head)
	b.WriteString("## Machine and versions\n\n")
	var rows [][]string
	for _, k := range res.Machine {
		rows = append(rows, []string{k.K, k.V})
	}
	if len(res.Load) > 0 {
		var l1, fo []float64
		for _, l := range res.Load {
			l1 = append(l1, l.Load1)
			fo = append(fo, float64(l.Foreign))
		}
		lo, med := minMed(l1)
		_, fmed := minMed(fo)
		rows = append(rows, []string{"host load during the run (1-min load average, every 5 s)",
			fmt.Sprintf("min %s, median %s, max %s (2 CPUs); other people's sandboxes running meanwhile: median %s, max %s",
				fnum(lo, 1), fnum(med, 1), fnum(maxOf(l1), 1), fnum(fmed, 0), fnum(maxOf(fo), 0))})
	}
	rows = append(rows, []string{"where", "bm2 and PM2 each in a throwaway systemd 252 booted in namespaces (e2e/sandbox), with its own loopback-only network namespace; clients run inside the same sandbox"})
	for _, k := range res.Versions {
		rows = append(rows, []string{k.K, k.V})
	}
	var bins []string
	for _, k := range res.Binaries {
		bins = append(bins, k.K+" "+k.V)
	}
	rows = append(rows, []string{"binaries measured (sha256 prefix)", strings.Join(bins, ", ")})
	rows = append(rows, []string{"sysctls applied in the bm2 sandbox", strings.Join(res.Sysctls, "; ")})
	table(&b, []string{"", ""}, rows)
	s := res.Settings
	reloads := "reload"
	if len(res.Reload1.Runs) > 0 {
		reloads = "reload (2 instances and 1 instance)"
	}
	dr := ""
	if s.DRReps > 0 {
		dr = fmt.Sprintf(", daemon-reload %d per variant and size", s.DRReps)
	}
	more := ""
	if s.StopReps > 0 {
		more = fmt.Sprintf(", stop %d per variant, probe %d, reload matrix %d per case and load, fleet %d per mode, action and load, "+
			"package builds %d, dpkg -i %d", s.StopReps, s.ProbeReps, s.MatrixReps, s.FleetReps, s.PkgReps, s.DpkgReps)
	}
	fmt.Fprintf(&b, "Repetitions: throughput %d per system and load (wrk %d threads, %d connections, %v per run after a %v warm-up), "+
		"start %d per variant, crash %d per manager, %s %d per manager and load (wrk for %v), generator %d per size%s%s. "+
		"The sandboxed figures take seconds per run, so they have fewer repetitions than the generator, whose runs take milliseconds.\n\n",
		s.TputReps, s.WrkThreads, s.WrkConns, s.WrkDuration, s.WrkWarmup, s.StartReps, s.CrashReps, reloads, s.ReloadReps, s.ReloadDur, s.GenReps, dr, more)
	b.WriteString("To reproduce: `make bench` as root (`./bench/run -quick` for a short run, `-only throughput,start` for a subset; " +
		"`bench/run` installs what it lacks with apt-get (wrk, curl, npm, util-linux, iproute2, systemd, dbus, make), PM2 with npm; " +
		"the package figure needs what `debian/build-deps.sh` installs). The raw samples are in " +
		"[results.json](results.json).\n\n")
	setup := res.Commands["setup"]
	if len(setup) > 0 {
		b.WriteString("Setup:\n\n```sh\n" + strings.Join(setup, "\n") + "\n```\n\n")
	}
	b.WriteString(body.String())
	return b.String()
}

// Throughput.

func (rp *report) throughputMD(b *strings.Builder) {
	runs := rp.res.Throughput
	if len(runs) == 0 {
		return
	}
	s := rp.res.Settings
	b.WriteString("## 1. Cluster throughput (2 instances)\n\n")
	fmt.Fprintf(b, "The same hello-world app (bench/apps/app.js; app.ts for Bun) with 2 instances: under bm2 in cluster mode, "+
		"each instance listens on the port itself with `reusePort: true` and the kernel spreads connections; under PM2 "+
		"(`pm2 start app.js -i 2`, node:cluster), the God daemon is the cluster primary that accepts every connection and "+
		"hands it to a worker (round-robin). PM2 runs the app on Node.js only (its cluster mode needs node:cluster). wrk runs "+
		"inside the same sandbox: `-t%d -c%d`, %v per run after a %v warm-up, once with keep-alive and once with every request "+
		"on a new connection (`-H 'Connection: close'`), in alternating order. Each repetition starts every contender "+
		"afresh, one at a time, in rotating order. The controls run in bm2's sandbox beside it: the same 2 reusePort "+
		"processes started by a shell with no manager at all, and as 2 hand-written units (one account, as bm2's) with "+
		"bm2's sandbox directives and without them; bm2 against them is what bm2 itself costs.\n\n", s.WrkThreads, s.WrkConns, s.WrkDuration, s.WrkWarmup)
	systems := []string{"bm2 + Node.js", "bm2 + Bun", "PM2 + Node.js", TputBare, TputUnitSandboxed, TputUnitBare}
	get := func(sys, mode string) (series, []TputRun) {
		se := series{}
		var rs []TputRun
		for _, t := range runs {
			if t.System == sys && t.Mode == mode {
				se[t.Rep] = t.RPS
				rs = append(rs, t)
			}
		}
		return se, rs
	}
	var rows [][]string
	var bars []bar
	for _, mode := range []string{Close, KeepAlive} {
		for _, sys := range systems {
			se, rs := get(sys, mode)
			if len(rs) == 0 {
				continue
			}
			vals := se.values()
			lo, med := minMed(vals)
			var p99 []float64
			var errs int64
			for _, t := range rs {
				p99 = append(p99, float64(t.Wrk.P99Us)/1000)
				errs += t.Wrk.Errors()
			}
			_, p99med := minMed(p99)
			rows = append(rows, []string{sys, mode, fmt.Sprint(len(rs)), fnum(lo, 0), fnum(med, 0), fnum(maxOf(vals), 0), fnum(p99med, 1) + " ms", fmt.Sprint(errs)})
			bars = append(bars, bar{label: sys + ", " + shortMode(mode), med: med, lo: lo, color: sysColor(sys), text: fnum(med, 0) + " req/s"})
		}
	}
	table(b, []string{"system", "load", "runs", "req/s min", "req/s median", "req/s max", "p99 latency (median)", "errors (all runs)"}, rows)
	rp.svgP = append(rp.svgP, panel{title: "Cluster throughput, 2 instances (req/s, higher is better)", bars: bars})

	rows = nil
	for _, mode := range []string{Close, KeepAlive} {
		pm2, _ := get("PM2 + Node.js", mode)
		for _, sys := range []string{"bm2 + Node.js", "bm2 + Bun"} {
			se, _ := get(sys, mode)
			rs := ratios(se, pm2)
			goal := "≥ 2×"
			if mode == KeepAlive {
				goal = "≥ 1×"
			}
			rows = append(rows, []string{sys + " ÷ PM2 + Node.js", mode, ratioText(rs), goal})
			_, bm := minMed(se.values())
			_, pm := minMed(pm2.values())
			rp.head = append(rp.head, []string{"throughput, " + mode + ", " + strings.TrimPrefix(sys, "bm2 + "),
				fnum(bm, 0) + " req/s", fnum(pm, 0) + " req/s", ratioText(rs), goal})
		}
	}
	// The controls: what the same processes do with no manager, and as
	// hand-written units; bm2 against them is the cost of bm2 itself.
	for _, mode := range []string{Close, KeepAlive} {
		pm2, _ := get("PM2 + Node.js", mode)
		bm2, _ := get("bm2 + Node.js", mode)
		for _, c := range []string{TputBare, TputUnitSandboxed, TputUnitBare} {
			cs, rs := get(c, mode)
			if len(rs) == 0 {
				continue
			}
			rows = append(rows, []string{strings.TrimPrefix(c, "control: ") + " ÷ PM2 + Node.js", mode, ratioText(ratios(cs, pm2)), "—"})
			rows = append(rows, []string{"bm2 + Node.js ÷ " + strings.TrimPrefix(c, "control: "), mode, ratioText(ratios(bm2, cs)), "—"})
		}
	}
	table(b, []string{"ratio", "load", "median (min) of per-repetition ratios", "goal"}, rows)
	var god []float64
	for _, t := range runs {
		if t.GodRSSKiB > 0 {
			god = append(god, float64(t.GodRSSKiB)/1024)
		}
	}
	if len(god) > 0 {
		lo, med := minMed(god)
		fmt.Fprintf(b, "PM2's God daemon (the primary every connection goes through) after each measured run: median %s MiB RSS (min %s, max %s).\n\n",
			fnum(med, 1), fnum(lo, 1), fnum(maxOf(god), 1))
	}
	commands(b, rp.res, "throughput")
}

func shortMode(m string) string {
	if m == Close {
		return "Conn: close"
	}
	return m
}

func sysColor(sys string) string {
	switch {
	case strings.Contains(sys, "Bun"):
		return "#264653"
	case strings.HasPrefix(sys, "bm2"):
		return "#2a9d8f"
	case strings.HasPrefix(strings.ToLower(sys), "pm2"):
		return "#e76f51"
	}
	return "#8d99ae"
}

// Memory.

func (rp *report) memoryMD(b *strings.Builder) {
	var bm2Runs, pm2Runs []StartRun
	for _, s := range rp.res.Start {
		switch s.Variant {
		case StartBm2:
			bm2Runs = append(bm2Runs, s)
		case StartPM2Warm:
			pm2Runs = append(pm2Runs, s)
		}
	}
	if len(bm2Runs) == 0 || len(pm2Runs) == 0 {
		return // -only startcmd: no PM2 side
	}
	b.WriteString("## 2. Supervisor memory (4 instances)\n\n")
	b.WriteString("Taken after each start of the start figure (§3; 4 Node.js instances of the same app), once every bm2 probe " +
		"has finished and a second has passed. bm2's own cost is the resident memory of every process whose name starts " +
		"with `bm2` (bm2, bm2-probe, bm2-generator; the probe wraps the runtime with execve, so it leaves no process behind). " +
		"systemd's cost is not bm2's, but for honesty the growth of PID 1's RSS across `bm2 serve` (registering the project, " +
		"daemon-reload, 4 instance units and their probes) is shown too. PM2's cost is its God daemon (supervisor and " +
		"node:cluster primary in one process; daemon already running, as with `pm2 start` on a live host) plus what each PM2 " +
		"worker carries beyond the same app under bm2 (PM2's ProcessContainer and IPC; median worker RSS minus median bm2 " +
		"instance RSS of the same repetition).\n\n")
	kib := func(xs []float64) []float64 {
		out := make([]float64, len(xs))
		for i, x := range xs {
			out[i] = x / 1024
		}
		return out
	}
	bm2Own, pid1, journal, bm2App := series{}, series{}, series{}, series{}
	var procs []string
	for _, s := range bm2Runs {
		bm2Own[s.Rep] = float64(s.Mem.Bm2RSS)
		pid1[s.Rep] = float64(s.Mem.PID1After - s.Mem.PID1Before)
		journal[s.Rep] = float64(s.Mem.JournalΔ)
		bm2App[s.Rep] = s.Mem.AppMedian()
		procs = append(procs, s.Mem.Bm2Procs...)
	}
	god, godPSS, pm2App, overhead := series{}, series{}, series{}, series{}
	for _, s := range pm2Runs {
		god[s.Rep] = float64(s.Mem.GodRSS)
		godPSS[s.Rep] = float64(s.Mem.GodPSS)
		pm2App[s.Rep] = s.Mem.AppMedian()
		if a, ok := bm2App[s.Rep]; ok {
			overhead[s.Rep] = s.Mem.AppMedian() - a
		}
	}
	row := func(what string, se series) []string {
		lo, med := minMed(kib(se.values()))
		return []string{what, fmt.Sprint(len(se)), fnum(lo, 1), fnum(med, 1), fnum(maxOf(kib(se.values())), 1)}
	}
	seen := "none"
	if len(procs) > 0 {
		seen = strings.Join(procs, ", ")
	}
	rows := [][]string{
		row("bm2: processes named bm2* (RSS sum); seen: "+seen, bm2Own),
		row("systemd PID 1: RSS growth across `bm2 serve` (not bm2's, shown for honesty)", pid1),
		row("systemd-journald: RSS growth across `bm2 serve` (informational)", journal),
		row("PM2: God daemon RSS", god),
		row("PM2: God daemon PSS (shared pages split)", godPSS),
		row("app instance RSS under bm2 (median of 4)", bm2App),
		row("app worker RSS under PM2 (median of 4)", pm2App),
		row("PM2's extra per worker (PM2 worker − bm2 instance)", overhead),
	}
	table(b, []string{"what", "runs", "MiB min", "MiB median", "MiB max"}, rows)

	// The comparison: PM2 = God + 4 × max(0, per-worker extra); bm2 = own
	// processes + max(0, PID 1 growth).
	pm2Total, bm2Total := series{}, series{}
	for rep, g := range god {
		o := math.Max(0, overhead[rep])
		pm2Total[rep] = g + 4*o
	}
	for rep, own := range bm2Own {
		bm2Total[rep] = own + math.Max(0, pid1[rep])
	}
	_, pm := minMed(kib(pm2Total.values()))
	_, bm := minMed(kib(bm2Total.values()))
	_, own := minMed(kib(bm2Own.values()))
	rs := ratios(pm2Total, bm2Total)
	rtext := ratioText(rs)
	if len(pm2Total) > 0 && bm < pm/100 {
		// A ratio against (almost) nothing is noise: say what it means.
		rtext = fmt.Sprintf("**> 100×**: bm2 keeps no process; PM2 uses %s MiB more", fnum(pm-bm, 1))
	}
	fmt.Fprintf(b, "Supervisor cost with 4 instances: **bm2 %s MiB of its own processes**, %s MiB counting PID 1's growth, "+
		"vs **PM2 %s MiB** (God daemon + 4 × per-worker extra). Ratio PM2 ÷ (bm2 + PID 1 growth): %s.\n\n",
		fnum(own, 1), fnum(bm, 1), fnum(pm, 1), rtext)
	rp.head = append(rp.head, []string{"supervisor memory, 4 instances (bm2: own processes + PID 1 growth; PM2: God + per-worker extra)",
		fnum(bm, 1) + " MiB (own processes: " + fnum(own, 1) + ")", fnum(pm, 1) + " MiB", rtext, "—"})
	_, pid1Med := minMed(kib(pid1.values()))
	_, godMed := minMed(kib(god.values()))
	_, ovMed := minMed(kib(overhead.values()))
	rp.svgP = append(rp.svgP, panel{title: "Supervisor memory with 4 instances (MiB, median; lower is better)", bars: []bar{
		{label: "bm2 processes", med: own, color: sysColor("bm2"), text: fnum(own, 1) + " MiB"},
		{label: "systemd PID 1 growth (not bm2)", med: pid1Med, color: "#8d99ae", text: fnum(pid1Med, 1) + " MiB"},
		{label: "PM2 God daemon", med: godMed, color: sysColor("PM2"), text: fnum(godMed, 1) + " MiB"},
		{label: "PM2 extra per worker × 4", med: 4 * math.Max(0, ovMed), color: "#f4a261", text: fnum(4*math.Max(0, ovMed), 1) + " MiB"},
	}})
	for _, n := range rp.res.Notes["memory"] {
		b.WriteString(n + "\n\n")
	}
}

// Start.

func (rp *report) startMD(b *strings.Builder) {
	runs := rp.res.Start
	if len(runs) == 0 {
		return
	}
	b.WriteString("## 3. Start latency (4 instances)\n\n")
	b.WriteString("From nothing registered to 4 Node.js instances of the app. Three clocks, all started just before the " +
		"command: **returned** (the command exits: `bm2 serve` waits until every instance is online, which it defines as " +
		"running for `min_uptime_ms`, 1 s by default; `pm2 start` returns once PM2 reports the workers online); " +
		"**confirmed** (bm2: the 4th `reuseport_confirmed` event, its journal timestamp; PM2: `pm2 jlist` is polled from " +
		"the moment the command returns, and the start of the first call that shows all 4 online counts, a lower bound in " +
		"PM2's favour); **port answers** (the first HTTP 200 from the port, polled every " +
		"5 ms on fresh connections from the start). For bm2, **systemd active** is when the last instance unit became active " +
		"(its process was started). `bm2 serve` includes registering the project and a systemd daemon-reload; PM2 is measured " +
		"with its daemon already running (the usual case) and, separately, from no daemon. **bm2 start** is `bm2 start start` " +
		"of the same project, registered by an earlier `bm2 serve` and stopped with `bm2 stop start` just before (not timed): " +
		"no registration and no daemon-reload, a start job for its target, then the same wait as `bm2 serve` (online and " +
		"confirmed). **returned ÷ port answers** is each run's command time over its time until the port answered: what the " +
		"command keeps its caller waiting for beyond the moment the app serves (goal for bm2: ≤ 1.3×). **hand-written units** " +
		"are systemd's floor, in bm2's sandbox: the same app as 4 units with bm2's sandbox directives (no exit hook, port " +
		"fence, probe, run wrapper or steering; one dynamic user, reusePort) and a target that wants them and is ordered " +
		"after them, so that `systemctl start` returns once all 4 have started (their processes run, before they listen: " +
		"only their port clock compares with the others'). **new** writes their files, runs " +
		"`systemctl daemon-reload` and starts the target, as `bm2 serve` must for a project systemd has not loaded; " +
		"**loaded** starts the target of units loaded and stopped, as `bm2 start` does. Cells: ms, median (min).\n\n")
	type clocks struct{ ret, conf, port, online, wait series }
	by := map[string]*clocks{}
	for _, v := range startVariants {
		by[v] = &clocks{series{}, series{}, series{}, series{}, series{}}
	}
	for _, s := range runs {
		c := by[s.Variant]
		if c == nil {
			continue
		}
		c.ret[s.Rep] = ms(s.Result.ReturnUs)
		if s.Result.ConfirmUs > 0 {
			c.conf[s.Rep] = ms(s.Result.ConfirmUs)
		}
		c.port[s.Rep] = ms(s.Result.PortUs)
		if s.Result.OnlineUs > 0 {
			c.online[s.Rep] = ms(s.Result.OnlineUs)
		}
		if s.Result.PortUs > 0 && !floorStart(s.Variant) {
			// A floor's command returns before its units listen.
			c.wait[s.Rep] = float64(s.Result.ReturnUs) / float64(s.Result.PortUs)
		}
	}
	mm := func(se series) string {
		if len(se) == 0 {
			return "—"
		}
		lo, med := minMed(se.values())
		return fnum(med, 0) + " (" + fnum(lo, 0) + ")"
	}
	mx := func(se series) string {
		if len(se) == 0 {
			return "—"
		}
		lo, med := minMed(se.values())
		return fmt.Sprintf("%s× (min %s×, max %s×)", fnum(med, 2), fnum(lo, 2), fnum(maxOf(se.values()), 2))
	}
	var rows [][]string
	var bars []bar
	for _, v := range startVariants {
		c := by[v]
		if len(c.ret) == 0 {
			continue
		}
		rows = append(rows, []string{v, fmt.Sprint(len(c.ret)), mm(c.online), mm(c.port), mm(c.ret), mm(c.conf), mx(c.wait)})
		for _, clk := range []struct {
			name  string
			se    series
			faded bool
		}{{"port answers", c.port, false}, {"confirmed", c.conf, true}, {"returned", c.ret, true}} {
			if len(clk.se) == 0 || (floorStart(v) && clk.name != "port answers") {
				continue
			}
			lo, med := minMed(clk.se.values())
			bars = append(bars, bar{label: v + ": " + clk.name, med: med, lo: lo, color: sysColor(v), text: fnum(med, 0) + " ms", faded: clk.faded})
		}
	}
	table(b, []string{"variant", "runs", "systemd active", "port answers", "returned", "confirmed", "returned ÷ port answers"}, rows)
	rp.svgP = append(rp.svgP, panel{title: "Start 4 instances (ms, median; lower is better)", bars: bars})
	rows = nil
	bm := by[StartBm2]
	for _, v := range []string{StartPM2Warm, StartPM2Cold} {
		c := by[v]
		if len(c.ret) == 0 || len(bm.ret) == 0 {
			continue
		}
		rows = append(rows,
			[]string{v + " ÷ bm2 serve", "port answers", ratioText(ratios(c.port, bm.port))},
			[]string{v + " ÷ bm2 serve", "command returned", ratioText(ratios(c.ret, bm.ret))},
			[]string{v + " ÷ bm2 serve", "confirmed / online", ratioText(ratios(c.conf, bm.conf))})
	}
	// systemd's floor beside PM2, and bm2's commands over the floor they
	// stand on: bm2 serve on new units, bm2 start on loaded ones.
	pw := by[StartPM2Warm]
	for _, f := range []struct{ floor, bm2, what string }{
		{StartFloorNew, StartBm2, "bm2 serve"}, {StartFloorLoaded, StartBm2Start, "bm2 start"},
	} {
		fc := by[f.floor]
		if len(fc.ret) == 0 || len(pw.ret) == 0 {
			continue
		}
		// Port answers only: systemctl start returns once the units'
		// processes run (Type=exec), before they listen.
		rows = append(rows, []string{StartPM2Warm + " ÷ " + f.floor, "port answers", ratioText(ratios(pw.port, fc.port))})
		if bc := by[f.bm2]; len(bc.ret) > 0 {
			rows = append(rows, []string{f.floor + " ÷ " + f.bm2, "port answers", ratioText(ratios(fc.port, bc.port))})
		}
		lo, med := minMed(fc.port.values())
		_, p := minMed(pw.port.values())
		over := "—"
		if bc := by[f.bm2]; len(bc.port) > 0 {
			_, o := minMed(ratios(bc.port, fc.port))
			over = fnum(o, 2) + "× the floor's time"
		}
		rp.head = append(rp.head, []string{"start 4 instances until the port answers: systemd's floor, the same 4 instances as hand-written units with bm2's sandbox, " + map[string]string{StartFloorNew: "new (written, daemon-reload, started: as `bm2 serve`)", StartFloorLoaded: "loaded (systemctl start: as `bm2 start NAME`)"}[f.floor] + " (median)",
			fmt.Sprintf("floor %s ms (min %s); %s %s", fnum(med, 0), fnum(lo, 0), f.what, over),
			fnum(p, 0) + " ms", ratioText(ratios(pw.port, fc.port)) + " (PM2 ÷ floor)", "—"})
	}
	if len(rows) > 0 {
		table(b, []string{"ratio", "clock", "median (min)"}, rows)
	}
	if len(pw.ret) > 0 && len(bm.ret) > 0 {
		_, a := minMed(bm.port.values())
		_, p := minMed(pw.port.values())
		rp.head = append(rp.head, []string{"start 4 instances until the port answers (PM2 daemon running)",
			fnum(a, 0) + " ms", fnum(p, 0) + " ms", ratioText(ratios(pw.port, bm.port)), "—"})
		_, a = minMed(bm.conf.values())
		_, p = minMed(pw.conf.values())
		rp.head = append(rp.head, []string{"start 4 instances until confirmed (bm2: 4 × reuseport_confirmed; PM2: jlist all online)",
			fnum(a, 0) + " ms", fnum(p, 0) + " ms", ratioText(ratios(pw.conf, bm.conf)), "—"})
		_, a = minMed(bm.ret.values())
		_, p = minMed(pw.ret.values())
		rp.head = append(rp.head, []string{"start 4 instances until the command returns",
			fnum(a, 0) + " ms", fnum(p, 0) + " ms", ratioText(ratios(pw.ret, bm.ret)), "—"})
	}
	if bs := by[StartBm2Start]; len(bs.ret) > 0 {
		_, p := minMed(bs.port.values())
		_, c := minMed(bs.conf.values())
		_, a := minMed(bs.ret.values())
		rp.head = append(rp.head, []string{"`bm2 start NAME`, 4 instances, registered and stopped: port answers / confirmed / command returns",
			fnum(p, 0) + " / " + fnum(c, 0) + " / " + fnum(a, 0) + " ms", "—", "—", "—"})
	}
	// What the command keeps its caller waiting for beyond the port: bm2's
	// commands against their goal, PM2's (daemon running) beside them.
	pmWait := "—"
	if len(pw.wait) > 0 {
		_, m := minMed(pw.wait.values())
		pmWait = fnum(m, 2) + "× (`pm2 start`, daemon running)"
	}
	for _, v := range []struct{ variant, what string }{
		{StartBm2, "`bm2 serve`"}, {StartBm2Start, "`bm2 start NAME`"},
	} {
		c := by[v.variant]
		if len(c.wait) == 0 {
			continue
		}
		lo, med := minMed(c.wait.values())
		rp.head = append(rp.head, []string{v.what + ", 4 instances: command returns ÷ port answers (per run)",
			fmt.Sprintf("**%s×** (min %s×, max %s×, %s)", fnum(med, 2), fnum(lo, 2), fnum(maxOf(c.wait.values()), 2), runsText(len(c.wait))),
			pmWait, "—", "bm2 ≤ 1.3×"})
	}
	waits := false
	for _, s := range runs {
		waits = waits || (s.Variant == StartBm2 && strings.Contains(s.Result.Output, "confirmed"))
	}
	if waits {
		b.WriteString("At this revision `bm2 serve` waits for the probes' confirmation before it returns (its output says " +
			"\"confirmed (reusePort)\" per instance); the confirmed clock above still comes from the journal's events.\n\n")
	} else if len(bm.ret) > 0 {
		b.WriteString("At this revision `bm2 serve` does not wait for the probes' confirmation: the confirmed clock comes from " +
			"polling `journalctl -t bm2 BM2_EVENT=reuseport_confirmed` after it returned.\n\n")
	}
	if _, r := minMed(bm.ret.values()); r >= 1000 {
		b.WriteString("Note: `bm2 serve` cannot return before `min_uptime_ms` (1 s) has passed after the last instance started: " +
			"it only calls an instance online once it has run that long, so its \"returned\" clock includes that wait by design, " +
			"while the port answers long before.\n\n")
	}
	commands(b, rp.res, "start")
}

// Reload.

func (rp *report) reloadMD(b *strings.Builder) {
	rp.reloadSection(b, rp.res.Reload, 2, "4", "reload", "")
}

// reload1MD is the reload figure with 1 instance.
func (rp *report) reload1MD(b *strings.Builder) {
	rp.reloadSection(b, rp.res.Reload1, 1, "5", "reload1", "")
}

// gatewayReloadMD is the reload figure in fork mode behind nginx.
func (rp *report) gatewayReloadMD(b *strings.Builder) {
	rp.reloadSection(b, rp.res.GatewayReload, 3, "5b", "gwreload", "3 fork-mode instances behind nginx")
}

// reloadSection writes one reload figure: instances per manager, the
// section's number and the name its commands are recorded under (also the
// project's and the PM2 app's name), and what is reloaded when it is more
// than a number of instances.
func (rp *report) reloadSection(b *strings.Builder, rl ReloadResults, instances int, num, name, what string) {
	if rl.Bm2Check == "" {
		return
	}
	s := rp.res.Settings
	inst := fmt.Sprintf("%d instances", instances)
	if instances == 1 {
		inst = "1 instance"
	}
	if what != "" {
		inst = what
	}
	fmt.Fprintf(b, "## %s. Reload under load (%s)\n\n", num, inst)
	if rl.Runs == nil && !strings.HasPrefix(rl.Bm2Check, "bm2 reload") {
		fmt.Fprintf(b, "**Not measured** — `%s`.\n\n", rl.Bm2Check)
		return
	}
	switch name {
	case "reloadbun":
		b.WriteString("The figure of §4 with Bun (bench/apps/app.ts: `Bun.serve` with `reusePort`, drained on " +
			"SIGTERM), bm2 only: PM2's cluster mode needs node:cluster. Same load, same clocks: ")
	case "gwcluster":
		b.WriteString("Cluster mode behind nginx: bm2's instances share the port (one server line, as `bm2 gateway nginx " +
			"gwcluster` prints it), PM2's node:cluster primary holds it for its workers; the load goes through nginx 1.22 " +
			"in the same sandbox, the same bytes for both. Same app, same load, same clocks as §4: ")
	case "gwdefault":
		b.WriteString("The figure of §5b behind nginx's defaults: the bytes `bm2 gateway nginx gwdefault` prints with " +
			"`max_fails=0` taken out of every server line, so that nginx marks a server down for `fail_timeout=10s` after " +
			"one failed connect (what a hand-written upstream gets). Same app, same load, same clocks as §4: ")
	case "gwreload":
		b.WriteString("Fork mode: each instance listens on a port of its own (bm2: `exec_mode = \"fork\"`, instance i on " +
			"port+i; PM2: `exec_mode: \"fork\"` with `increment_var: \"PORT\"`, the same ports), and the load goes through " +
			"nginx 1.22 in the same sandbox, configured for both with the bytes `bm2 gateway nginx gwreload` prints: an " +
			"upstream with a `max_fails=0` line per instance, keep-alive, `proxy_next_upstream error timeout`. A port is dark " +
			"while its instance restarts, and nginx passes its requests to the others; what fails is what the reload does " +
			"beyond that. Same app, same load, same clocks as §4: ")
	}
	if instances == 1 {
		fmt.Fprintf(b, "The figure of §4 with a single instance: bm2 runs the project in cluster mode with `instances = 1`, "+
			"PM2 runs `pm2 start app.js -i 1` (node:cluster with one worker; the God daemon, its primary, keeps the listening "+
			"socket). Same app, same load, same clocks: ")
	}
	if instances == 4 && what == "" {
		b.WriteString("The figure of §4 with 4 instances: bm2 runs the project in cluster mode with `instances = 4`, " +
			"PM2 runs `pm2 start app.js -i 4`. Same app, same load, same clocks: ")
	}
	cmds := fmt.Sprintf("`bm2 reload %s` / `pm2 reload %s`", name, name)
	drains := "The app drains on SIGTERM (bm2) and SIGINT (PM2): it stops accepting " +
		"(`net.Server#close`; `http.Server#close` would also drop idle keep-alive connections at once, racing with the " +
		"client's next request), answers every further request with `Connection: close` and exits when its last connection " +
		"is done, so that what fails is the manager's doing."
	if name == "reloadbun" {
		cmds = fmt.Sprintf("`bm2 reload %s`", name)
		drains = "The app drains on SIGTERM as the Node.js app does: every further response says `Connection: close`, and 100 ms later it stops its server (`server.stop()`), lets the requests in flight finish and exits, so that what fails is the manager's doing."
	}
	fmt.Fprintf(b, "wrk runs for %v against %s (`-t%d -c%d`, keep-alive, and `Connection: close`); 2 s in, the "+
		"manager's reload command runs (%s); failed requests are every error wrk counts "+
		"(connect, read, write, timeout, non-2xx). %s\n\n", s.ReloadDur, inst, s.WrkThreads, s.WrkConns, cmds, drains)
	if !rl.Bm2Available {
		fmt.Fprintf(b, "**bm2: not available** — `%s`: this tree has no `bm2 reload` yet; PM2's figure is measured alone. "+
			"The bm2 side runs as soon as `bm2 reload --help` exits 0.\n\n", rl.Bm2Check)
	}
	type key struct{ sys, mode string }
	failed := map[key]series{}
	reqs := map[key][]float64{}
	dur := map[key]series{}
	inWin := map[key]int{}
	bad := map[key]int{}
	var outputs []string
	for _, r := range rl.Runs {
		k := key{r.System, r.Mode}
		if failed[k] == nil {
			failed[k], dur[k] = series{}, series{}
		}
		failed[k][r.Rep] = float64(r.Failed)
		reqs[k] = append(reqs[k], float64(r.Wrk.Requests))
		dur[k][r.Rep] = r.ReloadMs
		if r.InWindow {
			inWin[k]++
		}
		if r.Exit != 0 {
			bad[k]++
			outputs = append(outputs, r.System+": "+r.Output)
		}
	}
	var rows [][]string
	var bars []bar
	for _, mode := range []string{Close, KeepAlive} {
		for _, sys := range []string{"bm2", floorSystem, "pm2"} {
			k := key{sys, mode}
			name := map[string]string{"bm2": "bm2", floorSystem: floorName, "pm2": "PM2"}[sys]
			se, ok := failed[k]
			if !ok {
				if sys == "bm2" && !rl.Bm2Available {
					rows = append(rows, []string{name, mode, "0", "not available", "—", "—", "—", "—", "—", "—"})
					bars = append(bars, bar{label: name + ", " + shortMode(mode), med: math.NaN(), color: sysColor(name), text: "bm2 reload: not available"})
				}
				continue
			}
			lo, med := minMed(se.values())
			_, rq := minMed(reqs[k])
			_, d := minMed(dur[k].values())
			rows = append(rows, []string{name, mode, fmt.Sprint(len(se)), fnum(lo, 0), fnum(med, 0), fnum(maxOf(se.values()), 0),
				fnum(rq, 0), fnum(d, 0) + " ms", fmt.Sprintf("%d/%d", inWin[k], len(se)), fmt.Sprint(bad[k])})
			bars = append(bars, bar{label: name + ", " + shortMode(mode), med: med, lo: lo, color: sysColor(name), text: fnum(med, 0) + " failed"})
		}
		pm2 := failed[key{"pm2", mode}]
		bmv := failed[key{"bm2", mode}]
		if len(pm2) == 0 && len(bmv) == 0 && rl.Bm2Available {
			continue // a load this figure does not measure
		}
		_, pm := minMed(pm2.values())
		ratio := "—"
		if rl.Bm2Available && len(bmv) > 0 && len(pm2) > 0 {
			_, bmMed := minMed(bmv.values())
			switch rs := ratios(pm2, bmv); {
			case bmMed == 0 && pm == 0:
				ratio = "equal: no failed request on either side (median)"
			case bmMed == 0:
				ratio = fmt.Sprintf("bm2 failed none, PM2 %s (median)", fnum(pm, 0))
			case pm == 0:
				ratio = fmt.Sprintf("**0×**: PM2 failed none, bm2 %s (median)", fnum(bmMed, 0))
			default:
				ratio = ratioText(rs) + " (PM2 ÷ bm2)"
			}
		}
		if what == "" {
			rp.reloadHead(inst, mode, rl.Bm2Available, bmv, pm2, dur[key{"bm2", mode}], dur[key{"pm2", mode}], ratio)
			if fl := dur[key{floorSystem, mode}]; len(fl) > 0 {
				lo, med := minMed(fl.values())
				_, bmOver := minMed(ratios(dur[key{"bm2", mode}], fl))
				_, pm := minMed(dur[key{"pm2", mode}].values())
				rp.head = append(rp.head, []string{"reload " + inst + " under load, " + mode + ": systemd's floor, the same rolling restart of hand-written units with bm2's sandbox (§4e), time (median)",
					fmt.Sprintf("floor %s ms (min %s); bm2 %s× the floor's time", fnum(med, 0), fnum(lo, 0), fnum(bmOver, 1)),
					fnum(pm, 0) + " ms", ratioText(ratios(dur[key{"pm2", mode}], fl)) + " (PM2 ÷ floor)", "—"})
			}
			continue
		}
		var bmText string
		if !rl.Bm2Available {
			bmText = "not available"
		} else {
			_, m := minMed(bmv.values())
			bmText = fnum(m, 0) + " failed"
		}
		pmText := fnum(pm, 0) + " failed"
		if len(pm2) == 0 {
			pmText = "—"
		}
		if _, d := minMed(dur[key{"pm2", mode}].values()); !math.IsNaN(d) {
			pmText += " (`pm2 reload` took " + fnum(d/1000, 1) + " s)"
		}
		if _, d := minMed(dur[key{"bm2", mode}].values()); !math.IsNaN(d) {
			bmText += " (`bm2 reload` took " + fnum(d/1000, 1) + " s)"
		}
		rp.head = append(rp.head, []string{"reload " + inst + " under load, " + mode + ": failed requests (median)", bmText, pmText, ratio, "bm2: 0"})
	}
	table(b, []string{"system", "load", "runs", "failed min", "failed median", "failed max", "requests (median)", "reload command took (median)", "returned while wrk still ran", "reload command exit ≠ 0"}, rows)
	if len(bars) > 0 {
		rp.svgP = append(rp.svgP, panel{title: "Failed requests during a reload of " + inst + " under load (median; lower is better)", bars: bars})
	}
	var dbars []bar
	for _, mode := range []string{Close, KeepAlive} {
		for _, sys := range []string{"bm2", floorSystem, "pm2"} {
			name := map[string]string{"bm2": "bm2 reload", floorSystem: "systemctl restart, one unit at a time", "pm2": "pm2 reload"}[sys]
			if d := dur[key{sys, mode}]; len(d) > 0 {
				lo, med := minMed(d.values())
				dbars = append(dbars, bar{label: name + ", " + shortMode(mode), med: med, lo: lo, color: sysColor(sys), text: fnum(med, 0) + " ms"})
			}
		}
	}
	if len(dbars) > 0 {
		rp.svgP = append(rp.svgP, panel{title: "Reload command duration, " + inst + " under load (ms, median)", bars: dbars})
	}
	if what == "" {
		var rows [][]string
		for _, mode := range []string{Close, KeepAlive} {
			bd, pd := dur[key{"bm2", mode}], dur[key{"pm2", mode}]
			if len(bd) == 0 || len(pd) == 0 {
				continue
			}
			rows = append(rows, []string{"`pm2 reload` ÷ `bm2 reload` (command time)", mode, ratioText(ratios(pd, bd)), "≥ 1× (bm2 ≤ PM2's time)"})
		}
		if len(rows) > 0 {
			table(b, []string{"ratio", "load", "median (min) of per-repetition ratios", "goal"}, rows)
		}
	}
	for _, o := range outputs {
		fmt.Fprintf(b, "A reload command failed: ```%s```\n\n", strings.ReplaceAll(o, "\n", " ⏎ "))
	}
	commands(b, rp.res, name)
}

// reloadHead adds the headline rows of a cluster-mode reload figure (1, 2
// or 4 instances: inst) for one load: failed requests (median and max over
// runs), then the reload command's time, bm2 beside PM2.
func (rp *report) reloadHead(inst, mode string, bm2Available bool, bmFailed, pmFailed, bmDur, pmDur series, failedRatio string) {
	failedText := func(se series) string {
		if len(se) == 0 {
			return "—"
		}
		_, med := minMed(se.values())
		return fmt.Sprintf("%s failed (max %s, %s)", fnum(med, 0), fnum(maxOf(se.values()), 0), runsText(len(se)))
	}
	durText := func(se series) string {
		if len(se) == 0 {
			return "—"
		}
		lo, med := minMed(se.values())
		return fmt.Sprintf("%s ms (min %s)", fnum(med, 0), fnum(lo, 0))
	}
	bmF, bmD := failedText(bmFailed), durText(bmDur)
	if !bm2Available {
		bmF, bmD = "not available", "not available"
	}
	rp.head = append(rp.head,
		[]string{"reload " + inst + " under load, " + mode + ": failed requests, median (max)", bmF, failedText(pmFailed), failedRatio, "bm2: 0"},
		[]string{"reload " + inst + " under load, " + mode + ": reload command time (median)", bmD, durText(pmDur),
			ratioText(ratios(pmDur, bmDur)) + " (PM2 ÷ bm2)", "bm2 ≤ 1× PM2's"})
}

// Generator.

func (rp *report) generatorMD(b *strings.Builder) {
	runs := rp.res.Generator
	if len(runs) == 0 {
		return
	}
	b.WriteString("## 6. Generator scaling\n\n")
	b.WriteString("`bin/bm2-generator OUTDIR` on the host (no sandbox), with `BM2_CONFIG_PATH` pointing at N generated " +
		"project files, 4 cluster-mode instances each on distinct ports; project files, output and the binary on a tmpfs. " +
		"Wall time is fork+exec to wait4; peak memory is wait4's max RSS. Goal: 1000 projects under 100 ms, linear.\n\n")
	var rows [][]string
	var bars []bar
	var headVals []string
	headRatio := "—"
	meds := map[int]float64{}
	for _, n := range rp.res.Settings.GenSizes {
		wall, rss, files := genSamples(runs, n)
		for i := range rss {
			rss[i] /= 1024 // MiB
		}
		if len(wall) == 0 {
			continue
		}
		lo, med := minMed(wall)
		meds[n] = med
		rlo, rmed := minMed(rss)
		rows = append(rows, []string{fmt.Sprint(n), fmt.Sprint(n * 4), fmt.Sprint(files), fmt.Sprint(len(wall)),
			fnum(lo, 2), fnum(med, 2), fnum(maxOf(wall), 2), fnum(med*1000/float64(n), 1), fnum(rlo, 1), fnum(rmed, 1)})
		bars = append(bars, bar{label: fmt.Sprintf("%d projects × 4 instances", n), med: med, lo: lo, color: sysColor("bm2"), text: fnum(med, 1) + " ms"})
		headVals = append(headVals, fmt.Sprintf("%d: %s", n, fnum(med, 1)))
		if n == 1000 {
			headRatio = fmt.Sprintf("1000 projects: %s× the goal's speed (100 ms ÷ median; min run %s ms); max RSS %s MiB", fnum(100/med, 2), fnum(lo, 1), fnum(rmed, 1))
		}
	}
	if len(headVals) > 0 {
		rp.head = append(rp.head, []string{"generator, N projects × 4 instances: wall time, ms (median)", strings.Join(headVals, " · "), "—", headRatio, "1000 in < 100 ms, linear"})
	}
	table(b, []string{"projects", "instances", "files written", "runs", "ms min", "ms median", "ms max", "µs per project (median)", "max RSS MiB min", "max RSS MiB median"}, rows)
	if m100, m1000 := meds[100], meds[1000]; m100 > 0 && m1000 > 0 {
		m1 := meds[1]
		fmt.Fprintf(b, "Linearity: 100 → 1000 projects multiplies the median by %s (10 would be exactly linear); "+
			"the marginal cost is %s µs per project ((t1000 − t100) ÷ 900), over a fixed cost of about %s ms (1 project).\n\n",
			fnum(m1000/m100, 2), fnum((m1000-m100)*1000/900, 1), fnum(m1, 2))
	}
	rp.svgP = append(rp.svgP, panel{title: "bm2-generator wall time (ms, median; goal: 1000 projects < 100 ms)", bars: bars, goal: 100, goalText: "goal 100 ms"})
	commands(b, rp.res, "generator")
}

// Crash.

func (rp *report) crashMD(b *strings.Builder) {
	runs := rp.res.Crash
	if len(runs) == 0 {
		return
	}
	b.WriteString("## 8. Crash recovery (2 instances)\n\n")
	b.WriteString("Both managers run 2 cluster-mode instances of the app. Each repetition sends `kill -9` to one instance " +
		"(alternately the first and the second) and, from that moment, sends a request on a fresh connection every 2 ms " +
		"(each on its own, so that one that hangs holds up nothing) until a process that did not exist before answers: for bm2, systemd restarts the instance after `restart_delay_ms` (100 ms by " +
		"default) and the kernel gives the new listener its share of new connections; for PM2, the God daemon forks a new " +
		"worker, and its round-robin hands it connections once it listens. The surviving instance keeps serving meanwhile; " +
		"requests sent before the recovery that failed, or hung, are counted. The row \"bm2, restart_delay_ms = 0\" is a second bm2 " +
		"project (crash0, port 3210) with no restart delay: what systemd's restart path itself costs.")
	if len(rp.crashRuns("bm2-hangnotify")) > 0 {
		b.WriteString(" The row \"bm2, every crash notified to a webhook that never answers\" is a third (crashhang, port 3220) " +
			"whose instance_crashed events go to a receiver that accepts the connection and never answers: a restart must not " +
			"wait for its notification (bm2-notify.service delivers it, from the spool).")
	}
	b.WriteString("\n\n")
	se := map[string]series{"bm2": {}, "pm2": {}, "bm2-delay0": {}, "bm2-hangnotify": {}}
	failed := map[string]int{}
	hung := map[string]int{}
	polls := map[string]int{}
	for _, c := range runs {
		se[c.System][c.Rep] = ms(c.Result.RecoverUs)
		failed[c.System] += c.Result.Failed
		hung[c.System] += c.Result.Hung
		polls[c.System] += c.Result.Polls
	}
	var rows [][]string
	var bars []bar
	for _, sys := range []string{"bm2", "bm2-delay0", "bm2-hangnotify", "pm2"} {
		v := se[sys].values()
		if len(v) == 0 {
			continue
		}
		lo, med := minMed(v)
		name := map[string]string{"bm2": "bm2", "pm2": "PM2", "bm2-delay0": "bm2, restart_delay_ms = 0",
			"bm2-hangnotify": "bm2, every crash notified to a webhook that never answers"}[sys]
		rows = append(rows, []string{name, fmt.Sprint(len(v)), fnum(lo, 0), fnum(med, 0), fnum(maxOf(v), 0),
			fnum(float64(polls[sys]), 0), fmt.Sprint(failed[sys]), fmt.Sprint(hung[sys])})
		bars = append(bars, bar{label: name, med: med, lo: lo, color: sysColor(name), text: fnum(med, 0) + " ms"})
	}
	table(b, []string{"manager", "kills", "ms min", "ms median", "ms max", "requests sent until recovery (all kills)", "of which failed", "of which still unanswered 1 s after recovery"}, rows)
	rs := ratios(se["pm2"], se["bm2"])
	fmt.Fprintf(b, "Ratio PM2 ÷ bm2 (> 1 means bm2 recovers faster): %s.\n\n", ratioText(rs))
	steps := map[string][]float64{}
	for _, c := range runs {
		if c.System != "bm2" {
			continue
		}
		for k, v := range c.Steps {
			steps[k] = append(steps[k], v)
		}
	}
	if len(steps) > 0 {
		b.WriteString("Where bm2's time goes (from the instance's journal: systemd's messages and the app's \"listening\" line; " +
			"ms after the kill, median (min)):\n\n")
		var rows [][]string
		for _, st := range crashSteps {
			if v := steps[st.name]; len(v) > 0 {
				lo, med := minMed(v)
				rows = append(rows, []string{st.name, fnum(med, 0) + " (" + fnum(lo, 0) + ")"})
			}
		}
		lo, med := minMed(se["bm2"].values())
		rows = append(rows, []string{"a new process answered", fnum(med, 0) + " (" + fnum(lo, 0) + ")"})
		table(b, []string{"step", "ms after kill -9"}, rows)
		var wait []float64
		for _, c := range runs {
			f, ok1 := c.Steps["unit failed (ExecStopPost done; RestartSec= starts)"]
			sch, ok2 := c.Steps["restart scheduled (RestartSec= elapsed)"]
			if ok1 && ok2 {
				wait = append(wait, sch-f)
			}
		}
		if len(wait) > 0 {
			wlo, wmed := minMed(wait)
			fmt.Fprintf(b, "Between the unit failing and its restart being scheduled, `RestartSec=100ms` took %s ms (median; "+
				"min %s, max %s). systemd arms that timer with sd-event's default accuracy of 250 ms (`sd_event_add_time(…, "+
				"accuracy 0)` means 250 ms), and sd-event may coalesce the wake-up anywhere in that window, so "+
				"`restart_delay_ms = 100` means 100–350 ms in practice; PM2 restarts a crashed worker at once (its "+
				"`restart_delay` defaults to 0).\n\n", fnum(wmed, 0), fnum(wlo, 0), fnum(maxOf(wait), 0))
		}
	}
	_, a := minMed(se["bm2"].values())
	_, p := minMed(se["pm2"].values())
	rp.head = append(rp.head, []string{"crash recovery: kill -9 until a new process answers", fnum(a, 0) + " ms", fnum(p, 0) + " ms", ratioText(rs), "—"})
	rp.svgP = append(rp.svgP, panel{title: "Crash recovery: kill -9 until a new process serves (ms, median; lower is better)", bars: bars})
	commands(b, rp.res, "crash")
}

// crashRuns are the crash figure's runs of one system.
func (rp *report) crashRuns(system string) []CrashRun {
	var out []CrashRun
	for _, c := range rp.res.Crash {
		if c.System == system {
			out = append(out, c)
		}
	}
	return out
}

// Daemon-reload.

func (rp *report) daemonReloadMD(b *strings.Builder) {
	dr := rp.res.DaemonReload
	if len(dr.Runs) == 0 {
		return
	}
	s := rp.res.Settings
	b.WriteString("## 7. systemctl daemon-reload with N projects\n\n")
	fmt.Fprintf(b, "In the bm2 sandbox, with every project of the other figures deleted first: N project files are written to "+
		"/etc/bm2 as `bm2 serve` registers them (cluster mode, %d instances each, distinct ports, the app as script; none "+
		"is started), and `systemctl daemon-reload` is timed %d times (after one untimed reload; wall time of the systemctl "+
		"command, which waits for the reload to finish). systemd runs bm2-generator on each reload, which writes the units "+
		"into /run/systemd/generator, then loads them. Then, in the same sandbox, the project files are removed, bm2-generator "+
		"is moved out of systemd's generator directories, the very files it wrote for these projects are copied into "+
		"/etc/systemd/system as static units (the wants links re-pointed there), and daemon-reload is timed again: the same "+
		"units without any generator, the physical limit for this many units. Hand-written ÷ bm2 says how much of a reload "+
		"bm2's generator is (goal ≈ 1×: the generator adds little); it is given for the medians and, as the variants run one "+
		"after the other and the host's load drifts, for the minimums too. Before each variant's timed runs the bench checks that "+
		"systemd loaded every target and instance from where that variant puts them, and that bm2-generator is in place only "+
		"for the bm2 variant; the check is below the table. %d instances per project (not 4, as in §6) keeps the sandbox "+
		"quick; each project is %d units in systemd (target, slice, and per instance its service, probe and failure "+
		"hook). For scale, bm2-generator is also timed on its own in the same sandbox, on the same project files, into a "+
		"scratch directory on /tmp (a tmpfs, like /run): what the generator itself costs, out of the bm2 variant's "+
		"reload.\n\n", s.DRInstances, s.DRReps, s.DRInstances, 2+3*s.DRInstances)
	get := func(n int, v string) []float64 {
		var xs []float64
		for _, r := range dr.Runs {
			if r.Projects == n && r.Variant == v {
				xs = append(xs, r.Ms)
			}
		}
		return xs
	}
	units := func(n int, v string) string {
		for _, c := range dr.Checks {
			if c.Projects == n && c.Variant == v {
				return fmt.Sprint(c.Units)
			}
		}
		return "—"
	}
	var rows [][]string
	var bars []bar
	for _, n := range s.DRSizes {
		g, h, alone := get(n, DRGenerator), get(n, DRStatic), get(n, DRGenAlone)
		if len(g) == 0 && len(h) == 0 {
			continue
		}
		glo, gmed := minMed(g)
		hlo, hmed := minMed(h)
		alo, amed := minMed(alone)
		ratio := hmed / gmed
		rows = append(rows, []string{fmt.Sprint(n), fmt.Sprint(n * s.DRInstances), units(n, DRGenerator) + " / " + units(n, DRStatic),
			fmt.Sprint(len(g)), fnum(glo, 1), fnum(gmed, 1), fnum(maxOf(g), 1),
			fmt.Sprint(len(h)), fnum(hlo, 1), fnum(hmed, 1), fnum(maxOf(h), 1), fnum(ratio, 2) + "× (minimums: " + fnum(hlo/glo, 2) + "×)",
			fnum(amed, 1) + " (" + fnum(alo, 1) + ")"})
		bars = append(bars,
			bar{label: fmt.Sprintf("%d projects: bm2 (generator)", n), med: gmed, lo: glo, color: sysColor("bm2"), text: fnum(gmed, 0) + " ms"},
			bar{label: fmt.Sprintf("%d projects: hand-written units", n), med: hmed, lo: hlo, color: "#8d99ae", text: fnum(hmed, 0) + " ms"})
		rp.head = append(rp.head, []string{fmt.Sprintf("systemctl daemon-reload, %d projects × %d instances: bm2 (generator) vs the same units hand-written (median)", n, s.DRInstances),
			fnum(gmed, 0) + " ms (bm2-generator alone: " + fnum(amed, 0) + " ms)", "— (no units)",
			fmt.Sprintf("hand-written %s ms ÷ bm2 %s ms = **%s×** (minimums: %s×)", fnum(hmed, 0), fnum(gmed, 0), fnum(ratio, 2), fnum(hlo/glo, 2)), "≈ 1× (hand-written: the physical limit)"})
	}
	table(b, []string{"projects", "instances", "bm2* units loaded (bm2 / hand-written)", "bm2 runs", "bm2 ms min", "bm2 ms median", "bm2 ms max",
		"hand-written runs", "hand-written ms min", "hand-written ms median", "hand-written ms max", "hand-written ÷ bm2 (medians)",
		"bm2-generator alone, ms median (min)"}, rows)
	if len(bars) > 0 {
		rp.svgP = append(rp.svgP, panel{title: fmt.Sprintf("systemctl daemon-reload, N projects × %d instances (ms, median; lower is better)", s.DRInstances), bars: bars})
	}
	if len(dr.Checks) > 0 {
		b.WriteString("What systemd had loaded before each variant's timed reloads (`systemctl list-units --all --state=loaded`), " +
			"and how many times bm2-generator was found in systemd's generator directories (…/systemd/system-generators under " +
			"/etc, /run, /usr/local/lib, /usr/lib and /lib; on a merged-/usr system the last two are one directory, seen twice):\n\n")
		var rows [][]string
		for _, c := range dr.Checks {
			var frag, drop string
			for _, l := range strings.Split(c.Sample, "\n") {
				if v, ok := strings.CutPrefix(l, "FragmentPath="); ok && frag == "" {
					frag = v
				}
				if v, ok := strings.CutPrefix(l, "DropInPaths="); ok {
					drop = v
				}
			}
			rows = append(rows, []string{fmt.Sprint(c.Projects), c.Variant, fmt.Sprint(c.Targets), fmt.Sprint(c.Instances), fmt.Sprint(c.Units),
				fmt.Sprint(c.Gens), fmt.Sprint(c.GenFiles), "`" + frag + "`", "`" + drop + "`"})
		}
		table(b, []string{"projects", "variant", "targets loaded", "instances loaded", "bm2* units loaded", "bm2-generator found", "bm2 files in /run/systemd/generator", "first target from", "last instance's drop-in"}, rows)
	}
	commands(b, rp.res, "daemonreload")
}

// The chart.

type bar struct {
	label   string
	med, lo float64
	color   string
	text    string
	faded   bool
}

type panel struct {
	title    string
	bars     []bar
	goal     float64
	goalText string
}

func (rp *report) svg() string {
	const (
		width   = 960
		labelW  = 330
		barMaxW = 470
		barH    = 18
		gap     = 6
		titleH  = 26
		padB    = 18
	)
	h := 44
	for _, p := range rp.svgP {
		h += titleH + len(p.bars)*(barH+gap) + padB
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, h, width, h)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#ffffff"/>`+"\n")
	res := rp.res
	fmt.Fprintf(&b, `<text x="12" y="22" font-size="15" font-weight="bold">bm2 vs PM2 — %s</text>`+"\n", html.EscapeString(res.Started.UTC().Format("2006-01-02")))
	fmt.Fprintf(&b, `<text x="12" y="38" fill="#555">2-core VM shared with other test runs; medians of interleaved runs, thin black mark = minimum. bm2 teal, bm2+Bun dark, PM2 orange.</text>`+"\n")
	y := 44
	for _, p := range rp.svgP {
		y += titleH
		fmt.Fprintf(&b, `<text x="12" y="%d" font-weight="bold">%s</text>`+"\n", y-8, html.EscapeString(p.title))
		mx := p.goal
		for _, br := range p.bars {
			if !math.IsNaN(br.med) {
				mx = math.Max(mx, br.med)
			}
		}
		if mx <= 0 {
			mx = 1
		}
		scale := func(v float64) float64 {
			if math.IsNaN(v) || v < 0 {
				return 0
			}
			return v / mx * barMaxW
		}
		top := y
		for _, br := range p.bars {
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", labelW-8, y+barH-5, html.EscapeString(br.label))
			op := "1"
			if br.faded {
				op = "0.55"
			}
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%s"/>`+"\n", labelW, y, scale(br.med), barH, br.color, op)
			if br.lo > 0 && !math.IsNaN(br.lo) {
				x := float64(labelW) + scale(br.lo)
				fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#000" stroke-width="2"/>`+"\n", x, x, y-2, y+barH+2)
			}
			fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", float64(labelW)+scale(br.med)+6, y+barH-5, html.EscapeString(br.text))
			y += barH + gap
		}
		if p.goal > 0 {
			x := float64(labelW) + scale(p.goal)
			fmt.Fprintf(&b, `<line x1="%.1f" x2="%.1f" y1="%d" y2="%d" stroke="#c00" stroke-dasharray="4 3"/>`+"\n", x, x, top-4, y-gap+4)
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" fill="#c00" text-anchor="end">%s</text>`+"\n", x-4, y+8, html.EscapeString(p.goalText))
		}
		y += padB
	}
	b.WriteString("</svg>\n")
	return b.String()
}
