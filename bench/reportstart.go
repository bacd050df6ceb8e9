package main

import (
	"fmt"
	"strings"
)

// Start.

// startView is what report/start.tmpl writes from.
type startView struct {
	Rows   [][]string // per variant
	Ratios [][]string
	// Waits: bm2 serve waited for the probes' confirmation; NoWait: it
	// did not; MinUptime: its median return took min_uptime_ms or more.
	Waits, NoWait, MinUptime bool
	Cmds                     commandsView
}

// startClocks are one variant's clocks, ms by repetition, and its
// command's time over its port's.
type startClocks struct{ ret, conf, port, online, wait series }

func startClocksOf(runs []StartRun) map[string]*startClocks {
	by := map[string]*startClocks{}
	for _, v := range startVariants {
		by[v] = &startClocks{series{}, series{}, series{}, series{}, series{}}
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
	return by
}

func (rp *report) start() (string, any, bool) {
	runs := rp.res.Start
	if len(runs) == 0 {
		return "", nil, false
	}
	by := startClocksOf(runs)
	v := &startView{Cmds: rp.commands("start")}
	v.Rows = rp.startRows(by)
	v.Ratios = rp.startRatios(by)
	rp.startHeads(by)
	for _, s := range runs {
		v.Waits = v.Waits || (s.Variant == StartBm2 && strings.Contains(s.Result.Output, "confirmed"))
	}
	bm := by[StartBm2]
	v.NoWait = !v.Waits && len(bm.ret) > 0
	_, r := minMed(bm.ret.values())
	v.MinUptime = r >= 1000
	return "start", v, true
}

// startRows are the variants' rows, with the chart's panel.
func (rp *report) startRows(by map[string]*startClocks) [][]string {
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
	rp.svgP = append(rp.svgP, panel{title: "Start 4 instances (ms, median; lower is better)", bars: bars})
	return rows
}

// startRatios are PM2's clocks over bm2 serve's, then systemd's floor
// beside PM2, and bm2's commands over the floor they stand on: bm2 serve
// on new units, bm2 start on loaded ones (with the floor's headline rows).
func (rp *report) startRatios(by map[string]*startClocks) [][]string {
	var rows [][]string
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
	return rows
}

// startHeads are the start figure's headline rows but the floor's: bm2
// serve beside PM2 on each clock, bm2 start's clocks, and what each bm2
// command keeps its caller waiting for beyond the port, against its goal,
// PM2's (daemon running) beside it.
func (rp *report) startHeads(by map[string]*startClocks) {
	bm, pw := by[StartBm2], by[StartPM2Warm]
	if len(pw.ret) > 0 && len(bm.ret) > 0 {
		for _, c := range []struct {
			what   string
			bm, pm series
		}{
			{"start 4 instances until the port answers (PM2 daemon running)", bm.port, pw.port},
			{"start 4 instances until confirmed (bm2: 4 × reuseport_confirmed; PM2: jlist all online)", bm.conf, pw.conf},
			{"start 4 instances until the command returns", bm.ret, pw.ret},
		} {
			_, a := minMed(c.bm.values())
			_, p := minMed(c.pm.values())
			rp.head = append(rp.head, []string{c.what, fnum(a, 0) + " ms", fnum(p, 0) + " ms", ratioText(ratios(c.pm, c.bm)), "—"})
		}
	}
	if bs := by[StartBm2Start]; len(bs.ret) > 0 {
		_, p := minMed(bs.port.values())
		_, c := minMed(bs.conf.values())
		_, a := minMed(bs.ret.values())
		rp.head = append(rp.head, []string{"`bm2 start NAME`, 4 instances, registered and stopped: port answers / confirmed / command returns",
			fnum(p, 0) + " / " + fnum(c, 0) + " / " + fnum(a, 0) + " ms", "—", "—", "—"})
	}
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
}
