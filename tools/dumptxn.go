package tools

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"kzero/log"
	"kzero/record"
)

// The transaction index (.txnindex, 34-byte entries) and the producer state
// snapshot (.snapshot) are decoded by the log package, which owns their
// formats (txnindex.go, producer_snapshot.go).
const txnEntrySize = 34

type abortedTxnLine struct {
	item
	Version          int16 `json:"version"`
	ProducerID       int64 `json:"producer_id"`
	FirstOffset      int64 `json:"first_offset"`
	LastOffset       int64 `json:"last_offset"`
	LastStableOffset int64 `json:"last_stable_offset"`
}

func (d *dumper) txnIndex(path string, data []byte, base int64) error {
	if r := len(data) % txnEntrySize; r != 0 {
		return fmt.Errorf("%s: position %d: %d bytes after the last whole %d-byte entry: truncated or corrupt", path, len(data)-r, r, txnEntrySize)
	}
	entries, err := log.DecodeTxnIndex(data)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if d.opts.IndexSanityCheck {
		return d.sanityCheck(path, len(entries), func(s *segmentBatches) []string {
			return s.checkTxnIndex(entries, base)
		})
	}
	for _, e := range entries {
		if d.json {
			d.emit(abortedTxnLine{item: d.item("aborted_txn"), ProducerID: e.ProducerID,
				FirstOffset: e.FirstOffset, LastOffset: e.LastOffset, LastStableOffset: e.LastStableOffset})
		} else {
			fmt.Fprintf(d.w, "version: 0 producerId: %d firstOffset: %d lastOffset: %d lastStableOffset: %d\n",
				e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
		}
	}
	return nil
}

// checkTxnIndex checks each aborted transaction ends at an abort marker of
// its producer in the segment, in marker order.
func (s *segmentBatches) checkTxnIndex(entries []log.AbortedTxn, base int64) []string {
	var problems []string
	for i, e := range entries {
		where := fmt.Sprintf("entry %d (producer %d, offsets %d-%d)", i, e.ProducerID, e.FirstOffset, e.LastOffset)
		switch {
		case e.FirstOffset > e.LastOffset:
			problems = append(problems, fmt.Sprintf("%s: first offset above the last", where))
		case i > 0 && e.LastOffset <= entries[i-1].LastOffset:
			problems = append(problems, fmt.Sprintf("%s: last offset not above the previous entry's %d", where, entries[i-1].LastOffset))
		}
		if e.LastOffset < base {
			problems = append(problems, fmt.Sprintf("%s: marker below the segment's base offset %d", where, base))
			continue
		}
		b, ok := s.holding(e.LastOffset)
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s: no batch of the segment holds the marker's offset", where))
		case !b.Control || b.ControlErr != nil || b.ControlType != record.ControlAbort:
			problems = append(problems, fmt.Sprintf("%s: the batch holding the last offset is not an abort marker", where))
		case b.ProducerID != e.ProducerID:
			problems = append(problems, fmt.Sprintf("%s: the abort marker there is producer %d's", where, b.ProducerID))
		}
	}
	return problems
}

type producerLine struct {
	item
	ProducerID            int64  `json:"producer_id"`
	ProducerEpoch         int16  `json:"producer_epoch"`
	CoordinatorEpoch      int32  `json:"coordinator_epoch"`
	CurrentTxnFirstOffset *int64 `json:"current_txn_first_offset"`
	FirstSequence         int32  `json:"first_sequence"`
	LastSequence          int32  `json:"last_sequence"`
	LastOffset            int64  `json:"last_offset"`
	OffsetDelta           int32  `json:"offset_delta"`
	Timestamp             int64  `json:"timestamp"`
}

func (d *dumper) snapshot(path string, data []byte, _ int64) error {
	entries, err := log.DecodeSnapshot(data)
	if err != nil {
		return fmt.Errorf("%s: position %d: %w", path, snapshotErrorPosition(data), err)
	}
	for _, e := range entries {
		l := producerLine{
			item:       d.item("producer"),
			ProducerID: e.ProducerID, ProducerEpoch: e.Epoch, CoordinatorEpoch: e.CoordinatorEpoch,
			FirstSequence: firstSequence(e.LastSequence, e.OffsetDelta), LastSequence: e.LastSequence,
			LastOffset: e.LastOffset, OffsetDelta: e.OffsetDelta, Timestamp: e.Timestamp,
		}
		txn := "none"
		if e.TxnFirstOffset >= 0 {
			l.CurrentTxnFirstOffset = &e.TxnFirstOffset
			txn = fmt.Sprint(e.TxnFirstOffset)
		}
		if d.json {
			d.emit(l)
			continue
		}
		fmt.Fprintf(d.w, "producerId: %d producerEpoch: %d coordinatorEpoch: %d currentTxnFirstOffset: %s firstSequence: %d lastSequence: %d lastOffset: %d offsetDelta: %d timestamp: %d\n",
			l.ProducerID, l.ProducerEpoch, l.CoordinatorEpoch, txn, l.FirstSequence, l.LastSequence, l.LastOffset, l.OffsetDelta, l.Timestamp)
	}
	return nil
}

// firstSequence is the first sequence of the producer's last batch, from
// its last sequence and offset delta, wrapping below 0 to MaxInt32 as
// sequences do.
func firstSequence(last, delta int32) int32 {
	if last < 0 {
		return last
	}
	s := int64(last) - int64(delta)
	if s < 0 {
		s += 1 << 31
	}
	return int32(s)
}

// snapshotErrorPosition says where a snapshot DecodeSnapshot refused is
// wrong, for the error message: the end of a short file, the version, the
// crc, or the entry count that does not fit the size. Its layout is the
// log package's (producer_snapshot.go): version int16, crc uint32 of the
// bytes from 6 on, count int32, entries.
func snapshotErrorPosition(data []byte) int {
	switch {
	case len(data) < 10:
		return len(data)
	case binary.BigEndian.Uint16(data) != 1:
		return 0
	case binary.BigEndian.Uint32(data[2:]) != crc32.Checksum(data[6:], crc32.MakeTable(crc32.Castagnoli)):
		return 2
	}
	return 6
}
