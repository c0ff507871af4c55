package wal

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"

	"kzero/vfs"
)

// walName is the write-ahead log file in the storage folder.
const walName = "raft.wal"

// ErrCorrupt marks state on disk that cannot be a crash's leftover: a gap
// between the snapshot and the log, an unreadable snapshot, a log entry of
// an unknown kind. Open refuses to start on it rather than lose data.
var ErrCorrupt = errors.New("raft storage corrupt")

// Storage is raft's log storage backed by files: a raft.MemoryStorage
// (which raft reads) filled from the newest snapshot and the write-ahead log
// on Open, and kept in step with them by Save, ApplySnapshot and
// CreateSnapshot, which write and fsync the files first.
//
// One goroutine, the raft loop, owns a Storage: it calls every method, and
// raft (on the same goroutine) calls the raft.Storage methods.
type Storage struct {
	*raft.MemoryStorage

	dir    string
	logger *slog.Logger
	fs     FS
	f      File   // the WAL, positioned at its end
	buf    []byte // frames of one Save
	hard   *pb.HardState
	snap   *pb.SnapshotMetadata // newest snapshot on disk; nil if none
	fresh  bool
	err    error // sticky: after a failed write the WAL's tail is unknown
}

// Open opens or creates the storage in dir and replays it: the newest
// snapshot, then the WAL's entries after it and its last HardState. A WAL
// that ends in a torn or corrupt frame (a crash mid-write) is truncated
// there, with a warning.
func Open(dir string, logger *slog.Logger) (*Storage, error) {
	return OpenFS(dir, logger, nil)
}

// OpenFS is Open with the files written through fs (nil: the operating
// system's); tests inject faults so.
func OpenFS(dir string, logger *slog.Logger, fs FS) (*Storage, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if fs == nil {
		fs = vfs.OS
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		// A new folder: its entry in the parent must be durable too, or a
		// power cut could lose the whole metadata log while the log dirs'
		// data survives.
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("raft storage: %w", err)
		}
		if err := vfs.Fsync(fs, filepath.Dir(dir)); err != nil {
			return nil, fmt.Errorf("raft storage: %w", err)
		}
	}
	if err := removeTemps(fs, dir); err != nil {
		return nil, fmt.Errorf("raft storage: %w", err)
	}
	s := &Storage{MemoryStorage: raft.NewMemoryStorage(), dir: dir, logger: logger, fs: fs}

	idx, err := snapIndexes(dir)
	if err != nil {
		return nil, fmt.Errorf("raft storage: %w", err)
	}
	var snapIndex, snapTerm uint64
	if len(idx) > 0 {
		newest := filepath.Join(dir, snapName(idx[len(idx)-1]))
		snap, err := readSnapshot(fs, newest)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, newest, err)
		}
		if err := s.MemoryStorage.ApplySnapshot(snap); err != nil {
			return nil, fmt.Errorf("raft storage: %w", err)
		}
		s.snap = snap.GetMetadata()
		snapIndex, snapTerm = s.snap.GetIndex(), s.snap.GetTerm()
		for _, old := range idx[:len(idx)-1] { // left by a crash before cleanup
			_ = fs.Remove(filepath.Join(dir, snapName(old)))
		}
	}

	path := filepath.Join(dir, walName)
	f, err := fs.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("raft storage: %w", err)
	}
	rep, err := replay(f, snapIndex)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	if rep.torn != nil {
		s.logger.Warn("raft WAL ends in a torn or corrupt frame; truncating it there",
			"path", path, "valid_bytes", rep.valid, "reason", rep.torn)
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("raft storage: %w", err)
	}
	if rep.valid < size || rep.valid == 0 {
		if err := f.Truncate(rep.valid); err != nil {
			f.Close()
			return nil, fmt.Errorf("raft storage: truncate WAL: %w", err)
		}
		if _, err := f.Seek(rep.valid, io.SeekStart); err != nil {
			f.Close()
			return nil, fmt.Errorf("raft storage: %w", err)
		}
		if rep.valid == 0 {
			if _, err := f.Write(appendFrame(nil, kindHeader, headerPayload())); err != nil {
				f.Close()
				return nil, fmt.Errorf("raft storage: write WAL header: %w", err)
			}
		}
		if err := f.Sync(); err != nil {
			f.Close()
			return nil, fmt.Errorf("raft storage: %w", err)
		}
		if err := vfs.Fsync(fs, dir); err != nil {
			f.Close()
			return nil, fmt.Errorf("raft storage: %w", err)
		}
	}
	s.f = f

	if err := s.MemoryStorage.Append(rep.ents); err != nil {
		f.Close()
		return nil, fmt.Errorf("raft storage: %w", err)
	}
	last, _ := s.MemoryStorage.LastIndex()
	s.fresh = s.snap == nil && len(rep.ents) == 0 && rep.hard == nil
	if rep.hard != nil || s.snap != nil {
		// raft refuses a commit index outside [snapshot, last entry]; a
		// torn tail can leave the log shorter than a HardState written
		// before the crash claimed, and those entries were never acked.
		hs := &pb.HardState{Term: new(max(rep.hard.GetTerm(), snapTerm)), Vote: new(rep.hard.GetVote()),
			Commit: new(min(max(rep.hard.GetCommit(), snapIndex), last))}
		s.hard = hs
		if err := s.MemoryStorage.SetHardState(hs); err != nil {
			f.Close()
			return nil, fmt.Errorf("raft storage: %w", err)
		}
	}
	return s, nil
}

func removeTemps(fs FS, dir string) error {
	des, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, de := range des {
		if strings.HasSuffix(de.Name(), tmpSuffix) {
			if err := fs.Remove(filepath.Join(dir, de.Name())); err != nil {
				return err
			}
		}
	}
	return nil
}

// replayed is what a WAL holds after a snapshot.
type replayed struct {
	ents  []*pb.Entry   // consecutive, from snapshot index + 1
	hard  *pb.HardState // the last one; nil if none
	valid int64         // bytes of whole valid frames
	torn  error         // why reading stopped before the end; nil at a clean end
}

// replay reads a WAL. Entries at or below snapIndex are covered by the
// snapshot and skipped; an entry at or below the last one read replaces it
// and everything after (raft overwrote an uncommitted tail).
func replay(r io.Reader, snapIndex uint64) (replayed, error) {
	var rep replayed
	fr := newFrameReader(r)
	kind, p, err := fr.next()
	switch {
	case err == io.EOF:
		return rep, nil
	case errors.Is(err, errTorn):
		rep.torn = err // crashed while writing the header
		return rep, nil
	case err != nil:
		return rep, err
	}
	if err := checkHeader(kind, p); err != nil {
		return rep, err
	}
	rep.valid = fr.off
	for {
		kind, p, err := fr.next()
		if err == io.EOF {
			return rep, nil
		}
		if errors.Is(err, errTorn) {
			rep.torn = err
			return rep, nil
		}
		if err != nil {
			return rep, err
		}
		switch kind {
		case kindEntry:
			e, err := decodeEntry(p)
			if err != nil {
				return rep, fmt.Errorf("entry at byte %d: %w", rep.valid, err)
			}
			i := e.GetIndex()
			if i <= snapIndex {
				break
			}
			next := snapIndex + 1 + uint64(len(rep.ents))
			if i > next {
				return rep, fmt.Errorf("entry %d follows entry %d: the log has a gap", i, next-1)
			}
			rep.ents = append(rep.ents[:i-snapIndex-1], e)
		case kindHardState:
			hs, err := decodeHardState(p)
			if err != nil {
				return rep, fmt.Errorf("hard state at byte %d: %w", rep.valid, err)
			}
			rep.hard = hs
		default:
			return rep, fmt.Errorf("frame kind %d at byte %d", kind, rep.valid)
		}
		rep.valid = fr.off
	}
}

// Exists reports whether dir holds a metadata log: a snapshot file or a
// WAL with more than its header. It creates nothing.
func Exists(dir string) (bool, error) {
	idx, err := snapIndexes(dir)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if len(idx) > 0 {
		return true, nil
	}
	fi, err := os.Stat(filepath.Join(dir, walName))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return fi.Size() > int64(len(appendFrame(nil, kindHeader, headerPayload()))), nil
}

// Fresh reports whether Open found nothing: no snapshot, no entries, no
// HardState. A fresh storage is bootstrapped before raft starts.
func (s *Storage) Fresh() bool { return s.fresh }

// SnapshotMeta returns the metadata of the newest snapshot on disk, nil if
// there is none.
func (s *Storage) SnapshotMeta() *pb.SnapshotMetadata { return s.snap }

// Bootstrap gives a fresh storage its first state: a snapshot at index 1,
// term 1, holding the initial configuration cs and the state machine's
// initial data, and a HardState committing it. This is the bootstrap that
// raft's documentation recommends over RawNode.Bootstrap: every voter of a
// new cluster writes the same one, and restarts need no special case.
func (s *Storage) Bootstrap(cs *pb.ConfState, data []byte) error {
	if !s.fresh {
		return errors.New("raft storage: bootstrap of a storage that is not fresh")
	}
	snap := &pb.Snapshot{
		Metadata: &pb.SnapshotMetadata{Index: new(uint64(1)), Term: new(uint64(1)), ConfState: cs},
		Data:     data,
	}
	if err := s.ApplySnapshot(snap); err != nil {
		return err
	}
	if err := s.Save(&pb.HardState{Term: new(uint64(1)), Commit: new(uint64(1))}, nil, true); err != nil {
		return err
	}
	s.fresh = false
	return nil
}

// Save makes a Ready's HardState and entries durable, then hands them to the
// MemoryStorage. With sync (raft's Ready.MustSync) the WAL is fsynced before
// Save returns, as raft requires before the Ready's messages go out or
// Advance is called. A nil or empty HardState is not written.
func (s *Storage) Save(hs *pb.HardState, ents []*pb.Entry, sync bool) error {
	if s.err != nil {
		return s.err
	}
	writeHard := hs != nil && !raft.IsEmptyHardState(hs)
	if len(ents) == 0 && !writeHard {
		return nil
	}
	s.buf = s.buf[:0]
	for _, e := range ents {
		var start int
		s.buf, start = beginFrame(s.buf, kindEntry)
		s.buf = endFrame(appendEntry(s.buf, e), start)
	}
	if writeHard {
		var start int
		s.buf, start = beginFrame(s.buf, kindHardState)
		s.buf = endFrame(appendHardState(s.buf, hs), start)
	}
	if _, err := s.f.Write(s.buf); err != nil {
		return s.fail(fmt.Errorf("raft storage: write WAL: %w", err))
	}
	if sync {
		if err := s.f.Sync(); err != nil {
			return s.fail(fmt.Errorf("raft storage: fsync WAL: %w", err))
		}
	}
	if len(s.buf) > 1<<20 {
		s.buf = nil // do not pin a burst's buffer
	}
	if err := s.MemoryStorage.Append(ents); err != nil {
		return s.fail(fmt.Errorf("raft storage: %w", err))
	}
	if writeHard {
		s.hard = hs
		if err := s.MemoryStorage.SetHardState(hs); err != nil {
			return s.fail(fmt.Errorf("raft storage: %w", err))
		}
	}
	return nil
}

func (s *Storage) fail(err error) error {
	s.err = err
	return err
}

// ApplySnapshot installs a snapshot received from the leader: the snapshot
// file is written, the WAL is rewritten without the entries it covers, and
// the MemoryStorage is reset to it.
func (s *Storage) ApplySnapshot(snap *pb.Snapshot) error {
	if s.err != nil {
		return s.err
	}
	if err := writeSnapshot(s.fs, s.dir, snap); err != nil {
		return s.fail(fmt.Errorf("raft storage: write snapshot: %w", err))
	}
	if err := s.MemoryStorage.ApplySnapshot(snap); err != nil {
		return s.fail(fmt.Errorf("raft storage: %w", err))
	}
	return s.afterSnapshot(snap.GetMetadata())
}

// CreateSnapshot records the state machine's data as of applied index i
// (with the configuration cs in force there) as a snapshot, then compacts:
// entries up to compact (at most i) leave the MemoryStorage and the WAL.
// A leader with followers keeps some entries below i so that a follower a
// little behind catches up from the log instead of a whole snapshot.
func (s *Storage) CreateSnapshot(i uint64, cs *pb.ConfState, data []byte, compact uint64) error {
	if s.err != nil {
		return s.err
	}
	snap, err := s.MemoryStorage.CreateSnapshot(i, cs, data)
	if err != nil {
		return fmt.Errorf("raft storage: %w", err)
	}
	if err := writeSnapshot(s.fs, s.dir, snap); err != nil {
		return s.fail(fmt.Errorf("raft storage: write snapshot: %w", err))
	}
	if first, _ := s.MemoryStorage.FirstIndex(); compact >= first && compact <= i {
		if err := s.MemoryStorage.Compact(compact); err != nil {
			return s.fail(fmt.Errorf("raft storage: %w", err))
		}
	}
	return s.afterSnapshot(snap.GetMetadata())
}

// afterSnapshot rewrites the WAL to hold only what the MemoryStorage still
// has (the HardState and the entries past the compaction point), then
// removes older snapshot files. A crash before the rename leaves the old
// WAL, whose entries the new snapshot covers and replay skips.
func (s *Storage) afterSnapshot(meta *pb.SnapshotMetadata) error {
	s.snap = meta
	b := appendFrame(nil, kindHeader, headerPayload())
	first, _ := s.MemoryStorage.FirstIndex()
	last, _ := s.MemoryStorage.LastIndex()
	if last >= first {
		ents, err := s.MemoryStorage.Entries(first, last+1, math.MaxUint64)
		if err != nil {
			return s.fail(fmt.Errorf("raft storage: %w", err))
		}
		for _, e := range ents {
			var start int
			b, start = beginFrame(b, kindEntry)
			b = endFrame(appendEntry(b, e), start)
		}
	}
	if s.hard != nil {
		var start int
		b, start = beginFrame(b, kindHardState)
		b = endFrame(appendHardState(b, s.hard), start)
	}
	if err := writeFileAtomic(s.fs, s.dir, walName, b); err != nil {
		return s.fail(fmt.Errorf("raft storage: rewrite WAL: %w", err))
	}
	f, err := s.fs.OpenFile(filepath.Join(s.dir, walName), os.O_RDWR, 0o644)
	if err != nil {
		return s.fail(fmt.Errorf("raft storage: %w", err))
	}
	if _, err := f.Seek(0, io.SeekEnd); err != nil {
		f.Close()
		return s.fail(fmt.Errorf("raft storage: %w", err))
	}
	s.f.Close()
	s.f = f
	idx, err := snapIndexes(s.dir)
	if err != nil {
		return nil // stale snapshot files are removed on the next Open
	}
	for _, old := range idx {
		if old < meta.GetIndex() {
			if err := s.fs.Remove(filepath.Join(s.dir, snapName(old))); err != nil {
				s.logger.Warn("raft storage: remove old snapshot", "err", err)
			}
		}
	}
	return nil
}

// WALSize returns the WAL file's size in bytes.
func (s *Storage) WALSize() (int64, error) {
	fi, err := s.f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Close closes the WAL file. Everything Save wrote with sync is on disk.
func (s *Storage) Close() error {
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// beginFrame appends a frame header with length and checksum to be filled
// by endFrame once the payload is appended after it.
func beginFrame(b []byte, kind byte) ([]byte, int) {
	start := len(b)
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0, kind)
	return b, start
}

func endFrame(b []byte, start int) []byte {
	body := b[start+frameHeaderLen:]
	binary.BigEndian.PutUint32(b[start:], uint32(len(body)))
	binary.BigEndian.PutUint32(b[start+4:], crc32.Checksum(body, castagnoli))
	return b
}
