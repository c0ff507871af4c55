package log

import (
	"fmt"

	"kzero/index"
)

// Expensive checks of the log's structure, run only in builds with the
// invariants tag (after pebble's internal/invariants): a failure is a bug
// in this package, never bad input, so it panics. `make test-invariants`
// runs this package's tests with them.

// checkSegmentList panics unless the segments' base offsets increase and
// no segment's batches reach past the next one's base: what every read's
// binary search over bases relies on. Called for each new segment list.
func checkSegmentList(segs []*Segment) {
	for i := 1; i < len(segs); i++ {
		prev, s := segs[i-1], segs[i]
		if s.base <= prev.base {
			panic(fmt.Sprintf("invariant: segment %d follows segment %d", s.base, prev.base))
		}
		if next := prev.NextOffset(); next > s.base {
			panic(fmt.Sprintf("invariant: segment %d ends at offset %d, past the next segment's base %d", prev.base, next, s.base))
		}
	}
}

// checkIndex panics unless the segment's offset index is sorted by offset
// and position, its offsets at or above the base and below the segment's
// next offset, its positions inside the file. Writer lock held.
func (s *Segment) checkIndex() {
	x := s.offsets()
	size, next := s.size.Load(), s.next.Load()
	var prev index.OffsetPosition
	for i := range x.Len() {
		e := x.Entry(i)
		if e.Offset < s.base || e.Offset >= next || e.Position < 0 || e.Position >= size {
			panic(fmt.Sprintf("invariant: segment %d index entry %d (%d at %d) outside the segment (next %d, size %d)", s.base, i, e.Offset, e.Position, next, size))
		}
		if i > 0 && (e.Offset <= prev.Offset || e.Position <= prev.Position) {
			panic(fmt.Sprintf("invariant: segment %d index entry %d (%d at %d) after (%d at %d)", s.base, i, e.Offset, e.Position, prev.Offset, prev.Position))
		}
		prev = e
	}
}

// checkEndLocked panics unless the writer's end, the published log end
// offset and the active segment's next offset agree, and the log start is
// at or below them. Writer lock held, after an append group.
func (l *Log) checkEndLocked() {
	end, next, active := l.logEndOffset.Load(), l.mu.next, l.active().NextOffset()
	if end != next || active != end || l.logStartOffset.Load() > end {
		panic(fmt.Sprintf("invariant: log end offset %d, writer's %d, active segment's %d, log start %d", end, next, active, l.logStartOffset.Load()))
	}
}
