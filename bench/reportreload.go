package main

import (
	"fmt"
	"math"
	"strings"
)

// Reload.

// reloadView is what report/reload.tmpl writes from.
type reloadView struct {
	S         settings
	Num, Inst string
	Name      string // the figure's, its project's and its PM2 app's
	Check     string // how bm2 reload was found (or not)
	Measured  bool
	Available bool // bm2 reload exists
	Single    bool // 1 instance
	Four      bool // 4 instances, nothing else said of what is reloaded
	Rows      [][]string
	Ratios    [][]string
	Outputs   []string // failed reload commands' output, on one line
	Cmds      commandsView
}

// reloadKey is one system under one load.
type reloadKey struct{ sys, mode string }

// reloadSeries are a reload figure's samples: failed requests and the
// command's time by repetition, requests, returns while wrk ran and
// failed commands.
type reloadSeries struct {
	failed, dur map[reloadKey]series
	reqs        map[reloadKey][]float64
	inWin, bad  map[reloadKey]int
	outputs     []string
}

func reloadSeriesOf(runs []ReloadRun) reloadSeries {
	rs := reloadSeries{failed: map[reloadKey]series{}, dur: map[reloadKey]series{}, reqs: map[reloadKey][]float64{},
		inWin: map[reloadKey]int{}, bad: map[reloadKey]int{}}
	for _, r := range runs {
		k := reloadKey{r.System, r.Mode}
		if rs.failed[k] == nil {
			rs.failed[k], rs.dur[k] = series{}, series{}
		}
		rs.failed[k][r.Rep] = float64(r.Failed)
		rs.reqs[k] = append(rs.reqs[k], float64(r.Wrk.Requests))
		rs.dur[k][r.Rep] = r.ReloadMs
		if r.InWindow {
			rs.inWin[k]++
		}
		if r.Exit != 0 {
			rs.bad[k]++
			rs.outputs = append(rs.outputs, r.System+": "+r.Output)
		}
	}
	return rs
}

// reloadSection derives one reload figure: instances per manager, the
// section's number and the name its commands are recorded under (also the
// project's and the PM2 app's name), and what is reloaded when it is more
// than a number of instances.
func (rp *report) reloadSection(rl ReloadResults, instances int, num, name, what string) (string, any, bool) {
	if rl.Bm2Check == "" {
		return "", nil, false
	}
	inst := fmt.Sprintf("%d instances", instances)
	if instances == 1 {
		inst = "1 instance"
	}
	if what != "" {
		inst = what
	}
	v := &reloadView{S: rp.res.Settings, Num: num, Inst: inst, Name: name, Check: rl.Bm2Check, Available: rl.Bm2Available,
		Measured: rl.Runs != nil || strings.HasPrefix(rl.Bm2Check, "bm2 reload"),
		Single:   instances == 1, Four: instances == 4 && what == ""}
	if !v.Measured {
		return "reload", v, true
	}
	rs := reloadSeriesOf(rl.Runs)
	var bars []bar
	for _, mode := range []string{Close, KeepAlive} {
		rows, b := reloadRows(rs, mode, rl.Bm2Available)
		v.Rows, bars = append(v.Rows, rows...), append(bars, b...)
		pm2, bmv := rs.failed[reloadKey{"pm2", mode}], rs.failed[reloadKey{"bm2", mode}]
		if len(pm2) == 0 && len(bmv) == 0 && rl.Bm2Available {
			continue // a load this figure does not measure
		}
		ratio := failedRatio(rl.Bm2Available, bmv, pm2)
		if what == "" {
			rp.reloadHead(inst, mode, rl.Bm2Available, rs, ratio)
		} else {
			rp.reloadHeadBehind(inst, mode, rl.Bm2Available, rs, ratio)
		}
	}
	if len(bars) > 0 {
		rp.svgP = append(rp.svgP, panel{title: "Failed requests during a reload of " + inst + " under load (median; lower is better)", bars: bars})
	}
	rp.reloadDurations(inst, rs)
	if what == "" {
		for _, mode := range []string{Close, KeepAlive} {
			bd, pd := rs.dur[reloadKey{"bm2", mode}], rs.dur[reloadKey{"pm2", mode}]
			if len(bd) == 0 || len(pd) == 0 {
				continue
			}
			v.Ratios = append(v.Ratios, []string{"`pm2 reload` ÷ `bm2 reload` (command time)", mode, ratioText(ratios(pd, bd)), "≥ 1× (bm2 ≤ PM2's time)"})
		}
	}
	for _, o := range rs.outputs {
		v.Outputs = append(v.Outputs, strings.ReplaceAll(o, "\n", " ⏎ "))
	}
	v.Cmds = rp.commands(name)
	return "reload", v, true
}

// reloadRows are the rows of one load, bm2, the floor and PM2, with
// their bars on the chart.
func reloadRows(rs reloadSeries, mode string, bm2Available bool) ([][]string, []bar) {
	var rows [][]string
	var bars []bar
	for _, sys := range []string{"bm2", floorSystem, "pm2"} {
		k := reloadKey{sys, mode}
		name := map[string]string{"bm2": "bm2", floorSystem: floorName, "pm2": "PM2"}[sys]
		se, ok := rs.failed[k]
		if !ok {
			if sys == "bm2" && !bm2Available {
				rows = append(rows, []string{name, mode, "0", "not available", "—", "—", "—", "—", "—", "—"})
				bars = append(bars, bar{label: name + ", " + shortMode(mode), med: math.NaN(), color: sysColor(name), text: "bm2 reload: not available"})
			}
			continue
		}
		lo, med := minMed(se.values())
		_, rq := minMed(rs.reqs[k])
		_, d := minMed(rs.dur[k].values())
		rows = append(rows, []string{name, mode, fmt.Sprint(len(se)), fnum(lo, 0), fnum(med, 0), fnum(maxOf(se.values()), 0),
			fnum(rq, 0), fnum(d, 0) + " ms", fmt.Sprintf("%d/%d", rs.inWin[k], len(se)), fmt.Sprint(rs.bad[k])})
		bars = append(bars, bar{label: name + ", " + shortMode(mode), med: med, lo: lo, color: sysColor(name), text: fnum(med, 0) + " failed"})
	}
	return rows, bars
}

// failedRatio compares the failed requests of PM2 and bm2 under one load.
func failedRatio(bm2Available bool, bmv, pm2 series) string {
	if !bm2Available || len(bmv) == 0 || len(pm2) == 0 {
		return "—"
	}
	_, pm := minMed(pm2.values())
	_, bmMed := minMed(bmv.values())
	switch {
	case bmMed == 0 && pm == 0:
		return "equal: no failed request on either side (median)"
	case bmMed == 0:
		return fmt.Sprintf("bm2 failed none, PM2 %s (median)", fnum(pm, 0))
	case pm == 0:
		return fmt.Sprintf("**0×**: PM2 failed none, bm2 %s (median)", fnum(bmMed, 0))
	}
	return ratioText(ratios(pm2, bmv)) + " (PM2 ÷ bm2)"
}

// reloadDurations is the chart's panel of the reload commands' times.
func (rp *report) reloadDurations(inst string, rs reloadSeries) {
	var dbars []bar
	for _, mode := range []string{Close, KeepAlive} {
		for _, sys := range []string{"bm2", floorSystem, "pm2"} {
			name := map[string]string{"bm2": "bm2 reload", floorSystem: "systemctl restart, one unit at a time", "pm2": "pm2 reload"}[sys]
			if d := rs.dur[reloadKey{sys, mode}]; len(d) > 0 {
				lo, med := minMed(d.values())
				dbars = append(dbars, bar{label: name + ", " + shortMode(mode), med: med, lo: lo, color: sysColor(sys), text: fnum(med, 0) + " ms"})
			}
		}
	}
	if len(dbars) > 0 {
		rp.svgP = append(rp.svgP, panel{title: "Reload command duration, " + inst + " under load (ms, median)", bars: dbars})
	}
}

// reloadHead adds the headline rows of a cluster-mode reload figure (1, 2
// or 4 instances: inst) for one load: failed requests (median and max over
// runs), then the reload command's time, bm2 beside PM2, and systemd's
// floor when it was measured.
func (rp *report) reloadHead(inst, mode string, bm2Available bool, rs reloadSeries, failedRatio string) {
	bmFailed, pmFailed := rs.failed[reloadKey{"bm2", mode}], rs.failed[reloadKey{"pm2", mode}]
	bmDur, pmDur := rs.dur[reloadKey{"bm2", mode}], rs.dur[reloadKey{"pm2", mode}]
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
	if fl := rs.dur[reloadKey{floorSystem, mode}]; len(fl) > 0 {
		lo, med := minMed(fl.values())
		_, bmOver := minMed(ratios(bmDur, fl))
		_, pm := minMed(pmDur.values())
		rp.head = append(rp.head, []string{"reload " + inst + " under load, " + mode + ": systemd's floor, the same rolling restart of hand-written units with bm2's sandbox (§4e), time (median)",
			fmt.Sprintf("floor %s ms (min %s); bm2 %s× the floor's time", fnum(med, 0), fnum(lo, 0), fnum(bmOver, 1)),
			fnum(pm, 0) + " ms", ratioText(ratios(pmDur, fl)) + " (PM2 ÷ floor)", "—"})
	}
}

// reloadHeadBehind adds the headline row of a reload figure behind a
// gateway or with another runtime (what it reloads is said) for one load:
// failed requests and the commands' times.
func (rp *report) reloadHeadBehind(inst, mode string, bm2Available bool, rs reloadSeries, ratio string) {
	bmv, pm2 := rs.failed[reloadKey{"bm2", mode}], rs.failed[reloadKey{"pm2", mode}]
	_, pm := minMed(pm2.values())
	var bmText string
	if !bm2Available {
		bmText = "not available"
	} else {
		_, m := minMed(bmv.values())
		bmText = fnum(m, 0) + " failed"
	}
	pmText := fnum(pm, 0) + " failed"
	if len(pm2) == 0 {
		pmText = "—"
	}
	if _, d := minMed(rs.dur[reloadKey{"pm2", mode}].values()); !math.IsNaN(d) {
		pmText += " (`pm2 reload` took " + fnum(d/1000, 1) + " s)"
	}
	if _, d := minMed(rs.dur[reloadKey{"bm2", mode}].values()); !math.IsNaN(d) {
		bmText += " (`bm2 reload` took " + fnum(d/1000, 1) + " s)"
	}
	rp.head = append(rp.head, []string{"reload " + inst + " under load, " + mode + ": failed requests (median)", bmText, pmText, ratio, "bm2: 0"})
}
