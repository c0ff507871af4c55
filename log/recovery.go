package log

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"

	"kzero/record"
)

// cleanDir removes what an interrupted deletion or cleaning left behind and
// returns the base offsets of the segments, in order.
func (l *Log) cleanDir() ([]int64, error) {
	ents, err := os.ReadDir(l.dir)
	if err != nil {
		return nil, fmt.Errorf("read log dir: %w", err)
	}
	var bases []int64
	have := map[int64]bool{}
	for _, e := range ents {
		name := e.Name()
		if strings.HasSuffix(name, DeletedSuffix) || strings.HasSuffix(name, CleanedSuffix) ||
			strings.HasSuffix(name, ".tmp") {
			if err := l.fs().Remove(l.path(name)); err != nil {
				return nil, fmt.Errorf("remove leftover %s: %w", name, err)
			}
			continue
		}
		if base, sfx, ok := ParseFileName(name); ok && sfx == LogSuffix {
			bases = append(bases, base)
			have[base] = true
		}
	}
	// Index files whose segment is gone are orphans.
	for _, e := range ents {
		base, sfx, ok := ParseFileName(e.Name())
		if ok && !have[base] && (sfx == IndexSuffix || sfx == TimeIndexSuffix || sfx == TxnIndexSuffix) {
			l.fs().Remove(l.path(e.Name()))
		}
	}
	slices.Sort(bases)
	return bases, nil
}

func (l *Log) path(name string) string { return l.dir + string(os.PathSeparator) + name }

// recoverSegments checks segs[from:] batch by batch. At the first damage it
// truncates that segment and deletes every later one.
func (l *Log) recoverSegments(segs []*Segment, from int) ([]*Segment, error) {
	cfg := l.cfg.Load()
	prevNext := int64(-1)
	if from > 0 {
		prevNext = segs[from-1].NextOffset()
	}
	var dropped int64 // bytes of torn or damaged tail removed
	for i := from; i < len(segs); i++ {
		s := segs[i]
		truncated, err := s.recover(cfg, prevNext)
		if err != nil {
			return segs, err
		}
		dropped += truncated
		if truncated > 0 {
			l.logger.Warn("recovery truncated a damaged log", "dir", l.dir, "segment", s.base,
				"bytes", truncated, "next_offset", s.NextOffset())
		}
		if truncated > 0 && i < len(segs)-1 {
			for _, later := range segs[i+1:] {
				l.logger.Warn("recovery deleted a segment after damage", "dir", l.dir, "segment", later.base, "bytes", later.Size())
				dropped += later.Size()
				later.deleted.Store(true)
				later.Release()
			}
			segs = segs[:i+1]
		}
		if i < len(segs)-1 {
			if err := s.seal(); err != nil {
				return segs, err
			}
		}
		prevNext = s.NextOffset()
	}
	// A damaged segment may now be empty, with segments before it: keep it
	// as the active segment; its base offset is the log end.
	level := slog.LevelDebug
	if dropped > 0 {
		level = slog.LevelInfo
	}
	l.logger.Log(context.Background(), level, "recovered log", "dir", l.dir, "from_offset", segs[from].base,
		"end_offset", segs[len(segs)-1].NextOffset(), "dropped_bytes", dropped)
	return segs, nil
}

// recover rebuilds the segment's indexes from its batches, truncating the
// file at the first batch that is torn, fails its CRC, or does not follow
// prevNext (the previous segment's next offset, -1 when first). It returns
// the bytes truncated.
func (s *Segment) recover(cfg *Config, prevNext int64) (int64, error) {
	return s.rebuild(cfg, &prevNext)
}

// rebuild scans the segment from the start, rebuilding the offset and time
// indexes. With prevNext it validates each batch and truncates at the first
// bad one; without, it trusts the bytes (a missing or corrupt index only).
// Writer only, on a pinned segment.
func (s *Segment) rebuild(cfg *Config, prevNext *int64) (int64, error) {
	s.offsets().Reset()
	s.tindex.Reset()
	if prevNext != nil {
		if t := s.txn.Load(); t != nil {
			t.Reset()
		}
	}
	s.maxTs.Store(-1)
	s.maxTsOffset.Store(s.base)
	s.firstBatchTs.Store(-1)
	s.bytesSinceIndex = 0
	size := s.size.Load()
	expect := s.base
	if prevNext != nil && *prevNext > expect {
		expect = *prevNext
	}
	var buf []byte
	pos := int64(0)
	next := s.base
	for pos < size {
		b, err := s.readBatch(&buf, pos, size, prevNext != nil)
		if err == nil && prevNext != nil && b.BaseOffset() < expect {
			err = fmt.Errorf("batch offset %d below expected %d", b.BaseOffset(), expect)
		}
		if err != nil {
			if prevNext == nil {
				return 0, fmt.Errorf("segment %d at %d: %w", s.base, pos, err)
			}
			if terr := s.f.Truncate(pos); terr != nil {
				return 0, fmt.Errorf("truncate damaged segment: %w", terr)
			}
			s.size.Store(pos)
			s.next.Store(next)
			return size - pos, nil
		}
		n := record.LogOverhead + int(b.Length())
		if err := s.indexBatch(b, pos, n, cfg.IndexIntervalBytes); err != nil {
			return 0, err
		}
		pos += int64(n)
		next = b.NextOffset()
		expect = next
	}
	s.next.Store(next)
	return 0, nil
}

var errTruncated = errors.New("batch extends past the end of the segment")

// readBatch reads the batch at pos: just its header, or with verify the
// whole batch, checked.
func (s *Segment) readBatch(buf *[]byte, pos, size int64, verify bool) (record.Batch, error) {
	if size-pos < record.BatchHeaderSize {
		return nil, errTruncated
	}
	var h [record.BatchHeaderSize]byte
	if err := preadFull(s.fd, h[:], pos); err != nil {
		return nil, fmt.Errorf("read batch header: %w", err)
	}
	n := record.LogOverhead + int64(record.Batch(h[:]).Length())
	if n < record.BatchHeaderSize || n > size-pos {
		return nil, errTruncated
	}
	if !verify {
		*buf = append((*buf)[:0], h[:]...)
		return record.Batch(*buf), nil
	}
	if int64(cap(*buf)) < n {
		*buf = make([]byte, n)
	}
	b := record.Batch((*buf)[:n])
	if err := preadFull(s.fd, b, pos); err != nil {
		return nil, fmt.Errorf("read batch: %w", err)
	}
	if err := b.Validate(); err != nil {
		return nil, err
	}
	return b, nil
}

// loadEpochs reads leader-epoch-checkpoint, or rebuilds it from the batch
// headers when it is missing or unreadable, and fits it to the log's range.
// After an unclean shutdown, recovered is the base offset of the first
// segment recovery read (else -1): the epochs of its batches and later ones
// are noted too, as Kafka's segment recovery does, since the checkpoint is
// made durable only before the recovery point passes an epoch.
func (l *Log) loadEpochs(recovered int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := loadEpochCache(l.fs(), l.dir)
	l.epochs = c
	l.mu.epoch = -1
	if e := c.snapshot(); len(e) > 0 {
		l.mu.epoch = e[len(e)-1].Epoch
	}
	switch {
	case !ok:
		if err := l.noteEpochsFromLocked(-1); err != nil {
			return err
		}
		// A new log has none to write; a missing file is rebuilt alike.
		l.mu.epochDirty = len(c.snapshot()) > 0
	case recovered >= 0:
		if err := l.noteEpochsFromLocked(recovered); err != nil {
			return err
		}
	}
	l.mu.epochDirty = c.truncateFromEnd(l.mu.next) || l.mu.epochDirty
	l.mu.epochDirty = c.truncateFromStart(l.logStartOffset.Load()) || l.mu.epochDirty
	l.mu.epoch = -1
	if e := c.snapshot(); len(e) > 0 {
		l.mu.epoch = e[len(e)-1].Epoch
	}
	return l.syncEpochsLocked()
}

// noteEpochsFromLocked notes the leader epochs of the batches in the
// segments from the one based at from (every segment when from < 0).
func (l *Log) noteEpochsFromLocked(from int64) error {
	var buf []byte
	for _, s := range l.Segments() {
		if s.base < from {
			continue
		}
		if err := s.acquire(); err != nil {
			return fmt.Errorf("rebuild leader epochs: %w", err)
		}
		size := s.size.Load()
		for pos := int64(0); pos < size; {
			b, err := s.readBatch(&buf, pos, size, false)
			if err != nil {
				s.Release()
				return fmt.Errorf("rebuild leader epochs: %w", err)
			}
			l.noteEpochLocked(b)
			pos += record.LogOverhead + int64(b.Length())
		}
		s.Release()
	}
	return nil
}
