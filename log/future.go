package log

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/record"
	"kzero/vfs"
)

// A replica moves to another log dir (AlterReplicaLogDirs) through a
// future log: a second log of the partition, in the destination dir, in a
// folder named <topic>-<partition>.<id>-future (Kafka's name). The replica
// copies the current log into it as a follower copies its leader's, then,
// with appends held, replaces the current log with it
// (ReplaceWithFuture):
//
//  1. both logs are closed (fsynced, producer state snapshotted);
//  2. the current log's folder is renamed <topic>-<partition>.<n>-delete;
//  3. the future log's folder is renamed <topic>-<partition>;
//  4. the future log is opened again at its new path and becomes the
//     partition's log; the old folder is removed, its files staying open
//     for the reads that hold a range of them.
//
// A crash leaves one of three states, each found at the next start
// (resolveFutures): before 2, a current log and a future log, and the
// future one is kept for the replica to go on copying into; between 2 and
// 3, a -delete folder (removed, as any) and a future log alone, which is
// promoted to the partition's log; after 3, the move is done.

// futureSuffix ends the folder of a future log.
const futureSuffix = "-future"

// futureLog is a partition's future log and the log dir it is in.
type futureLog struct {
	log *Log
	dir string
}

// pendingFuture is a future log's folder found at start, resolved once
// every log dir is open (the partition's current log may be in a later
// one).
type pendingFuture struct {
	tp   TopicPartition
	dir  string // the log dir
	path string // the folder
	opts OpenOptions
}

// parseFutureName reads <topic>-<partition>.<id>-future.
func parseFutureName(name string) (TopicPartition, bool) {
	rest, ok := strings.CutSuffix(name, futureSuffix)
	if !ok {
		return TopicPartition{}, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i <= 0 {
		return TopicPartition{}, false
	}
	return ParseTopicPartition(rest[:i])
}

// resolveFutures settles the future logs found at start: one whose
// partition has a current log is opened for the replica to resume the
// move; one without is what a crash left between the two renames of a
// swap, and becomes the partition's log. A second future log of one
// partition (none is ever made) is deleted.
func (m *Manager) resolveFutures(pending []pendingFuture) error {
	for _, pf := range pending {
		_, current := m.mu.logs[pf.tp]
		if _, dup := m.mu.futures[pf.tp]; dup || current && m.mu.dirOf[pf.tp] == pf.dir {
			m.logger.Warn("deleting a second future log", "partition", pf.tp, "path", pf.path)
			if err := os.RemoveAll(pf.path); err != nil {
				return fmt.Errorf("delete future log %s: %w", pf.path, err)
			}
			continue
		}
		path := pf.path
		if !current {
			path = filepath.Join(pf.dir, pf.tp.String())
			m.logger.Info("completing a replica move a crash interrupted: the future log becomes the partition's", "partition", pf.tp, "dir", pf.dir)
			if err := m.fs().Rename(pf.path, path); err != nil {
				return fmt.Errorf("promote future log %s: %w", pf.path, err)
			}
			if err := vfs.Fsync(m.fs(), pf.dir); err != nil {
				return fmt.Errorf("promote future log %s: %w", pf.path, err)
			}
		}
		l, err := Open(path, m.cfg.Defaults, pf.opts)
		if err != nil {
			return fmt.Errorf("open log %s: %w", path, err)
		}
		if current {
			m.mu.futures[pf.tp] = futureLog{log: l, dir: pf.dir}
		} else {
			m.mu.logs[pf.tp] = l
			m.mu.dirOf[pf.tp] = pf.dir
		}
	}
	return nil
}

// LogDir returns the log dir (one of Dirs) that path names, cleaned, and
// whether there is one.
func (m *Manager) LogDir(path string) (string, bool) {
	path = filepath.Clean(path)
	for _, d := range m.cfg.Dirs {
		if d == path {
			return d, true
		}
	}
	return "", false
}

// DirOf is the log dir holding the partition's current log.
func (m *Manager) DirOf(tp TopicPartition) (string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	d, ok := m.mu.dirOf[tp]
	return d, ok
}

// PreferDir makes dir the log dir of the partition's log when it is
// created later (Kafka's preferred log dir: AlterReplicaLogDirs for a
// replica this broker does not hold yet).
func (m *Manager) PreferDir(tp TopicPartition, dir string) {
	m.mu.Lock()
	m.mu.preferred[tp] = dir
	m.mu.Unlock()
}

// Future returns the partition's future log and its log dir.
func (m *Manager) Future(tp TopicPartition) (*Log, string, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	f, ok := m.mu.futures[tp]
	return f.log, f.dir, ok
}

// Futures returns every future log with its partition.
func (m *Manager) Futures() map[TopicPartition]*Log {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[TopicPartition]*Log, len(m.mu.futures))
	for tp, f := range m.mu.futures {
		out[tp] = f.log
	}
	return out
}

// CreateFuture creates the partition's future log in dir, empty, with cfg
// and the current log's topic id. The checkpoints are written at once, so
// that an older entry of the partition in dir's checkpoints (from a log
// that lived there before) never applies to the new folder.
func (m *Manager) CreateFuture(tp TopicPartition, dir string, cfg Config) (*Log, error) {
	if cfg.FS == nil {
		cfg.FS = m.cfg.Defaults.FS
	}
	m.mu.Lock()
	cur, ok := m.mu.logs[tp]
	switch {
	case !ok:
		m.mu.Unlock()
		return nil, fmt.Errorf("create future log %s: no current log: %w", tp, kerr.ReplicaNotAvailable)
	case m.mu.dirOf[tp] == dir:
		m.mu.Unlock()
		return nil, fmt.Errorf("create future log %s: the current log is in %s", tp, dir)
	}
	if f, ok := m.mu.futures[tp]; ok {
		m.mu.Unlock()
		return nil, fmt.Errorf("create future log %s: one is in %s", tp, f.dir)
	}
	id := newDirectoryID()
	path := filepath.Join(dir, fmt.Sprintf("%s.%x%s", tp, id, futureSuffix))
	l, err := Open(path, cfg, OpenOptions{Logger: m.logger, Files: m.files, Offline: &m.offline})
	if err != nil {
		m.mu.Unlock()
		return nil, fmt.Errorf("create future log %s: %w: %w", tp, err, kerr.KafkaStorageError)
	}
	if topicID, ok, _ := ReadTopicID(cur.Dir()); ok {
		if err := l.SetTopicID(topicID); err != nil {
			m.mu.Unlock()
			l.Delete()
			return nil, fmt.Errorf("create future log %s: %w: %w", tp, err, kerr.KafkaStorageError)
		}
	}
	m.mu.futures[tp] = futureLog{log: l, dir: dir}
	m.mu.Unlock()
	if err := m.Checkpoint(); err != nil {
		m.logger.Warn("checkpoint after creating a future log failed", "partition", tp, "err", err)
	}
	return l, nil
}

// DeleteFuture deletes the partition's future log: the move is abandoned.
func (m *Manager) DeleteFuture(tp TopicPartition) error {
	m.mu.Lock()
	f, ok := m.mu.futures[tp]
	delete(m.mu.futures, tp)
	if ok {
		f.log.forgetOffline()
	}
	m.mu.Unlock()
	if !ok {
		return nil
	}
	// Closed first, so nothing is written after the rename; not marked
	// deleted, so a read's late release removes nothing by a path another
	// log may have reused (see replaceWithFutureLocked). Its dir field
	// stays: readers (DescribeLogDirs) may hold the log.
	f.log.Close()
	f.log.orphan()
	gone := fmt.Sprintf("%s.%d-delete", f.log.dir, time.Now().UnixNano())
	if err := f.log.fs().Rename(f.log.dir, gone); err != nil {
		return fmt.Errorf("rename deleted future log: %w", err)
	}
	return os.RemoveAll(gone)
}

// deleteRenamed renames a log's folder with a -delete suffix (so a crash
// finishes the job at the next start) and deletes it.
func deleteRenamed(l *Log) error {
	gone := fmt.Sprintf("%s.%d-delete", l.dir, time.Now().UnixNano())
	if err := l.fs().Rename(l.dir, gone); err != nil {
		return fmt.Errorf("rename deleted log: %w", err)
	}
	// l.dir stays: readers (DescribeLogDirs) may hold the log.
	return l.deleteIn(gone)
}

// ReplaceWithFuture makes the partition's future log its log, in the
// future log's dir, and deletes the current one (the steps and the states
// a crash leaves are in this file's header). The caller holds every write
// to the current log off and has copied it whole into the future one; the
// current log's high watermark carries over. It returns the new log.
//
// Reads of the old log that hold a FileRange keep it: the files stay
// open until released. A read that starts on the old log once it closed
// fails with KAFKA_STORAGE_ERROR; the caller reads again from the new
// log, or, while the swap runs, answers with nothing for the moment.
func (m *Manager) ReplaceWithFuture(tp TopicPartition) (*Log, error) {
	m.mu.Lock()
	l, err := m.replaceWithFutureLocked(tp)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	// The old dir's checkpoints must forget the partition now: a later
	// move back would otherwise find them naming its new folder.
	if err := m.Checkpoint(); err != nil {
		m.logger.Warn("checkpoint after a replica move failed", "partition", tp, "err", err)
	}
	return l, nil
}

func (m *Manager) replaceWithFutureLocked(tp TopicPartition) (*Log, error) {
	cur, ok := m.mu.logs[tp]
	f, fok := m.mu.futures[tp]
	if !ok || !fok {
		return nil, fmt.Errorf("replace %s with its future log: current log %v, future log %v: %w", tp, ok, fok, kerr.KafkaStorageError)
	}
	if cur.LogEndOffset() != f.log.LogEndOffset() {
		return nil, fmt.Errorf("replace %s with its future log: the future log ends at %d, the current one at %d", tp, f.log.LogEndOffset(), cur.LogEndOffset())
	}
	hw, start, cfg := cur.HighWatermark(), f.log.LogStartOffset(), f.log.Config()
	if err := f.log.Close(); err != nil {
		return nil, m.reopenFutureLocked(tp, f, fmt.Errorf("close future log %s: %w", tp, err))
	}
	end := f.log.LogEndOffset()
	// The current log closes where its files are, so nothing of it is
	// written after its folder is renamed. Its segments are not marked
	// deleted: a read's last release closes a file and removes nothing,
	// since the path it was opened by may name another log's file by
	// then (a move back to this dir). The future log holds every byte:
	// a failure to close the current one (an fsync) loses nothing.
	if err := cur.Close(); err != nil {
		m.logger.Warn("closing a moved replica's old log failed; its future log holds all of it", "partition", tp, "err", err)
	}
	cur.orphan()
	f.log.orphan()
	cur.forgetOffline()
	final := filepath.Join(f.dir, tp.String())
	gone := fmt.Sprintf("%s.%d-delete", cur.dir, time.Now().UnixNano())
	if err := m.fs().Rename(cur.dir, gone); err != nil {
		// The current log is closed: a restart settles it (the future
		// log is resumed).
		return nil, fmt.Errorf("rename current log %s: %w: %w", tp, err, kerr.KafkaStorageError)
	}
	if err := vfs.Fsync(m.fs(), filepath.Dir(cur.dir)); err != nil {
		m.logger.Warn("fsync of a log dir after renaming a moved log failed", "dir", filepath.Dir(cur.dir), "err", err)
	}
	if err := m.fs().Rename(f.log.dir, final); err != nil {
		// A restart promotes the future log.
		return nil, fmt.Errorf("rename future log %s: %w: %w", tp, err, kerr.KafkaStorageError)
	}
	if err := vfs.Fsync(m.fs(), f.dir); err != nil {
		m.logger.Warn("fsync of a log dir after renaming a moved log failed", "dir", f.dir, "err", err)
	}
	l, err := Open(final, cfg, OpenOptions{
		RecoveryPoint:  end,
		LogStartOffset: start,
		HighWatermark:  hw,
		CleanShutdown:  true,
		Logger:         m.logger,
		Files:          m.files,
		Offline:        &m.offline,
	})
	if err != nil {
		// The folders are in their final state: a restart opens it.
		return nil, fmt.Errorf("open moved log %s: %w: %w", tp, err, kerr.KafkaStorageError)
	}
	delete(m.mu.futures, tp)
	m.mu.logs[tp] = l
	m.mu.dirOf[tp] = f.dir
	if err := os.RemoveAll(gone); err != nil {
		m.logger.Warn("deleting a moved replica's old log failed; the next start removes it", "path", gone, "err", err)
	}
	return l, nil
}

// reopenFutureLocked opens a future log again after a failed swap closed
// it, so the move can be tried again, and returns err.
func (m *Manager) reopenFutureLocked(tp TopicPartition, f futureLog, err error) error {
	l, oerr := Open(f.log.dir, f.log.Config(), OpenOptions{
		RecoveryPoint: f.log.RecoveryPoint(), LogStartOffset: f.log.LogStartOffset(),
		Logger: m.logger, Files: m.files, Offline: &m.offline,
	})
	if oerr != nil {
		delete(m.mu.futures, tp)
		return fmt.Errorf("%w; and reopening the future log: %v: %w", err, oerr, kerr.KafkaStorageError)
	}
	m.mu.futures[tp] = futureLog{log: l, dir: f.dir}
	return fmt.Errorf("%w: %w", err, kerr.KafkaStorageError)
}

// CopyFrom appends to l the batches of src from l's log end offset on,
// below end, about maxBytes of them (at least one whole batch), as a
// follower appends its leader's (OriginReplication): offsets, leader
// epochs, producer state and aborted transactions come out as in src. buf
// is the read buffer, returned for the next call. It returns the bytes
// appended: 0 when l has reached end or src holds nothing more below it.
func (l *Log) CopyFrom(src *Log, end int64, maxBytes int, buf []byte) (int64, []byte, error) {
	from := l.LogEndOffset()
	if from >= end {
		return 0, buf, nil
	}
	fr, err := src.Read(from, maxBytes, end, true)
	if err != nil || fr.Empty() {
		return 0, buf, err
	}
	if int64(cap(buf)) < fr.Len {
		buf = make([]byte, fr.Len)
	}
	data := buf[:fr.Len]
	err = preadFull(fr.Segment.Fd(), data, fr.Pos)
	fr.Release()
	if err != nil {
		return 0, buf, fmt.Errorf("read %s at %d: %w", src.dir, from, err)
	}
	// Whole batches only, from the first that ends at or after from (a
	// read starts at the batch holding from).
	lo, hi := 0, 0
	for rest := data; ; {
		b, next, err := record.ParseBatch(rest)
		if errors.Is(err, record.ErrShortBatch) {
			break // the read ended inside a batch
		}
		if err != nil {
			return 0, buf, fmt.Errorf("read %s at %d: %w", src.dir, from, err)
		}
		n := len(rest) - len(next)
		if b.LastOffset() < from && hi == lo {
			lo += n
		}
		hi += n
		rest = next
	}
	if hi == lo {
		return 0, buf, nil
	}
	info, err := l.Append(data[lo:hi], OriginReplication, -1)
	if err != nil {
		return 0, buf, fmt.Errorf("append to %s: %w", l.dir, err)
	}
	return info.Bytes, buf, nil
}
