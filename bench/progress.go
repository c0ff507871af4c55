package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// progressEvery is how often the progress bar is redrawn.
const progressEvery = 200 * time.Millisecond

// barWidth is the progress bar's width in cells.
const barWidth = 24

// isTerminal says whether w is a terminal: the progress bar redraws its
// line with carriage returns, which in a file or a pipe would be noise.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// progressBar draws one line for the run in progress on a terminal and
// erases it when the run ends, so the line Run prints for the finished run
// takes its place.
type progressBar struct {
	w    io.Writer
	quit chan struct{}
	done chan struct{}
}

// startProgress draws the progress of the run of w measured by m on out,
// every progressEvery until stop; label names the run.
func startProgress(out io.Writer, label string, w Workload, m *meter) *progressBar {
	p := &progressBar{w: out, quit: make(chan struct{}), done: make(chan struct{})}
	began := time.Now()
	draw := func(now time.Time) {
		fmt.Fprint(out, "\r\033[K"+barLine(label, w, snapshot(m, now), now.Sub(began)))
	}
	draw(began)
	go func() {
		defer close(p.done)
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-p.quit:
				fmt.Fprint(out, "\r\033[K")
				return
			case now := <-t.C:
				draw(now)
			}
		}
	}()
	return p
}

// stop erases the bar; it is called once.
func (p *progressBar) stop() {
	close(p.quit)
	<-p.done
}

// progress is a meter's reading at one moment.
type progress struct {
	produced, consumed           int64         // records
	producedBytes, consumedBytes int64         // value bytes
	measuring                    time.Duration // since the measured phase began; 0 before it
}

func snapshot(m *meter, now time.Time) progress {
	p := progress{produced: m.produced.Load(), consumed: m.consumed.Load(),
		producedBytes: m.producedBytes.Load(), consumedBytes: m.consumedBytes.Load()}
	if from := m.measuredFrom.Load(); from != 0 {
		p.measuring = max(0, now.Sub(time.Unix(0, from)))
	}
	return p
}

// fraction is how far along a run of w is, from 0 to 1: by the clock for
// a run with a duration, by the records otherwise (a consume run writes
// its records, then reads them: twice as many steps).
func fraction(w Workload, p progress) float64 {
	var f float64
	switch {
	case w.Duration > 0 && w.Kind != KindConsume:
		f = p.measuring.Seconds() / w.Duration.D().Seconds()
	case w.Kind == KindConsume:
		f = float64(p.produced+p.consumed) / float64(2*w.total())
	case w.Records > 0:
		f = float64(p.produced) / float64(w.Records)
	}
	return min(max(f, 0), 1)
}

// barLine is the progress line: the run, a bar, the time it has taken, and
// the bytes moved so far.
func barLine(label string, w Workload, p progress, elapsed time.Duration) string {
	f := fraction(w, p)
	filled := int(f * barWidth)
	var b strings.Builder
	fmt.Fprintf(&b, "%s [%s%s] %3.0f%% %5.1fs", label, strings.Repeat("#", filled), strings.Repeat(".", barWidth-filled), f*100, elapsed.Seconds())
	if p.producedBytes > 0 {
		fmt.Fprintf(&b, "  produced %.1f MiB", float64(p.producedBytes)/(1<<20))
	}
	if p.consumedBytes > 0 {
		fmt.Fprintf(&b, "  consumed %.1f MiB", float64(p.consumedBytes)/(1<<20))
	}
	return b.String()
}
