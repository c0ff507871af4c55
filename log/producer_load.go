package log

import (
	"fmt"

	"kzero/record"
)

// loadProducerState rebuilds the producer state: the newest usable
// snapshot at or below the log end (or below rebuildTxnFrom when the log
// was recovered from there), then a replay of the batches after it.
// Aborted transactions completed at or after rebuildTxnFrom are written to
// their segment's txn index, which recovery emptied.
func (l *Log) loadProducerState(rebuildTxnFrom int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	limit := l.mu.next
	if rebuildTxnFrom >= 0 {
		limit = rebuildTxnFrom
	}
	return l.replayProducersLocked(limit, rebuildTxnFrom)
}

// reloadProducersLocked rebuilds producer state after a truncation.
func (l *Log) reloadProducersLocked() error {
	return l.replayProducersLocked(l.mu.next, -1)
}

func (l *Log) replayProducersLocked(limit, rebuildTxnFrom int64) error {
	if err := DeleteSnapshotsAbove(l.fs(), l.dir, limit); err != nil {
		return err
	}
	var ps *ProducerStates
	from := l.Segments()[0].base
	snaps, err := ListSnapshots(l.dir)
	if err != nil {
		return err
	}
	for i := len(snaps) - 1; i >= 0; i-- {
		off := snaps[i]
		if off < from {
			break
		}
		loaded, err := LoadSnapshot(l.fs(), SnapshotPath(l.dir, off))
		if err != nil {
			l.logger.Warn("dropping unreadable producer snapshot", "dir", l.dir, "offset", off, "err", err)
			if err := DeleteSnapshotsAbove(l.fs(), l.dir, off-1); err != nil {
				return err
			}
			continue
		}
		ps, from = loaded, off
		break
	}
	if ps == nil {
		ps = NewProducerStates()
	}
	l.mu.producers = ps
	l.mu.lastSnapAt = -1
	if err := l.replayLocked(from, rebuildTxnFrom); err != nil {
		return fmt.Errorf("replay producer state: %w", err)
	}
	l.publishUnstableLocked()
	return nil
}

// replayLocked feeds the batches at and after offset from to the producer
// state, reading only headers except for transaction markers.
func (l *Log) replayLocked(from, rebuildTxnFrom int64) error {
	var buf []byte
	for _, s := range l.Segments() {
		if s.NextOffset() <= from {
			continue
		}
		if err := s.acquire(); err != nil {
			return fmt.Errorf("replay segment %d: %w", s.base, err)
		}
		err := l.replaySegmentLocked(s, &buf, from, rebuildTxnFrom)
		s.Release()
		if err != nil {
			return err
		}
	}
	return nil
}

// replaySegmentLocked feeds the batches of s at and after from to the
// producer state; s is acquired.
func (l *Log) replaySegmentLocked(s *Segment, buf *[]byte, from, rebuildTxnFrom int64) error {
	size := s.size.Load()
	pos := s.startPosition(from)
	for pos < size {
		b, err := s.readBatch(buf, pos, size, false)
		if err != nil {
			return err
		}
		n := record.LogOverhead + int64(b.Length())
		if b.LastOffset() >= from && b.ProducerID() != record.NoProducerID {
			if b.IsControl() {
				if b, err = s.readBatch(buf, pos, size, true); err != nil {
					return err
				}
			}
			if done, ok := l.mu.producers.Update(b); ok && done.Aborted &&
				rebuildTxnFrom >= 0 && b.BaseOffset() >= rebuildTxnFrom {
				if err := l.recordAbortLocked(s, done); err != nil {
					return err
				}
			}
		}
		pos += n
	}
	return nil
}
