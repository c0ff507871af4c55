package wal

import (
	"errors"
	"log/slog"
	"path/filepath"
	"testing"

	pb "go.etcd.io/raft/v3/raftpb"
	"golang.org/x/sys/unix"

	"kzero/vfs/errorfs"
)

// faultStorage is a bootstrapped storage in a new folder whose files go
// through efs, with entries 2 and 3 saved.
func faultStorage(t *testing.T, efs *errorfs.FS) (string, *Storage) {
	t.Helper()
	dir := t.TempDir()
	s, err := OpenFS(dir, slog.New(slog.DiscardHandler), efs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Bootstrap(voters(1), []byte("init")); err != nil {
		t.Fatal(err)
	}
	if err := s.Save(hard(1, 1, 3), []*pb.Entry{ent(2, 1, "a"), ent(3, 1, "b")}, true); err != nil {
		t.Fatal(err)
	}
	return dir, s
}

// A write, fsync or rename that fails makes the storage refuse every
// later write with the same error (the WAL's tail is unknown: the owner
// must stop) and leaves raft's view where it was; the files read back as
// what was written before, a torn frame cut off with a warning.
func TestStorageFaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		arm  func(efs *errorfs.FS)
		// op is the write that fails: a Save of entry 4, or a snapshot
		// at 3. saved says whether entry 4 reached the WAL anyway (a
		// write whose fsync failed), snap the newest snapshot on disk
		// after it (the bootstrap's at 1, or the new one at 3 when only
		// the WAL's rewrite failed: replay skips what it covers).
		save  bool
		saved bool
		snap  uint64
	}{
		{"torn WAL write", func(efs *errorfs.FS) { efs.FailWrites(walName, 7, unix.EIO) }, true, false, 1},
		{"WAL write out of space", func(efs *errorfs.FS) { efs.FailWrites(walName, 0, unix.ENOSPC) }, true, false, 1},
		{"WAL fsync", func(efs *errorfs.FS) { efs.FailSyncs(walName, unix.EIO) }, true, true, 1},
		{"snapshot write", func(efs *errorfs.FS) { efs.FailWrites(tmpSuffix, 10, unix.ENOSPC) }, false, false, 1},
		{"snapshot rename", func(efs *errorfs.FS) { efs.FailRenames(".snap", unix.EIO) }, false, false, 1},
		{"WAL rewrite rename", func(efs *errorfs.FS) { efs.FailRenames(walName, unix.EIO) }, false, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			efs := &errorfs.FS{}
			dir, s := faultStorage(t, efs)
			tc.arm(efs)
			var err error
			if tc.save {
				err = s.Save(hard(1, 1, 3), []*pb.Entry{ent(4, 1, "c")}, true)
			} else {
				err = s.CreateSnapshot(3, voters(1), []byte("state at 3"), 3)
			}
			if err == nil {
				t.Fatal("the write succeeded")
			}
			efs.Disarm()
			// Sticky: the disk works again, the storage still refuses.
			if err2 := s.Save(hard(1, 1, 3), []*pb.Entry{ent(5, 1, "d")}, true); !errors.Is(err2, err) {
				t.Fatalf("Save after a failure: %v, want %v", err2, err)
			}
			if err2 := s.CreateSnapshot(3, voters(1), []byte("s"), 3); !errors.Is(err2, err) {
				t.Fatalf("CreateSnapshot after a failure: %v, want %v", err2, err)
			}
			if last, _ := s.LastIndex(); tc.save && last != 3 {
				t.Fatalf("raft sees entries up to %d after a failed Save", last)
			}
			s.Close()

			r := mustOpen(t, dir)
			var want []*pb.Entry
			for _, e := range []*pb.Entry{ent(2, 1, "a"), ent(3, 1, "b"), ent(4, 1, "c")} {
				if e.GetIndex() > tc.snap && (e.GetIndex() < 4 || tc.saved) {
					want = append(want, e)
				}
			}
			checkEntries(t, r, want...)
			if got := r.SnapshotMeta().GetIndex(); got != tc.snap {
				t.Fatalf("snapshot at %d after reopening, want %d", got, tc.snap)
			}
			if m, _ := filepath.Glob(filepath.Join(dir, "*"+tmpSuffix)); len(m) > 0 {
				t.Fatalf("temporary files left: %v", m)
			}
		})
	}
}
