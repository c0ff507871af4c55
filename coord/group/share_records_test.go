package group

import (
	"bytes"
	"reflect"
	"testing"
)

func shareSeeds() []shareRecord {
	id := tidOf("t")
	return []shareRecord{
		{typ: shareEpochType, epoch: 3, metaHash: -5},
		{typ: shareEpochType, epoch: 1},
		{typ: shareMemberType, member: "m", meta: shareMemberMeta{rackID: "r", clientID: "c", clientHost: "/h", topics: []string{"a", "b"}}},
		{typ: shareMemberType, member: "n", meta: shareMemberMeta{clientID: "c", topics: []string{}}},
		{typ: shareTargetEpochType, epoch: 2},
		{typ: shareTargetEpochType, epoch: 3, assignedAt: 1760936591360},
		{typ: shareTargetMemberType, member: "m", target: tpSet{id: {0, 3}}},
		{typ: shareCurrentType, member: "m", current: shareCurrent{epoch: 2, previousEpoch: 1, assigned: tpSet{id: {1}}}},
		{typ: shareCurrentType, member: "m", tombstone: true},
		{typ: shareEpochType, tombstone: true},
	}
}

func encodeShare(r *shareRecord) (key, value []byte) {
	key = appendShareKey(nil, r.typ, "g", r.member)
	if !r.tombstone {
		value = appendShareValue(nil, r)
	}
	return key, value
}

// Every share record decodes to what was encoded.
func TestShareRecordsRoundTrip(t *testing.T) {
	for _, want := range shareSeeds() {
		key, value := encodeShare(&want)
		got, err := decodeRecord(key, value)
		if err != nil {
			t.Fatalf("%+v: %v", want, err)
		}
		if got.kind != recordShare || got.group != "g" {
			t.Fatalf("%+v: decoded as %+v", want, got)
		}
		if want.typ == shareMemberType && len(want.meta.topics) == 0 {
			want.meta.topics = nil
		}
		if !reflect.DeepEqual(got.shr, want) {
			t.Fatalf("decoded %+v, want %+v", got.shr, want)
		}
	}
}

// FuzzShareRecord feeds arbitrary bytes to the decoder of share group
// records: never a panic, and what decodes encodes to bytes that decode
// to the same record, which a loader replays.
func FuzzShareRecord(f *testing.F) {
	for _, r := range shareSeeds() {
		k, v := encodeShare(&r)
		f.Add(k, v)
	}
	f.Add([]byte{0, shareCurrentType, 0, 1, 'g', 0, 0}, []byte{0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 5})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if len(key) < 2 || key[0] != 0 || key[1] < shareMemberType || key[1] > shareCurrentType {
			return
		}
		r, err := decodeRecord(key, value)
		if err != nil {
			return
		}
		k2, v2 := appendShareKey(nil, r.shr.typ, r.group, r.shr.member), []byte(nil)
		if !r.shr.tombstone {
			v2 = appendShareValue(nil, &r.shr)
		}
		if !bytes.HasPrefix(key, k2) {
			t.Fatalf("key %x re-encodes as %x", key, k2)
		}
		r2, err := decodeRecord(k2, v2)
		if err != nil {
			t.Fatalf("re-encoded %x %x: %v", k2, v2, err)
		}
		if !sameShareRecord(&r.shr, &r2.shr) {
			t.Fatalf("decoded %+v, re-decoded %+v", r.shr, r2.shr)
		}
		ld := newLoader()
		ld.apply(key, value, 0, -1)
	})
}

// sameShareRecord compares records as their encoding keeps them (an empty
// list and none are the same).
func sameShareRecord(a, b *shareRecord) bool {
	norm := func(r shareRecord) shareRecord {
		if len(r.meta.topics) == 0 {
			r.meta.topics = nil
		}
		return r
	}
	x, y := norm(*a), norm(*b)
	if len(x.target) == 0 && len(y.target) == 0 {
		x.target, y.target = nil, nil
	}
	if len(x.current.assigned) == 0 && len(y.current.assigned) == 0 {
		x.current.assigned, y.current.assigned = nil, nil
	}
	return reflect.DeepEqual(x, y)
}

// The share group records are the bytes of Kafka's schemas
// (group-coordinator/src/main/resources/common/message/ShareGroup*.json,
// Kafka 4.3), hand-encoded: key int16 type, GroupId and MemberId int16
// strings; value int16 version 0, then flexible fields.
func TestShareRecordsGolden(t *testing.T) {
	id := tidOf("t")
	for _, c := range []struct {
		name       string
		rec        shareRecord
		key, value []byte
	}{
		{"metadata", shareRecord{typ: shareEpochType, epoch: 3, metaHash: -5},
			hx("000b", "0001 67"),
			hx("0000", "00000003", "fffffffffffffffb", "00")}, // Epoch, MetadataHash (not tagged)
		{"metadata without hash", shareRecord{typ: shareEpochType, epoch: 1},
			hx("000b", "0001 67"),
			hx("0000", "00000001", "0000000000000000", "00")},
		{"member", shareRecord{typ: shareMemberType, member: "m", meta: shareMemberMeta{rackID: "r", clientID: "c", clientHost: "/h", topics: []string{"a", "b"}}},
			hx("000a", "0001 67", "0001 6d"),
			hx("0000",
				"02 72",        // RackId
				"02 63",        // ClientId
				"03 2f68",      // ClientHost
				"03 0261 0262", // SubscribedTopicNames
				"00")},
		{"member without rack", shareRecord{typ: shareMemberType, member: "m", meta: shareMemberMeta{clientID: "c", topics: []string{"a"}}},
			hx("000a", "0001 67", "0001 6d"),
			hx("0000", "00", "02 63", "01", "02 0261", "00")},
		{"target metadata", shareRecord{typ: shareTargetEpochType, epoch: 2},
			hx("000c", "0001 67"),
			hx("0000", "00000002", "00")},
		{"target metadata with AssignmentTimestamp", shareRecord{typ: shareTargetEpochType, epoch: 2, assignedAt: 0x19a00000000},
			hx("000c", "0001 67"),
			hx("0000", "00000002", "01 00 08 0000019a00000000")}, // tag 0, 8 bytes
		{"target member", shareRecord{typ: shareTargetMemberType, member: "m", target: tpSet{id: {0, 3}}},
			hx("000d", "0001 67", "0001 6d"),
			hx("0000", "02", goldenTopic, "03 00000000 00000003", "00", "00")},
		{"current assignment", shareRecord{typ: shareCurrentType, member: "m", current: shareCurrent{epoch: 2, previousEpoch: 1, assigned: tpSet{id: {1}}}},
			hx("000e", "0001 67", "0001 6d"),
			hx("0000", "00000002", "00000001", "00", "02", goldenTopic, "02 00000001", "00", "00")},
		{"state partition metadata", shareRecord{typ: shareStatePartitionType, state: shareStateMeta{
			initializing: []stateTopic{{id: id, name: "t", partitions: []int32{2}, createdAt: 0x19a00000000}},
			initialized:  []stateTopic{{id: id, name: "t", partitions: []int32{0, 1}, createdAt: 5}},
			deleting:     []stateTopic{{id: id, name: "t"}},
		}},
			hx("000f", "0001 67"), // no member
			hx("0000",
				"02", goldenTopic, "02 74", "02 00000002", "0000019a00000000", "00", // InitializingTopics
				"02", goldenTopic, "02 74", "03 00000000 00000001", "0000000000000005", "00", // InitializedTopics
				"02", goldenTopic, "02 74", "00", // DeletingTopics
				"00")},
		{"empty state partition metadata", shareRecord{typ: shareStatePartitionType},
			hx("000f", "0001 67"),
			hx("0000", "01", "01", "01", "00")},
		{"state partition metadata tombstone", shareRecord{typ: shareStatePartitionType, tombstone: true},
			hx("000f", "0001 67"), nil},
		{"tombstone", shareRecord{typ: shareCurrentType, member: "m", tombstone: true},
			hx("000e", "0001 67", "0001 6d"), nil},
	} {
		k, v := encodeShare(&c.rec)
		checkGolden(t, c.name, k, v, c.key, c.value, func(key, value []byte) ([]byte, []byte, error) {
			r, err := decodeRecord(key, value)
			if err == nil && !sameShareRecord(&r.shr, &c.rec) {
				t.Errorf("%s decodes as %+v, want %+v", c.name, r.shr, c.rec)
			}
			k, v := encodeShare(&r.shr)
			return k, v, err
		})
	}
}

// Share group records as Kafka 4.3 writes them, with tagged fields kzero
// does not write, read as kzero keeps them.
func TestShareRecordsFromKafka(t *testing.T) {
	for _, c := range []struct {
		name       string
		key, value []byte
		want       shareRecord
	}{
		{"target metadata with AssignmentTimestamp", hx("000c", "0001 67"),
			hx("0000", "00000002", "01 00 08 0000019a00000000"), // tag 0: AssignmentTimestamp
			shareRecord{typ: shareTargetEpochType, epoch: 2, assignedAt: 0x19a00000000}},
	} {
		r, err := decodeRecord(c.key, c.value)
		if err != nil || r.kind != recordShare || !sameShareRecord(&r.shr, &c.want) {
			t.Errorf("%s decodes as %+v (%v), want %+v", c.name, r.shr, err, c.want)
		}
	}
}
