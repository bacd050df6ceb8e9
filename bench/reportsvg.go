package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

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
