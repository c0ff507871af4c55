package log

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/record"
)

// Producer state is what makes produce idempotent and transactions atomic
// on one partition (KIP-98), with Kafka 4.x's rules:
//
//   - A producer is known by its id. The partition keeps its epoch and the
//     sequence and offset ranges of its last 5 batches: a client retries at
//     most max.in.flight.requests.per.connection (at most 5) batches, so a
//     retry of any of them is answered with the offsets it got the first
//     time, and nothing is written again.
//   - Sequences of one epoch follow each other without gaps, wrapping from
//     MaxInt32 to 0. A newer epoch starts at sequence 0; an older epoch is
//     fenced.
//   - An unknown producer is accepted at any sequence (KIP-360): its state
//     may have expired, or its batches been deleted by retention.
//   - A transaction starts at the producer's first transactional batch and
//     ends at its commit or abort marker. Until the marker is below the high
//     watermark, the transaction's first offset bounds the last stable
//     offset, which read_committed consumers read up to.
//   - A producer with no transaction open is forgotten after
//     producer.id.expiration.ms without a write (KIP-854).

// producerBatchesRetained is how many batches per producer are kept for
// duplicate detection.
const producerBatchesRetained = 5

// ProducerStates is one partition's producer state.
//
// Ownership: the log's writer, under its lock. Check and Update run
// batch by batch, so the batches of one append see each other. Nothing here
// is safe for concurrent use: DescribeProducers and snapshots go through
// the writer too. For a producer already known, Check and Update of a
// non-transactional batch allocate nothing.
type ProducerStates struct {
	producers map[int64]*producerState

	// txns are the transactions that bound the last stable offset, by first
	// offset: those still open, and those whose marker is at or above the
	// high watermark.
	txns []unstableTxn

	rr record.Iter // decodes markers
}

// producerState is the state of one producer id.
type producerState struct {
	epoch            int16
	coordinatorEpoch int32 // of the last marker; -1 before any
	lastTimestamp    int64 // max timestamp of the last batch or marker
	txnFirstOffset   int64 // first offset of the open transaction; -1 none

	// batches is a ring of the last batches of this epoch, the oldest at
	// head.
	batches [producerBatchesRetained]batchMeta
	head, n uint8
}

// batchMeta describes one appended batch.
type batchMeta struct {
	firstSeq, lastSeq int32
	offsetDelta       int32 // lastOffset - first offset
	lastOffset        int64
	timestamp         int64
}

type unstableTxn struct {
	producerID  int64
	firstOffset int64
	lastOffset  int64 // the marker's offset; -1 while the transaction is open
}

// CompletedTxn is a transaction ended by a marker. An aborted one goes into
// the segment's transaction index (AbortedTxn) with LastStableOffset: the
// first offset of the earliest transaction of another producer still open
// at the marker, or the offset after the marker when there is none.
type CompletedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64 // the marker's offset
	LastStableOffset int64
	Aborted          bool
}

// AbortedTxn is the transaction index entry for t.
func (t CompletedTxn) AbortedTxn() AbortedTxn {
	return AbortedTxn{ProducerID: t.ProducerID, FirstOffset: t.FirstOffset, LastOffset: t.LastOffset, LastStableOffset: t.LastStableOffset}
}

// ProducerSnapshotEntry is one producer as a .snapshot file stores it, and
// as DescribeProducers reports it.
type ProducerSnapshotEntry struct {
	ProducerID       int64
	Epoch            int16
	LastSequence     int32 // of the last batch; -1 none
	LastOffset       int64 // of the last batch; -1 none
	OffsetDelta      int32 // the last batch's last offset minus its first
	Timestamp        int64 // max timestamp of the last batch or marker
	CoordinatorEpoch int32
	TxnFirstOffset   int64 // first offset of the open transaction; -1 none
}

// NewProducerStates returns an empty state.
func NewProducerStates() *ProducerStates {
	return &ProducerStates{producers: make(map[int64]*producerState)}
}

// Len is the number of producers known.
func (s *ProducerStates) Len() int { return len(s.producers) }

// Check validates a data batch from a client before the leader assigns it
// offsets. When the batch repeats one of the producer's last 5 batches (same
// epoch, same sequence range) it returns dup and that batch's offsets: the
// broker answers with them and writes nothing. Errors wrap
// kerr.InvalidProducerEpoch (an epoch older than the producer's),
// kerr.OutOfOrderSequenceNumber (a sequence that does not follow the last
// one, or a new epoch that does not start at 0) or kerr.InvalidTxnState (a
// non-transactional batch while a transaction is open). A batch without a
// producer id, and any batch of an unknown producer, passes.
func (s *ProducerStates) Check(b record.Batch) (dup bool, firstOffset, lastOffset int64, err error) {
	pid := b.ProducerID()
	if pid == record.NoProducerID {
		return false, 0, 0, nil
	}
	p := s.producers[pid]
	if p == nil {
		return false, 0, 0, nil
	}
	epoch, first := b.ProducerEpoch(), b.BaseSequence()
	if epoch == p.epoch {
		if m, ok := p.find(first, b.LastSequence()); ok {
			return true, m.lastOffset - int64(m.offsetDelta), m.lastOffset, nil
		}
	}
	switch {
	case epoch < p.epoch:
		return false, 0, 0, fmt.Errorf("producer %d epoch %d is older than its current epoch %d: %w", pid, epoch, p.epoch, kerr.InvalidProducerEpoch)
	case epoch != p.epoch:
		if first != 0 && p.epoch != record.NoProducerEpoch {
			return false, 0, 0, fmt.Errorf("producer %d new epoch %d starts at sequence %d, not 0: %w", pid, epoch, first, kerr.OutOfOrderSequenceNumber)
		}
	case p.epoch != record.NoProducerEpoch && !inSequence(p.lastSeq(), first):
		return false, 0, 0, fmt.Errorf("producer %d epoch %d sequence %d does not follow %d: %w", pid, epoch, first, p.lastSeq(), kerr.OutOfOrderSequenceNumber)
	}
	if p.txnFirstOffset >= 0 && !b.IsTransactional() {
		return false, 0, 0, fmt.Errorf("producer %d wrote a non-transactional batch inside its transaction from offset %d: %w", pid, p.txnFirstOffset, kerr.InvalidTxnState)
	}
	return false, 0, 0, nil
}

// CheckEpoch validates a coordinator's own batch of a producer (no
// sequence): its epoch must not be older than the producer's. Errors wrap
// kerr.InvalidProducerEpoch.
func (s *ProducerStates) CheckEpoch(b record.Batch) error {
	pid := b.ProducerID()
	if pid == record.NoProducerID {
		return nil
	}
	if p := s.producers[pid]; p != nil && b.ProducerEpoch() < p.epoch {
		return fmt.Errorf("producer %d epoch %d is older than its current epoch %d: %w", pid, b.ProducerEpoch(), p.epoch, kerr.InvalidProducerEpoch)
	}
	return nil
}

// InTransaction reports whether producer pid has a transaction open at
// epoch.
func (s *ProducerStates) InTransaction(pid int64, epoch int16) bool {
	p := s.producers[pid]
	return p != nil && p.epoch == epoch && p.txnFirstOffset >= 0
}

// inSequence reports whether next follows last, wrapping at MaxInt32.
func inSequence(last, next int32) bool {
	return int64(next) == int64(last)+1 || (next == 0 && last == math.MaxInt32)
}

// CheckMarker validates a transaction marker the transaction coordinator
// asks the leader to write (WriteTxnMarkers), before it gets an offset.
// Errors wrap kerr.InvalidProducerEpoch for an epoch older than the
// producer's (under transaction.version 2, whose markers bump the epoch, also
// an equal one, unless it repeats a marker already written),
// kerr.TransactionCoordinatorFenced for a marker from an older coordinator,
// and kerr.CorruptMessage or kerr.InvalidRecord for a batch that is not a
// commit or abort marker.
func (s *ProducerStates) CheckMarker(b record.Batch, txnVersion int16) error {
	_, coordinatorEpoch, ok, err := s.marker(b)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("control batch without a record: %w", kerr.InvalidRecord)
	}
	pid, epoch := b.ProducerID(), b.ProducerEpoch()
	p := s.producers[pid]
	if p == nil {
		return nil
	}
	stale := epoch < p.epoch
	if txnVersion >= 2 {
		// A retried marker of a transaction already ended keeps the epoch
		// it bumped to.
		stale = epoch < p.epoch || (epoch == p.epoch && p.txnFirstOffset >= 0)
	}
	if stale {
		return fmt.Errorf("producer %d marker epoch %d, current epoch %d (transaction version %d): %w", pid, epoch, p.epoch, txnVersion, kerr.InvalidProducerEpoch)
	}
	if coordinatorEpoch < p.coordinatorEpoch {
		return fmt.Errorf("producer %d marker from coordinator epoch %d, current %d: %w", pid, coordinatorEpoch, p.coordinatorEpoch, kerr.TransactionCoordinatorFenced)
	}
	return nil
}

// Update records a batch that has its offsets and is being appended: by
// the leader after Check, by a follower, or by recovery replaying the log.
// It checks nothing. A commit or abort marker ends the producer's
// transaction; when one was open, the completed transaction comes back
// with ok. A control batch with no record (its transaction compacted away)
// or one whose marker does not decode changes nothing; markers are checked
// before they are written (CheckMarker, or the batch CRC on replay).
func (s *ProducerStates) Update(b record.Batch) (txn CompletedTxn, ok bool) {
	pid := b.ProducerID()
	if pid == record.NoProducerID {
		return CompletedTxn{}, false
	}
	p := s.producers[pid]
	if p == nil {
		p = &producerState{epoch: record.NoProducerEpoch, coordinatorEpoch: -1, lastTimestamp: -1, txnFirstOffset: -1}
		s.producers[pid] = p
	}
	if b.IsControl() {
		return s.endTxn(pid, p, b)
	}
	p.setEpoch(b.ProducerEpoch())
	p.add(batchMeta{
		firstSeq:    b.BaseSequence(),
		lastSeq:     b.LastSequence(),
		offsetDelta: b.LastOffsetDelta(),
		lastOffset:  b.LastOffset(),
		timestamp:   b.MaxTimestamp(),
	})
	p.lastTimestamp = b.MaxTimestamp()
	if b.IsTransactional() && p.txnFirstOffset < 0 {
		p.txnFirstOffset = b.BaseOffset()
		s.addTxn(unstableTxn{producerID: pid, firstOffset: b.BaseOffset(), lastOffset: -1})
	}
	return CompletedTxn{}, false
}

// endTxn applies the marker b of producer pid.
func (s *ProducerStates) endTxn(pid int64, p *producerState, b record.Batch) (CompletedTxn, bool) {
	typ, coordinatorEpoch, ok, err := s.marker(b)
	if err != nil || !ok {
		return CompletedTxn{}, false
	}
	var txn CompletedTxn
	done := p.txnFirstOffset >= 0
	if done {
		txn = CompletedTxn{
			ProducerID:       pid,
			FirstOffset:      p.txnFirstOffset,
			LastOffset:       b.BaseOffset(),
			LastStableOffset: b.BaseOffset() + 1,
			Aborted:          typ == record.ControlAbort,
		}
		if first, ok := s.firstOpenTxn(pid); ok {
			txn.LastStableOffset = first
		}
		s.completeTxn(pid, b.BaseOffset())
	}
	p.setEpoch(b.ProducerEpoch())
	p.coordinatorEpoch = coordinatorEpoch
	p.txnFirstOffset = -1
	p.lastTimestamp = b.MaxTimestamp()
	return txn, done
}

// marker decodes the commit or abort marker of control batch b. ok is
// false for a control batch without records.
func (s *ProducerStates) marker(b record.Batch) (t record.ControlType, coordinatorEpoch int32, ok bool, err error) {
	if !b.IsControl() {
		return 0, 0, false, fmt.Errorf("not a control batch: %w", kerr.InvalidRecord)
	}
	r := &s.rr
	defer r.Release()
	if err := r.Reset(b, 1<<16); err != nil {
		return 0, 0, false, err
	}
	if !r.Next() {
		return 0, 0, false, r.Err()
	}
	t, coordinatorEpoch, err = record.ParseControl(r.Record().Key, r.Record().Value)
	if err != nil {
		return 0, 0, false, err
	}
	if t != record.ControlAbort && t != record.ControlCommit {
		return 0, 0, false, fmt.Errorf("control batch of producer %d is a %s, not a transaction marker: %w", b.ProducerID(), t, kerr.InvalidRecord)
	}
	return t, coordinatorEpoch, true, nil
}

// addTxn inserts t in first-offset order; it is normally the last.
func (s *ProducerStates) addTxn(t unstableTxn) {
	i := len(s.txns)
	for i > 0 && s.txns[i-1].firstOffset > t.firstOffset {
		i--
	}
	s.txns = slices.Insert(s.txns, i, t)
}

// firstOpenTxn is the first offset of the earliest open transaction of a
// producer other than pid.
func (s *ProducerStates) firstOpenTxn(pid int64) (int64, bool) {
	for _, t := range s.txns {
		if t.lastOffset < 0 && t.producerID != pid {
			return t.firstOffset, true
		}
	}
	return 0, false
}

// completeTxn marks pid's open transaction ended by the marker at offset.
func (s *ProducerStates) completeTxn(pid int64, offset int64) {
	for i := range s.txns {
		if t := &s.txns[i]; t.producerID == pid && t.lastOffset < 0 {
			t.lastOffset = offset
			return
		}
	}
}

// FirstUnstableOffset is the first offset of the earliest transaction that
// is still open, or whose marker is not yet below the high watermark. The
// last stable offset is the smaller of it and the high watermark.
func (s *ProducerStates) FirstUnstableOffset() (int64, bool) {
	if len(s.txns) == 0 {
		return 0, false
	}
	return s.txns[0].firstOffset, true
}

// OnHighWatermark forgets the completed transactions whose marker is below
// hw, so the first unstable offset moves past them. Call it when the high
// watermark advances, and with the log start offset when that advances.
func (s *ProducerStates) OnHighWatermark(hw int64) {
	s.txns = slices.DeleteFunc(s.txns, func(t unstableTxn) bool {
		return t.lastOffset >= 0 && t.lastOffset < hw
	})
}

// RemoveExpired forgets the producers whose last write is expirationMs
// (producer.id.expiration.ms) or more before nowMs; never one with a
// transaction open. Their next batch is accepted at any sequence.
func (s *ProducerStates) RemoveExpired(nowMs, expirationMs int64) {
	for pid, p := range s.producers {
		if p.txnFirstOffset < 0 && nowMs-p.lastTimestamp >= expirationMs {
			delete(s.producers, pid)
		}
	}
}

// Clear forgets every producer and transaction, for a log truncated below
// its snapshots or deleted records.
func (s *ProducerStates) Clear() {
	clear(s.producers)
	s.txns = s.txns[:0]
}

// Producers lists the producers by id.
func (s *ProducerStates) Producers() []ProducerSnapshotEntry {
	out := make([]ProducerSnapshotEntry, 0, len(s.producers))
	for pid, p := range s.producers {
		e := ProducerSnapshotEntry{
			ProducerID:       pid,
			Epoch:            p.epoch,
			LastSequence:     record.NoSequence,
			LastOffset:       -1,
			Timestamp:        p.lastTimestamp,
			CoordinatorEpoch: p.coordinatorEpoch,
			TxnFirstOffset:   p.txnFirstOffset,
		}
		if m := p.last(); m != nil {
			e.LastSequence, e.LastOffset, e.OffsetDelta = m.lastSeq, m.lastOffset, m.offsetDelta
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b ProducerSnapshotEntry) int { return cmp.Compare(a.ProducerID, b.ProducerID) })
	return out
}

// Restore replaces the state with entries, as read from a snapshot. Only
// each producer's last batch is known, so a retry of an earlier one is no
// longer detected as a duplicate until the log replayed after the
// snapshot adds batches. Of entries with the same producer id the last wins.
func (s *ProducerStates) Restore(entries []ProducerSnapshotEntry) {
	s.Clear()
	for _, e := range entries {
		p := &producerState{
			epoch:            e.Epoch,
			coordinatorEpoch: e.CoordinatorEpoch,
			lastTimestamp:    e.Timestamp,
			txnFirstOffset:   max(e.TxnFirstOffset, -1),
		}
		if e.LastOffset >= 0 {
			p.add(batchMeta{
				firstSeq:    decreaseSequence(e.LastSequence, e.OffsetDelta),
				lastSeq:     e.LastSequence,
				offsetDelta: e.OffsetDelta,
				lastOffset:  e.LastOffset,
				timestamp:   e.Timestamp,
			})
		}
		s.producers[e.ProducerID] = p
	}
	for pid, p := range s.producers {
		if p.txnFirstOffset >= 0 {
			s.addTxn(unstableTxn{producerID: pid, firstOffset: p.txnFirstOffset, lastOffset: -1})
		}
	}
}

// decreaseSequence is the first sequence of a batch whose last is last and
// which spans delta offsets, wrapping below 0 to MaxInt32.
func decreaseSequence(last, delta int32) int32 {
	if last == record.NoSequence {
		return record.NoSequence
	}
	return int32((int64(last) - int64(delta) + (1 << 31)) % (1 << 31))
}

func (p *producerState) setEpoch(e int16) {
	if p.epoch != e {
		p.epoch = e
		p.head, p.n = 0, 0
	}
}

func (p *producerState) add(m batchMeta) {
	if p.n == producerBatchesRetained {
		p.batches[p.head] = m
		p.head = (p.head + 1) % producerBatchesRetained
		return
	}
	p.batches[(p.head+p.n)%producerBatchesRetained] = m
	p.n++
}

func (p *producerState) last() *batchMeta {
	if p.n == 0 {
		return nil
	}
	return &p.batches[(p.head+p.n-1)%producerBatchesRetained]
}

func (p *producerState) lastSeq() int32 {
	if m := p.last(); m != nil {
		return m.lastSeq
	}
	return record.NoSequence
}

// find returns the retained batch with exactly this sequence range.
func (p *producerState) find(first, last int32) (batchMeta, bool) {
	for i := uint8(0); i < p.n; i++ {
		m := p.batches[(p.head+i)%producerBatchesRetained]
		if m.firstSeq == first && m.lastSeq == last {
			return m, true
		}
	}
	return batchMeta{}, false
}
