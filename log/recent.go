package log

import (
	"math"
	"sync/atomic"
)

// recentSlots is how many of a segment's last batches recentBatches
// locates: a consumer or follower fetching near the log end is rarely
// further behind.
const recentSlots = 16

// recentBatches locates the last batches appended to a segment: a read at
// the base offset of one (a consumer or follower near the log end, or a
// HW a few batches behind it) then needs no pread of batch headers, which
// a sparse index lookup and its walk take (two per fetch at the log end).
//
// Each slot holds a batch's offset relative to the segment base in its
// high 32 bits and its file position plus one in the low ones; 0 is
// empty. The appender (the only writer) stores a batch's slot before the
// write that publishes it (Segment.size), so a reader that loaded the
// size first takes a batch only below that size, once written. Slots are
// taken in turn, so when a batch is still in the ring every later batch
// is too: the next one's position is its end. A sequence count (odd while
// a slot changes) makes a reader that raced a change fall back to the
// headers. Positions at or past a cut (truncation, an undone write) are
// dropped before the cut is published, since new batches will reuse them.
type recentBatches struct {
	seq   atomic.Uint64
	slots [recentSlots]atomic.Uint64
	next  int // writer only: the slot the next batch takes
}

// add records the batch at pos whose base offset is rel above the
// segment base. Writer only, before the write that publishes the batch.
func (r *recentBatches) add(rel, pos int64) {
	var v uint64
	if rel >= 0 && rel <= math.MaxUint32 && pos >= 0 && pos < math.MaxUint32 {
		v = uint64(rel)<<32 | uint64(pos+1)
	}
	r.seq.Add(1)
	r.slots[r.next].Store(v)
	r.seq.Add(1)
	r.next = (r.next + 1) % recentSlots
}

// dropFrom forgets the batches at or past pos. Writer only, before the
// segment's size goes below pos.
func (r *recentBatches) dropFrom(pos int64) {
	r.seq.Add(1)
	for i := range r.slots {
		if v := r.slots[i].Load(); v != 0 && int64(v&math.MaxUint32)-1 >= pos {
			r.slots[i].Store(0)
		}
	}
	r.seq.Add(1)
}

// find returns the position and length of the recent batch whose base
// offset is rel above the segment base, if it lies at or after from and
// below size (the segment size the caller loaded first).
func (r *recentBatches) find(rel, from, size int64) (pos, length int64, ok bool) {
	seq := r.seq.Load()
	if seq&1 != 0 || rel < 0 || rel > math.MaxUint32 {
		return 0, 0, false
	}
	var positions [recentSlots]int64
	pos = -1
	for i := range r.slots {
		v := r.slots[i].Load()
		positions[i] = int64(v&math.MaxUint32) - 1 // -1 when empty
		if v != 0 && int64(v>>32) == rel {
			pos = positions[i]
		}
	}
	if r.seq.Load() != seq || pos < from || pos >= size {
		return 0, 0, false
	}
	// The batch ends where the next one starts, or at size when no later
	// batch is below it.
	end := size
	for _, p := range positions {
		if p > pos && p < end {
			end = p
		}
	}
	return pos, end - pos, true
}
