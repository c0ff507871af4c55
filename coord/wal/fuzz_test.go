package wal

import (
	"bytes"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
)

// FuzzReplay feeds arbitrary bytes to the WAL reader: it returns entries, a
// torn tail or an error, never panics, and what it accepts is consistent.
func FuzzReplay(f *testing.F) {
	b := appendFrame(nil, kindHeader, headerPayload())
	b = appendFrame(b, kindEntry, appendEntry(nil, ent(1, 1, "a")))
	b = appendFrame(b, kindEntry, appendEntry(nil, ent(2, 1, "bb")))
	b = appendFrame(b, kindHardState, appendHardState(nil, hard(1, 1, 2)))
	b = appendFrame(b, kindEntry, appendEntry(nil, ent(2, 2, "c")))
	f.Add(b, uint64(0))
	f.Add(b, uint64(1))
	f.Add(b[:len(b)-3], uint64(0))
	f.Add([]byte{}, uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, snapIndex uint64) {
		rep, err := replay(bytes.NewReader(data), snapIndex)
		if err != nil {
			return
		}
		if rep.valid > int64(len(data)) {
			t.Fatalf("valid %d > len %d", rep.valid, len(data))
		}
		for i, e := range rep.ents {
			if e.GetIndex() != snapIndex+1+uint64(i) {
				t.Fatalf("entry %d has index %d after snapshot %d", i, e.GetIndex(), snapIndex)
			}
		}
		// The valid prefix replays to the same result with no torn tail.
		again, err := replay(bytes.NewReader(data[:rep.valid]), snapIndex)
		if err != nil || again.torn != nil || len(again.ents) != len(rep.ents) {
			t.Fatalf("valid prefix replays differently: %v %v %d/%d", err, again.torn, len(again.ents), len(rep.ents))
		}
	})
}

// FuzzSnapshot feeds arbitrary bytes to the snapshot file reader.
func FuzzSnapshot(f *testing.F) {
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(uint64(7)), Term: new(uint64(3)), ConfState: voters(1, 2, 3)}, Data: []byte("image")}
	b := appendFrame(nil, kindHeader, headerPayload())
	b = appendFrame(b, kindSnapMeta, appendSnapMeta(nil, snap.GetMetadata()))
	b = appendFrame(b, kindSnapData, snap.GetData())
	f.Add(b)
	f.Add(b[:20])
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := decodeSnapshot(bytes.NewReader(data))
		if err != nil {
			return
		}
		// Re-encoding what was accepted reads back the same.
		re := appendFrame(nil, kindHeader, headerPayload())
		re = appendFrame(re, kindSnapMeta, appendSnapMeta(nil, got.GetMetadata()))
		re = appendFrame(re, kindSnapData, got.GetData())
		again, err := decodeSnapshot(bytes.NewReader(re))
		if err != nil {
			t.Fatal(err)
		}
		if again.GetMetadata().GetIndex() != got.GetMetadata().GetIndex() || !bytes.Equal(again.GetData(), got.GetData()) {
			t.Fatal("round trip differs")
		}
	})
}
