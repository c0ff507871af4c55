package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/vfs"
)

func ent(index, term uint64, data string) *pb.Entry {
	return &pb.Entry{Index: new(index), Term: new(term), Type: pb.EntryNormal.Enum(), Data: []byte(data)}
}

func hard(term, vote, commit uint64) *pb.HardState {
	return &pb.HardState{Term: new(term), Vote: new(vote), Commit: new(commit)}
}

func voters(ids ...uint64) *pb.ConfState {
	return &pb.ConfState{Voters: ids, AutoLeave: new(false)}
}

func mustOpen(t *testing.T, dir string) *Storage {
	t.Helper()
	s, err := Open(dir, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// entries returns every entry the storage holds, first to last.
func entries(t *testing.T, s *Storage) []*pb.Entry {
	t.Helper()
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if last < first {
		return nil
	}
	es, err := s.Entries(first, last+1, math.MaxUint64)
	if err != nil {
		t.Fatalf("Entries(%d, %d): %v", first, last+1, err)
	}
	return es
}

func checkEntries(t *testing.T, s *Storage, want ...*pb.Entry) {
	t.Helper()
	got := entries(t, s)
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].GetIndex() != want[i].GetIndex() || got[i].GetTerm() != want[i].GetTerm() ||
			got[i].GetType() != want[i].GetType() || !bytes.Equal(got[i].GetData(), want[i].GetData()) {
			t.Fatalf("entry %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func bootstrapped(t *testing.T, dir string) *Storage {
	t.Helper()
	s := mustOpen(t, dir)
	if !s.Fresh() {
		t.Fatal("new folder is not fresh")
	}
	if err := s.Bootstrap(voters(1), []byte("init")); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBootstrapAndReplay(t *testing.T) {
	dir := t.TempDir()
	s := bootstrapped(t, dir)
	if err := s.Save(hard(2, 1, 1), []*pb.Entry{ent(2, 2, ""), ent(3, 2, "a")}, true); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(hard(2, 1, 3), nil, false); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = mustOpen(t, dir)
	if s.Fresh() {
		t.Fatal("reopened storage claims to be fresh")
	}
	hs, cs, err := s.InitialState()
	if err != nil {
		t.Fatal(err)
	}
	if hs.GetTerm() != 2 || hs.GetVote() != 1 || hs.GetCommit() != 3 {
		t.Fatalf("hard state %v", hs)
	}
	if len(cs.GetVoters()) != 1 || cs.GetVoters()[0] != 1 {
		t.Fatalf("conf state %v", cs)
	}
	snap, _ := s.Snapshot()
	if snap.GetMetadata().GetIndex() != 1 || string(snap.GetData()) != "init" {
		t.Fatalf("snapshot %v", snap)
	}
	checkEntries(t, s, ent(2, 2, ""), ent(3, 2, "a"))
}

func TestReplayOverwritesTail(t *testing.T) {
	dir := t.TempDir()
	s := bootstrapped(t, dir)
	if err := s.Save(hard(2, 1, 1), []*pb.Entry{ent(2, 2, "a"), ent(3, 2, "b"), ent(4, 2, "c")}, true); err != nil {
		t.Fatal(err)
	}
	// A new leader overwrote the uncommitted entries from 3 on.
	if err := s.Save(hard(3, 2, 1), []*pb.Entry{ent(3, 3, "x")}, true); err != nil {
		t.Fatal(err)
	}
	checkEntries(t, s, ent(2, 2, "a"), ent(3, 3, "x"))
	s.Close()
	s = mustOpen(t, dir)
	checkEntries(t, s, ent(2, 2, "a"), ent(3, 3, "x"))
}

// TestTornTail cuts the WAL at every byte of its last frames and appends
// garbage: Open truncates to the last whole frame and writing goes on.
func TestTornTail(t *testing.T) {
	base := t.TempDir()
	s := bootstrapped(t, base)
	if err := s.Save(hard(2, 1, 2), []*pb.Entry{ent(2, 2, "one")}, true); err != nil {
		t.Fatal(err)
	}
	good, _ := s.WALSize()
	if err := s.Save(hard(2, 1, 3), []*pb.Entry{ent(3, 2, "two-two-two")}, true); err != nil {
		t.Fatal(err)
	}
	full, _ := s.WALSize()
	s.Close()
	wal, err := os.ReadFile(filepath.Join(base, walName))
	if err != nil {
		t.Fatal(err)
	}
	snapFile := snapName(1)
	snap, err := os.ReadFile(filepath.Join(base, snapFile))
	if err != nil {
		t.Fatal(err)
	}

	cases := map[string][]byte{
		"garbage": append(bytes.Clone(wal), 0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 9, 1),
		"zeros":   append(bytes.Clone(wal), make([]byte, 4096)...),
	}
	// The second Save wrote entry 3's frame, then a HardState frame.
	entryEnd := good + int64(len(appendFrame(nil, kindEntry, appendEntry(nil, ent(3, 2, "two-two-two")))))
	for cut := good + 1; cut < full; cut++ {
		cases[fmt.Sprintf("cut%d", cut)] = wal[:cut]
	}
	flipped := bytes.Clone(wal)
	flipped[good+10] ^= 0x40
	cases["flipped"] = flipped

	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, walName), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, snapFile), snap, 0o644); err != nil {
				t.Fatal(err)
			}
			s := mustOpen(t, dir)
			got := entries(t, s)
			if len(data) >= int(entryEnd) && name != "flipped" {
				checkEntries(t, s, ent(2, 2, "one"), ent(3, 2, "two-two-two"))
			} else {
				checkEntries(t, s, ent(2, 2, "one"))
			}
			hs, _, _ := s.InitialState()
			if last := got[len(got)-1].GetIndex(); hs.GetCommit() > last {
				t.Fatalf("commit %d beyond last entry %d", hs.GetCommit(), last)
			}
			// The tail is gone from the file, and appends follow the good part.
			if err := s.Save(hard(4, 1, 3), []*pb.Entry{ent(got[len(got)-1].GetIndex()+1, 4, "after")}, true); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s = mustOpen(t, dir)
			es := entries(t, s)
			if string(es[len(es)-1].GetData()) != "after" {
				t.Fatalf("last entry after reopen: %v", es[len(es)-1])
			}
		})
	}
}

func TestTornHeader(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, walName), []byte{0, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	s := mustOpen(t, dir)
	if !s.Fresh() {
		t.Fatal("a WAL with a torn header holds nothing: storage should be fresh")
	}
	if err := s.Bootstrap(voters(1), nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = mustOpen(t, dir)
	if s.Fresh() {
		t.Fatal("fresh after bootstrap")
	}
}

func TestSnapshotCompactsWAL(t *testing.T) {
	dir := t.TempDir()
	s := bootstrapped(t, dir)
	var all []*pb.Entry
	for i := uint64(2); i <= 200; i++ {
		e := ent(i, 2, "payload-payload-payload")
		all = append(all, e)
		if err := s.Save(hard(2, 1, i), []*pb.Entry{e}, true); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := s.WALSize()
	if err := s.CreateSnapshot(190, voters(1), []byte("state@190"), 190); err != nil {
		t.Fatal(err)
	}
	after, _ := s.WALSize()
	if after >= before/5 {
		t.Fatalf("WAL %d bytes after compaction, %d before", after, before)
	}
	if _, err := os.Stat(filepath.Join(dir, snapName(1))); !os.IsNotExist(err) {
		t.Fatalf("old snapshot still there: %v", err)
	}
	if err := s.Save(hard(2, 1, 201), []*pb.Entry{ent(201, 2, "late")}, true); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s = mustOpen(t, dir)
	snap, _ := s.Snapshot()
	if snap.GetMetadata().GetIndex() != 190 || string(snap.GetData()) != "state@190" {
		t.Fatalf("snapshot %v", snap.GetMetadata())
	}
	checkEntries(t, s, append(all[189:], ent(201, 2, "late"))...)
	hs, _, _ := s.InitialState()
	if hs.GetCommit() != 201 {
		t.Fatalf("commit %d", hs.GetCommit())
	}
}

// TestCrashBeforeWALRewrite leaves a new snapshot beside the old WAL, as a
// crash between the two steps of CreateSnapshot would.
func TestCrashBeforeWALRewrite(t *testing.T) {
	dir := t.TempDir()
	s := bootstrapped(t, dir)
	for i := uint64(2); i <= 10; i++ {
		if err := s.Save(hard(2, 1, i), []*pb.Entry{ent(i, 2, "x")}, true); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	snap := &pb.Snapshot{Metadata: &pb.SnapshotMetadata{Index: new(uint64(6)), Term: new(uint64(2)), ConfState: voters(1)}, Data: []byte("s6")}
	if err := writeSnapshot(vfs.OS, dir, snap); err != nil {
		t.Fatal(err)
	}
	s = mustOpen(t, dir)
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if first != 7 || last != 10 {
		t.Fatalf("entries %d..%d, want 7..10", first, last)
	}
	if _, err := os.Stat(filepath.Join(dir, snapName(1))); !os.IsNotExist(err) {
		t.Fatal("older snapshot not removed on open")
	}
}

func TestGapIsCorrupt(t *testing.T) {
	dir := t.TempDir()
	s := bootstrapped(t, dir)
	if err := s.Save(nil, []*pb.Entry{ent(2, 2, "a")}, true); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Append a frame for entry 9 by hand: entries 3..8 are missing.
	f, err := os.OpenFile(filepath.Join(dir, walName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(appendFrame(nil, kindEntry, appendEntry(nil, ent(9, 2, "z")))); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Open(dir, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want ErrCorrupt", err)
	}
}

func TestCorruptSnapshotRefused(t *testing.T) {
	dir := t.TempDir()
	s := bootstrapped(t, dir)
	s.Close()
	path := filepath.Join(dir, snapName(1))
	b, _ := os.ReadFile(path)
	b[len(b)-1] ^= 1
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, nil); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open = %v, want ErrCorrupt", err)
	}
}

func TestTempFilesRemoved(t *testing.T) {
	dir := t.TempDir()
	tmp := filepath.Join(dir, walName+tmpSuffix)
	if err := os.WriteFile(tmp, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustOpen(t, dir)
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Fatal("temporary file left")
	}
}
