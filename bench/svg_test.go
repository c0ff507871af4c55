package bench

import (
	"encoding/xml"
	"io"
	"reflect"
	"strings"
	"testing"
)

func TestNiceStep(t *testing.T) {
	for raw, want := range map[float64]float64{0.13: 0.2, 1: 1, 1.01: 2, 3: 5, 7: 10, 42: 50, 180: 200, 0: 1, -3: 1} {
		if got := niceStep(raw); got != want {
			t.Errorf("niceStep(%v) = %v, want %v", raw, got, want)
		}
	}
}

func labels(ts []tick) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.label)
	}
	return out
}

func TestAxes(t *testing.T) {
	a, ts := linearAxis(12, 487, 0, 100)
	if a.min != 0 || a.max != 500 || a.log {
		t.Errorf("linear axis %+v", a)
	}
	if got := labels(ts); !reflect.DeepEqual(got, []string{"0", "100", "200", "300", "400", "500"}) {
		t.Errorf("linear ticks %v", got)
	}
	if a.at(250) != 50 || a.at(0) != 0 {
		t.Errorf("linear at: %v %v", a.at(250), a.at(0))
	}
	_, ts = linearAxis(0, 0.9, 0, 100)
	if got := labels(ts); !reflect.DeepEqual(got, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}) {
		t.Errorf("fractional ticks %v", got)
	}
	l, ts := logAxis(0.35, 42, 100, 0) // a y axis: pixels run upward
	if l.min != 0.1 || l.max != 100 || !l.log {
		t.Errorf("log axis %+v", l)
	}
	if got := labels(ts); !reflect.DeepEqual(got, []string{"0.1", "1", "10", "100"}) {
		t.Errorf("log ticks %v", got)
	}
	if l.at(1) < 66.6 || l.at(1) > 66.7 || l.at(100) != 0 || l.at(0) != 100 { // 0 clamps to the bottom
		t.Errorf("log at: %v %v %v", l.at(1), l.at(100), l.at(0))
	}
	_, ts = logAxis(0.5, 3, 0, 100)
	if got := labels(ts); !reflect.DeepEqual(got, []string{"0.1", "0.2", "0.5", "1", "2", "5", "10"}) {
		t.Errorf("short log ticks %v", got)
	}
}

func TestFormat(t *testing.T) {
	for v, want := range map[float64]string{1: "1", 1.25: "1.2", -0.01: "0", 12.06: "12.1"} {
		if got := f1(v); got != want {
			t.Errorf("f1(%v) = %q, want %q", v, got, want)
		}
	}
	for v, want := range map[float64]string{1234.5: "1234", 56.78: "56.8", 3.14159: "3.14", 0.01234: "0.012", 0: "0.00"} {
		if got := sig3(v); got != want {
			t.Errorf("sig3(%v) = %q, want %q", v, got, want)
		}
	}
	if got := xmlEscape(`a<b & "c">`); got != "a&lt;b &amp; &quot;c&quot;&gt;" {
		t.Errorf("xmlEscape = %q", got)
	}
}

// wellFormed fails the test unless s is well-formed XML with an svg root.
func wellFormed(t *testing.T, name, s string) {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(s))
	root := ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("%s: root element %q", name, root)
	}
}

func TestChartsWellFormed(t *testing.T) {
	lc := lineChart{title: `a <title> & "quotes"`, xLabel: "x", yLabel: "y", yLog: true, xTicks: ninesTicks,
		band: &[2]float64{1, 2}, bandLabel: "band",
		series: []lineSeries{{label: "one", colour: colour(0), xs: []float64{0, 1, 5.5}, ys: []float64{0.1, 1, 40}},
			{label: "one", colour: colour(0), opacity: 0.5, dash: "6,3", xs: []float64{0, 2}, ys: []float64{0.2, 3}}}}
	svg := lc.svg()
	wellFormed(t, "line chart", svg)
	if strings.Count(svg, "<polyline") != 2 || strings.Count(svg, ">one</text>") != 1 {
		t.Errorf("line chart: want 2 lines and 1 legend entry:\n%s", svg)
	}
	bc := barChart{title: "bars", xLabel: "x", series: []string{"a", "b"}, xLog: true, ref: 1, refLabel: "parity",
		groups: []barGroup{{label: "g1", bars: []*bar{{value: 2, text: "2×"}, nil}}, {label: "g2", bars: []*bar{{value: 0.5, lo: 0.4, hi: 0.6, text: "0.5×"}, {value: 1}}}}}
	svg = bc.svg()
	wellFormed(t, "bar chart", svg)
	if n := strings.Count(svg, `<rect`); n != 1+3 { // the background and three bars
		t.Errorf("bar chart: %d rects", n)
	}
	// Empty charts still draw.
	wellFormed(t, "empty line chart", lineChart{}.svg())
	wellFormed(t, "empty bar chart", barChart{}.svg())
}
