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
	prec  int // decimals of its cells
}

// sampleFigures are the figures of Samples (report.body places them);
// each one's intro is report/samples.tmpl's "intro KEY".
var sampleFigures = []sampleFigure{
	{key: "spread", num: "1b", title: "How connections split over 2 instances", prec: 0},
	{key: "reloadmatrix", num: "4c", title: "Reload under load: the app's shutdown and tcp_migrate_req (bm2)", prec: 0},
	{key: "reloadphases", num: "4e", title: "Where a reload's time goes (4 instances, bm2, beside systemd's floor and PM2's time per worker)", prec: 0},
	{key: "fleet", num: "5e", title: "A fleet of two hosts behind one gateway (bm2)", prec: 0},
	{key: "stop", num: "9", title: "Stop", prec: 0},
	{key: "probe", num: "10", title: "The reusePort probe (bm2)", prec: 0},
	{key: "security", num: "11", title: "systemd-analyze security (bm2)", prec: 1},
	{key: "metrics", num: "11b", title: "One scrape of bm2 metrics with 100 projects (bm2)", prec: 1},
	{key: "health", num: "11c", title: "The HTTP health check: a hung event loop found and restarted (bm2)", prec: 0},
	{key: "memrestart", num: "11d", title: "The graceful memory restart: an instance above memory_restart found and reloaded (bm2)", prec: 0},
	{key: "phases", num: "11e", title: "Where a crash recovery's time goes (bm2, and the physical limit beside it)", prec: 1},
	{key: "boot", num: "11f", title: "Starting many instances at once, as a boot does (bm2, and the physical limit beside it)", prec: 1},
	{key: "package", num: "12", title: "Building and installing the Debian package", prec: 0},
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

// samplesView is what report/samples.tmpl writes from.
type samplesView struct {
	Key, Num, Title string
	Header          []string
	Rows            [][]string // per variant
	Notes           []string
	Cmds            commandsView
}

// samples derives the figure of Samples named key: a table with a row
// per variant and a column per metric (both in the order first
// measured), its notes and its commands.
func (rp *report) samples(key string) (string, any, bool) {
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
	v := &samplesView{Key: f.key, Num: f.num, Title: f.title, Notes: rp.res.Notes[f.key], Cmds: rp.commands(f.key)}
	if len(variants) == 0 && len(v.Notes) == 0 {
		return "", nil, false
	}
	if len(variants) > 0 {
		v.Header = []string{"variant", "samples"}
		for _, m := range metrics {
			v.Header = append(v.Header, m+": median (min–max)")
		}
	}
	for _, variant := range variants {
		n := 0
		row := []string{variant, ""}
		for _, m := range metrics {
			xs := cells[[2]string{variant, m}]
			n = max(n, len(xs))
			row = append(row, cellText(xs, f.prec))
		}
		row[1] = fmt.Sprint(n)
		v.Rows = append(v.Rows, row)
	}
	return "samples", v, true
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
