package server

import (
	"math/bits"
	"sync"
	"time"

	"github.com/valyala/bytebufferpool"
)

// framePool holds request frame buffers in power-of-two capacity classes,
// so a frame of any size up to socket.request.max.bytes reuses a buffer of
// its class. (bytebufferpool.Pool keeps one calibrated size and drops
// larger buffers, which made every large produce request allocate and
// clear a fresh buffer: 8% of broker CPU with mixed request sizes.)
var framePool = frameClasses{large: largeFrames{retain: largeFrameRetain, idle: largeFrameIdle}}

// minFrameClass is the smallest class: 4 KiB.
const minFrameClass = 12

// minLargeClass is the smallest class kept by largeFrames: 1 MiB.
const minLargeClass = 20

// largeFrameRetain bounds the bytes of free large buffers kept (lowered
// to the smallest queued.max.request.bytes of the process's servers, so a
// broker whose request memory is capped does not keep more than that free
// either), and largeFrameIdle is how long one is kept unused: long enough
// to span a client's pauses between bursts, short enough that an idle
// broker gives the memory back.
const (
	largeFrameRetain = 256 << 20
	largeFrameIdle   = 10 * time.Second
)

type frameClasses struct {
	classes [64]sync.Pool // of *bytebufferpool.ByteBuffer with cap 1<<i
	large   largeFrames
}

// class is the class of a buffer that holds size bytes.
func frameClass(size int) int {
	if size <= 1<<minFrameClass {
		return minFrameClass
	}
	return bits.Len(uint(size - 1))
}

// get returns an empty buffer whose capacity is at least size.
func (p *frameClasses) get(size int) *bytebufferpool.ByteBuffer {
	c := frameClass(size)
	if c >= minLargeClass {
		if b := p.large.get(c); b != nil {
			return b
		}
	} else if b, ok := p.classes[c].Get().(*bytebufferpool.ByteBuffer); ok {
		b.B = b.B[:0]
		return b
	}
	return &bytebufferpool.ByteBuffer{B: make([]byte, 0, 1<<c)}
}

// Put returns a buffer to the class its capacity fills.
func (p *frameClasses) Put(b *bytebufferpool.ByteBuffer) {
	c := cap(b.B)
	if c < 1<<minFrameClass {
		return
	}
	if k := bits.Len(uint(c)) - 1; k >= minLargeClass {
		p.large.put(k, b, time.Now())
	} else {
		p.classes[k].Put(b)
	}
}

// largeFrames keeps free buffers of 1 MiB and more until they have been
// unused for idle, up to retain bytes in all. A sync.Pool loses them at
// every other GC, and a large producer's frames come and go in many sizes
// (kgo's requests to 1000 partitions are 1 to 40 MB): each one lost was
// a fresh allocation the kernel faulted in page by page (8% of the
// broker's CPU in produce-1000-partitions, half its peak RSS), or one the
// runtime cleared whole.
type largeFrames struct {
	retain int
	idle   time.Duration

	mu    sync.Mutex
	free  [64][]freeFrame // per class, oldest first
	bytes int             // capacity of all free buffers
	timer *time.Timer     // trims while any are free; nil when none
}

type freeFrame struct {
	b     *bytebufferpool.ByteBuffer
	since time.Time
}

// capRetain lowers retain to n bytes, if n is positive (a bound) and less.
func (l *largeFrames) capRetain(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > 0 && n < int64(l.retain) {
		l.retain = int(n)
	}
}

// get takes the most recently freed buffer of class c, or nil.
func (l *largeFrames) get(c int) *bytebufferpool.ByteBuffer {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.free[c])
	if n == 0 {
		return nil
	}
	f := l.free[c][n-1]
	l.free[c][n-1] = freeFrame{}
	l.free[c] = l.free[c][:n-1]
	l.bytes -= cap(f.b.B)
	f.b.B = f.b.B[:0]
	return f.b
}

// put keeps b, of class c, freed at now, unless that would hold more than
// retain bytes: then the GC has it.
func (l *largeFrames) put(c int, b *bytebufferpool.ByteBuffer, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bytes+cap(b.B) > l.retain {
		return
	}
	l.free[c] = append(l.free[c], freeFrame{b, now})
	l.bytes += cap(b.B)
	if l.timer == nil {
		l.setTimerLocked()
	}
}

// setTimerLocked has trim run once idle has passed.
func (l *largeFrames) setTimerLocked() {
	l.timer = time.AfterFunc(l.idle, func() { l.trim(time.Now()) })
}

// freeBytes is the capacity of the buffers kept now.
func (l *largeFrames) freeBytes() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(l.bytes)
}

// trim drops the buffers unused since idle before now, and sets the timer
// again while some are left.
func (l *largeFrames) trim(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.free {
		list := l.free[c]
		old := 0
		for old < len(list) && now.Sub(list[old].since) >= l.idle {
			l.bytes -= cap(list[old].b.B)
			old++
		}
		if old > 0 {
			// Copy the kept ones down, so the dropped buffers are not
			// referenced by the array behind the slice.
			k := copy(list, list[old:])
			clear(list[k:])
			l.free[c] = list[:k]
		}
	}
	l.timer = nil
	if l.bytes > 0 {
		l.setTimerLocked()
	}
}
