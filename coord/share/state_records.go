package share

import (
	"fmt"

	"kzero/coord/coordrecord"
)

// The records of __share_group_state, in the format of Kafka's share
// coordinator, so that Kafka's tools decode them:
//
//	key   int16 record type, then GroupId string (int16 length),
//	      TopicId uuid (16 bytes), Partition int32
//	      0 ShareSnapshot   the whole state of a share partition
//	      1 ShareUpdate     a change since the last snapshot
//	value null: a tombstone (the state is deleted); else int16 version 0,
//	      then (flexible: compact arrays, a tagged fields section at the
//	      end of every struct):
//	      ShareSnapshot  SnapshotEpoch int32, StateEpoch int32,
//	                     LeaderEpoch int32, StartOffset int64,
//	                     CreateTimestamp int64, WriteTimestamp int64,
//	                     StateBatches []{FirstOffset int64,
//	                     LastOffset int64, DeliveryState int8,
//	                     DeliveryCount int16}
//	      ShareUpdate    SnapshotEpoch int32, LeaderEpoch int32,
//	                     StartOffset int64 (-1: unchanged),
//	                     StateBatches as above
//	      both           tag 0: DeliveryCompleteCount int32 (KIP-1226,
//	                     Kafka 4.2; default -1, unknown)
//
// These are the layouts of Kafka 4.3's schemas (Share*.json in
// share-coordinator/src/main/resources/common/message). Delivery states: 0
// available, 2 acknowledged, 4 archived. kzero writes snapshots only (one
// record holds the whole state, and compaction keeps the last one per
// share partition); it reads updates too, laying their batches over the
// snapshot before them. It does not keep DeliveryCompleteCount: it writes
// none (Kafka reads -1) and skips it when reading.

// Record types of __share_group_state.
const (
	snapshotType = 0
	updateType   = 1
)

// Delivery states of state batches.
const (
	stateAvailable    = 0
	stateAcknowledged = 2
	stateArchived     = 4
)

// StateBatch is a run of records in one delivery state, with their
// delivery count.
type StateBatch struct {
	First, Last int64
	State       int8
	Count       int16
}

// Snapshot is the durable state of one share partition.
type Snapshot struct {
	SnapshotEpoch int32
	StateEpoch    int32
	LeaderEpoch   int32
	StartOffset   int64
	CreateTime    int64 // ms
	WriteTime     int64 // ms
	Batches       []StateBatch
}

// appendStateKey appends the key of a share partition's record.
func appendStateKey(dst []byte, typ int16, k Key) []byte {
	dst = coordrecord.AppendInt16(dst, typ)
	dst = coordrecord.AppendString16(dst, k.Group)
	dst = coordrecord.AppendUUID(dst, k.Topic)
	return coordrecord.AppendInt32(dst, k.Partition)
}

// appendSnapshot appends a ShareSnapshot value.
func appendSnapshot(dst []byte, s *Snapshot) []byte {
	dst = coordrecord.AppendInt16(dst, 0)
	dst = coordrecord.AppendInt32(dst, s.SnapshotEpoch)
	dst = coordrecord.AppendInt32(dst, s.StateEpoch)
	dst = coordrecord.AppendInt32(dst, s.LeaderEpoch)
	dst = coordrecord.AppendInt64(dst, s.StartOffset)
	dst = coordrecord.AppendInt64(dst, s.CreateTime)
	dst = coordrecord.AppendInt64(dst, s.WriteTime)
	dst = appendBatches(dst, s.Batches)
	return coordrecord.AppendNoTags(dst)
}

func appendBatches(dst []byte, bs []StateBatch) []byte {
	dst = coordrecord.AppendArrayLen(dst, len(bs))
	for _, b := range bs {
		dst = coordrecord.AppendInt64(dst, b.First)
		dst = coordrecord.AppendInt64(dst, b.Last)
		dst = coordrecord.AppendInt8(dst, b.State)
		dst = coordrecord.AppendInt16(dst, b.Count)
		dst = coordrecord.AppendNoTags(dst)
	}
	return dst
}

// stateRecord is one decoded record of __share_group_state.
type stateRecord struct {
	typ       int16
	key       Key
	tombstone bool
	snap      Snapshot // for an update: StartOffset -1 when unchanged
}

// decodeStateRecord reads a record of __share_group_state; ok is false
// for a record type it does not know. Any bytes give a record or an
// error, never a panic.
func decodeStateRecord(key, value []byte) (r stateRecord, ok bool, err error) {
	kr := coordrecord.NewReader(key)
	r.typ = kr.Int16()
	if kr.Err() == nil && r.typ != snapshotType && r.typ != updateType {
		return r, false, nil
	}
	r.key.Group = kr.String16()
	r.key.Topic = kr.UUID()
	r.key.Partition = kr.Int32()
	if err := kr.Err(); err != nil {
		return r, false, fmt.Errorf("share state key: %w", err)
	}
	if value == nil {
		r.tombstone = true
		return r, true, nil
	}
	vr, err := coordrecord.NewValueReader(value, 0)
	if err != nil {
		return r, false, fmt.Errorf("share state record type %d: %w", r.typ, err)
	}
	s := &r.snap
	s.SnapshotEpoch = vr.Int32()
	if r.typ == snapshotType {
		s.StateEpoch = vr.Int32()
	}
	s.LeaderEpoch = vr.Int32()
	s.StartOffset = vr.Int64()
	if r.typ == snapshotType {
		s.CreateTime = vr.Int64()
		s.WriteTime = vr.Int64()
	}
	count := vr.ArrayLen()
	for i := 0; i < count && vr.Err() == nil; i++ {
		b := StateBatch{First: vr.Int64(), Last: vr.Int64(), State: vr.Int8(), Count: vr.Int16()}
		vr.Tags(nil)
		if vr.Err() == nil && (b.Last < b.First || b.First < 0) {
			vr.Fail(fmt.Errorf("state batch %d-%d", b.First, b.Last))
		}
		s.Batches = append(s.Batches, b)
	}
	vr.Tags(nil)
	if err := vr.Err(); err != nil {
		return r, false, fmt.Errorf("share state of %q: %w", r.key.Group, err)
	}
	return r, true, nil
}
