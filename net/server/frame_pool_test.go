package server

import "testing"

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
