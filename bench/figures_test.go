package main

import (
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
)

// timedScript's line, as bash prints it, reads back as the command's time
// and exit status.
func TestTimedScript(t *testing.T) {
	out, err := exec.Command("bash", "-c", timedScript("sleep 0.05; (exit 3)")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	ms, rc, err := parseTimed(string(out))
	if err != nil {
		t.Fatal(err)
	}
	if rc != 3 || ms < 50 || ms > 5000 {
		t.Errorf("parseTimed(%q) = %v ms, exit %d; want about 50 ms, exit 3", out, ms, rc)
	}
	if _, _, err := parseTimed("no timing here\n"); err == nil {
		t.Error("parseTimed accepted output without a timing line")
	}
}

func TestExposure(t *testing.T) {
	v, err := exposure("→ Overall exposure level for bm2@secdef-0.service: 1.2 OK 🙂\n")
	if err != nil || v != 1.2 {
		t.Errorf("exposure = %v, %v; want 1.2", v, err)
	}
	if _, err := exposure("Unit bm2@x-0.service not found.\n"); err == nil {
		t.Error("exposure read a level out of an error")
	}
}

// The probe figure pairs each instance's listen() with its first
// confirmation after the start, ignoring what came before it.
func TestListenAndEventTimes(t *testing.T) {
	const t0 = 1_700_000_000_000_000 // µs
	lines := []map[string]any{
		{"_SYSTEMD_UNIT": "bm2@p-0.service", "MESSAGE": "listening on 4600 reusePort=true at_ms=1699999999000"}, // an earlier run
		{"_SYSTEMD_UNIT": "bm2@p-0.service", "MESSAGE": "listening on 4600 reusePort=true at_ms=1700000000100"},
		{"_SYSTEMD_UNIT": "bm2@p-1.service", "MESSAGE": "ignoring SIGTERM"},
	}
	got := listenTimes(lines, t0)
	if len(got) != 1 || got["bm2@p-0.service"] != 1700000000100 {
		t.Errorf("listenTimes = %v", got)
	}
	events := []map[string]any{
		{"BM2_INSTANCE": "p-0", "__REALTIME_TIMESTAMP": "1699999999500000"},
		{"BM2_INSTANCE": "p-0", "__REALTIME_TIMESTAMP": "1700000000160000"},
		{"BM2_INSTANCE": "p-0", "__REALTIME_TIMESTAMP": "1700000000150000"},
	}
	if got := eventTimes(events, t0); len(got) != 1 || got["p-0"] != 1700000000150000 {
		t.Errorf("eventTimes = %v", got)
	}
}

// A figure of Samples is a table: a row per variant, a column per metric,
// each cell median (min–max); a figure without samples but with a note
// shows the note.
func TestSamplesMD(t *testing.T) {
	res := &Results{Commands: map[string][]string{"stop": {"bm2 stop stopq"}}}
	for i, v := range []float64{30, 10, 20} {
		res.Samples = append(res.Samples, Sample{Figure: "stop", Variant: "bm2 stop: 2 instances that drain", Metric: "stop command (ms)", Rep: i, Value: v})
	}
	res.Samples = append(res.Samples, Sample{Figure: "stop", Variant: "pm2 stop: 2 instances that drain", Metric: "stop command (ms)", Value: 1234})
	res.Notes = map[string][]string{"package": {"**Not measured**: no dh."}}
	rp := newReport(res)
	section := renderSection(t)
	md := section(rp.samples("stop")) + section(rp.samples("probe")) + section(rp.samples("package"))
	for _, want := range []string{
		"## 9. Stop\n",
		"| variant | samples | stop command (ms): median (min–max) |\n",
		"| bm2 stop: 2 instances that drain | 3 | 20 (10–30) |\n",
		"| pm2 stop: 2 instances that drain | 1 | 1,234 |\n",
		"```sh\nbm2 stop stopq\n```",
		"## 12. Building and installing the Debian package\n",
		"**Not measured**: no dh.",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
	if strings.Contains(md, "The reusePort probe") {
		t.Errorf("a figure without samples or notes was written:\n%s", md)
	}
}

// A bm2-only reload figure has no PM2 rows and no PM2 figures in its
// headlines.
func TestReloadSectionBm2Only(t *testing.T) {
	res := &Results{Settings: settings{WrkThreads: 2, WrkConns: 64}}
	res.ReloadBun = ReloadResults{Bm2Available: true, Bm2Check: "bm2 reload --help   # exit status 0"}
	for rep := range 2 {
		for _, mode := range []string{KeepAlive, Close} {
			res.ReloadBun.Runs = append(res.ReloadBun.Runs, ReloadRun{Rep: rep, System: "bm2", Mode: mode, ReloadMs: 900, InWindow: true})
		}
	}
	rp := newReport(res)
	md := renderSection(t)(rp.reloadSection(res.ReloadBun, 2, "4b", "reloadbun", "2 Bun instances"))
	if !strings.Contains(md, "## 4b. Reload under load (2 Bun instances)") || !strings.Contains(md, "| bm2 | keep-alive | 2 | 0 | 0 | 0 |") {
		t.Errorf("reload section:\n%s", md)
	}
	if strings.Contains(md, "| PM2 |") || strings.Contains(md, "pm2 reload") {
		t.Errorf("a bm2-only figure shows PM2:\n%s", md)
	}
	if len(rp.head) != 2 {
		t.Fatalf("%d headline rows, want one per load: %v", len(rp.head), rp.head)
	}
	for _, row := range rp.head {
		if row[2] != "—" || row[3] != "—" || strings.Contains(strings.Join(row, " "), "NaN") {
			t.Errorf("headline row %q: want no PM2 figure and no ratio", row)
		}
	}
}

// A section that is not a figure of Samples shows its notes before its
// commands; a figure of Samples shows them once, under its table.
func TestCommandsShowNotes(t *testing.T) {
	res := &Results{
		Commands: map[string][]string{"start": {"bm2 start start"}, "package": {"make deb"}},
		Notes:    map[string][]string{"start": {"Measured again."}, "package": {"Built once."}},
	}
	rp := newReport(res)
	section := renderSection(t)
	if md := section("commands", rp.commands("start"), true); !strings.Contains(md, "Measured again.\n\nCommands") {
		t.Errorf("start's note is not before its commands:\n%s", md)
	}
	md := section(rp.samples("package"))
	if n := strings.Count(md, "Built once."); n != 1 {
		t.Errorf("package's note shown %d times, want once:\n%s", n, md)
	}
}

// A spread is the busier and the other instance's connections; one that
// lost connections or reached a third process is no spread of 2.
func TestSpreadSplit(t *testing.T) {
	for _, c := range []struct {
		pids          map[int]int
		busier, other int
		bad           bool
	}{
		{pids: map[int]int{10: 27, 11: 37}, busier: 37, other: 27},
		{pids: map[int]int{10: 32, 11: 32}, busier: 32, other: 32},
		{pids: map[int]int{10: 64}, busier: 64, other: 0},
		{pids: map[int]int{10: 30, 11: 30}, bad: true},
		{pids: map[int]int{10: 30, 11: 30, 12: 4}, bad: true},
	} {
		b, o, err := spreadSplit(c.pids, 64)
		if (err != nil) != c.bad || b != c.busier || o != c.other {
			t.Errorf("spreadSplit(%v) = %d, %d, %v; want %d, %d, error %v", c.pids, b, o, err, c.busier, c.other, c.bad)
		}
	}
}

// The spread's headline row gives each contender's median split and its
// worst, beside the goal.
func TestSpreadHead(t *testing.T) {
	res := &Results{}
	for i, v := range []float64{32, 33, 32} {
		res.Samples = append(res.Samples, Sample{Figure: "spread", Variant: "bm2 + Node.js", Metric: spreadBusier, Rep: i, Value: v})
	}
	for i, v := range []float64{37, 34, 40} {
		res.Samples = append(res.Samples, Sample{Figure: "spread", Variant: TputBare, Metric: spreadBusier, Rep: i, Value: v})
	}
	rp := newReport(res)
	rp.spreadHead()
	if len(rp.head) != 1 {
		t.Fatalf("headline rows: %v", rp.head)
	}
	row := strings.Join(rp.head[0], " | ")
	for _, want := range []string{"32/32 (worst 33/31, 3 runs) (kernel-steered)", "kernel hash alone", "37/27 (worst 40/24, 3 runs)", "| — |", "32/32 ± 1"} {
		if !strings.Contains(row, want) {
			t.Errorf("no %q in %q", want, row)
		}
	}
}

// A reload's journal breaks down into one step per instance, in the
// order they were restarted, each phase between its two lines; the last
// step ends with the surge's stop, and a step without its drain line
// has no drain phases.
func TestReloadPhases(t *testing.T) {
	j := `1000.000000 h systemd[1]: Starting bm2@r-surge.service - bm2 r surge instance (BM2_APP_INSTANCE=2), run by bm2 reload...
1000.300000 h r-surge[9]: listening on 3600 reusePort=true at_ms=1000300
1000.310000 h bm2[8]: r-surge: port 3600 is shared with SO_REUSEPORT: cluster mode confirmed
1000.350000 h systemd[1]: Stopping bm2@r-0.service - bm2 r instance 0...
1000.450000 h r-0[10]: r-0 drained in 60ms
1000.500000 h systemd[1]: Stopped bm2@r-0.service - bm2 r instance 0.
1000.510000 h systemd[1]: Starting bm2@r-0.service - bm2 r instance 0...
1000.650000 h systemd[1]: Started bm2@r-0.service - bm2 r instance 0.
1000.790000 h r-0[11]: listening on 3600 reusePort=true at_ms=1000750
1000.770000 h bm2[12]: r-0: port 3600 is shared with SO_REUSEPORT: cluster mode confirmed
1000.820000 h systemd[1]: Stopping bm2@r-1.service - bm2 r instance 1...
1000.900000 h systemd[1]: Stopped bm2@r-1.service - bm2 r instance 1.
1000.910000 h systemd[1]: Starting bm2@r-1.service - bm2 r instance 1...
1001.000000 h systemd[1]: Started bm2@r-1.service - bm2 r instance 1.
1001.100000 h r-1[13]: listening on 3600 reusePort=true at_ms=1001100
1001.110000 h bm2[14]: r-1: port 3600 is shared with SO_REUSEPORT: cluster mode confirmed
1001.160000 h systemd[1]: Stopping bm2@r-surge.service - bm2 r surge instance (BM2_APP_INSTANCE=2), run by bm2 reload...
`
	steps := reloadPhases(j, "r")
	if len(steps) != 2 {
		t.Fatalf("%d steps, want 2: %v", len(steps), steps)
	}
	want0 := []float64{100, 60, 50, 10, 140, 100, 20, 50, 470}
	for k, p := range reloadPhaseNames {
		if got := steps[0][p]; math.Abs(got-want0[k]) > 0.5 {
			t.Errorf("r-0 %s: %.1f ms, want %.0f", p, got, want0[k])
		}
	}
	if _, ok := steps[1][reloadPhaseNames[0]]; ok {
		t.Errorf("r-1 has a drain phase without a drain line: %v", steps[1])
	}
	if got := steps[1]["step total"]; math.Abs(got-340) > 0.5 {
		t.Errorf("r-1's step ends at the surge's stop: %.1f ms, want 340", got)
	}
}

// The floor's units share one dynamic user (SO_REUSEPORT joins only
// sockets of one user) and each gets its instance number; its scripts
// are valid shell.
func TestFloorScripts(t *testing.T) {
	u := floorUnit("2")
	if strings.Count(u, "User=bm2floor\n") != 1 || strings.Count(u, "Environment=BM2_APP_INSTANCE=2\n") != 1 ||
		!strings.Contains(u, fmt.Sprintf("Environment=BM2_APP_PORT=%d\n", floorPort)) || !strings.Contains(u, "ProtectSystem=strict\n") {
		t.Errorf("floor unit:\n%s", u)
	}
	up := floorUp(4)
	if strings.Count(up, "\nUNIT\n") != 5 || !strings.Contains(up, "bfloor-surge.service <<'UNIT'") || strings.Contains(up, "systemctl start bfloor-surge") {
		t.Errorf("floorUp(4) should write 4 units and a surge and start the 4 only:\n%s", up)
	}
	for _, script := range []string{up, floorReload(4), floorSettle, floorDown} {
		if out, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s\n%s", err, out, script)
		}
	}
}

// The start floor: 4 sandboxed units on the start figure's port, one
// dynamic user, each its instance; the target wants and waits for all 4;
// the new variant copies every file the target names; valid shell.
func TestStartFloor(t *testing.T) {
	for i := range 4 {
		u := floorStartUnit(i)
		if !strings.HasPrefix(u, "[Unit]\nPartOf=bfst.target\n") || strings.Count(u, "User=bfst\n") != 1 ||
			strings.Count(u, fmt.Sprintf("Environment=BM2_APP_INSTANCE=%d\n", i)) != 1 ||
			!strings.Contains(u, "Environment=BM2_APP_PORT=3100\n") || !strings.Contains(u, "SystemCallFilter=~@privileged\n") {
			t.Errorf("floor start unit %d:\n%s", i, u)
		}
		name := fmt.Sprintf("bfst-%d.service", i)
		if strings.Count(floorStartTarget, name) != 2 || !strings.Contains(floorStartFiles, "/srv/bfst/"+name) {
			t.Errorf("%s: not wanted and waited for by the target, or not copied:\n%s\n%s", name, floorStartTarget, floorStartFiles)
		}
	}
	for _, script := range []string{floorStartGone, floorStartNewCmd, floorStartLoaded} {
		if out, err := exec.Command("bash", "-n", "-c", script).CombinedOutput(); err != nil {
			t.Errorf("bash -n: %v\n%s\n%s", err, out, script)
		}
	}
}

// The crash floor's hooked unit is the sandboxed RestartSec=0 one plus a
// no-op ExecStopPost=, and every hand-written unit is started and
// stopped by the figure's scripts.
func TestPhaseUnits(t *testing.T) {
	var hooked, plain string
	for _, v := range phaseVariants {
		if strings.HasPrefix(v.unit, "bm2@") {
			continue
		}
		if !strings.Contains(phasesUp, v.unit) || !strings.Contains(phasesDown, v.unit) || !strings.Contains(phasesUp, fmt.Sprint(v.port)) {
			t.Errorf("%s (port %d) is not started, waited for and stopped by the figure's scripts", v.unit, v.port)
		}
		u := phaseUnitDelay(v.port, v.sandboxed, v.delay) + v.extra
		switch v.unit {
		case "bph0-hooked.service":
			hooked = u
		case "bph0-sandboxed.service":
			plain = u
		}
	}
	if want := strings.Replace(plain, "3744", "3747", 1) + "ExecStopPost=+/bin/true\n"; hooked != want {
		t.Errorf("hooked unit:\n%s\nwant:\n%s", hooked, want)
	}
}

// renderSection writes a section of RESULTS.md as the report does: its
// template over what the figure derived; nothing when it has no section.
func renderSection(t *testing.T) func(tmpl string, data any, ok bool) string {
	return func(tmpl string, data any, ok bool) string {
		t.Helper()
		if !ok {
			return ""
		}
		out, err := render(tmpl, data)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
}
