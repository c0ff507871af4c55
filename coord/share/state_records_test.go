package share

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func stateSeeds() []stateRecord {
	k := Key{Group: "g", Topic: [16]byte{1, 2, 3}, Partition: 7}
	return []stateRecord{
		{typ: snapshotType, key: k, snap: Snapshot{SnapshotEpoch: 3, StateEpoch: 1, LeaderEpoch: 2, StartOffset: 100, CreateTime: 5, WriteTime: 6,
			Batches: []StateBatch{{100, 104, stateAcknowledged, 1}, {105, 105, stateAvailable, 2}, {106, 110, stateArchived, 5}}}},
		{typ: snapshotType, key: k, snap: Snapshot{StartOffset: 0}},
		{typ: snapshotType, key: k, tombstone: true},
	}
}

func encodeState(r *stateRecord) (key, value []byte) {
	key = appendStateKey(nil, r.typ, r.key)
	if !r.tombstone {
		value = appendSnapshot(nil, &r.snap)
	}
	return key, value
}

// Snapshots decode to what was encoded.
func TestStateRecordsRoundTrip(t *testing.T) {
	for _, want := range stateSeeds() {
		k, v := encodeState(&want)
		got, ok, err := decodeStateRecord(k, v)
		if err != nil || !ok {
			t.Fatalf("%+v: %v %v", want, ok, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded %+v, want %+v", got, want)
		}
	}
}

// A partition's state restores to the same state.
func TestStateRestore(t *testing.T) {
	lim := Limits{LockDuration: 1000, DeliveryLimit: 5, MaxInFlight: 100}
	p := NewPartition(10, lim)
	p.Acquire(0, "a", 10, 20, 0, false, nil, nil)
	if err := p.Acknowledge(0, "a", 10, 14, []int8{AckAccept, AckReject, AckAccept, AckRelease, AckAccept}); err != nil {
		t.Fatal(err)
	}
	start, batches := p.State()
	q := RestorePartition(start, batches, lim)
	s2, b2 := q.State()
	if start != 13 || s2 != start || !reflect.DeepEqual(b2, batches) {
		t.Fatalf("state %d %+v restored as %d %+v", start, batches, s2, b2)
	}
	if off, ok := q.FetchOffset(); off != 13 || !ok {
		t.Fatalf("restored fetch offset %d %v, want the released record 13", off, ok)
	}
}

// FuzzStateRecord feeds arbitrary bytes to the decoder of
// __share_group_state records: never a panic; a snapshot that decodes
// encodes to bytes that decode to it again, and restores a partition.
func FuzzStateRecord(f *testing.F) {
	for _, r := range stateSeeds() {
		k, v := encodeState(&r)
		f.Add(k, v)
	}
	upd := append(appendStateKey(nil, updateType, Key{Group: "g"}), 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 0)
	f.Add(upd[:27], upd[27:])
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, ok, err := decodeStateRecord(key, value)
		if err != nil || !ok {
			return
		}
		states := map[Key]*Snapshot{}
		applyStateRecord(states, &r)
		if r.typ != snapshotType || r.tombstone {
			return
		}
		k2, v2 := encodeState(&r)
		if !bytes.HasPrefix(key, k2) {
			t.Fatalf("key %x re-encodes as %x", key, k2)
		}
		r2, ok, err := decodeStateRecord(k2, v2)
		if err != nil || !ok || !reflect.DeepEqual(r.snap, r2.snap) {
			t.Fatalf("re-decoded %+v (%v %v), want %+v", r2.snap, ok, err, r.snap)
		}
		RestorePartition(r.snap.StartOffset, r.snap.Batches, Limits{LockDuration: 1, DeliveryLimit: 5, MaxInFlight: 1000})
	})
}

// hx decodes golden bytes written as hex a field at a time; spaces are
// ignored.
func hx(parts ...string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(strings.Join(parts, ""), " ", ""))
	if err != nil {
		panic(err) // a typo in a test table
	}
	return b
}

// The records of __share_group_state are the bytes of Kafka's schemas
// (share-coordinator/src/main/resources/common/message/Share*.json, Kafka
// 4.3), hand-encoded: key int16 type, GroupId int16 string, TopicId,
// Partition; value int16 version 0, then flexible fields.
func TestStateRecordsGolden(t *testing.T) {
	k := Key{Group: "g", Topic: [16]byte{1, 2, 3}, Partition: 7}
	key := func(typ string) []byte { return hx(typ, "0001 67", "01020300000000000000000000000000", "00000007") }
	snap := Snapshot{SnapshotEpoch: 3, StateEpoch: 1, LeaderEpoch: 2, StartOffset: 100, CreateTime: 5, WriteTime: 6,
		Batches: []StateBatch{{100, 104, stateAcknowledged, 1}, {105, 105, stateAvailable, 2}, {106, 110, stateArchived, 5}}}
	batches := hx("04",
		"0000000000000064 0000000000000068 02 0001 00", // FirstOffset, LastOffset, DeliveryState, DeliveryCount, tags
		"0000000000000069 0000000000000069 00 0002 00",
		"000000000000006a 000000000000006e 04 0005 00")
	snapValue := hx("0000",
		"00000003",         // SnapshotEpoch
		"00000001",         // StateEpoch
		"00000002",         // LeaderEpoch
		"0000000000000064", // StartOffset
		"0000000000000005", // CreateTimestamp
		"0000000000000006") // WriteTimestamp
	snapValue = append(append(snapValue, batches...), 0)

	// What kzero writes.
	for _, c := range []struct {
		name       string
		rec        stateRecord
		key, value []byte
	}{
		{"snapshot", stateRecord{typ: snapshotType, key: k, snap: snap}, key("0000"), snapValue},
		{"tombstone", stateRecord{typ: snapshotType, key: k, tombstone: true}, key("0000"), nil},
	} {
		gk, gv := encodeState(&c.rec)
		if !bytes.Equal(gk, c.key) || !bytes.Equal(gv, c.value) || (gv == nil) != (c.value == nil) {
			t.Errorf("%s encodes as\n key   %x\n value %x\nwant\n key   %x\n value %x", c.name, gk, gv, c.key, c.value)
		}
	}

	// What kzero reads, as Kafka writes it.
	for _, c := range []struct {
		name       string
		key, value []byte
		want       stateRecord
	}{
		{"snapshot", key("0000"), snapValue, stateRecord{typ: snapshotType, key: k, snap: snap}},
		{"snapshot with DeliveryCompleteCount", key("0000"),
			append(snapValue[:len(snapValue)-1:len(snapValue)-1], hx("01 00 04 00000006")...), // tag 0: DeliveryCompleteCount
			stateRecord{typ: snapshotType, key: k, snap: snap}},
		{"update", key("0001"),
			hx("0000",
				"00000004",         // SnapshotEpoch
				"00000002",         // LeaderEpoch
				"ffffffffffffffff", // StartOffset: unchanged
				"02 000000000000006f 0000000000000070 02 0001 00", // StateBatches
				"01 00 04 00000002"), // tag 0: DeliveryCompleteCount
			stateRecord{typ: updateType, key: k, snap: Snapshot{SnapshotEpoch: 4, LeaderEpoch: 2, StartOffset: -1,
				Batches: []StateBatch{{111, 112, stateAcknowledged, 1}}}}},
		{"tombstone", key("0000"), nil, stateRecord{typ: snapshotType, key: k, tombstone: true}},
	} {
		got, ok, err := decodeStateRecord(c.key, c.value)
		if err != nil || !ok || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s decodes as %+v (%v %v), want %+v", c.name, got, ok, err, c.want)
		}
	}
}
