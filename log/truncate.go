package log

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TruncateTo removes every batch holding an offset at or above offset, as a
// follower does when it diverges from its leader. The batch holding offset
// goes whole, so the new log end may be below offset.
func (l *Log) TruncateTo(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waitWritableLocked()
	if l.mu.closed {
		return errClosed
	}
	if offset >= l.mu.next {
		return nil
	}
	segs := l.Segments()
	if offset <= segs[0].base {
		return l.truncateFullyLocked(offset)
	}
	cfg := l.cfg.Load()
	keep := len(segs)
	for keep > 1 && segs[keep-1].base >= offset {
		keep--
	}
	s := segs[keep-1]
	if keep < len(segs) {
		// A sealed segment becomes the active one: its file stays open.
		if err := s.pin(); err != nil {
			return err
		}
	}
	// From the first rename on, a failure leaves the files half cut: the
	// log goes offline (offline.go) and the next Open recovers it. The
	// dropped segments stay in the list, readable, until the new list is
	// out (a released segment in the list would make readers spin).
	dropped := segs[keep:]
	for _, s := range dropped {
		if err := s.renameDeleted(); err != nil {
			return l.truncateFailedLocked(err)
		}
	}
	segs = slices.Clone(segs[:keep])
	pos, _, found, _, err := s.translate(offset, 0, s.size.Load())
	if err != nil {
		return l.truncateFailedLocked(err)
	}
	if found {
		if err := s.f.Truncate(pos); err != nil {
			return l.truncateFailedLocked(fmt.Errorf("truncate segment: %w", err))
		}
		s.lastBatches.dropFrom(pos) // appends will reuse these positions
		s.size.Store(pos)
	}
	if t := s.txn.Load(); t != nil {
		if err := t.TruncateTo(offset); err != nil {
			return l.truncateFailedLocked(err)
		}
	}
	if _, err := s.rebuild(cfg, nil); err != nil {
		return l.truncateFailedLocked(err)
	}
	l.setSegments(segs)
	for _, d := range dropped {
		d.dropAfter(0)
	}
	l.mu.next = s.NextOffset()
	l.logEndOffset.Store(l.mu.next)
	if l.recoveryPoint.Load() > l.mu.next {
		l.recoveryPoint.Store(l.mu.next)
	}
	if l.logStartOffset.Load() > l.mu.next {
		l.logStartOffset.Store(l.mu.next)
	}
	l.lowerFirstDirty(l.mu.next)
	l.mu.epochDirty = l.epochs.truncateFromEnd(l.mu.next) || l.mu.epochDirty
	if err := l.syncEpochsLocked(); err != nil {
		return err
	}
	return l.reloadProducersLocked()
}

// TruncateFullyAndStartAt deletes every segment and starts the log empty
// at offset: a follower far behind a leader whose log starts later.
func (l *Log) TruncateFullyAndStartAt(offset int64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waitWritableLocked()
	if l.mu.closed {
		return errClosed
	}
	return l.truncateFullyLocked(offset)
}

func (l *Log) truncateFullyLocked(offset int64) error {
	cfg := l.cfg.Load()
	old := l.Segments()
	for _, s := range old {
		if err := s.markDeleted(durationMs(cfg.FileDeleteDelayMs)); err != nil {
			return err
		}
	}
	s, err := createSegment(l.dir, offset, cfg, l.files)
	if err != nil {
		return err
	}
	l.setSegments([]*Segment{s})
	l.mu.next = offset
	l.logEndOffset.Store(offset)
	l.logStartOffset.Store(offset)
	l.recoveryPoint.Store(offset)
	l.SetFirstDirtyOffset(offset)
	l.mu.epochDirty = l.epochs.truncateFromEnd(-1) || l.mu.epochDirty
	if err := l.syncEpochsLocked(); err != nil {
		return err
	}
	return l.reloadProducersLocked()
}

// DeleteRecordsBefore raises the log start offset to offset (the
// DeleteRecords API; the caller checks offset against the high watermark)
// and deletes the segments wholly below it.
func (l *Log) DeleteRecordsBefore(offset int64) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waitWritableLocked()
	if l.mu.closed {
		return 0, errClosed
	}
	if offset > l.mu.next {
		return 0, fmt.Errorf("offset %d past the log end %d: %w", offset, l.mu.next, kerr.OffsetOutOfRange)
	}
	if offset > l.logStartOffset.Load() {
		l.logStartOffset.Store(offset)
	}
	l.mu.epochDirty = l.epochs.truncateFromStart(l.logStartOffset.Load()) || l.mu.epochDirty
	if err := l.syncEpochsLocked(); err != nil {
		return 0, err
	}
	segs := l.Segments()
	n := 0
	for n < len(segs)-1 && segs[n+1].base <= offset {
		n++
	}
	return l.logStartOffset.Load(), l.deleteOldestLocked(n)
}

// deleteOldestLocked removes the first n segments; never the active one.
// Their files go after file.delete.delay.ms and once no read holds them.
func (l *Log) deleteOldestLocked(n int) error {
	segs := l.Segments()
	n = min(n, len(segs)-1)
	if n <= 0 {
		return nil
	}
	l.setSegments(slices.Clone(segs[n:]))
	if start := segs[n].base; start > l.logStartOffset.Load() {
		l.logStartOffset.Store(start)
	}
	l.mu.epochDirty = l.epochs.truncateFromStart(l.logStartOffset.Load()) || l.mu.epochDirty
	if err := l.syncEpochsLocked(); err != nil {
		return err
	}
	delay := durationMs(l.cfg.Load().FileDeleteDelayMs)
	for _, s := range segs[:n] {
		if err := s.markDeleted(delay); err != nil {
			return err
		}
	}
	return nil
}
