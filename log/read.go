package log

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/record"
)

// FileRange is a byte range of one segment file, to be sent with
// sendfile. It holds a reference on the segment: Release it once sent.
type FileRange struct {
	Segment  *Segment
	Pos, Len int64
}

// Empty reports whether the range holds no bytes (and no reference).
func (r FileRange) Empty() bool { return r.Segment == nil }

// Release drops the range's reference on its segment.
func (r FileRange) Release() {
	if r.Segment != nil {
		r.Segment.Release()
	}
}

// Read returns the batches from the one holding offset onwards, below
// maxOffset (the caller passes the high watermark or the last stable
// offset), at most maxBytes of them except that with minOneBatch a first
// batch larger than maxBytes is returned whole (KIP-74). The range may end
// in the middle of a batch; clients drop the partial batch. An offset at
// or past maxOffset, or at the log end, gives an empty range; one below the
// log start offset or past the log end offset gives OFFSET_OUT_OF_RANGE.
//
// Read takes no lock and allocates nothing: Kafka's three steps, a binary
// search over segment base offsets, a sparse index lookup and a short scan
// of batch headers; the last two are skipped for an offset at one of the
// segment's last batches (recent.go), as a consumer at the log end asks.
func (l *Log) Read(offset int64, maxBytes int, maxOffset int64, minOneBatch bool) (FileRange, error) {
	if offset < l.logStartOffset.Load() || offset > l.logEndOffset.Load() {
		return FileRange{}, fmt.Errorf("offset %d outside [%d, %d]: %w",
			offset, l.logStartOffset.Load(), l.logEndOffset.Load(), kerr.OffsetOutOfRange)
	}
	if offset >= maxOffset {
		return FileRange{}, nil
	}
	seg, _, err := l.segmentFor(offset)
	if err != nil {
		return FileRange{}, err
	}
	if seg == nil {
		return FileRange{}, fmt.Errorf("offset %d below the first segment: %w", offset, kerr.OffsetOutOfRange)
	}
	for {
		size := seg.size.Load()
		start, batchLen, found, damaged, err := seg.translate(offset, 0, size)
		if damaged {
			l.indexDamaged(seg, offset)
		}
		if err != nil {
			seg.Release()
			return FileRange{}, err
		}
		if !found {
			// The offset lies past this segment's batches (a gap left by
			// compaction, or the end): go on with the next segment. A
			// compacted segment's next offset may lie below the next
			// segment's base, so step by the list, not by offset.
			after, err := l.segmentAfter(seg.base)
			seg.Release()
			if err != nil {
				return FileRange{}, err
			}
			if after == nil {
				return FileRange{}, nil
			}
			if after.base >= maxOffset {
				after.Release()
				return FileRange{}, nil
			}
			seg = after
			continue
		}
		end := size
		if maxOffset < seg.NextOffset() {
			if p, _, ok, _, err := seg.translate(maxOffset, start, size); err != nil {
				seg.Release()
				return FileRange{}, err
			} else if ok {
				end = p
			}
		}
		limit := int64(maxBytes)
		if minOneBatch {
			limit = max(limit, batchLen)
		}
		n := min(end-start, limit)
		if n <= 0 {
			seg.Release()
			return FileRange{}, nil
		}
		return FileRange{Segment: seg, Pos: start, Len: n}, nil
	}
}

// translate finds the first batch at or after file position from whose
// last offset is at least offset, looking below size: its position and
// length. found is false when no such batch is in the segment.
//
// The index entry it starts from is checked, at no extra read: the batch at
// the entry's position must hold the entry's offset. A damaged entry (a
// flipped bit that moved its position inside a batch or to another batch)
// fails that check; translate then starts from the entry before it, down
// to the segment start if need be, so reads stay right. damaged reports the
// first such finding for the segment, for the log to log it and rebuild
// the index.
func (s *Segment) translate(offset, from, size int64) (pos, length int64, found, damaged bool, err error) {
	if pos, length, ok := s.lastBatches.find(offset-s.base, from, size); ok {
		return pos, length, true, false, nil
	}
	x := s.offsets()
	e := x.Lookup(offset)
	pos = max(e.Position, from)
	checked := e.Position <= from // from and position 0 are batch boundaries
	var h [record.BatchHeaderSize]byte
	for {
		var b record.Batch
		if pos < size {
			b, err = s.readHeader(&h, pos)
		}
		if !checked {
			if pos >= size || err != nil || b.BaseOffset() > e.Offset || b.LastOffset() < e.Offset {
				damaged = s.indexOK.CompareAndSwap(true, false) || damaged
				e = x.Lookup(e.Offset - 1)
				pos = max(e.Position, from)
				checked, err = e.Position <= from, nil
				continue
			}
			checked = true
		}
		if pos >= size {
			return 0, 0, false, damaged, nil
		}
		if err != nil {
			return 0, 0, false, damaged, fmt.Errorf("segment %d at %d: %w", s.base, pos, err)
		}
		length = record.LogOverhead + int64(b.Length())
		if b.LastOffset() >= offset {
			return pos, length, true, damaged, nil
		}
		pos += length
	}
}

// AbortedTxns appends to dst the aborted transactions that overlap the
// offsets [from, upperBound), for a read_committed fetch.
func (l *Log) AbortedTxns(dst []AbortedTxn, from, upperBound int64) ([]AbortedTxn, error) {
	seg, i, _ := l.segmentFor(from)
	if seg == nil {
		i = 0
	} else {
		seg.Release()
	}
	segs := l.Segments()
	for ; i < len(segs); i++ {
		s := segs[i]
		if s.base >= upperBound {
			break
		}
		t := s.txn.Load()
		if t == nil || s.acquire() != nil {
			continue
		}
		var done bool
		dst, done = t.Collect(dst, from, upperBound)
		s.Release()
		if done {
			break
		}
	}
	return dst, nil
}

// segmentAfter returns the first segment with a base offset above base,
// acquired for reading, or nil when there is none (or the log is closed).
func (l *Log) segmentAfter(base int64) (*Segment, error) {
	for {
		p := l.segments.Load()
		segs := *p
		i, found := slices.BinarySearchFunc(segs, base, func(s *Segment, o int64) int { return cmp.Compare(s.base, o) })
		if found {
			i++
		}
		if i == len(segs) {
			return nil, nil
		}
		switch err := segs[i].acquire(); {
		case err == nil:
			return segs[i], nil
		case !errors.Is(err, errSegmentGone):
			return nil, err
		}
		if l.segments.Load() == p {
			return nil, nil // released without a new list: the log is closed
		}
	}
}

// isOutOfRange reports whether err is OFFSET_OUT_OF_RANGE.
func isOutOfRange(err error) bool { return errors.Is(err, kerr.OffsetOutOfRange) }

// Available is what a read from offset below maxOffset could return, as
// Kafka's DelayedFetch measures a waiting fetch: the bytes from the batch
// holding offset up to maxOffset when maxOffset lies in that batch's
// segment; math.MaxInt64 when it lies in a later segment (Kafka answers
// such a fetch at once: it is behind the segment the bound is on); 0 when
// nothing lies below maxOffset or the read fails (the read that follows
// reports the failure).
func (l *Log) Available(offset, maxOffset int64) int64 {
	r, err := l.Read(offset, math.MaxInt32, maxOffset, true)
	if err != nil || r.Empty() {
		return 0
	}
	defer r.Release()
	if maxOffset > r.Segment.NextOffset() {
		return math.MaxInt64
	}
	return r.Len
}
