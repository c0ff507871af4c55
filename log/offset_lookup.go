package log

import (
	"errors"
	"fmt"
	"sync"

	"kzero/record"
)

// RecordPosition is a record found by timestamp: its offset, timestamp and
// the leader epoch of its batch (ListOffsets v4+ returns it).
type RecordPosition struct {
	Offset      int64
	Timestamp   int64
	LeaderEpoch int32
}

// OffsetForTimestamp finds the first record whose timestamp is at or after
// ts (ListOffsets with a timestamp). found is false when no record is that
// late. The time index narrows the search to a few batches; the batch
// found is decoded to pick the record.
func (l *Log) OffsetForTimestamp(ts int64) (pos RecordPosition, found bool, err error) {
	for _, s := range l.Segments() {
		if s.MaxTimestamp() < ts {
			continue
		}
		if err := s.acquire(); errors.Is(err, errSegmentGone) {
			continue
		} else if err != nil {
			return RecordPosition{}, false, err
		}
		pos, found, err = s.findTimestamp(ts, l.logStartOffset.Load())
		s.Release()
		if err != nil || found {
			return pos, found, err
		}
	}
	return RecordPosition{}, false, nil
}

// MaxTimestamp finds the record with the largest timestamp (ListOffsets
// MAX_TIMESTAMP, KIP-734); the first of several with that timestamp.
func (l *Log) MaxTimestamp() (RecordPosition, bool, error) {
	var best *Segment
	for _, s := range l.Segments() {
		if best == nil || s.MaxTimestamp() > best.MaxTimestamp() {
			best = s
		}
	}
	if best == nil || best.MaxTimestamp() < 0 {
		return RecordPosition{}, false, nil
	}
	if err := best.acquire(); errors.Is(err, errSegmentGone) {
		return RecordPosition{}, false, nil
	} else if err != nil {
		return RecordPosition{}, false, err
	}
	defer best.Release()
	return best.findTimestamp(best.MaxTimestamp(), l.logStartOffset.Load())
}

func (s *Segment) findTimestamp(ts, logStart int64) (RecordPosition, bool, error) {
	from := max(s.tindex.Lookup(ts).Offset, logStart)
	size := s.size.Load()
	pos := s.startPosition(from)
	var buf []byte
	for pos < size {
		b, err := s.readBatch(&buf, pos, size, false)
		if err != nil {
			return RecordPosition{}, false, fmt.Errorf("segment %d at %d: %w", s.base, pos, err)
		}
		n := record.LogOverhead + int64(b.Length())
		if b.MaxTimestamp() >= ts && b.LastOffset() >= logStart && !b.IsControl() {
			if b, err = s.readBatch(&buf, pos, size, true); err != nil {
				return RecordPosition{}, false, err
			}
			if p, ok, err := recordAtTimestamp(b, ts, logStart); err != nil || ok {
				return p, ok, err
			}
		}
		pos += n
	}
	return RecordPosition{}, false, nil
}

// iterPool keeps the Iters of offset lookups by timestamp, which run on
// request goroutines.
var iterPool = sync.Pool{New: func() any { return new(record.Iter) }}

func recordAtTimestamp(b record.Batch, ts, logStart int64) (RecordPosition, bool, error) {
	r := iterPool.Get().(*record.Iter)
	defer func() {
		r.Release()
		iterPool.Put(r)
	}()
	if err := r.Reset(b, record.DecompressLimit); err != nil {
		return RecordPosition{}, false, err
	}
	for r.Next() {
		if t := r.Timestamp(); t >= ts && r.Offset() >= logStart {
			return RecordPosition{Offset: r.Offset(), Timestamp: t, LeaderEpoch: b.PartitionLeaderEpoch()}, true, nil
		}
	}
	return RecordPosition{}, false, r.Err()
}
