package main

import (
	"fmt"
	"math"
	"strings"
)

// Throughput.

// throughputView is what report/throughput.tmpl writes from.
type throughputView struct {
	S      settings
	Rows   [][]string // per system and load
	Ratios [][]string
	God    *spanText // PM2's God daemon's RSS, MiB
	Cmds   commandsView
}

// spanText is a median, a minimum and a maximum, formatted.
type spanText struct{ Med, Lo, Max string }

// tputRuns are the throughput runs of one system under one load, by
// repetition too.
func tputRuns(runs []TputRun, sys, mode string) (series, []TputRun) {
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

func (rp *report) throughput() (string, any, bool) {
	runs := rp.res.Throughput
	if len(runs) == 0 {
		return "", nil, false
	}
	v := &throughputView{S: rp.res.Settings, Cmds: rp.commands("throughput")}
	systems := []string{"bm2 + Node.js", "bm2 + Bun", "PM2 + Node.js", TputBare, TputUnitSandboxed, TputUnitBare}
	var bars []bar
	for _, mode := range []string{Close, KeepAlive} {
		for _, sys := range systems {
			se, rs := tputRuns(runs, sys, mode)
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
			v.Rows = append(v.Rows, []string{sys, mode, fmt.Sprint(len(rs)), fnum(lo, 0), fnum(med, 0), fnum(maxOf(vals), 0), fnum(p99med, 1) + " ms", fmt.Sprint(errs)})
			bars = append(bars, bar{label: sys + ", " + shortMode(mode), med: med, lo: lo, color: sysColor(sys), text: fnum(med, 0) + " req/s"})
		}
	}
	rp.svgP = append(rp.svgP, panel{title: "Cluster throughput, 2 instances (req/s, higher is better)", bars: bars})
	v.Ratios = rp.throughputRatios(runs)
	var god []float64
	for _, t := range runs {
		if t.GodRSSKiB > 0 {
			god = append(god, float64(t.GodRSSKiB)/1024)
		}
	}
	if len(god) > 0 {
		lo, med := minMed(god)
		v.God = &spanText{fnum(med, 1), fnum(lo, 1), fnum(maxOf(god), 1)}
	}
	return "throughput", v, true
}

// throughputRatios are bm2's against PM2's, with their headline rows,
// then the controls': what the same processes do with no manager, and as
// hand-written units; bm2 against them is the cost of bm2 itself.
func (rp *report) throughputRatios(runs []TputRun) [][]string {
	var rows [][]string
	for _, mode := range []string{Close, KeepAlive} {
		pm2, _ := tputRuns(runs, "PM2 + Node.js", mode)
		for _, sys := range []string{"bm2 + Node.js", "bm2 + Bun"} {
			se, _ := tputRuns(runs, sys, mode)
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
	for _, mode := range []string{Close, KeepAlive} {
		pm2, _ := tputRuns(runs, "PM2 + Node.js", mode)
		bm2, _ := tputRuns(runs, "bm2 + Node.js", mode)
		for _, c := range []string{TputBare, TputUnitSandboxed, TputUnitBare} {
			cs, rs := tputRuns(runs, c, mode)
			if len(rs) == 0 {
				continue
			}
			rows = append(rows, []string{strings.TrimPrefix(c, "control: ") + " ÷ PM2 + Node.js", mode, ratioText(ratios(cs, pm2)), "—"})
			rows = append(rows, []string{"bm2 + Node.js ÷ " + strings.TrimPrefix(c, "control: "), mode, ratioText(ratios(bm2, cs)), "—"})
		}
	}
	return rows
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

// memoryView is what report/memory.tmpl writes from: each row's runs and
// MiB min, median and max.
type memoryView struct {
	Seen                                          string
	Own, PID1, Journal, God, GodPSS, BmApp, PmApp []string
	Overhead                                      []string
	OwnMed, BmTotal, PmTotal, Ratio               string
	Notes                                         []string
}

// memSeries are the memory figure's series, KiB by repetition.
type memSeries struct {
	bm2Own, pid1, journal, bm2App, god, godPSS, pm2App, overhead series
	procs                                                        []string
}

func memSeriesOf(bm2Runs, pm2Runs []StartRun) memSeries {
	m := memSeries{series{}, series{}, series{}, series{}, series{}, series{}, series{}, series{}, nil}
	for _, s := range bm2Runs {
		m.bm2Own[s.Rep] = float64(s.Mem.Bm2RSS)
		m.pid1[s.Rep] = float64(s.Mem.PID1After - s.Mem.PID1Before)
		m.journal[s.Rep] = float64(s.Mem.JournalΔ)
		m.bm2App[s.Rep] = s.Mem.AppMedian()
		m.procs = append(m.procs, s.Mem.Bm2Procs...)
	}
	for _, s := range pm2Runs {
		m.god[s.Rep] = float64(s.Mem.GodRSS)
		m.godPSS[s.Rep] = float64(s.Mem.GodPSS)
		m.pm2App[s.Rep] = s.Mem.AppMedian()
		if a, ok := m.bm2App[s.Rep]; ok {
			m.overhead[s.Rep] = s.Mem.AppMedian() - a
		}
	}
	return m
}

func mib(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x / 1024
	}
	return out
}

// memCells are a memory row's runs and MiB min, median and max.
func memCells(se series) []string {
	lo, med := minMed(mib(se.values()))
	return []string{fmt.Sprint(len(se)), fnum(lo, 1), fnum(med, 1), fnum(maxOf(mib(se.values())), 1)}
}

func (rp *report) memory() (string, any, bool) {
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
		return "", nil, false // -only startcmd: no PM2 side
	}
	m := memSeriesOf(bm2Runs, pm2Runs)
	v := &memoryView{Seen: "none", Own: memCells(m.bm2Own), PID1: memCells(m.pid1), Journal: memCells(m.journal),
		God: memCells(m.god), GodPSS: memCells(m.godPSS), BmApp: memCells(m.bm2App), PmApp: memCells(m.pm2App),
		Overhead: memCells(m.overhead), Notes: rp.res.Notes["memory"]}
	if len(m.procs) > 0 {
		v.Seen = strings.Join(m.procs, ", ")
	}
	// The comparison: PM2 = God + 4 × max(0, per-worker extra); bm2 = own
	// processes + max(0, PID 1 growth).
	pm2Total, bm2Total := series{}, series{}
	for rep, g := range m.god {
		pm2Total[rep] = g + 4*math.Max(0, m.overhead[rep])
	}
	for rep, own := range m.bm2Own {
		bm2Total[rep] = own + math.Max(0, m.pid1[rep])
	}
	_, pm := minMed(mib(pm2Total.values()))
	_, bm := minMed(mib(bm2Total.values()))
	_, own := minMed(mib(m.bm2Own.values()))
	rtext := ratioText(ratios(pm2Total, bm2Total))
	if len(pm2Total) > 0 && bm < pm/100 {
		// A ratio against (almost) nothing is noise: say what it means.
		rtext = fmt.Sprintf("**> 100×**: bm2 keeps no process; PM2 uses %s MiB more", fnum(pm-bm, 1))
	}
	v.OwnMed, v.BmTotal, v.PmTotal, v.Ratio = fnum(own, 1), fnum(bm, 1), fnum(pm, 1), rtext
	rp.head = append(rp.head, []string{"supervisor memory, 4 instances (bm2: own processes + PID 1 growth; PM2: God + per-worker extra)",
		fnum(bm, 1) + " MiB (own processes: " + fnum(own, 1) + ")", fnum(pm, 1) + " MiB", rtext, "—"})
	_, pid1Med := minMed(mib(m.pid1.values()))
	_, godMed := minMed(mib(m.god.values()))
	_, ovMed := minMed(mib(m.overhead.values()))
	rp.svgP = append(rp.svgP, panel{title: "Supervisor memory with 4 instances (MiB, median; lower is better)", bars: []bar{
		{label: "bm2 processes", med: own, color: sysColor("bm2"), text: fnum(own, 1) + " MiB"},
		{label: "systemd PID 1 growth (not bm2)", med: pid1Med, color: "#8d99ae", text: fnum(pid1Med, 1) + " MiB"},
		{label: "PM2 God daemon", med: godMed, color: sysColor("PM2"), text: fnum(godMed, 1) + " MiB"},
		{label: "PM2 extra per worker × 4", med: 4 * math.Max(0, ovMed), color: "#f4a261", text: fnum(4*math.Max(0, ovMed), 1) + " MiB"},
	}})
	return "memory", v, true
}
