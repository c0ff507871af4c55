package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"kzero/vfs"
)

// A producer state snapshot, <20-digit offset>.snapshot in the partition's
// folder, holds the producer state of the log below that offset, so
// recovery replays only the batches after it. Apache Kafka's format
// (version 1), big-endian:
//
//	offset  size  field
//	     0     2  version            (1)
//	     2     4  crc                (CRC-32C of bytes 6..end)
//	     6     4  entry count
//	    10   46n  entries:
//	                producerId             int64
//	                epoch                  int16
//	                lastSequence           int32  (-1 none)
//	                lastOffset             int64  (-1 none)
//	                offsetDelta            int32  (last batch: last offset - first)
//	                timestamp              int64
//	                coordinatorEpoch       int32
//	                currentTxnFirstOffset  int64  (-1 none)
const (
	snapshotVersion     = 1
	snapshotCRCAt       = 2
	snapshotCoveredFrom = 6
	snapshotHeaderSize  = 10
	snapshotEntrySize   = 46
	snapshotTempSuffix  = SnapshotSuffix + ".tmp"
)

// SnapshotSuffix ends the name of a producer state snapshot file.
const SnapshotSuffix = ".snapshot"

// ErrCorruptSnapshot means a snapshot file is short, has a bad CRC or an
// unknown version. The log deletes it and replays from an older snapshot,
// or from the start of the log.
var ErrCorruptSnapshot = errors.New("corrupt producer state snapshot")

// SnapshotPath is the path of the snapshot at offset in dir.
func SnapshotPath(dir string, offset int64) string {
	return filepath.Join(dir, FileName(offset, SnapshotSuffix))
}

// AppendSnapshot appends the snapshot file holding entries to dst.
func AppendSnapshot(dst []byte, entries []ProducerSnapshotEntry) []byte {
	start := len(dst)
	be := binary.BigEndian
	dst = be.AppendUint16(dst, snapshotVersion)
	dst = be.AppendUint32(dst, 0) // crc, below
	dst = be.AppendUint32(dst, uint32(len(entries)))
	for _, e := range entries {
		dst = be.AppendUint64(dst, uint64(e.ProducerID))
		dst = be.AppendUint16(dst, uint16(e.Epoch))
		dst = be.AppendUint32(dst, uint32(e.LastSequence))
		dst = be.AppendUint64(dst, uint64(e.LastOffset))
		dst = be.AppendUint32(dst, uint32(e.OffsetDelta))
		dst = be.AppendUint64(dst, uint64(e.Timestamp))
		dst = be.AppendUint32(dst, uint32(e.CoordinatorEpoch))
		dst = be.AppendUint64(dst, uint64(e.TxnFirstOffset))
	}
	f := dst[start:]
	be.PutUint32(f[snapshotCRCAt:], crc32.Checksum(f[snapshotCoveredFrom:], castagnoli))
	return dst
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// DecodeSnapshot parses a snapshot file. Errors wrap ErrCorruptSnapshot.
func DecodeSnapshot(data []byte) ([]ProducerSnapshotEntry, error) {
	if len(data) < snapshotHeaderSize {
		return nil, fmt.Errorf("%d bytes is shorter than the header: %w", len(data), ErrCorruptSnapshot)
	}
	be := binary.BigEndian
	if v := int16(be.Uint16(data)); v != snapshotVersion {
		return nil, fmt.Errorf("unknown version %d: %w", v, ErrCorruptSnapshot)
	}
	if want, got := be.Uint32(data[snapshotCRCAt:]), crc32.Checksum(data[snapshotCoveredFrom:], castagnoli); want != got {
		return nil, fmt.Errorf("crc %08x, computed %08x: %w", want, got, ErrCorruptSnapshot)
	}
	n := int64(int32(be.Uint32(data[snapshotCoveredFrom:])))
	if n < 0 || snapshotHeaderSize+n*snapshotEntrySize != int64(len(data)) {
		return nil, fmt.Errorf("%d entries do not fill %d bytes: %w", n, len(data), ErrCorruptSnapshot)
	}
	entries := make([]ProducerSnapshotEntry, n)
	e := data[snapshotHeaderSize:]
	for i := range entries {
		entries[i] = ProducerSnapshotEntry{
			ProducerID:       int64(be.Uint64(e[0:])),
			Epoch:            int16(be.Uint16(e[8:])),
			LastSequence:     int32(be.Uint32(e[10:])),
			LastOffset:       int64(be.Uint64(e[14:])),
			OffsetDelta:      int32(be.Uint32(e[22:])),
			Timestamp:        int64(be.Uint64(e[26:])),
			CoordinatorEpoch: int32(be.Uint32(e[34:])),
			TxnFirstOffset:   int64(be.Uint64(e[38:])),
		}
		e = e[snapshotEntrySize:]
	}
	return entries, nil
}

// WriteSnapshot writes the state s as the snapshot at offset in dir: to a
// temporary file, fsynced, then renamed over any snapshot of that offset,
// and the folder fsynced. A crash leaves the old file or the new one, plus
// maybe a stray <offset>.snapshot.tmp that ListSnapshots ignores.
func WriteSnapshot(fs FS, dir string, offset int64, s *ProducerStates) error {
	if err := writeSnapshot(fs, dir, offset, s, true); err != nil {
		return err
	}
	if err := vfs.Fsync(fs, dir); err != nil {
		return fmt.Errorf("write producer snapshot: %w", err)
	}
	return nil
}

// writeSnapshotUnsynced writes the snapshot as WriteSnapshot does but
// leaves it to the page cache: a roll writes it under the log's lock, and
// the roll's background flush fsyncs it (syncSnapshot) before the recovery
// point passes it, as Kafka does since KAFKA-15046. A crash before that
// may leave it torn: its CRC tells, and recovery falls back to an older
// snapshot and replays from there.
func writeSnapshotUnsynced(fs FS, dir string, offset int64, s *ProducerStates) error {
	return writeSnapshot(fs, dir, offset, s, false)
}

func writeSnapshot(fs FS, dir string, offset int64, s *ProducerStates, sync bool) error {
	data := AppendSnapshot(nil, s.Producers())
	path := SnapshotPath(dir, offset)
	tmp := filepath.Join(dir, FileName(offset, snapshotTempSuffix))
	if err := vfs.WriteFile(fs, tmp, data, sync); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("write producer snapshot: %w", err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("write producer snapshot: %w", err)
	}
	return nil
}

// syncSnapshot fsyncs the snapshot at offset, if there is one, and the
// folder that names it.
func syncSnapshot(fsys FS, dir string, offset int64) error {
	err := vfs.Fsync(fsys, SnapshotPath(dir, offset))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return vfs.Fsync(fsys, dir)
}

// LoadSnapshot reads the snapshot at path into a new state. A damaged file
// gives an error wrapping ErrCorruptSnapshot. The caller then removes
// expired producers (RemoveExpired), as Kafka skips them when it loads.
func LoadSnapshot(fs FS, path string) (*ProducerStates, error) {
	f, err := fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("load producer snapshot: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("load producer snapshot: %w", err)
	}
	// Check the entry count against the size before reading it all, so a
	// damaged header cannot make us allocate what the file does not hold.
	var h [snapshotHeaderSize]byte
	if n, _ := f.ReadAt(h[:], 0); n == len(h) {
		count := int64(int32(binary.BigEndian.Uint32(h[snapshotCoveredFrom:])))
		if count < 0 || snapshotHeaderSize+count*snapshotEntrySize != st.Size() {
			return nil, fmt.Errorf("producer snapshot %s: %d entries do not fill %d bytes: %w", path, count, st.Size(), ErrCorruptSnapshot)
		}
	}
	data := make([]byte, st.Size())
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, fmt.Errorf("load producer snapshot %s: %w", path, err)
	}
	entries, err := DecodeSnapshot(data)
	if err != nil {
		return nil, fmt.Errorf("producer snapshot %s: %w", path, err)
	}
	s := NewProducerStates()
	s.Restore(entries)
	return s, nil
}

// ListSnapshots returns the offsets of the snapshots in dir, ascending.
func ListSnapshots(dir string) ([]int64, error) {
	names, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list producer snapshots: %w", err)
	}
	var offsets []int64
	for _, e := range names {
		if off, sfx, ok := ParseFileName(e.Name()); ok && sfx == SnapshotSuffix && e.Type().IsRegular() {
			offsets = append(offsets, off)
		}
	}
	slices.Sort(offsets)
	return offsets, nil
}

// LatestSnapshot is the offset of the newest snapshot in dir at or below
// maxOffset; ok is false when there is none.
func LatestSnapshot(dir string, maxOffset int64) (offset int64, ok bool, err error) {
	offsets, err := ListSnapshots(dir)
	if err != nil {
		return 0, false, err
	}
	for i := len(offsets) - 1; i >= 0; i-- {
		if offsets[i] <= maxOffset {
			return offsets[i], true, nil
		}
	}
	return 0, false, nil
}

// DeleteSnapshotsBelow removes the snapshots at offsets below offset, as
// retention moves the log start offset.
func DeleteSnapshotsBelow(fs FS, dir string, offset int64) error {
	return deleteSnapshots(fs, dir, func(o int64) bool { return o < offset })
}

// DeleteSnapshotsAbove removes the snapshots at offsets above offset, for a
// log truncated to offset: they describe records it no longer has.
func DeleteSnapshotsAbove(fs FS, dir string, offset int64) error {
	return deleteSnapshots(fs, dir, func(o int64) bool { return o > offset })
}

func deleteSnapshots(fs FS, dir string, drop func(int64) bool) error {
	offsets, err := ListSnapshots(dir)
	if err != nil {
		return err
	}
	for _, o := range offsets {
		if !drop(o) {
			continue
		}
		if err := fs.Remove(SnapshotPath(dir, o)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("delete producer snapshot: %w", err)
		}
	}
	return nil
}
