package tools

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// progress is a one-line bar for a long operation (consuming many records,
// dumping large segments, resetting many partitions), redrawn in place on
// a terminal:
//
//	consume orders [##########----------]  50% 500/1000 records
//
// It redraws only when the figure it shows changes by a tenth of a percent,
// so a million small steps cost a million compares and about a thousand
// writes; it reads no clock, so what it draws depends on the steps alone.
// A nil *progress draws nothing: commands step it without checking. One
// goroutine.
type progress struct {
	w     io.Writer
	cells int // width of the bar itself
	label string
	unit  string // "records", "partitions", or "bytes" (shown as KiB, MiB...)
	total int64
	done  int64
	shown int64 // permille last drawn; -1 before the first draw
	buf   []byte
}

// defaultWidth is the width assumed when the terminal does not say.
const defaultWidth = 80

// newProgress returns a bar drawn on w, a terminal of width columns (0: 80).
func newProgress(w io.Writer, width int, label string, total int64, unit string) *progress {
	if width <= 0 {
		width = defaultWidth
	}
	p := &progress{w: w, label: label, unit: unit, total: max(total, 1), shown: -1}
	// The bar gets what the rest of the full line leaves it, one column
	// spare so the line never wraps, and 10 to 40 cells.
	rest := len(label) + len(" [] 100% ") + len(p.counts(p.total))
	p.cells = min(max(width-rest-1, 10), 40)
	return p
}

// progress returns a bar for an operation of total steps on env.Progress,
// or nil when none is to be drawn: no Progress writer, Progress not a
// terminal, or (for a command whose output is a stream, streams) Out a
// terminal too, where the bar would interleave with the output.
func (e *Env) progress(label string, total int64, unit string, streams bool) *progress {
	if e.Progress == nil || total <= 0 {
		return nil
	}
	if e.forceProgress {
		return newProgress(e.Progress, defaultWidth, label, total, unit)
	}
	width, ok := terminalWidth(e.Progress)
	if !ok {
		return nil
	}
	if _, outTerm := terminalWidth(e.Out); streams && outTerm {
		return nil
	}
	return newProgress(e.Progress, width, label, total, unit)
}

// add moves the bar n steps on.
func (p *progress) add(n int64) {
	if p != nil {
		p.set(p.done + n)
	}
}

// set moves the bar to done steps.
func (p *progress) set(done int64) {
	if p == nil {
		return
	}
	p.done = min(max(done, 0), p.total)
	if pm := p.done * 1000 / p.total; pm != p.shown {
		p.shown = pm
		p.draw()
	}
}

// finish ends the bar's line, leaving its last state on screen.
func (p *progress) finish() {
	if p == nil || p.shown < 0 {
		return
	}
	io.WriteString(p.w, "\n")
	p.shown = -1
}

func (p *progress) draw() {
	p.buf = append(p.render(append(p.buf[:0], '\r')), "\x1b[K"...)
	p.w.Write(p.buf) // a bar that cannot be drawn is no reason to fail
}

// render appends the bar's line to b: label, bar, percent and counts.
func (p *progress) render(b []byte) []byte {
	filled := int(p.done * int64(p.cells) / p.total)
	b = append(b, p.label...)
	b = append(b, " ["...)
	b = append(b, strings.Repeat("#", filled)...)
	b = append(b, strings.Repeat("-", p.cells-filled)...)
	b = append(b, "] "...)
	b = append(b, fmt.Sprintf("%3d%%", p.done*100/p.total)...)
	b = append(b, ' ')
	return append(b, p.counts(p.done)...)
}

// counts renders "done/total unit".
func (p *progress) counts(done int64) string {
	s := p.count(done) + "/" + p.count(p.total)
	if p.unit != "bytes" {
		s += " " + p.unit
	}
	return s
}

// count renders a number of steps in the bar's unit.
func (p *progress) count(n int64) string {
	if p.unit == "bytes" {
		return byteSize(n)
	}
	return strconv.FormatInt(n, 10)
}

// byteSize renders n bytes as B, KiB, MiB, GiB or TiB with one decimal.
func byteSize(n int64) string {
	if n < 1024 {
		return strconv.FormatInt(n, 10) + " B"
	}
	v, unit := float64(n)/1024, 0
	for v >= 1024 && unit < 3 {
		v /= 1024
		unit++
	}
	return strconv.FormatFloat(v, 'f', 1, 64) + " " + [...]string{"KiB", "MiB", "GiB", "TiB"}[unit]
}
