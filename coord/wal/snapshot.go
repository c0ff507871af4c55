package wal

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/vfs"
)

// A snapshot file, snap-<20-digit index>.snap, holds a header frame, a
// kindSnapMeta frame and a kindSnapData frame. It is written to a .tmp file,
// fsynced, renamed into place, and the folder fsynced: a snapshot file is
// whole or absent.

const (
	snapPrefix = "snap-"
	snapSuffix = ".snap"
	tmpSuffix  = ".tmp"
)

func snapName(index uint64) string {
	return fmt.Sprintf("%s%020d%s", snapPrefix, index, snapSuffix)
}

// snapIndexes lists the indexes of the snapshot files in dir, ascending.
func snapIndexes(dir string) ([]uint64, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var idx []uint64
	for _, de := range des {
		name := de.Name()
		if !strings.HasPrefix(name, snapPrefix) || !strings.HasSuffix(name, snapSuffix) {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSuffix(strings.TrimPrefix(name, snapPrefix), snapSuffix), 10, 64)
		if err != nil || snapName(n) != name {
			continue
		}
		idx = append(idx, n)
	}
	slices.Sort(idx)
	return idx, nil
}

func writeSnapshot(fs FS, dir string, snap *pb.Snapshot) error {
	meta := snap.GetMetadata()
	b := appendFrame(nil, kindHeader, headerPayload())
	b = appendFrame(b, kindSnapMeta, appendSnapMeta(nil, meta))
	b = appendFrame(b, kindSnapData, snap.GetData())
	return writeFileAtomic(fs, dir, snapName(meta.GetIndex()), b)
}

// readSnapshot reads and checks one snapshot file.
func readSnapshot(fs FS, path string) (*pb.Snapshot, error) {
	f, err := fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return decodeSnapshot(f)
}

func decodeSnapshot(r io.Reader) (*pb.Snapshot, error) {
	fr := newFrameReader(r)
	kind, p, err := fr.next()
	if err != nil {
		return nil, fmt.Errorf("snapshot header: %w", err)
	}
	if err := checkHeader(kind, p); err != nil {
		return nil, err
	}
	kind, p, err = fr.next()
	if err != nil {
		return nil, fmt.Errorf("snapshot metadata: %w", err)
	}
	if kind != kindSnapMeta {
		return nil, fmt.Errorf("snapshot: frame kind %d where metadata belongs", kind)
	}
	meta, err := decodeSnapMeta(p)
	if err != nil {
		return nil, fmt.Errorf("snapshot metadata: %w", err)
	}
	kind, p, err = fr.next()
	if err != nil {
		return nil, fmt.Errorf("snapshot data: %w", err)
	}
	if kind != kindSnapData {
		return nil, fmt.Errorf("snapshot: frame kind %d where data belongs", kind)
	}
	data := append([]byte(nil), p...)
	if _, _, err := fr.next(); err != io.EOF {
		return nil, errors.New("snapshot: bytes after the data frame")
	}
	return &pb.Snapshot{Metadata: meta, Data: data}, nil
}

// writeFileAtomic replaces dir/name with b: write a temporary file, fsync
// it, rename it over name, fsync the folder.
func writeFileAtomic(fs FS, dir, name string, b []byte) error {
	tmp := filepath.Join(dir, name+tmpSuffix)
	if err := vfs.WriteFile(fs, tmp, b, true); err != nil {
		return err
	}
	if err := fs.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return vfs.Fsync(fs, dir)
}
