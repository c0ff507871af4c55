package bench

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The report's charts are SVG written as text: a line chart and a
// horizontal grouped bar chart are all it draws, and a few hundred lines
// of arithmetic cost less than a plotting dependency. The output depends
// only on the data, so a chart can be checked against a golden file.

// palette colours the targets (and the series of a chart) in order: the
// subject first, then its peer.
var palette = []string{"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

func colour(i int) string { return palette[i%len(palette)] }

const (
	chartWidth = 760
	fontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif"
)

// svgDoc is an SVG document being written.
type svgDoc struct {
	b    strings.Builder
	w, h float64
}

func newSVG(w, h float64) *svgDoc {
	d := &svgDoc{w: w, h: h}
	fmt.Fprintf(&d.b, `<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="%s" font-size="12">`+"\n",
		f1(w), f1(h), f1(w), f1(h), fontFamily)
	d.rect(0, 0, w, h, "#ffffff", "")
	return d
}

func (d *svgDoc) rect(x, y, w, h float64, fill, extra string) {
	fmt.Fprintf(&d.b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"%s/>`+"\n", f1(x), f1(y), f1(w), f1(h), fill, extra)
}

func (d *svgDoc) line(x1, y1, x2, y2 float64, stroke string, width float64, dash string) {
	extra := ""
	if dash != "" {
		extra = ` stroke-dasharray="` + dash + `"`
	}
	fmt.Fprintf(&d.b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"%s/>`+"\n",
		f1(x1), f1(y1), f1(x2), f1(y2), stroke, f1(width), extra)
}

// text writes s at (x, y); anchor is start, middle or end.
func (d *svgDoc) text(x, y float64, anchor string, size int, s, extra string) {
	fmt.Fprintf(&d.b, `<text x="%s" y="%s" text-anchor="%s" font-size="%d"%s>%s</text>`+"\n",
		f1(x), f1(y), anchor, size, extra, xmlEscape(s))
}

func (d *svgDoc) polyline(xs, ys []float64, stroke string, width float64, dash string, opacity float64) {
	var pts strings.Builder
	for i := range xs {
		if i > 0 {
			pts.WriteByte(' ')
		}
		pts.WriteString(f1(xs[i]) + "," + f1(ys[i]))
	}
	extra := ""
	if dash != "" {
		extra += ` stroke-dasharray="` + dash + `"`
	}
	if opacity < 1 {
		extra += ` stroke-opacity="` + strconv.FormatFloat(opacity, 'f', 2, 64) + `"`
	}
	fmt.Fprintf(&d.b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="%s" stroke-linejoin="round"%s/>`+"\n",
		pts.String(), stroke, f1(width), extra)
}

func (d *svgDoc) String() string { return d.b.String() + "</svg>\n" }

// f1 formats a coordinate with one decimal, the precision of a pixel's
// tenth: enough for the eye, and stable for golden files.
func f1(v float64) string {
	s := strconv.FormatFloat(v, 'f', 1, 64)
	if s == "-0.0" {
		s = "0.0"
	}
	return strings.TrimSuffix(s, ".0")
}

var xmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func xmlEscape(s string) string { return xmlEscaper.Replace(s) }

// axis maps data values onto pixels, linearly or by logarithm.
type axis struct {
	min, max float64 // data; for a log axis, both > 0
	log      bool
	from, to float64 // pixels
}

func (a axis) at(v float64) float64 {
	lo, hi := a.min, a.max
	if a.log {
		v, lo, hi = math.Log10(max(v, a.min)), math.Log10(lo), math.Log10(hi)
	}
	if hi == lo {
		return a.from
	}
	return a.from + (v-lo)/(hi-lo)*(a.to-a.from)
}

// tick is a labelled value on an axis.
type tick struct {
	v     float64
	label string
}

// linearAxis returns an axis from 0 (or lo, if below 0) to a round value at
// or above hi, and ticks at round steps.
func linearAxis(lo, hi float64, from, to float64) (axis, []tick) {
	lo = min(lo, 0)
	if hi <= lo {
		hi = lo + 1
	}
	step := niceStep((hi - lo) / 5)
	a := axis{min: math.Floor(lo/step) * step, max: math.Ceil(hi/step) * step, from: from, to: to}
	var ts []tick
	for v := a.min; v <= a.max+step/2; v += step {
		ts = append(ts, tick{v, formatTick(v, step)})
	}
	return a, ts
}

// logAxis returns an axis over whole decades around lo..hi (lo > 0) and a
// tick at each decade, and at 2 and 5 times it when there are few.
func logAxis(lo, hi float64, from, to float64) (axis, []tick) {
	if lo <= 0 {
		lo = hi / 1000
	}
	if hi <= lo {
		hi = lo * 10
	}
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d1 == d0 {
		d1++
	}
	a := axis{min: math.Pow(10, d0), max: math.Pow(10, d1), log: true, from: from, to: to}
	var ts []tick
	for d := d0; d <= d1; d++ {
		base := math.Pow(10, d)
		mults := []float64{1}
		if d1-d0 <= 2 && d < d1 {
			mults = []float64{1, 2, 5}
		}
		for _, m := range mults {
			v := base * m
			ts = append(ts, tick{v, formatTick(v, v)})
		}
	}
	return a, ts
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 || math.IsNaN(raw) || math.IsInf(raw, 0) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if raw <= m*p*(1+1e-9) {
			return m * p
		}
	}
	return 10 * p
}

// formatTick writes v with as many decimals as its step needs.
func formatTick(v, step float64) string {
	decimals := 0
	if step < 1 {
		decimals = int(math.Ceil(-math.Log10(step) - 1e-9))
	}
	return strconv.FormatFloat(v, 'f', decimals, 64)
}

// lineSeries is one line of a line chart.
type lineSeries struct {
	label   string // legend entry; series with the same label share one
	colour  string
	dash    string
	opacity float64 // 0 is 1
	xs, ys  []float64
}

// lineChart plots series against a linear x axis (or fixed ticks) and a
// linear or logarithmic y axis.
type lineChart struct {
	title, xLabel, yLabel string
	series                []lineSeries
	yLog                  bool
	xTicks                []tick // fixed x ticks (and the x range); nil for round ones
	// band shades the x range from band[0] to band[1], labelled bandLabel;
	// nil for none.
	band      *[2]float64
	bandLabel string
}

// Layout of a chart: margins around the plotting area, in pixels.
const (
	marginLeft   = 70
	marginRight  = 20
	marginTop    = 48
	marginBottom = 46
	legendRow    = 18
)

func (c lineChart) svg() string {
	legend := c.legend()
	legendH := float64(len(legendRows(legend))) * legendRow
	const plotH = 300
	w, h := float64(chartWidth), marginTop+legendH+plotH+marginBottom
	top := marginTop + legendH
	d := newSVG(w, h)
	d.text(w/2, 22, "middle", 15, c.title, ` font-weight="bold"`)
	drawLegend(d, legend, marginLeft, marginTop-8)

	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range c.series {
		for i := range s.xs {
			xlo, xhi = min(xlo, s.xs[i]), max(xhi, s.xs[i])
			if !c.yLog || s.ys[i] > 0 {
				ylo, yhi = min(ylo, s.ys[i]), max(yhi, s.ys[i])
			}
		}
	}
	if math.IsInf(xlo, 0) {
		xlo, xhi, ylo, yhi = 0, 1, 0, 1
	}
	if c.band != nil {
		xlo, xhi = min(xlo, c.band[0]), max(xhi, c.band[1])
	}
	var xa axis
	var xts []tick
	if c.xTicks != nil {
		xa = axis{min: c.xTicks[0].v, max: c.xTicks[len(c.xTicks)-1].v, from: marginLeft, to: w - marginRight}
		xts = c.xTicks
	} else {
		xa, xts = linearAxis(xlo, xhi, marginLeft, w-marginRight)
	}
	var ya axis
	var yts []tick
	if c.yLog {
		ya, yts = logAxis(ylo, yhi, top+plotH, top)
	} else {
		ya, yts = linearAxis(ylo, yhi, top+plotH, top)
	}
	if c.band != nil {
		x0, x1 := xa.at(c.band[0]), xa.at(c.band[1])
		d.rect(x0, top, x1-x0, plotH, "#f2f2f2", "")
		d.text((x0+x1)/2, top+14, "middle", 10, c.bandLabel, ` fill="#777777"`)
	}
	drawAxes(d, xa, xts, ya, yts, top, top+plotH, w)
	d.text((marginLeft+w-marginRight)/2, h-10, "middle", 12, c.xLabel, "")
	d.text(16, top+plotH/2, "middle", 12, c.yLabel, fmt.Sprintf(` transform="rotate(-90 16 %s)"`, f1(top+plotH/2)))

	for _, s := range c.series {
		px, py := make([]float64, len(s.xs)), make([]float64, len(s.ys))
		for i := range s.xs {
			px[i], py[i] = xa.at(s.xs[i]), ya.at(s.ys[i])
		}
		op := s.opacity
		if op == 0 {
			op = 1
		}
		if len(px) == 1 { // a line of one point would not show
			fmt.Fprintf(&d.b, `<circle cx="%s" cy="%s" r="3" fill="%s" fill-opacity="%s"/>`+"\n", f1(px[0]), f1(py[0]), s.colour, strconv.FormatFloat(op, 'f', 2, 64))
			continue
		}
		d.polyline(px, py, s.colour, 1.6, s.dash, op)
	}
	return d.String()
}

// legendEntry is one entry of a legend: a swatch and its label.
type legendEntry struct {
	label, colour, dash string
}

func (c lineChart) legend() []legendEntry {
	var out []legendEntry
	seen := map[string]bool{}
	for _, s := range c.series {
		if s.label != "" && !seen[s.label] {
			seen[s.label] = true
			out = append(out, legendEntry{s.label, s.colour, s.dash})
		}
	}
	return out
}

// legendRows lays entries out left to right, wrapping at the chart's
// width; the width of a label is guessed from its length.
func legendRows(es []legendEntry) [][]legendEntry {
	var rows [][]legendEntry
	var x float64
	for _, e := range es {
		wd := legendWidth(e)
		if len(rows) == 0 || x+wd > chartWidth-marginLeft-marginRight {
			rows = append(rows, nil)
			x = 0
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], e)
		x += wd
	}
	return rows
}

func legendWidth(e legendEntry) float64 { return 34 + 7*float64(len(e.label)) }

func drawLegend(d *svgDoc, es []legendEntry, x0, y0 float64) {
	for r, row := range legendRows(es) {
		x := x0
		y := y0 + float64(r)*legendRow
		for _, e := range row {
			d.line(x, y-4, x+22, y-4, e.colour, 3, e.dash)
			d.text(x+27, y, "start", 11, e.label, "")
			x += legendWidth(e)
		}
	}
}

// drawAxes draws the grid, the ticks and their labels of a plotting area
// from top to bottom (pixels), across the chart's width w.
func drawAxes(d *svgDoc, xa axis, xts []tick, ya axis, yts []tick, top, bottom, w float64) {
	for _, t := range yts {
		y := ya.at(t.v)
		d.line(marginLeft, y, w-marginRight, y, "#e0e0e0", 1, "")
		d.text(marginLeft-6, y+4, "end", 11, t.label, "")
	}
	for _, t := range xts {
		x := xa.at(t.v)
		d.line(x, top, x, bottom, "#f0f0f0", 1, "")
		d.text(x, bottom+16, "middle", 11, t.label, "")
	}
	d.line(marginLeft, bottom, w-marginRight, bottom, "#333333", 1, "")
	d.line(marginLeft, top, marginLeft, bottom, "#333333", 1, "")
}

// bar is one bar of a bar chart: a value, optionally a range drawn as a
// whisker, and the text written beside it.
type bar struct {
	value, lo, hi float64 // lo, hi: the whisker; hi ≤ lo for none
	text          string
}

// barGroup is one category of a bar chart: a bar per series (nil for a
// series without a value in it).
type barGroup struct {
	label string
	bars  []*bar
}

// barChart draws horizontal bars grouped by category, a bar per series in
// each group, against a linear or logarithmic axis, with an optional
// reference line.
type barChart struct {
	title, xLabel string
	series        []string // legend; bar i of a group is series i
	groups        []barGroup
	xLog          bool
	ref           float64 // draws a line at this value; 0 for none
	refLabel      string
}

const (
	barHeight  = 14
	groupGap   = 12
	labelWidth = 210 // room for the group labels left of the bars
	textRoom   = 80  // room for the value text right of the longest bar
)

func (c barChart) svg() string {
	var legend []legendEntry
	// A group is as tall as the bars it has; the legend names the series
	// that have a bar somewhere.
	used := make([]bool, len(c.series))
	plotH := float64(groupGap)
	for _, g := range c.groups {
		n := 0
		for i, b := range g.bars {
			if b != nil {
				n++
				if i < len(used) {
					used[i] = true
				}
			}
		}
		plotH += float64(max(n, 1))*barHeight + groupGap
	}
	for i, s := range c.series {
		if used[i] {
			legend = append(legend, legendEntry{s, colour(i), ""})
		}
	}
	legendH := float64(len(legendRows(legend))) * legendRow
	w := float64(chartWidth)
	top := marginTop + legendH
	h := top + plotH + marginBottom
	d := newSVG(w, h)
	d.text(w/2, 22, "middle", 15, c.title, ` font-weight="bold"`)
	drawLegend(d, legend, labelWidth, marginTop-8)

	lo, hi := math.Inf(1), math.Inf(-1)
	for _, g := range c.groups {
		for _, b := range g.bars {
			if b == nil {
				continue
			}
			for _, v := range []float64{b.value, b.lo, b.hi} {
				if v > 0 || !c.xLog {
					lo, hi = min(lo, v), max(hi, v)
				}
			}
		}
	}
	if c.ref > 0 {
		lo, hi = min(lo, c.ref), max(hi, c.ref)
	}
	if math.IsInf(lo, 0) {
		lo, hi = 0, 1
	}
	from, to := float64(labelWidth), w-marginRight-textRoom
	var xa axis
	var xts []tick
	if c.xLog {
		xa, xts = logAxis(lo, hi, from, to)
	} else {
		xa, xts = linearAxis(lo, hi, from, to)
	}
	base := xa.at(math.Max(0, xa.min))
	for _, t := range xts {
		x := xa.at(t.v)
		d.line(x, top, x, top+plotH, "#e8e8e8", 1, "")
		d.text(x, top+plotH+16, "middle", 11, t.label, "")
	}
	d.line(from, top+plotH, to, top+plotH, "#333333", 1, "")
	d.text((from+to)/2, h-10, "middle", 12, c.xLabel, "")
	y := top + groupGap
	for _, g := range c.groups {
		n := 0
		for _, b := range g.bars {
			if b != nil {
				n++
			}
		}
		d.text(from-8, y+float64(max(n, 1))*barHeight/2+4, "end", 11, g.label, "")
		if n == 0 {
			y += barHeight
		}
		for i, b := range g.bars {
			if b == nil {
				continue
			}
			x := xa.at(b.value)
			d.rect(min(base, x), y+1, math.Abs(x-base), barHeight-2, colour(i), "")
			end := x
			if b.hi > b.lo {
				l, r := xa.at(b.lo), xa.at(b.hi)
				d.line(l, y+barHeight/2, r, y+barHeight/2, "#222222", 1, "")
				d.line(l, y+3, l, y+barHeight-3, "#222222", 1, "")
				d.line(r, y+3, r, y+barHeight-3, "#222222", 1, "")
				end = max(end, r)
			}
			d.text(end+4, y+barHeight-3, "start", 10, b.text, "")
			y += barHeight
		}
		y += groupGap
	}
	d.line(from, top, from, top+plotH, "#333333", 1, "")
	if c.ref > 0 {
		x := xa.at(c.ref)
		d.line(x, top, x, top+plotH, "#d62728", 1.2, "5,3")
		if c.refLabel != "" {
			d.text(x, top-4, "middle", 10, c.refLabel, ` fill="#d62728"`)
		}
	}
	return d.String()
}
