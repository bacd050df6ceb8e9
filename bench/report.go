package main

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"text/template"
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
	md, err := rep.markdown()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "results.svg"), []byte(rep.svg()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(out, []byte(md), 0o644)
}

// The report's text: RESULTS.md is these templates executed over what
// the figures derive from Results (report/results.md.tmpl is the page).
//
//go:embed report/*.tmpl
var reportFiles embed.FS

// reportTemplates are the report's templates, parsed once (in init:
// render, one of their functions, executes them).
var reportTemplates *template.Template

func init() {
	reportTemplates = template.Must(template.New("report").Funcs(template.FuncMap{
		"thead":   thead,
		"theadOf": func(cells []string) string { return thead(cells...) },
		"row":     row,
		"rowOf":   func(label string, cells []string) string { return row(append([]string{label}, cells...)...) },
		"rows":    rows,
		"join":    strings.Join,
		"render":  render,
	}).ParseFS(reportFiles, "report/*.tmpl"))
}

// render executes the named template over data, as a string: a template
// whose name is only known when the report runs (a section, an intro).
func render(name string, data any) (string, error) {
	var b strings.Builder
	if err := reportTemplates.ExecuteTemplate(&b, name, data); err != nil {
		return "", err
	}
	return b.String(), nil
}

// report derives every figure from Results.
type report struct {
	res  *Results
	head [][]string // the headline table's rows
	svgP []panel
}

func newReport(res *Results) *report { return &report{res: res} }

// section is one part of RESULTS.md's body: the template that writes it
// and what it writes from.
type section struct {
	Tmpl string
	Data any
}

// page is what report/results.md.tmpl writes from.
type page struct {
	Res     *Results
	S       settings
	Started string
	Took    time.Duration
	Load    *loadView
	Bins    string
	Head    [][]string
	Body    []section
}

// loadView is the host's load during the run.
type loadView struct{ Lo, Med, Max, FMed, FMax string }

// markdown is RESULTS.md: every figure derived first (which also makes the
// headlines and the chart's panels, in the order of the sections), then
// the page written.
func (rp *report) markdown() (string, error) {
	res := rp.res
	p := page{Res: res, S: res.Settings, Started: res.Started.UTC().Format("2006-01-02 15:04 MST"),
		Took: res.Finished.Sub(res.Started).Round(time.Second), Load: loadOf(res.Load)}
	var bins []string
	for _, k := range res.Binaries {
		bins = append(bins, k.K+" "+k.V)
	}
	p.Bins = strings.Join(bins, ", ")
	p.Body = rp.body()
	p.Head = rp.head
	return render("results.md", p)
}

// body derives the sections of RESULTS.md, in their order; a figure that
// was not measured has none.
func (rp *report) body() []section {
	var out []section
	add := func(tmpl string, data any, ok bool) {
		if ok {
			out = append(out, section{tmpl, data})
		}
	}
	add(rp.throughput())
	add(rp.samples("spread"))
	rp.spreadHead()
	add(rp.memory())
	add(rp.start())
	add(rp.reloadSection(rp.res.Reload, 2, "4", "reload", ""))
	add(rp.reloadSection(rp.res.ReloadBun, 2, "4b", "reloadbun", "2 Bun instances"))
	add(rp.samples("reloadmatrix"))
	add(rp.reloadSection(rp.res.Reload4, 4, "4d", "reload4", ""))
	add(rp.samples("reloadphases"))
	add(rp.reloadSection(rp.res.Reload1, 1, "5", "reload1", ""))
	add(rp.reloadSection(rp.res.GatewayReload, 3, "5b", "gwreload", "3 fork-mode instances behind nginx"))
	add(rp.reloadSection(rp.res.GatewayCluster, 2, "5c", "gwcluster", "2 cluster-mode instances behind nginx"))
	add(rp.reloadSection(rp.res.GatewayDefault, 3, "5d", "gwdefault", "3 fork-mode instances behind nginx with its defaults"))
	add(rp.samples("fleet"))
	add(rp.generator())
	add(rp.daemonReload())
	add(rp.crash())
	for _, k := range []string{"stop", "probe", "security", "metrics", "health", "memrestart", "phases", "boot", "package"} {
		add(rp.samples(k))
	}
	return out
}

// loadOf sums up the host's load samples, if any.
func loadOf(load []LoadSample) *loadView {
	if len(load) == 0 {
		return nil
	}
	var l1, fo []float64
	for _, l := range load {
		l1 = append(l1, l.Load1)
		fo = append(fo, float64(l.Foreign))
	}
	lo, med := minMed(l1)
	_, fmed := minMed(fo)
	return &loadView{fnum(lo, 1), fnum(med, 1), fnum(maxOf(l1), 1), fnum(fmed, 0), fnum(maxOf(fo), 0)}
}

// commandsView is what a section says of how it was measured: its notes
// (a figure of Samples shows them under its table instead) and its
// commands (report/commands.tmpl).
type commandsView struct {
	Section string
	Notes   []string
	Cmds    []string
}

func (rp *report) commands(section string) commandsView {
	v := commandsView{Section: section, Cmds: rp.res.Commands[section]}
	sample := false
	for _, f := range sampleFigures {
		sample = sample || f.key == section
	}
	if !sample {
		v.Notes = rp.res.Notes[section]
	}
	return v
}

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

// thead is a Markdown table's header: its cells and the separator line.
func thead(cells ...string) string {
	return row(cells...) + "|" + strings.Repeat(" --- |", len(cells)) + "\n"
}

// row is one line of a Markdown table.
func row(cells ...string) string { return "| " + strings.Join(cells, " | ") + " |\n" }

// rows are lines of a Markdown table.
func rows(rs [][]string) string {
	var b strings.Builder
	for _, r := range rs {
		b.WriteString(row(r...))
	}
	return b.String()
}
