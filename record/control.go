package record

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A control batch (attribute bit 5) holds one control record, which the
// consumer never sees. A transaction marker's record is:
//
//	key    version int16 (0)  type int16 (0 abort, 1 commit)
//	value  version int16 (0)  coordinatorEpoch int32
//
// KRaft's metadata log uses other types (2 and up) with other values.
// Readers accept versions above 0 and read the fields they know, as Kafka
// does, so a newer writer's markers still parse.

// ControlType is a control record's type, from its key.
type ControlType int16

const (
	ControlAbort  ControlType = 0
	ControlCommit ControlType = 1
)

func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "abort"
	case ControlCommit:
		return "commit"
	}
	return fmt.Sprintf("control(%d)", int16(t))
}

const (
	controlKeySize    = 4
	endTxnMarkerSize  = 6
	controlKeyVersion = 0
)

// ParseControl decodes a control record's key and, for a transaction
// marker (abort or commit), the coordinator epoch in its value. Other types
// come back with epoch 0 and their value unread. Errors wrap
// kerr.CorruptMessage.
func ParseControl(key, value []byte) (t ControlType, coordinatorEpoch int32, err error) {
	if len(key) < controlKeySize {
		return 0, 0, fmt.Errorf("control record key of %d bytes: %w", len(key), kerr.CorruptMessage)
	}
	if v := int16(binary.BigEndian.Uint16(key)); v < 0 {
		return 0, 0, fmt.Errorf("control record key version %d: %w", v, kerr.CorruptMessage)
	}
	t = ControlType(binary.BigEndian.Uint16(key[2:]))
	if t != ControlAbort && t != ControlCommit {
		return t, 0, nil
	}
	if len(value) < endTxnMarkerSize {
		return 0, 0, fmt.Errorf("%s marker value of %d bytes: %w", t, len(value), kerr.CorruptMessage)
	}
	if v := int16(binary.BigEndian.Uint16(value)); v < 0 {
		return 0, 0, fmt.Errorf("%s marker value version %d: %w", t, v, kerr.CorruptMessage)
	}
	return t, int32(binary.BigEndian.Uint32(value[2:])), nil
}

// ControlType decodes the type of a control batch from its first record.
// Kafka writes control batches uncompressed; a compressed one is decoded
// all the same.
func (b Batch) ControlType() (ControlType, error) {
	if len(b) < BatchHeaderSize || !b.IsControl() {
		return 0, fmt.Errorf("not a control batch: %w", kerr.InvalidRecord)
	}
	var r Iter
	defer r.Release()
	if err := r.Reset(b, 1<<20); err != nil {
		return 0, err
	}
	if !r.Next() {
		if err := r.Err(); err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("control batch without a record: %w", kerr.CorruptMessage)
	}
	t, _, err := ParseControl(r.Record().Key, r.Record().Value)
	return t, err
}

// AppendControlBatch appends a transaction marker batch to dst: transactional
// and control, one record at offset delta 0, no base sequence, and base
// offset 0 and leader epoch -1 for the leader to assign as it appends.
func AppendControlBatch(dst []byte, producerID int64, epoch int16, coordinatorEpoch int32, t ControlType, timestamp int64) []byte {
	h := BatchHeader{
		PartitionLeaderEpoch: -1,
		Transactional:        true,
		Control:              true,
		BaseTimestamp:        timestamp,
		ProducerID:           producerID,
		ProducerEpoch:        epoch,
		BaseSequence:         NoSequence,
	}
	var key [controlKeySize]byte
	binary.BigEndian.PutUint16(key[0:], controlKeyVersion)
	binary.BigEndian.PutUint16(key[2:], uint16(t))
	var value [endTxnMarkerSize]byte
	binary.BigEndian.PutUint16(value[0:], 0)
	binary.BigEndian.PutUint32(value[2:], uint32(coordinatorEpoch))

	start := len(dst)
	dst = append(dst, make([]byte, BatchHeaderSize)...)
	dst = appendRecord(dst, &Record{Key: key[:], Value: value[:]})
	dst, _ = finishBatch(dst, start, &h, 1, 0, timestamp) // 80 bytes: cannot overflow
	return dst
}
