package log

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/record"
)

// psBatch describes a batch for the producer state tests.
type psBatch struct {
	offset int64 // base offset
	pid    int64
	epoch  int16
	seq    int32
	n      int32 // records
	txn    bool
	ts     int64
}

// psRecord encodes one record with kmsg, its length prefix computed here.
func psRecord(delta int32, key, value []byte) []byte {
	body := (&kmsg.Record{OffsetDelta: delta, Key: key, Value: value}).AppendTo(nil)
	// AppendTo wrote a zero length varint first; redo it with the real one.
	body = body[1:]
	return (&kmsg.Record{Length: int32(len(body)), OffsetDelta: delta, Key: key, Value: value}).AppendTo(nil)
}

// psRecordBatch builds the bytes of a v2 batch with kmsg and computes its
// CRC-32C over bytes 21..end by hand.
func psRecordBatch(t testing.TB, h kmsg.RecordBatch, records []byte) record.Batch {
	t.Helper()
	h.Magic = 2
	h.Records = records
	h.Length = int32(49 + len(records))
	buf := h.AppendTo(nil)
	crc := crc32.Checksum(buf[21:], crc32.MakeTable(crc32.Castagnoli))
	binary.BigEndian.PutUint32(buf[17:], crc)
	b := record.Batch(buf)
	if err := b.Validate(); err != nil {
		t.Fatalf("test batch does not validate: %v", err)
	}
	return b
}

func (d psBatch) build(t testing.TB) record.Batch {
	t.Helper()
	var recs []byte
	for i := int32(0); i < d.n; i++ {
		recs = append(recs, psRecord(i, nil, []byte("v"))...)
	}
	attrs := int16(0)
	if d.txn {
		attrs |= 0x10
	}
	return psRecordBatch(t, kmsg.RecordBatch{
		FirstOffset:          d.offset,
		PartitionLeaderEpoch: 0,
		Attributes:           attrs,
		LastOffsetDelta:      d.n - 1,
		FirstTimestamp:       d.ts,
		MaxTimestamp:         d.ts,
		ProducerID:           d.pid,
		ProducerEpoch:        d.epoch,
		FirstSequence:        d.seq,
		NumRecords:           d.n,
	}, recs)
}

// psMarker builds a commit or abort marker batch by hand with kmsg.
func psMarker(t testing.TB, offset, pid int64, epoch int16, coordinatorEpoch int32, commit bool, ts int64) record.Batch {
	t.Helper()
	typ := kmsg.ControlRecordKeyTypeAbort
	if commit {
		typ = kmsg.ControlRecordKeyTypeCommit
	}
	key := (&kmsg.ControlRecordKey{Version: 0, Type: typ}).AppendTo(nil)
	value := (&kmsg.EndTxnMarker{Version: 0, CoordinatorEpoch: coordinatorEpoch}).AppendTo(nil)
	return psRecordBatch(t, kmsg.RecordBatch{
		FirstOffset:    offset,
		Attributes:     0x10 | 0x20,
		FirstTimestamp: ts,
		MaxTimestamp:   ts,
		ProducerID:     pid,
		ProducerEpoch:  epoch,
		FirstSequence:  -1,
		NumRecords:     1,
	}, psRecord(0, key, value))
}

// psAppend checks and records d as the leader would.
func psAppend(t testing.TB, s *ProducerStates, d psBatch) {
	t.Helper()
	b := d.build(t)
	dup, _, _, err := s.Check(b)
	if err != nil || dup {
		t.Fatalf("check %+v: dup %v err %v", d, dup, err)
	}
	if _, ok := s.Update(b); ok {
		t.Fatalf("data batch %+v completed a transaction", d)
	}
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("err %v, want %v", err, want)
	}
}

func TestProducerDuplicateOfLastFive(t *testing.T) {
	s := NewProducerStates()
	// Six batches of 3 records: sequences 0-2, 3-5, ... at offsets 100,
	// 110, ... (other producers' records in between).
	var batches []psBatch
	for i := range int32(6) {
		d := psBatch{offset: 100 + 10*int64(i), pid: 7, epoch: 2, seq: 3 * i, n: 3, ts: 1000}
		psAppend(t, s, d)
		batches = append(batches, d)
	}
	for _, d := range batches[1:] {
		dup, first, last, err := s.Check(d.build(t))
		if err != nil || !dup || first != d.offset || last != d.offset+2 {
			t.Errorf("retry of seq %d: dup %v offsets %d-%d err %v; want dup at %d-%d", d.seq, dup, first, last, err, d.offset, d.offset+2)
		}
	}
	// The sixth batch back is out of the window.
	_, _, _, err := s.Check(batches[0].build(t))
	wantErr(t, err, kerr.OutOfOrderSequenceNumber)

	// Same first sequence, different last: not a duplicate.
	d := batches[4]
	d.n = 2
	_, _, _, err = s.Check(d.build(t))
	wantErr(t, err, kerr.OutOfOrderSequenceNumber)

	// A retry under another epoch is no duplicate: an older one is fenced.
	d = batches[5]
	d.epoch = 1
	_, _, _, err = s.Check(d.build(t))
	wantErr(t, err, kerr.InvalidProducerEpoch)

	// The next batch follows.
	psAppend(t, s, psBatch{offset: 200, pid: 7, epoch: 2, seq: 18, n: 1})
}

func TestProducerSequenceGap(t *testing.T) {
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 0, seq: 0, n: 5})
	for _, seq := range []int32{6, 4, 1, 100, -1} {
		_, _, _, err := s.Check(psBatch{offset: 5, pid: 1, epoch: 0, seq: seq, n: 1}.build(t))
		wantErr(t, err, kerr.OutOfOrderSequenceNumber)
	}
	psAppend(t, s, psBatch{offset: 5, pid: 1, epoch: 0, seq: 5, n: 1})
	// Batches of one append, checked and updated one at a time, see each
	// other.
	psAppend(t, s, psBatch{offset: 6, pid: 1, epoch: 0, seq: 6, n: 2})
	psAppend(t, s, psBatch{offset: 8, pid: 1, epoch: 0, seq: 8, n: 2})
}

func TestProducerEpochBump(t *testing.T) {
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 3, seq: 0, n: 10})
	// A new epoch starts at 0.
	_, _, _, err := s.Check(psBatch{offset: 10, pid: 1, epoch: 4, seq: 10, n: 1}.build(t))
	wantErr(t, err, kerr.OutOfOrderSequenceNumber)
	psAppend(t, s, psBatch{offset: 10, pid: 1, epoch: 4, seq: 0, n: 2})
	// The old epoch is fenced, even for what would be a duplicate.
	_, _, _, err = s.Check(psBatch{offset: 12, pid: 1, epoch: 3, seq: 0, n: 10}.build(t))
	wantErr(t, err, kerr.InvalidProducerEpoch)
	_, _, _, err = s.Check(psBatch{offset: 12, pid: 1, epoch: 3, seq: 10, n: 1}.build(t))
	wantErr(t, err, kerr.InvalidProducerEpoch)
	// The new epoch's batches are the only ones remembered.
	dup, first, _, err := s.Check(psBatch{pid: 1, epoch: 4, seq: 0, n: 2}.build(t))
	if !dup || first != 10 || err != nil {
		t.Fatalf("retry after bump: dup %v first %d err %v", dup, first, err)
	}
	psAppend(t, s, psBatch{offset: 12, pid: 1, epoch: 4, seq: 2, n: 1})
	// An epoch may jump by more than one.
	psAppend(t, s, psBatch{offset: 13, pid: 1, epoch: 9, seq: 0, n: 1})
}

func TestProducerUnknownAcceptsAnySequence(t *testing.T) {
	// KIP-360: a producer the partition does not know (expired, or its
	// records deleted) continues at any sequence.
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 0, pid: 5, epoch: 1, seq: 4242, n: 3, ts: 10})
	psAppend(t, s, psBatch{offset: 3, pid: 5, epoch: 1, seq: 4245, n: 1, ts: 20})
	s.RemoveExpired(20+86400000, 86400000)
	if s.Len() != 0 {
		t.Fatalf("%d producers after expiry", s.Len())
	}
	psAppend(t, s, psBatch{offset: 4, pid: 5, epoch: 1, seq: 9000, n: 1, ts: 30})
	// A batch without a producer id is not tracked.
	b := psBatch{offset: 5, pid: -1, epoch: -1, seq: -1, n: 1}.build(t)
	if dup, _, _, err := s.Check(b); dup || err != nil {
		t.Fatalf("plain batch: dup %v err %v", dup, err)
	}
	s.Update(b)
	if s.Len() != 1 {
		t.Fatalf("%d producers, want 1", s.Len())
	}
}

func TestProducerSequenceWraps(t *testing.T) {
	s := NewProducerStates()
	const top = math.MaxInt32
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 0, seq: top - 2, n: 3})
	psAppend(t, s, psBatch{offset: 3, pid: 1, epoch: 0, seq: 0, n: 2})
	// A batch may cross the wrap.
	psAppend(t, s, psBatch{offset: 5, pid: 2, epoch: 0, seq: top - 1, n: 4}) // top-1, top, 0, 1
	b := psBatch{offset: 9, pid: 2, epoch: 0, seq: 2, n: 1}.build(t)
	if _, _, _, err := s.Check(b); err != nil {
		t.Fatalf("after a batch across the wrap: %v", err)
	}
	dup, first, last, err := s.Check(psBatch{pid: 2, epoch: 0, seq: top - 1, n: 4}.build(t))
	if !dup || first != 5 || last != 8 || err != nil {
		t.Fatalf("retry across the wrap: dup %v %d-%d err %v", dup, first, last, err)
	}
	_, _, _, err = s.Check(psBatch{offset: 9, pid: 2, epoch: 0, seq: top, n: 1}.build(t))
	wantErr(t, err, kerr.OutOfOrderSequenceNumber)
}

func TestProducerTransactions(t *testing.T) {
	s := NewProducerStates()
	if _, ok := s.FirstUnstableOffset(); ok {
		t.Fatal("unstable offset in an empty state")
	}
	// Producer 1 opens a transaction at 10, producer 2 at 12.
	psAppend(t, s, psBatch{offset: 10, pid: 1, epoch: 0, seq: 0, n: 2, txn: true})
	psAppend(t, s, psBatch{offset: 12, pid: 2, epoch: 0, seq: 0, n: 1, txn: true})
	psAppend(t, s, psBatch{offset: 13, pid: 1, epoch: 0, seq: 2, n: 1, txn: true})
	if off, ok := s.FirstUnstableOffset(); !ok || off != 10 {
		t.Fatalf("first unstable %d %v, want 10", off, ok)
	}
	// Inside a transaction, a non-transactional batch is refused.
	_, _, _, err := s.Check(psBatch{offset: 14, pid: 1, epoch: 0, seq: 3, n: 1}.build(t))
	wantErr(t, err, kerr.InvalidTxnState)

	// Producer 1 aborts at 14: its LSO is producer 2's open transaction.
	txn, ok := s.Update(psMarker(t, 14, 1, 0, 5, false, 1000))
	want := CompletedTxn{ProducerID: 1, FirstOffset: 10, LastOffset: 14, LastStableOffset: 12, Aborted: true}
	if !ok || txn != want {
		t.Fatalf("abort: %+v %v, want %+v", txn, ok, want)
	}
	if got := txn.AbortedTxn(); got != (AbortedTxn{1, 10, 14, 12}) {
		t.Fatalf("aborted txn entry %+v", got)
	}
	// Until the high watermark passes the marker, the aborted transaction
	// still bounds the LSO.
	if off, _ := s.FirstUnstableOffset(); off != 10 {
		t.Fatalf("first unstable %d before the HW moved, want 10", off)
	}
	s.OnHighWatermark(14)
	if off, _ := s.FirstUnstableOffset(); off != 10 {
		t.Fatalf("first unstable %d with HW at the marker, want 10", off)
	}
	s.OnHighWatermark(15)
	if off, _ := s.FirstUnstableOffset(); off != 12 {
		t.Fatalf("first unstable %d after the HW passed the marker, want 12", off)
	}
	// Producer 1 writes non-transactionally again; a marker with no open
	// transaction completes nothing.
	psAppend(t, s, psBatch{offset: 15, pid: 1, epoch: 0, seq: 3, n: 1})
	if _, ok := s.Update(psMarker(t, 16, 1, 0, 6, true, 1000)); ok {
		t.Fatal("a marker with no transaction open completed one")
	}
	// Producer 2 commits at 17: nothing else open, so LSO is 18.
	txn, ok = s.Update(psMarker(t, 17, 2, 0, 5, true, 1000))
	want = CompletedTxn{ProducerID: 2, FirstOffset: 12, LastOffset: 17, LastStableOffset: 18}
	if !ok || txn != want {
		t.Fatalf("commit: %+v %v, want %+v", txn, ok, want)
	}
	s.OnHighWatermark(18)
	if off, ok := s.FirstUnstableOffset(); ok {
		t.Fatalf("first unstable %d after every transaction ended", off)
	}
	// The marker set the coordinator epoch and the epoch, and cleared the
	// producer's batches only when the epoch changed.
	ps := s.Producers()
	if len(ps) != 2 || ps[0].CoordinatorEpoch != 6 || ps[1].CoordinatorEpoch != 5 || ps[0].TxnFirstOffset != -1 {
		t.Fatalf("producers %+v", ps)
	}
	if ps[0].LastSequence != 3 || ps[0].LastOffset != 15 {
		t.Fatalf("producer 1 lost its batches to a marker of its own epoch: %+v", ps[0])
	}
}

func TestProducerLastStableOffsetSkipsEndedTxns(t *testing.T) {
	// The LSO recorded for an abort is the first transaction of another
	// producer still open, not one already ended whose marker is above the
	// high watermark.
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 0, seq: 0, n: 1, txn: true})
	psAppend(t, s, psBatch{offset: 1, pid: 2, epoch: 0, seq: 0, n: 1, txn: true})
	psAppend(t, s, psBatch{offset: 2, pid: 3, epoch: 0, seq: 0, n: 1, txn: true})
	if txn, _ := s.Update(psMarker(t, 3, 1, 0, 0, false, 0)); txn.LastStableOffset != 1 {
		t.Fatalf("first abort LSO %d, want 1", txn.LastStableOffset)
	}
	if txn, _ := s.Update(psMarker(t, 4, 2, 0, 0, false, 0)); txn.LastStableOffset != 2 {
		t.Fatalf("second abort LSO %d, want 2", txn.LastStableOffset)
	}
	if txn, _ := s.Update(psMarker(t, 5, 3, 0, 0, false, 0)); txn.LastStableOffset != 6 {
		t.Fatalf("third abort LSO %d, want 6", txn.LastStableOffset)
	}
	if off, _ := s.FirstUnstableOffset(); off != 0 {
		t.Fatalf("first unstable %d, want 0 until the HW moves", off)
	}
	s.OnHighWatermark(5)
	if off, _ := s.FirstUnstableOffset(); off != 2 {
		t.Fatalf("first unstable %d with HW 5, want 2", off)
	}
}

func TestProducerMarkerBumpsEpoch(t *testing.T) {
	// Transactions v2: the coordinator bumps the epoch in each marker; the
	// producer's next transaction uses it from sequence 0.
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 4, seq: 0, n: 3, txn: true})
	b := psMarker(t, 3, 1, 5, 0, true, 0)
	if err := s.CheckMarker(b, 2); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Update(b); !ok {
		t.Fatal("marker completed nothing")
	}
	_, _, _, err := s.Check(psBatch{offset: 4, pid: 1, epoch: 5, seq: 3, n: 1, txn: true}.build(t))
	wantErr(t, err, kerr.OutOfOrderSequenceNumber)
	_, _, _, err = s.Check(psBatch{offset: 4, pid: 1, epoch: 4, seq: 3, n: 1, txn: true}.build(t))
	wantErr(t, err, kerr.InvalidProducerEpoch)
	psAppend(t, s, psBatch{offset: 4, pid: 1, epoch: 5, seq: 0, n: 1, txn: true})
}

func TestProducerCheckMarker(t *testing.T) {
	s := NewProducerStates()
	// Unknown producer: any marker.
	if err := s.CheckMarker(psMarker(t, 0, 1, 3, 2, true, 0), 2); err != nil {
		t.Fatal(err)
	}
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 3, seq: 0, n: 1, txn: true})
	s.Update(psMarker(t, 1, 1, 3, 7, false, 0))
	psAppend(t, s, psBatch{offset: 2, pid: 1, epoch: 3, seq: 1, n: 1, txn: true})

	for _, c := range []struct {
		epoch      int16
		coordEpoch int32
		tv         int16
		want       error
	}{
		{3, 7, 0, nil},
		{3, 7, 1, nil},
		{4, 8, 2, nil},
		{3, 7, 2, kerr.InvalidProducerEpoch}, // TV2 marker must bump while a txn is open
		{2, 7, 0, kerr.InvalidProducerEpoch},
		{3, 6, 0, kerr.TransactionCoordinatorFenced},
		{4, 6, 2, kerr.TransactionCoordinatorFenced},
	} {
		err := s.CheckMarker(psMarker(t, 3, 1, c.epoch, c.coordEpoch, true, 0), c.tv)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("marker epoch %d coordinator %d tv%d: %v, want %v", c.epoch, c.coordEpoch, c.tv, err, c.want)
		}
	}
	// Once ended, a TV2 retry of the same marker (same bumped epoch) is
	// accepted, an older one is not.
	s.Update(psMarker(t, 3, 1, 4, 8, true, 0))
	if err := s.CheckMarker(psMarker(t, 4, 1, 4, 8, true, 0), 2); err != nil {
		t.Fatalf("retried TV2 marker: %v", err)
	}
	wantErr(t, s.CheckMarker(psMarker(t, 4, 1, 3, 8, true, 0), 2), kerr.InvalidProducerEpoch)
	// A data batch is no marker.
	wantErr(t, s.CheckMarker(psBatch{pid: 1, epoch: 4, n: 1}.build(t), 2), kerr.InvalidRecord)
}

func TestProducerEmptyControlBatch(t *testing.T) {
	// Compaction can leave a marker batch with no record: it changes
	// nothing.
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 0, seq: 0, n: 1, txn: true})
	b := psRecordBatch(t, kmsg.RecordBatch{FirstOffset: 1, Attributes: 0x30, ProducerID: 1, FirstSequence: -1}, nil)
	if _, ok := s.Update(b); ok {
		t.Fatal("empty control batch completed a transaction")
	}
	if off, ok := s.FirstUnstableOffset(); !ok || off != 0 {
		t.Fatalf("first unstable %d %v", off, ok)
	}
	if _, ok := s.Update(psMarker(t, 2, 1, 0, 0, false, 0)); !ok {
		t.Fatal("marker after the empty batch completed nothing")
	}
}

func TestProducerExpiration(t *testing.T) {
	s := NewProducerStates()
	const exp = 86400000
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 0, seq: 0, n: 1, ts: 1000})
	psAppend(t, s, psBatch{offset: 1, pid: 2, epoch: 0, seq: 0, n: 1, ts: 2000})
	psAppend(t, s, psBatch{offset: 2, pid: 3, epoch: 0, seq: 0, n: 1, ts: 0, txn: true})
	s.RemoveExpired(1000+exp-1, exp)
	if s.Len() != 3 {
		t.Fatalf("%d producers, want 3", s.Len())
	}
	s.RemoveExpired(1000+exp, exp)
	ps := s.Producers()
	if len(ps) != 2 || ps[0].ProducerID != 2 || ps[1].ProducerID != 3 {
		t.Fatalf("after expiring producer 1: %+v", ps)
	}
	// A producer with a transaction open never expires.
	s.RemoveExpired(math.MaxInt64/2, exp)
	if ps := s.Producers(); len(ps) != 1 || ps[0].ProducerID != 3 {
		t.Fatalf("after expiring all idle producers: %+v", ps)
	}
	s.Clear()
	if _, ok := s.FirstUnstableOffset(); ok || s.Len() != 0 {
		t.Fatal("Clear left state behind")
	}
}

func TestProducersEntries(t *testing.T) {
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 40, pid: 9, epoch: 1, seq: 10, n: 4, ts: 77})
	psAppend(t, s, psBatch{offset: 44, pid: 3, epoch: 2, seq: 0, n: 1, ts: 78, txn: true})
	s.Update(psMarker(t, 45, 4, 0, 11, false, 79)) // marker only
	got := s.Producers()
	want := []ProducerSnapshotEntry{
		{ProducerID: 3, Epoch: 2, LastSequence: 0, LastOffset: 44, OffsetDelta: 0, Timestamp: 78, CoordinatorEpoch: -1, TxnFirstOffset: 44},
		{ProducerID: 4, Epoch: 0, LastSequence: -1, LastOffset: -1, OffsetDelta: 0, Timestamp: 79, CoordinatorEpoch: 11, TxnFirstOffset: -1},
		{ProducerID: 9, Epoch: 1, LastSequence: 13, LastOffset: 43, OffsetDelta: 3, Timestamp: 77, CoordinatorEpoch: -1, TxnFirstOffset: -1},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestProducerStatesNoAllocs(t *testing.T) {
	s := NewProducerStates()
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 0, seq: 0, n: 1})
	b := psBatch{offset: 1, pid: 1, epoch: 0, seq: 1, n: 1}.build(t)
	var seq int32 = 1
	allocs := testing.AllocsPerRun(1000, func() {
		binary.BigEndian.PutUint32(b[53:], uint32(seq))
		if dup, _, _, err := s.Check(b); dup || err != nil {
			t.Fatalf("check: %v %v", dup, err)
		}
		s.Update(b)
		seq++
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per Check+Update", allocs)
	}
}

func BenchmarkProducerCheckUpdate(b *testing.B) {
	s := NewProducerStates()
	const producers = 1000
	batches := make([]record.Batch, producers)
	for i := range batches {
		batches[i] = psBatch{pid: int64(i), epoch: 0, seq: 0, n: 1}.build(b)
		s.Update(batches[i])
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		bt := batches[i%producers]
		seq := bt.BaseSequence() + 1
		binary.BigEndian.PutUint32(bt[53:], uint32(seq))
		if _, _, _, err := s.Check(bt); err != nil {
			b.Fatal(err)
		}
		s.Update(bt)
	}
}

func TestProducerCheckEpoch(t *testing.T) {
	s := NewProducerStates()
	// A coordinator's batch (no sequence) of an unknown producer passes.
	if err := s.CheckEpoch(psBatch{pid: 1, epoch: 2, seq: -1, n: 1, txn: true}.build(t)); err != nil {
		t.Fatal(err)
	}
	psAppend(t, s, psBatch{offset: 0, pid: 1, epoch: 3, seq: 0, n: 1, txn: true})
	if err := s.CheckEpoch(psBatch{pid: 1, epoch: 3, seq: -1, n: 1, txn: true}.build(t)); err != nil {
		t.Fatalf("current epoch: %v", err)
	}
	wantErr(t, s.CheckEpoch(psBatch{pid: 1, epoch: 2, seq: -1, n: 1, txn: true}.build(t)), kerr.InvalidProducerEpoch)
	if !s.InTransaction(1, 3) || s.InTransaction(1, 2) || s.InTransaction(2, 3) {
		t.Fatal("InTransaction")
	}
}
