package main

import (
	"fmt"
	"strings"
)

// Generator.

// generatorView is what report/generator.tmpl writes from.
type generatorView struct {
	Rows [][]string // per number of projects
	// 100 → 1000 projects: the factor of the median, the marginal µs per
	// project and the fixed ms (1 project); nil without both sizes.
	Lin  *struct{ Factor, Marginal, Fixed string }
	Cmds commandsView
}

func (rp *report) generator() (string, any, bool) {
	runs := rp.res.Generator
	if len(runs) == 0 {
		return "", nil, false
	}
	v := &generatorView{Cmds: rp.commands("generator")}
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
		v.Rows = append(v.Rows, []string{fmt.Sprint(n), fmt.Sprint(n * 4), fmt.Sprint(files), fmt.Sprint(len(wall)),
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
	if m100, m1000 := meds[100], meds[1000]; m100 > 0 && m1000 > 0 {
		v.Lin = &struct{ Factor, Marginal, Fixed string }{fnum(m1000/m100, 2), fnum((m1000-m100)*1000/900, 1), fnum(meds[1], 2)}
	}
	rp.svgP = append(rp.svgP, panel{title: "bm2-generator wall time (ms, median; goal: 1000 projects < 100 ms)", bars: bars, goal: 100, goalText: "goal 100 ms"})
	return "generator", v, true
}

// Crash.

// crashView is what report/crash.tmpl writes from.
type crashView struct {
	Hang  bool       // the figure has the row of a crash notified to a webhook that hangs
	Rows  [][]string // per manager
	Ratio string
	Steps [][]string // where bm2's time goes; nil without its steps
	Wait  *spanText  // RestartSec=100ms, in ms
	Cmds  commandsView
}

// crashNames are the crash figure's systems, in its order, and their names.
var crashNames = []struct{ sys, name string }{
	{"bm2", "bm2"}, {"bm2-delay0", "bm2, restart_delay_ms = 0"},
	{"bm2-hangnotify", "bm2, every crash notified to a webhook that never answers"}, {"pm2", "PM2"},
}

func (rp *report) crash() (string, any, bool) {
	runs := rp.res.Crash
	if len(runs) == 0 {
		return "", nil, false
	}
	v := &crashView{Cmds: rp.commands("crash")}
	se := map[string]series{"bm2": {}, "pm2": {}, "bm2-delay0": {}, "bm2-hangnotify": {}}
	failed, hung, polls := map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range runs {
		se[c.System][c.Rep] = ms(c.Result.RecoverUs)
		failed[c.System] += c.Result.Failed
		hung[c.System] += c.Result.Hung
		polls[c.System] += c.Result.Polls
		v.Hang = v.Hang || c.System == "bm2-hangnotify"
	}
	var bars []bar
	for _, cn := range crashNames {
		vals := se[cn.sys].values()
		if len(vals) == 0 {
			continue
		}
		lo, med := minMed(vals)
		v.Rows = append(v.Rows, []string{cn.name, fmt.Sprint(len(vals)), fnum(lo, 0), fnum(med, 0), fnum(maxOf(vals), 0),
			fnum(float64(polls[cn.sys]), 0), fmt.Sprint(failed[cn.sys]), fmt.Sprint(hung[cn.sys])})
		bars = append(bars, bar{label: cn.name, med: med, lo: lo, color: sysColor(cn.name), text: fnum(med, 0) + " ms"})
	}
	rs := ratios(se["pm2"], se["bm2"])
	v.Ratio = ratioText(rs)
	v.Steps, v.Wait = crashStepRows(runs, se["bm2"])
	_, a := minMed(se["bm2"].values())
	_, p := minMed(se["pm2"].values())
	rp.head = append(rp.head, []string{"crash recovery: kill -9 until a new process answers", fnum(a, 0) + " ms", fnum(p, 0) + " ms", ratioText(rs), "—"})
	rp.svgP = append(rp.svgP, panel{title: "Crash recovery: kill -9 until a new process serves (ms, median; lower is better)", bars: bars})
	return "crash", v, true
}

// crashStepRows are where bm2's time goes, step by step, ms after the kill,
// median (min), and the time RestartSec=100ms took; none without steps.
func crashStepRows(runs []CrashRun, bm2 series) ([][]string, *spanText) {
	steps := map[string][]float64{}
	for _, c := range runs {
		if c.System != "bm2" {
			continue
		}
		for k, v := range c.Steps {
			steps[k] = append(steps[k], v)
		}
	}
	if len(steps) == 0 {
		return nil, nil
	}
	var rows [][]string
	for _, st := range crashSteps {
		if v := steps[st.name]; len(v) > 0 {
			lo, med := minMed(v)
			rows = append(rows, []string{st.name, fnum(med, 0) + " (" + fnum(lo, 0) + ")"})
		}
	}
	lo, med := minMed(bm2.values())
	rows = append(rows, []string{"a new process answered", fnum(med, 0) + " (" + fnum(lo, 0) + ")"})
	var wait []float64
	for _, c := range runs {
		f, ok1 := c.Steps["unit failed (ExecStopPost done; RestartSec= starts)"]
		sch, ok2 := c.Steps["restart scheduled (RestartSec= elapsed)"]
		if ok1 && ok2 {
			wait = append(wait, sch-f)
		}
	}
	if len(wait) == 0 {
		return rows, nil
	}
	wlo, wmed := minMed(wait)
	return rows, &spanText{fnum(wmed, 0), fnum(wlo, 0), fnum(maxOf(wait), 0)}
}

// Daemon-reload.

// daemonReloadView is what report/daemonreload.tmpl writes from.
type daemonReloadView struct {
	S      settings
	Units  int        // units in systemd per project
	Rows   [][]string // per number of projects
	Checks [][]string // what systemd had loaded
	Cmds   commandsView
}

func (rp *report) daemonReload() (string, any, bool) {
	dr := rp.res.DaemonReload
	if len(dr.Runs) == 0 {
		return "", nil, false
	}
	s := rp.res.Settings
	v := &daemonReloadView{S: s, Units: 2 + 3*s.DRInstances, Cmds: rp.commands("daemonreload")}
	v.Rows = rp.daemonReloadRows(dr)
	for _, c := range dr.Checks {
		var frag, drop string
		for _, l := range strings.Split(c.Sample, "\n") {
			if x, ok := strings.CutPrefix(l, "FragmentPath="); ok && frag == "" {
				frag = x
			}
			if x, ok := strings.CutPrefix(l, "DropInPaths="); ok {
				drop = x
			}
		}
		v.Checks = append(v.Checks, []string{fmt.Sprint(c.Projects), c.Variant, fmt.Sprint(c.Targets), fmt.Sprint(c.Instances), fmt.Sprint(c.Units),
			fmt.Sprint(c.Gens), fmt.Sprint(c.GenFiles), "`" + frag + "`", "`" + drop + "`"})
	}
	return "daemonreload", v, true
}

// daemonReloadRows are the figure's rows per number of projects, with
// their headline rows and the chart's panel.
func (rp *report) daemonReloadRows(dr DaemonReloadResults) [][]string {
	s := rp.res.Settings
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
	if len(bars) > 0 {
		rp.svgP = append(rp.svgP, panel{title: fmt.Sprintf("systemctl daemon-reload, N projects × %d instances (ms, median; lower is better)", s.DRInstances), bars: bars})
	}
	return rows
}
