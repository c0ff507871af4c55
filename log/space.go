package log

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"
)

// A full file system is a state the log lives through, not a failure that
// ends it. Kafka takes a log dir offline on any write error until the
// broker restarts; kzero does so only for other I/O errors. Out of space:
//
//   - An append whose write fails (a short pwritev, an index page or a txn
//     index entry that cannot be allocated) puts the log back as it was
//     after the last write that succeeded: the segment file is cut back to
//     its published size, the indexes, the segment's timestamps, the epoch
//     cache and the producer state (reloaded from the newest snapshot) drop
//     what the failed ops added. Its ops, and only those, fail with
//     KAFKA_STORAGE_ERROR; the log stays open for reads and writes.
//   - From then on every append first asks the file system for the bytes
//     it is about to write (fallocate of the active segment's tail, without
//     changing its size) and is refused with KAFKA_STORAGE_ERROR, touching
//     nothing, while that fails: one cheap system call per refused append,
//     no rollback each time. The first append that gets its bytes goes
//     through, and the log says it takes writes again. No timer, no
//     restart: space freed by anyone (retention, an operator) is used by
//     the next produce.
//   - Writes that may be skipped are: an index entry that needs a new page
//     is left out (the index is sparse; a lookup scans a little further),
//     a checkpoint or producer snapshot that cannot be written keeps the
//     older file (recovery starts from there and replays more).

// noSpace reports whether err is the file system being full (or the
// user's quota used up).
func noSpace(err error) bool {
	return errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT)
}

// skippableIndexErr reports whether an index entry that failed with err
// may be left out: the file system is full, or the process is out of
// descriptors (an index keeps none, and allocating its next page opens the
// file for the call). The indexes are sparse; the next batch tries again.
func skippableIndexErr(err error) bool {
	return noSpace(err) || errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)
}

// segmentMark is what an append changes in its segment besides the file
// and the indexes, saved before a run of writes so a failed one can be
// undone.
type segmentMark struct {
	maxTs, maxTsOffset, firstBatchTs int64
	bytesSinceIndex                  int
}

// markLocked saves the segment's append state. Writer only.
func (s *Segment) markLocked() segmentMark {
	return segmentMark{s.maxTs.Load(), s.maxTsOffset.Load(), s.firstBatchTs.Load(), s.bytesSinceIndex}
}

// resetLocked puts back the state markLocked saved. Writer only.
func (s *Segment) resetLocked(m segmentMark) {
	s.maxTs.Store(m.maxTs)
	s.maxTsOffset.Store(m.maxTsOffset)
	s.firstBatchTs.Store(m.firstBatchTs)
	s.bytesSinceIndex = m.bytesSinceIndex
}

// outOfSpaceLocked undoes the pending writes of w after a write failed for
// lack of space (err), and leaves the log refusing appends until the file
// system has room. It returns the error that made the undo impossible:
// then the log must go offline.
func (l *Log) outOfSpaceLocked(w *groupWriter, err error) error {
	if !l.mu.noSpace {
		l.logger.Warn("file system full: refusing appends until space is freed", "dir", l.dir, "err", err)
	}
	l.mu.noSpace = true
	if w.pending == nil {
		return nil // nothing was added: a roll failed after the last write
	}
	s := w.seg
	end := l.logEndOffset.Load()
	// A short pwritev may have written part of the pending bytes.
	if terr := s.f.Truncate(s.size.Load()); terr != nil {
		return fmt.Errorf("cut segment %d back: %w", s.base, terr)
	}
	s.lastBatches.dropFrom(s.size.Load()) // the next appends reuse these positions
	s.offsets().TruncateTo(end)
	s.tindex.TruncateTo(end)
	s.resetLocked(w.mark)
	if t := s.txn.Load(); t != nil {
		if terr := t.TruncateTo(end); terr != nil {
			return fmt.Errorf("cut txn index back: %w", terr)
		}
	}
	l.mu.next = end
	l.mu.epochDirty = l.epochs.truncateFromEnd(end) || l.mu.epochDirty
	l.mu.epoch = -1
	if e := l.epochs.snapshot(); len(e) > 0 {
		l.mu.epoch = e[len(e)-1].Epoch
	}
	if rerr := l.reloadProducersLocked(); rerr != nil {
		return fmt.Errorf("reload producer state: %w", rerr)
	}
	return nil
}

// probeSpaceLocked asks the file system for the bytes group would append
// to the active segment. It reports whether they were granted; when not,
// it fails every op with KAFKA_STORAGE_ERROR and nothing else changes.
func (l *Log) probeSpaceLocked(group []*appendOp) bool {
	var n int64
	for _, op := range group {
		n += int64(len(op.records))
	}
	s := l.active()
	err := unix.Fallocate(s.fd, unix.FALLOC_FL_KEEP_SIZE, s.size.Load(), max(n, 1))
	if err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
		for _, op := range group {
			op.err = fmt.Errorf("no space for %d bytes (%v): %w", n, err, kerr.KafkaStorageError)
		}
		return false
	}
	l.mu.noSpace = false
	l.logger.Info("file system has space again: accepting appends", "dir", l.dir)
	return true
}
