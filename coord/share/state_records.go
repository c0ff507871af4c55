package share

import (
	"encoding/binary"
	"errors"
	"fmt"
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
//
// Delivery states: 0 available, 2 acknowledged, 4 archived. kzero writes
// snapshots only (one record holds the whole state, and compaction keeps
// the last one per share partition); it reads updates too, laying their
// batches over the snapshot before them.

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

var errStateRecord = errors.New("malformed __share_group_state record")

// appendStateKey appends the key of a share partition's record.
func appendStateKey(dst []byte, typ int16, k Key) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(typ))
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(k.Group)))
	dst = append(dst, k.Group...)
	dst = append(dst, k.Topic[:]...)
	return binary.BigEndian.AppendUint32(dst, uint32(k.Partition))
}

// appendSnapshot appends a ShareSnapshot value.
func appendSnapshot(dst []byte, s *Snapshot) []byte {
	dst = binary.BigEndian.AppendUint16(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.SnapshotEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.StateEpoch))
	dst = binary.BigEndian.AppendUint32(dst, uint32(s.LeaderEpoch))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.StartOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.CreateTime))
	dst = binary.BigEndian.AppendUint64(dst, uint64(s.WriteTime))
	dst = appendBatches(dst, s.Batches)
	return append(dst, 0)
}

func appendBatches(dst []byte, bs []StateBatch) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(bs))+1)
	for _, b := range bs {
		dst = binary.BigEndian.AppendUint64(dst, uint64(b.First))
		dst = binary.BigEndian.AppendUint64(dst, uint64(b.Last))
		dst = append(dst, byte(b.State))
		dst = binary.BigEndian.AppendUint16(dst, uint16(b.Count))
		dst = append(dst, 0)
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
	kr := reader{b: key}
	r.typ = kr.int16()
	if kr.err == nil && r.typ != snapshotType && r.typ != updateType {
		return r, false, nil
	}
	n := int(uint16(kr.int16()))
	r.key.Group = string(kr.need(n))
	copy(r.key.Topic[:], kr.need(16))
	r.key.Partition = kr.int32()
	if kr.err != nil {
		return r, false, fmt.Errorf("share state key: %w", kr.err)
	}
	if value == nil {
		r.tombstone = true
		return r, true, nil
	}
	vr := reader{b: value}
	if v := vr.int16(); vr.err == nil && v != 0 {
		return r, false, fmt.Errorf("share state record type %d value version %d: %w", r.typ, v, errStateRecord)
	}
	s := &r.snap
	s.SnapshotEpoch = vr.int32()
	if r.typ == snapshotType {
		s.StateEpoch = vr.int32()
	}
	s.LeaderEpoch = vr.int32()
	s.StartOffset = vr.int64()
	if r.typ == snapshotType {
		s.CreateTime = vr.int64()
		s.WriteTime = vr.int64()
	}
	count := vr.arrayLen()
	for i := 0; i < count && vr.err == nil; i++ {
		b := StateBatch{First: vr.int64(), Last: vr.int64(), State: int8(vr.int8()), Count: vr.int16()}
		vr.tags()
		if vr.err == nil && (b.Last < b.First || b.First < 0) {
			vr.err = fmt.Errorf("%w: state batch %d-%d", errStateRecord, b.First, b.Last)
		}
		s.Batches = append(s.Batches, b)
	}
	vr.tags()
	if vr.err != nil {
		return r, false, fmt.Errorf("share state of %q: %w", r.key.Group, vr.err)
	}
	return r, true, nil
}

// reader reads big-endian and flexible-version fields with a sticky error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) need(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || len(r.b) < n {
		r.err = fmt.Errorf("%w: %d bytes needed, %d left", errStateRecord, n, len(r.b))
		return nil
	}
	b := r.b[:n]
	r.b = r.b[n:]
	return b
}

func (r *reader) int8() int8 {
	if b := r.need(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reader) int16() int16 {
	if b := r.need(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) int32() int32 {
	if b := r.need(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) int64() int64 {
	if b := r.need(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad uvarint", errStateRecord)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// arrayLen reads a compact array length (null is empty), bounded by the
// bytes left.
func (r *reader) arrayLen() int {
	v := r.uvarint()
	if v == 0 {
		return 0
	}
	if v-1 > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: array of %d", errStateRecord, v-1)
		return 0
	}
	return int(v - 1)
}

// tags skips a tagged fields section.
func (r *reader) tags() {
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		r.uvarint() // tag
		r.need(int(min(r.uvarint(), uint64(len(r.b))+1)))
	}
}
