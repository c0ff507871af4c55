package share

import (
	"bytes"
	"reflect"
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
