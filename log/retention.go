package log

import (
	"os"
)

// DeleteOldSegments applies the log's retention, as Kafka's periodic
// retention check does, and returns the number of segments deleted:
//
//   - always, the segments wholly below the log start offset (raised by
//     DeleteRecords);
//   - with cleanup.policy delete, the oldest segments while the total size
//     minus theirs stays at or above retention.bytes, and the oldest
//     segments whose largest timestamp is more than retention.ms old (the
//     file's modification time stands in for a segment without
//     timestamps). -1 disables either.
//
// Only whole segments go, oldest first, stopping at the first one that
// stays. The active segment goes only when every segment is to go and it is
// not empty: the log rolls first, so one empty segment remains at the log
// end. Deleted segments are renamed .deleted and removed after
// file.delete.delay.ms, once no read holds them. Producer snapshots below
// the new log start offset are removed, except the newest. A segment goes
// only when every record in it is below the high watermark (Kafka's
// bound): on a leader, retention never deletes what the ISR has not
// copied, and a consumer never sees records vanish that it could not yet
// read.
func (l *Log) DeleteOldSegments() (deleted int, err error) {
	return l.DeleteOldSegmentsBelow(l.HighWatermark())
}

// DeleteOldSegmentsBelow is DeleteOldSegments bounded by hw instead of
// the log's high watermark (math.MaxInt64: no bound, for tests of the log
// alone).
func (l *Log) DeleteOldSegmentsBelow(hw int64) (deleted int, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return 0, errClosed
	}
	cfg := l.cfg.Load()
	now := cfg.nowMs()
	segs := l.Segments()
	start := l.logStartOffset.Load()
	var total int64
	for _, s := range segs {
		total += s.Size()
	}
	n := 0
	for i, s := range segs {
		last := i == len(segs)-1
		upper := l.mu.next
		if !last {
			upper = segs[i+1].base
		}
		if upper > hw || (last && s.Size() == 0) {
			break
		}
		expired := !last && segs[i+1].base <= start
		if cfg.Delete {
			if cfg.RetentionBytes >= 0 && total-s.Size() >= cfg.RetentionBytes {
				expired = true
			}
			if cfg.RetentionMs >= 0 && now-s.largestTimestamp() > cfg.RetentionMs {
				expired = true
			}
		}
		if !expired {
			break
		}
		total -= s.Size()
		n++
	}
	if n == 0 {
		return 0, nil
	}
	if n == len(segs) {
		if err := l.rollLocked(); err != nil {
			return 0, err
		}
	}
	if err := l.deleteOldestLocked(n); err != nil {
		return 0, err
	}
	newStart := l.logStartOffset.Load()
	l.mu.producers.OnHighWatermark(newStart)
	if err := l.deleteSnapshotsBelowLocked(newStart); err != nil {
		l.logger.Warn("deleting producer snapshots failed", "dir", l.dir, "err", err)
	}
	return n, nil
}

// deleteSnapshotsBelowLocked removes the producer snapshots at offsets below
// offset except the newest, which recovery may still start from.
func (l *Log) deleteSnapshotsBelowLocked(offset int64) error {
	snaps, err := ListSnapshots(l.dir)
	if err != nil || len(snaps) == 0 {
		return err
	}
	return DeleteSnapshotsBelow(l.fs(), l.dir, min(offset, snaps[len(snaps)-1]))
}

// largestTimestamp is the segment's largest record timestamp, or, when its
// batches carry none, the file's modification time, as Kafka falls back to.
// Writer only.
func (s *Segment) largestTimestamp() int64 {
	if ts := s.maxTs.Load(); ts >= 0 {
		return ts
	}
	st, err := os.Stat(s.path)
	if err != nil {
		return -1
	}
	return st.ModTime().UnixMilli()
}
