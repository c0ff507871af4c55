package server

import (
	"runtime"
	"testing"
	"time"

	"github.com/valyala/bytebufferpool"
)

func TestFramePoolClasses(t *testing.T) {
	for _, c := range []struct{ size, class int }{
		{0, 12}, {1, 12}, {4096, 12}, {4097, 13}, {8192, 13}, {1 << 20, 20}, {1<<20 + 1, 21}, {100 << 20, 27},
	} {
		if got := frameClass(c.size); got != c.class {
			t.Errorf("frameClass(%d) = %d, want %d", c.size, got, c.class)
		}
		b := framePool.get(c.size)
		if cap(b.B) < c.size || len(b.B) != 0 {
			t.Errorf("get(%d): len %d cap %d", c.size, len(b.B), cap(b.B))
		}
		framePool.Put(b)
	}
}

// Frames of varying sizes reuse pooled buffers: no allocation once each
// class has a buffer.
func TestFramePoolReuses(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items at random under the race detector")
	}
	sizes := []int{300 << 10, 700 << 10, 1 << 20, 90 << 10, 5000}
	for _, s := range sizes {
		framePool.Put(framePool.get(s))
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, s := range sizes {
			framePool.Put(framePool.get(s))
		}
	})
	if allocs > 0.5 {
		t.Fatalf("%.1f allocations per round of gets and puts", allocs)
	}
}

// A large frame's buffer outlives GCs while it is free (a sync.Pool
// empties in two), so a producer's next large request does not fault in
// fresh memory.
func TestLargeFramesSurviveGC(t *testing.T) {
	pool := frameClasses{large: largeFrames{retain: largeFrameRetain, idle: time.Hour}}
	b := pool.get(3 << 20)
	b.B = append(b.B, "frame"...)
	pool.Put(b)
	runtime.GC()
	runtime.GC()
	runtime.GC()
	got := pool.get(3 << 20)
	if got != b {
		t.Fatal("the free 4 MiB buffer was not kept across GCs")
	}
	if len(got.B) != 0 || cap(got.B) != 4<<20 {
		t.Fatalf("reused buffer: len %d cap %d, want 0 and 4 MiB", len(got.B), cap(got.B))
	}
}

// Free large buffers are kept up to retain bytes, newest first, and
// dropped once unused for idle.
func TestLargeFramesRetainAndIdle(t *testing.T) {
	l := largeFrames{retain: 5 << 20, idle: time.Hour} // the timer never fires here
	buf := func(c int) *bytebufferpool.ByteBuffer {
		return &bytebufferpool.ByteBuffer{B: make([]byte, 0, 1<<c)}
	}
	t0 := time.Now()
	a, b, c := buf(21), buf(21), buf(21)
	l.put(21, a, t0)
	l.put(21, b, t0.Add(time.Minute))
	l.put(21, c, t0.Add(2*time.Minute)) // 6 MiB > retain: not kept
	if l.bytes != 4<<20 {
		t.Fatalf("holding %d bytes, want 4 MiB", l.bytes)
	}
	if got := l.get(21); got != b {
		t.Fatal("get did not return the most recently freed buffer")
	}
	l.put(21, b, t0.Add(30*time.Minute))
	l.trim(t0.Add(time.Hour)) // a has been free for an hour, b for half
	if l.bytes != 2<<20 {
		t.Fatalf("after trim: holding %d bytes, want 2 MiB", l.bytes)
	}
	if got := l.get(21); got != b {
		t.Fatal("trim dropped the buffer freed half an hour ago, or kept the old one")
	}
	if got := l.get(21); got != nil {
		t.Fatal("trim kept the buffer free for an hour")
	}
	if got := l.get(22); got != nil {
		t.Fatal("get of an empty class returned a buffer")
	}
	l.trim(t0.Add(2 * time.Hour))
	if l.timer != nil || l.bytes != 0 {
		t.Fatalf("with nothing free: timer %v, bytes %d", l.timer, l.bytes)
	}
}

// A server's queued.max.request.bytes lowers what is kept free: a broker
// whose request memory is capped keeps no more than that in free buffers.
func TestLargeFramesRetainCappedByRequestMemory(t *testing.T) {
	l := largeFrames{retain: largeFrameRetain, idle: time.Hour}
	l.capRetain(-1) // unbounded request memory
	l.capRetain(0)
	if l.retain != largeFrameRetain {
		t.Fatalf("retain %d after unbounded caps, want %d", l.retain, largeFrameRetain)
	}
	l.capRetain(3 << 20)
	l.capRetain(64 << 20) // a larger cap of another server does not raise it
	if l.retain != 3<<20 {
		t.Fatalf("retain %d, want 3 MiB", l.retain)
	}
	for range 2 {
		l.put(21, &bytebufferpool.ByteBuffer{B: make([]byte, 0, 2<<20)}, time.Now())
	}
	if l.bytes != 2<<20 {
		t.Fatalf("holding %d bytes under a 3 MiB cap, want 2 MiB", l.bytes)
	}
}
