package group

import (
	"encoding/binary"
	"fmt"

	"kzero/coord/coordrecord"
)

// The framing the records of KIP-848 consumer groups, KIP-932 share groups
// and KIP-1071 streams groups share (consumer_records.go,
// share_records.go, streams_records.go): the key is the record type, the
// group and, for member records, the member; the value is version 0 of a
// flexible schema. Their assignments are all lists of partitions by topic
// id (TopicPartitions) or by subtopology id (TaskIds), each with its
// partitions' assignment epochs in tagged field 0 where the schema has it.

// recordTypes numbers the five records every consumer, share and streams
// group has (kinds differ only in the numbers).
type recordTypes struct{ epoch, member, targetEpoch, targetMember, current int16 }

var (
	consumerTypes = recordTypes{consumerEpochType, consumerMemberType, consumerTargetEpochType, consumerTargetMemberType, consumerCurrentType}
	shareTypes    = recordTypes{shareEpochType, shareMemberType, shareTargetEpochType, shareTargetMemberType, shareCurrentType}
	streamsTypes  = recordTypes{streamsEpochType, streamsMemberType, streamsTargetEpochType, streamsTargetMemberType, streamsCurrentType}
)

// keyHasMember reports whether the key of a record of type typ names a
// member: the member, target member and current assignment records.
func (t *recordTypes) keyHasMember(typ int16) bool {
	return typ == t.member || typ == t.targetMember || typ == t.current
}

// heldSince is the epoch at which a member at epoch got k (a partition or
// a task): as recorded in epochs, else max(epoch, 0) (KIP-1251).
func heldSince[K comparable](epochs map[K]int32, k K, epoch int32) int32 {
	if e, ok := epochs[k]; ok {
		return e
	}
	return max(epoch, 0)
}

// appendRecordKey appends the key of a consumer, share or streams group
// record: its type, the group and, withMember, the member.
func appendRecordKey(dst []byte, typ int16, group, member string, withMember bool) []byte {
	dst = coordrecord.AppendInt16(dst, typ)
	dst = coordrecord.AppendString16(dst, group)
	if withMember {
		dst = coordrecord.AppendString16(dst, member)
	}
	return dst
}

// groupRecord is a consumer, share or streams group record (R) as the
// shard writes and replays it, whatever its kind.
type groupRecord[R any] interface {
	*R
	appendKey(dst []byte, group string) []byte
	appendValue(dst []byte) []byte // nothing for a tombstone
	isTombstone() bool
	endsGroup() bool // the group epoch's tombstone: the group's state ends
}

func (r *consumerRecord) appendKey(dst []byte, group string) []byte {
	return appendConsumerKey(dst, r.typ, group, r.member)
}
func (r *consumerRecord) appendValue(dst []byte) []byte { return appendConsumerValue(dst, r) }
func (r *consumerRecord) isTombstone() bool             { return r.tombstone }
func (r *consumerRecord) endsGroup() bool               { return r.tombstone && r.typ == consumerEpochType }

func (r *shareRecord) appendKey(dst []byte, group string) []byte {
	return appendShareKey(dst, r.typ, group, r.member)
}
func (r *shareRecord) appendValue(dst []byte) []byte { return appendShareValue(dst, r) }
func (r *shareRecord) isTombstone() bool             { return r.tombstone }
func (r *shareRecord) endsGroup() bool               { return r.tombstone && r.typ == shareEpochType }

func (r *streamsRecord) appendKey(dst []byte, group string) []byte {
	return appendStreamsKey(dst, r.typ, group, r.member)
}
func (r *streamsRecord) appendValue(dst []byte) []byte { return appendStreamsValue(dst, r) }
func (r *streamsRecord) isTombstone() bool             { return r.tombstone }
func (r *streamsRecord) endsGroup() bool               { return r.tombstone && r.typ == streamsEpochType }

// appendValueVersion starts the value of a consumer, share or streams
// group record: every one is at version 0.
func appendValueVersion(dst []byte) []byte { return coordrecord.AppendInt16(dst, 0) }

// decodeGroupRecord reads the framing of a consumer, share or streams
// group record of type typ (kind names which, for errors): the group and,
// withMember, the member from the key; then, unless value is nil (a
// tombstone), the value's version, and its fields with fields.
func decodeGroupRecord(kind string, typ int16, key, value []byte, withMember bool, fields func(*coordrecord.Reader)) (group, member string, err error) {
	kr := coordrecord.NewReader(key[2:])
	group = kr.String16()
	if withMember {
		member = kr.String16()
	}
	if err := kr.Err(); err != nil {
		return "", "", fmt.Errorf("%s group record key of type %d: %w", kind, typ, err)
	}
	if value == nil {
		return group, member, nil
	}
	vr, err := coordrecord.NewValueReader(value, 0)
	if err == nil {
		fields(&vr)
		err = vr.Err()
	}
	if err != nil {
		return "", "", fmt.Errorf("%s group record of type %d for %q: %w", kind, typ, group, err)
	}
	return group, member, nil
}

// appendPartitionsBy writes partitions by id (ids in order) as
// TopicPartitions or TaskIds structs: the id (appendID), Partitions and,
// with epochOf, the partitions' assignment epochs in tagged field 0
// (AssignmentEpochs).
func appendPartitionsBy[K comparable](dst []byte, ids []K, parts map[K][]int32, appendID func([]byte, K) []byte, epochOf func(K, int32) int32) []byte {
	dst = coordrecord.AppendArrayLen(dst, len(ids))
	var epochs []int32
	for _, id := range ids {
		ps := parts[id]
		dst = appendID(dst, id)
		dst = coordrecord.AppendInt32s(dst, ps)
		if epochOf == nil {
			dst = coordrecord.AppendNoTags(dst)
			continue
		}
		epochs = epochs[:0]
		for _, p := range ps {
			epochs = append(epochs, epochOf(id, p))
		}
		dst = coordrecord.AppendTagCount(dst, 1)
		dst = coordrecord.AppendTaggedInt32s(dst, 0, epochs)
	}
	return dst
}

// readPartitionsBy reads TopicPartitions or TaskIds structs into
// partitions by id (readID reads an id; the partitions are as read, not
// sorted), giving each partition's assignment epoch of tagged field 0 to
// epoch (when not nil).
func readPartitionsBy[K comparable](r *coordrecord.Reader, readID func(*coordrecord.Reader) K, epoch func(id K, p, e int32)) map[K][]int32 {
	n := r.ArrayLen()
	out := make(map[K][]int32, n)
	for i := 0; i < n && r.Err() == nil; i++ {
		id := readID(r)
		ps := r.Int32s()
		out[id] = append(out[id], ps...)
		r.Tags(func(tag uint64, v []byte) {
			if tag != 0 || epoch == nil {
				return
			}
			er := coordrecord.NewReader(v)
			if es := er.Int32s(); er.Err() == nil && len(es) == len(ps) {
				for j, p := range ps {
					epoch(id, p, es[j])
				}
			}
		})
	}
	return out
}

// appendTargetMetadata appends the fields of a target assignment metadata
// value (consumer, share and streams groups alike): AssignmentEpoch, and
// AssignmentTimestamp (KIP-1263) in tagged field 0 unless it is 0, the
// field's default.
func appendTargetMetadata(dst []byte, epoch int32, assignedAt int64) []byte {
	dst = coordrecord.AppendInt32(dst, epoch)
	if assignedAt == 0 {
		return coordrecord.AppendNoTags(dst)
	}
	return coordrecord.AppendTaggedInt64(coordrecord.AppendTagCount(dst, 1), 0, assignedAt)
}

// readTargetMetadata reads the fields appendTargetMetadata writes: the
// assignment epoch and timestamp (0 without the tag).
func readTargetMetadata(r *coordrecord.Reader) (epoch int32, assignedAt int64) {
	epoch = r.Int32()
	r.Tags(func(tag uint64, b []byte) {
		if tag == 0 && len(b) == 8 {
			assignedAt = int64(binary.BigEndian.Uint64(b))
		}
	})
	return epoch, assignedAt
}
