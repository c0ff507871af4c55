package log

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
)

// Origin says who wrote a record set, which decides how it is checked.
type Origin int8

const (
	// OriginClient is a produce request: one batch, validated as Kafka
	// validates client batches, producer state checked, offsets assigned.
	OriginClient Origin = iota
	// OriginCoordinator is written by a coordinator of this broker: a
	// transaction marker (checked against the producer's epoch and the
	// coordinator epoch), or a coordinator's own records, e.g. the group
	// coordinator's transactional offset commits (checked against the
	// producer's epoch only: they carry no sequence). Offsets assigned.
	OriginCoordinator
	// OriginReplication is a follower copying the leader's batches: the
	// offsets are kept and must follow the log end offset.
	OriginReplication
)

// AppendInfo describes an append.
type AppendInfo struct {
	FirstOffset    int64 // offset of the first record (the original one for a duplicate)
	LastOffset     int64
	LogAppendTime  int64 // broker time set on the batches, -1 with CreateTime
	LogStartOffset int64
	Records        int64 // records appended (0 for a duplicate)
	Bytes          int64
	Duplicate      bool // an idempotent retry of a batch already in the log
}

type appendOp struct {
	records []byte
	origin  Origin
	epoch   int32
	maxTs   int64 // largest batch max timestamp, found by check; for segment.ms
	info    AppendInfo
	err     error
	// done receives true when the op is complete, false when its
	// goroutine must take over draining the queue.
	done chan bool
}

var opPool = sync.Pool{New: func() any { return &appendOp{done: make(chan bool, 1)} }}

// appendQueue gathers appends that arrive while another is being written,
// so one pwritev commits them all (group commit). The goroutine that finds
// the queue idle drains one group; if more arrived meanwhile it hands the
// queue to the first of them, so no caller waits for others' work for long.
type appendQueue struct {
	mu    sync.Mutex
	ops   []*appendOp
	spare []*appendOp
	busy  bool
}

// Append writes a record set (one or more whole batches) to the log. The
// bytes are modified in place (offsets, leader epoch, append time) and are
// in the page cache when Append returns, so the caller may reuse them.
// Errors wrap the Kafka error for the producer; kerr.KafkaStorageError
// means the log can no longer be written.
func (l *Log) Append(records []byte, origin Origin, leaderEpoch int32) (AppendInfo, error) {
	if origin == OriginClient {
		if err := l.validateClient(records); err != nil {
			return AppendInfo{FirstOffset: -1, LastOffset: -1, LogAppendTime: -1}, err
		}
	}
	op := opPool.Get().(*appendOp)
	op.records, op.origin, op.epoch = records, origin, leaderEpoch
	q := &l.queue
	q.mu.Lock()
	q.ops = append(q.ops, op)
	lead := !q.busy
	q.busy = true
	q.mu.Unlock()
	if !lead && !<-op.done {
		lead = true
	}
	if lead {
		l.drainOnce()
	}
	info, err := op.info, op.err
	*op = appendOp{done: op.done}
	opPool.Put(op)
	return info, err
}

func (l *Log) drainOnce() {
	q := &l.queue
	q.mu.Lock()
	group := q.ops
	q.ops = q.spare[:0]
	q.mu.Unlock()

	l.commit(group)

	// The first op is the caller's own; wake the others.
	for i := 1; i < len(group); i++ {
		group[i].done <- true
	}
	clear(group)
	q.mu.Lock()
	q.spare = group[:0]
	if len(q.ops) == 0 {
		q.busy = false
	} else {
		q.ops[0].done <- false
	}
	q.mu.Unlock()
}

// commit writes a group of appends under the writer lock.
func (l *Log) commit(group []*appendOp) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.waitWritableLocked()
	if l.mu.closed {
		err := errClosed
		if l.mu.offline {
			err = errOffline
		}
		for _, op := range group {
			op.err = err
		}
		return
	}
	if l.mu.noSpace && !l.probeSpaceLocked(group) {
		return
	}
	cfg := l.cfg.Load()
	now := cfg.nowMs()
	w := groupWriter{l: l, cfg: cfg, seg: l.active()}
	w.pos = w.seg.size.Load()
	w.start = w.pos
	for i, op := range group {
		if op.err = l.check(op, cfg, now); op.err != nil || op.info.Duplicate {
			continue
		}
		if w.seg.full(cfg, int64(len(op.records)), op.info.LastOffset, op.maxTs, now) {
			if err := w.flush(); err != nil {
				l.failGroup(&w, group[i:], err)
				return
			}
			if err := l.rollLocked(); err != nil {
				l.failGroup(&w, group[i:], err)
				return
			}
			w.seg = l.active()
			w.pos, w.start = 0, 0
		}
		if w.ops == 0 {
			w.begin(group[i:])
		}
		if err := w.add(op); err != nil {
			l.failGroup(&w, group[i:], err)
			return
		}
	}
	if err := w.flush(); err != nil {
		l.failGroup(&w, nil, err)
		return
	}
	l.publishUnstableLocked()
	if invariants {
		l.checkEndLocked()
		l.active().checkIndex()
	}
	// A new epoch stays in memory (epochDirty): the checkpoint is written
	// before the recovery point passes it (flushLocked, syncEpochsSealed),
	// and recovery notes the epochs of the batches above the recovery
	// point. A file written here would cost each new partition's first
	// produce a file creation on the event loop.
	var n int64
	for _, op := range group {
		n += op.info.Records
		op.info.LogStartOffset = l.logStartOffset.Load()
	}
	if err := l.maybeFlushLocked(n); err != nil {
		// flush.messages or flush.ms asked for these records on disk:
		// they are in the log but not acknowledged (Kafka's append fails
		// the same way), and a failed fsync took the log offline.
		l.logger.Error("flush failed", "dir", l.dir, "err", err)
		for _, op := range group {
			if op.err == nil {
				op.err = fmt.Errorf("%v: %w", err, kerr.KafkaStorageError)
			}
		}
	}
}

// failGroup fails the ops not yet written and not failed already: those
// from w.pending on, or rest when nothing is pending. Ops written before
// (ahead of a roll) succeeded. Out of space, the log puts its state back to
// the last write and stays open (space.go); after any other error it stops
// accepting writes, as Kafka takes a log dir offline after an I/O error.
func (l *Log) failGroup(w *groupWriter, rest []*appendOp, err error) {
	pending := rest
	if w.pending != nil {
		pending = w.pending
	}
	offline := true
	if noSpace(err) {
		if uerr := l.outOfSpaceLocked(w, err); uerr != nil {
			err = fmt.Errorf("%w; undoing it: %w", err, uerr)
		} else {
			offline = false
		}
	}
	if offline {
		l.goOfflineLocked("append failed", err)
	}
	clear(l.mu.iov)
	l.mu.iov = l.mu.iov[:0]
	for _, op := range pending {
		if op.err == nil {
			op.err = fmt.Errorf("%v: %w", err, kerr.KafkaStorageError)
		}
	}
}

// check validates one record set, assigns its offsets and updates the
// producer state. It sets op.info; op.info.Duplicate means nothing is to
// be written.
func (l *Log) check(op *appendOp, cfg *Config, now int64) error {
	next := l.mu.next
	rest := op.records
	if len(rest) == 0 {
		return fmt.Errorf("empty record set: %w", kerr.CorruptMessage)
	}
	op.info = AppendInfo{FirstOffset: -1, LogAppendTime: -1}
	op.maxTs = -1
	for len(rest) > 0 {
		b, r, err := record.ParseBatch(rest)
		if err != nil {
			return err
		}
		rest = r
		if len(b) > cfg.MaxMessageBytes {
			return fmt.Errorf("batch of %d bytes exceeds max.message.bytes %d: %w", len(b), cfg.MaxMessageBytes, kerr.MessageTooLarge)
		}
		switch op.origin {
		case OriginClient:
			// validateClient checked the batch and its records.
			if b.ProducerID() != record.NoProducerID {
				dup, dupFirst, dupLast, err := l.mu.producers.Check(b)
				if err != nil {
					return err
				}
				if dup {
					op.info = AppendInfo{FirstOffset: dupFirst, LastOffset: dupLast, LogAppendTime: -1, Duplicate: true}
					return nil
				}
			}
		case OriginCoordinator:
			if err := b.Validate(); err != nil {
				return err
			}
			if !b.IsControl() {
				if err := l.mu.producers.CheckEpoch(b); err != nil {
					return err
				}
				break
			}
			if err := l.mu.producers.CheckMarker(b, 0); err != nil {
				return err
			}
		case OriginReplication:
			if err := b.Validate(); err != nil {
				return err
			}
			if b.BaseOffset() < next {
				return fmt.Errorf("replicated batch at offset %d below log end offset %d: %w", b.BaseOffset(), next, kerr.CorruptMessage)
			}
		}
		if op.origin != OriginReplication {
			b.SetBaseOffset(next)
			b.SetPartitionLeaderEpoch(op.epoch)
			if cfg.LogAppendTime && !b.IsControl() {
				b.SetLogAppendTime(now)
				op.info.LogAppendTime = now
			}
		}
		if op.info.FirstOffset < 0 {
			op.info.FirstOffset = b.BaseOffset()
		}
		op.info.LastOffset = b.LastOffset()
		op.info.Records += int64(b.NumRecords())
		op.maxTs = max(op.maxTs, b.MaxTimestamp())
		next = b.NextOffset()
	}
	op.info.Bytes = int64(len(op.records))
	return nil
}

// validateClient checks a produce request's record set as Kafka checks
// one from a client: exactly one batch, within max.message.bytes, a sound
// header and CRC, and every record inside (record.Batch.ValidateRecords). It needs no
// log state, so it runs before the append queues, outside the writer's
// lock: decompressing a batch delays no other append. Like Kafka it then
// writes the largest record timestamp as the batch's max timestamp, which
// the time index and retention trust.
func (l *Log) validateClient(records []byte) error {
	cfg := l.cfg.Load()
	if len(records) == 0 {
		return fmt.Errorf("empty record set: %w", kerr.CorruptMessage)
	}
	b, rest, err := record.ParseBatch(records)
	if err != nil {
		return err
	}
	if len(b) > cfg.MaxMessageBytes {
		return fmt.Errorf("batch of %d bytes exceeds max.message.bytes %d: %w", len(b), cfg.MaxMessageBytes, kerr.MessageTooLarge)
	}
	if len(rest) > 0 {
		return fmt.Errorf("produce requests carry exactly one batch per partition: %w", kerr.InvalidRecord)
	}
	if err := b.ValidateProduce(); err != nil {
		return err
	}
	maxTs, err := b.ValidateRecords(cfg.recordPolicy(), cfg.nowMs())
	if err != nil {
		return err
	}
	if !cfg.LogAppendTime && !b.LogAppendTime() && b.MaxTimestamp() != maxTs {
		b.SetMaxTimestamp(maxTs)
	}
	return nil
}

// groupWriter collects the record sets of one segment into one pwritev.
type groupWriter struct {
	l     *Log
	cfg   *Config
	seg   *Segment
	start int64 // file position of the first pending byte
	pos   int64 // file position after the pending bytes
	ops   int
	next  int64

	// pending are the group's ops from the first one not yet written;
	// mark is what their adds change in seg, to put back if the write
	// fails. Set by begin.
	pending []*appendOp
	mark    segmentMark
}

// begin starts a run of ops written together, the first of rest.
func (w *groupWriter) begin(rest []*appendOp) {
	w.pending = rest
	w.mark = w.seg.markLocked()
}

func (w *groupWriter) add(op *appendOp) error {
	l := w.l
	rest := op.records
	for len(rest) > 0 {
		b, r, _ := record.ParseBatch(rest) // checked by check
		rest = r
		if err := w.seg.indexBatch(b, w.pos, len(b), w.cfg.IndexIntervalBytes); err != nil {
			return err
		}
		w.seg.lastBatches.add(b.BaseOffset()-w.seg.base, w.pos)
		l.noteEpochLocked(b)
		if b.ProducerID() != record.NoProducerID {
			if done, ok := l.mu.producers.Update(b); ok && done.Aborted {
				if err := l.recordAbortLocked(w.seg, done); err != nil {
					return err
				}
			}
		}
		w.pos += int64(len(b))
	}
	l.mu.iov = append(l.mu.iov, unix.Iovec{Base: &op.records[0]})
	l.mu.iov[len(l.mu.iov)-1].SetLen(len(op.records))
	w.next = op.info.LastOffset + 1
	w.ops++
	// Later ops of the group follow this one; readers see it after flush.
	l.mu.next = w.next
	return nil
}

// flush writes the pending record sets and publishes them to readers.
func (w *groupWriter) flush() error {
	l := w.l
	if w.ops == 0 {
		return nil
	}
	err := pwritev(w.seg.fd, l.mu.iov, w.start)
	clear(l.mu.iov)
	l.mu.iov = l.mu.iov[:0]
	w.ops = 0
	if err != nil {
		return fmt.Errorf("write segment %d: %w", w.seg.base, err)
	}
	w.seg.size.Store(w.pos)
	w.seg.next.Store(w.next)
	l.logEndOffset.Store(w.next)
	w.start = w.pos
	w.pending = nil
	return nil
}

// recordAbortLocked adds an aborted transaction to the segment's txn index.
func (l *Log) recordAbortLocked(seg *Segment, t CompletedTxn) error {
	ti, err := seg.txnIndex()
	if err != nil {
		return err
	}
	return ti.Append(t.AbortedTxn())
}

// pwritev writes all of iov at off, in calls of at most IOV_MAX buffers,
// continuing after short writes. It allocates nothing.
func pwritev(fd int, iov []unix.Iovec, off int64) error {
	const iovMax = 1024
	for len(iov) > 0 {
		n := min(len(iov), iovMax)
		r, _, errno := unix.Syscall6(unix.SYS_PWRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(n), uintptr(off), uintptr(off>>32), 0)
		if errno == unix.EINTR || errno == unix.EAGAIN {
			continue
		}
		if errno != 0 {
			return errno
		}
		written := int64(r)
		off += written
		// Drop the buffers written in full, trim a partly written one.
		for written > 0 && len(iov) > 0 {
			if l := int64(iov[0].Len); written >= l {
				written -= l
				iov = iov[1:]
				continue
			}
			iov[0].Base = (*byte)(unsafe.Add(unsafe.Pointer(iov[0].Base), written))
			iov[0].Len -= uint64(written)
			written = 0
		}
	}
	return nil
}
