package log

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
	"kzero/vfs"
)

// Log is one partition's log: a list of segments, the last one active.
//
// Ownership: appends, roll, truncation and deletion run under mu, one at a
// time (appends through the group-commit queue in append.go); a replica
// move holds the writes for its last step (hold.go). Reads take no
// lock: they load the segment list, an immutable slice replaced on every
// change, and the offsets, which are atomics published after the bytes
// they cover are written.
type Log struct {
	dir    string
	cfg    atomic.Pointer[Config]
	logger *slog.Logger
	files  *FileCache // closes idle sealed segment files
	// offlineCount is OpenOptions.Offline: counts this log once when it
	// goes offline. Nil for a log opened on its own.
	offlineCount *atomic.Int64

	segments       atomic.Pointer[[]*Segment]
	logStartOffset atomic.Int64
	logEndOffset   atomic.Int64
	recoveryPoint  atomic.Int64 // offsets below it are fsynced
	lastFlushMs    atomic.Int64
	firstUnstable  atomic.Int64 // first offset of the oldest open transaction, -1 when none
	highWatermark  atomic.Int64 // the partition's last high watermark (OnHighWatermark); the cleaner stays below it
	wentOffline    atomic.Bool  // an I/O error took it offline (offline.go), for readers without the lock

	mu struct {
		sync.Mutex
		next       int64 // the writer's log end offset, published after writes
		epoch      int32 // the latest leader epoch in epochs, -1 when none
		epochDirty bool  // epochs changed since leader-epoch-checkpoint was written
		// epochUnsynced: leader-epoch-checkpoint was written without
		// fsync (syncEpochsSealed writes it so, then syncs it unlocked);
		// epochWrites counts the writes, so that a sync can tell whether
		// the file it synced is still the latest.
		epochUnsynced bool
		epochWrites   uint64
		producers     *ProducerStates
		iov           []unix.Iovec
		unflushed     int64 // records appended since the last fsync
		closing       bool  // Close began: start no more background work
		closed        bool
		offline       bool  // closed by an I/O error (offline.go); its files are still open
		noSpace       bool  // a write failed for lack of space: probe first (space.go)
		lastSnapAt    int64 // offset of the newest producer snapshot
		held          bool  // writes wait (hold.go)
		waiting       int   // writes waiting while held
	}
	released sync.Cond // on mu: the writes are no longer held (hold.go)

	epochs *epochCache
	queue  appendQueue
	bg     sync.WaitGroup // flushes of sealed segments in flight
	bgSync sync.Mutex     // one flush of sealed segments at a time, in order

	cleaner cleanerState // compaction bookkeeping (cleaner.go)
}

// OpenOptions carry what the log dir's checkpoint files say about a log.
type OpenOptions struct {
	RecoveryPoint  int64 // recovery-point-offset-checkpoint; 0 recovers everything
	LogStartOffset int64 // log-start-offset-checkpoint
	HighWatermark  int64 // replication-offset-checkpoint
	CleanShutdown  bool  // the log dir was closed cleanly: skip recovery
	Logger         *slog.Logger
	// Files bounds the open files of sealed segments; nil shares one
	// process-wide cache of DefaultMaxSegmentFiles.
	Files *FileCache
	// Offline, when set, counts the log once if an I/O error takes it
	// offline: the Manager's count of offline logs, so that a Metadata
	// request need not ask every log.
	Offline *atomic.Int64
}

// Open opens the log in dir, creating it when missing. Unless the log dir
// was shut down cleanly, segments from the one holding the recovery point
// onwards are recovered: every batch's framing, offsets and CRC are
// checked, the log is truncated at the first bad batch (a torn or corrupt
// tail), later segments are dropped and the indexes rebuilt. Producer state
// is loaded from the newest usable snapshot and the log replayed after it.
func Open(dir string, cfg Config, opts OpenOptions) (*Log, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	if opts.Files == nil {
		opts.Files = defaultFiles()
	}
	l := &Log{dir: dir, logger: opts.Logger, files: opts.Files, offlineCount: opts.Offline}
	l.released.L = &l.mu.Mutex
	l.cfg.Store(&cfg)
	if err := completeSwaps(dir, &cfg); err != nil {
		return nil, err
	}
	bases, err := l.cleanDir()
	if err != nil {
		return nil, err
	}

	var segs []*Segment
	closeAll := func() {
		for _, s := range segs {
			s.Release()
		}
	}
	recoverFrom := int64(-1) // index of the first segment to recover
	for i, base := range bases {
		if recoverFrom < 0 && !opts.CleanShutdown &&
			(i == len(bases)-1 || bases[i+1] > opts.RecoveryPoint) {
			recoverFrom = int64(i)
		}
		indexBytes := 0 // sealed: the index keeps its own size
		if recoverFrom >= 0 || i == len(bases)-1 {
			indexBytes = cfg.SegmentIndexBytes
		}
		s, err := openSegment(dir, base, &cfg, l.files, recoverFrom >= 0, indexBytes)
		if err != nil {
			closeAll()
			return nil, err
		}
		if s.needsRecovery && recoverFrom < 0 {
			l.logger.Warn("rebuilding a corrupt index", "dir", dir, "segment", base)
			recoverFrom = int64(i)
		}
		segs = append(segs, s)
		if recoverFrom < 0 && i < len(bases)-1 {
			s.unpin() // sealed and checked: its file may close
		}
	}
	if recoverFrom >= 0 {
		if segs, err = l.recoverSegments(segs, int(recoverFrom)); err != nil {
			closeAll()
			return nil, err
		}
		for _, s := range segs[:len(segs)-1] {
			s.unpin()
		}
	}
	if len(segs) == 0 {
		s, err := createSegment(dir, opts.LogStartOffset, &cfg, l.files)
		if err != nil {
			return nil, err
		}
		segs = append(segs, s)
	}
	l.setSegments(segs)
	end := segs[len(segs)-1].NextOffset()
	l.mu.next = end
	l.logEndOffset.Store(end)
	l.logStartOffset.Store(min(max(opts.LogStartOffset, segs[0].base), end))
	// The HW as last checkpointed: a follower that restarts exposes no more
	// than it knew was committed; a leader moves it on as followers fetch.
	l.highWatermark.Store(max(min(opts.HighWatermark, end), l.logStartOffset.Load()))
	rp := end
	if recoverFrom >= 0 {
		rp = segs[min(int(recoverFrom), len(segs)-1)].base
	}
	l.recoveryPoint.Store(min(max(opts.RecoveryPoint, 0), rp))
	l.lastFlushMs.Store(cfg.nowMs())

	rebuildTxnFrom := int64(-1) // the base of the first segment recovery read
	if recoverFrom >= 0 && int(recoverFrom) < len(segs) {
		rebuildTxnFrom = segs[recoverFrom].base
	}
	if err := l.loadEpochs(rebuildTxnFrom); err != nil {
		l.Close()
		return nil, err
	}
	if err := l.loadProducerState(rebuildTxnFrom); err != nil {
		l.Close()
		return nil, err
	}
	if recoverFrom >= 0 {
		// What recovery checked is now known good: flush it so the next
		// crash starts from here.
		if err := l.Flush(); err != nil {
			l.Close()
			return nil, err
		}
	}
	return l, nil
}

// Dir is the partition's folder.
func (l *Log) Dir() string { return l.dir }

// Config is the log's current configuration.
func (l *Log) Config() Config { return *l.cfg.Load() }

// SetConfig replaces the configuration; it applies to later appends, rolls
// and retention passes. The file system stays the one the log opened in
// when c names none.
func (l *Log) SetConfig(c Config) {
	if c.FS == nil {
		c.FS = l.cfg.Load().FS
	}
	l.cfg.Store(&c)
}

// LogStartOffset is the first offset a reader may fetch.
func (l *Log) LogStartOffset() int64 { return l.logStartOffset.Load() }

// LogEndOffset is the offset the next appended record gets.
func (l *Log) LogEndOffset() int64 { return l.logEndOffset.Load() }

// RecoveryPoint is the offset below which the log is known to be on disk.
func (l *Log) RecoveryPoint() int64 { return l.recoveryPoint.Load() }

// Segments returns the current segment list; the caller must not modify it.
func (l *Log) Segments() []*Segment { return *l.segments.Load() }

func (l *Log) active() *Segment {
	segs := *l.segments.Load()
	return segs[len(segs)-1]
}

// Size is the total size of the log's segments in bytes.
func (l *Log) Size() int64 {
	var n int64
	for _, s := range l.Segments() {
		n += s.Size()
	}
	return n
}

func (l *Log) setSegments(segs []*Segment) {
	if invariants {
		checkSegmentList(segs)
	}
	l.segments.Store(&segs)
}

// segmentFor returns the last segment with a base offset at or below off,
// acquired for reading, or nil when off lies below the first segment. It
// fails when the segment's file cannot be reopened.
func (l *Log) segmentFor(off int64) (*Segment, int, error) {
	for {
		p := l.segments.Load()
		segs := *p
		i, found := slices.BinarySearchFunc(segs, off, func(s *Segment, o int64) int {
			switch {
			case s.base < o:
				return -1
			case s.base > o:
				return 1
			}
			return 0
		})
		if !found {
			i--
		}
		if i < 0 {
			return nil, -1, nil
		}
		switch err := segs[i].acquire(); {
		case err == nil:
			return segs[i], i, nil
		case !errors.Is(err, errSegmentGone):
			return nil, i, err
		}
		if l.segments.Load() == p {
			return nil, i, errClosed // released without a new list: the log is closed
		}
		// Deleted after we loaded the list: load it again.
	}
}

// roll seals the active segment and starts a new one at the log end
// offset. Writer only.
func (l *Log) rollLocked() error {
	cfg := l.cfg.Load()
	old := l.active()
	next := l.mu.next
	if old.size.Load() == 0 && old.base == next {
		return nil
	}
	if err := old.seal(); err != nil {
		return err
	}
	s, err := createSegment(l.dir, next, cfg, l.files)
	if err != nil {
		return err
	}
	segs := append(slices.Clone(l.Segments()), s)
	l.setSegments(segs)
	if invariants {
		old.checkIndex()
	}
	old.unpin()
	// Kafka snapshots producer state at each roll, so recovery replays
	// at most the active segment. The background flush below fsyncs it:
	// an fsync here would stall every append to this log, and every
	// connection of the event loop serving it, for the disk's latency.
	if err := l.snapshotProducersLocked(next, writeSnapshotUnsynced); err != nil {
		l.logger.Warn("producer state snapshot failed", "dir", l.dir, "err", err)
	}
	// The sealed segment is flushed in the background, as Kafka does.
	l.bg.Add(1)
	go func() {
		defer l.bg.Done()
		l.syncSealedUpTo(old)
	}()
	return nil
}

// syncSealedUpTo fsyncs the segments up to and including old that hold
// data above the recovery point, in order, then advances the recovery
// point past old. In order, and one flush at a time: two rolls in quick
// succession start two flushes, and if the later one finished first it
// would move the recovery point past data not yet on disk, which recovery
// after a power loss would then not check. A synced segment's txn index
// closes its descriptor: a sealed segment keeps none for it.
func (l *Log) syncSealedUpTo(old *Segment) {
	if old.acquire() != nil {
		return // truncated or deleted meanwhile, or its file cannot be reopened
	}
	defer old.Release()
	l.bgSync.Lock()
	defer l.bgSync.Unlock()
	for _, s := range l.Segments() {
		if s.base > old.base {
			break
		}
		if s.NextOffset() <= l.recoveryPoint.Load() {
			continue
		}
		if err := s.acquire(); errors.Is(err, errSegmentGone) {
			continue
		} else if err != nil {
			return // not synced: the recovery point stays below it
		}
		err := s.Sync()
		if t := s.txn.Load(); t != nil && err == nil {
			t.Close()
		}
		s.Release()
		if err != nil && s.deleted.Load() {
			// Deleted meanwhile (retention, or replaced by a cleaned
			// segment): nothing of it needs to reach the disk, and its
			// files may be gone already. Two deleted generations of one
			// base offset share their .deleted names, so the first
			// removed takes the other's index files with it, and an
			// fsync by name of the other then fails.
			continue
		}
		if err != nil {
			if fsyncFailed(err) {
				l.mu.Lock()
				l.goOfflineLocked("fsync of a sealed segment failed", err)
				l.mu.Unlock()
			}
			return
		}
	}
	// The roll's producer snapshot was left to the page cache.
	if err := syncSnapshot(l.fs(), l.dir, old.NextOffset()); err != nil {
		l.logger.Warn("producer state snapshot fsync failed", "dir", l.dir, "err", err)
	}
	if err := l.syncEpochsSealed(); err != nil {
		if !errors.Is(err, errClosed) {
			l.logger.Warn("leader epoch checkpoint fsync failed; the recovery point stays", "dir", l.dir, "err", err)
		}
		return
	}
	l.advanceRecoveryPoint(old.NextOffset())
}

// Roll forces a new active segment (used by tests and by segment.ms when no
// appends arrive).
func (l *Log) Roll() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return errClosed
	}
	return l.rollLocked()
}

var errClosed = fmt.Errorf("log is closed: %w", kerr.KafkaStorageError)

func (l *Log) advanceRecoveryPoint(off int64) {
	for {
		cur := l.recoveryPoint.Load()
		if off <= cur || l.recoveryPoint.CompareAndSwap(cur, off) {
			return
		}
	}
}

// Flush fsyncs every segment that holds unflushed data and advances the
// recovery point to the log end offset.
func (l *Log) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.closed {
		return errClosed
	}
	return l.flushLocked()
}

func (l *Log) flushLocked() error {
	end := l.logEndOffset.Load()
	rp := l.recoveryPoint.Load()
	for _, s := range l.Segments() {
		if s.NextOffset() > rp || s == l.active() {
			if err := s.Sync(); err != nil {
				if fsyncFailed(err) {
					l.goOfflineLocked("fsync failed", err)
				}
				return err
			}
		}
	}
	if err := l.syncEpochsLocked(); err != nil {
		return fmt.Errorf("write leader epoch checkpoint: %w", err)
	}
	l.mu.unflushed = 0
	l.lastFlushMs.Store(l.cfg.Load().nowMs())
	l.advanceRecoveryPoint(end)
	return nil
}

// Close flushes the log, snapshots producer state and closes its files. A
// log that went offline (offline.go) only closes its files, and says so.
// On a full file system the producer snapshot (and the leader epoch
// checkpoint) may not be written: that is logged and left out, since the
// next start replays producer state from an older snapshot and rebuilds the
// epochs from the batches; Close then returns an error wrapping ENOSPC only
// if the log's own data could not be made durable.
func (l *Log) Close() error {
	l.mu.Lock()
	l.mu.closing = true
	l.mu.Unlock()
	l.bg.Wait()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.offline {
		// Not a clean shutdown: the Manager leaves the dir unmarked, so the
		// next start recovers it.
		l.releaseOfflineLocked()
		return errOffline
	}
	if l.mu.closed {
		return nil
	}
	err := l.flushLocked()
	end := l.logEndOffset.Load()
	serr := l.snapshotProducersLocked(end, WriteSnapshot)
	if serr == nil {
		serr = syncSnapshot(l.fs(), l.dir, end) // a roll's, if it was one, is not yet synced
	}
	if noSpace(serr) {
		l.logger.Warn("no space for the producer state snapshot at close; the next start replays from an older one", "dir", l.dir, "err", serr)
	} else if err == nil {
		err = serr
	}
	if err2 := l.active().seal(); err == nil {
		err = err2
	}
	// A failed fsync above took the log offline; its files go now.
	l.mu.closed, l.mu.offline = true, false
	for _, s := range l.Segments() {
		s.Release()
	}
	return err
}

// Delete closes the log and removes its folder.
func (l *Log) Delete() error { return l.deleteIn(l.dir) }

// deleteIn closes the log and removes dir, which holds its files: its
// folder, or what the folder was renamed to (Manager.Delete). The
// segments are orphaned, not marked deleted: reads in flight keep their
// open files, and the last release removes nothing by a path that a
// re-created partition may own by then.
func (l *Log) deleteIn(dir string) error {
	l.mu.Lock()
	// A closed log released its segments already, an offline one not.
	release := !l.mu.closed || l.mu.offline
	l.mu.closed, l.mu.offline = true, false
	for _, s := range l.Segments() {
		s.orphaned.Store(true)
		if release {
			s.Release()
		}
	}
	l.mu.Unlock()
	return os.RemoveAll(dir)
}

// orphan marks the segments of a closed log whose folder is about to be
// moved or renamed away (a replica moved to another log dir, a stray log
// set aside): see Segment.orphaned.
func (l *Log) orphan() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.Segments() {
		s.orphaned.Store(true)
	}
}

func (l *Log) snapshotProducersLocked(off int64, write func(FS, string, int64, *ProducerStates) error) error {
	if l.mu.lastSnapAt == off {
		return nil
	}
	if err := write(l.fs(), l.dir, off, l.mu.producers); err != nil {
		return err
	}
	l.mu.lastSnapAt = off
	return nil
}

// maybeFlushLocked applies flush.messages and flush.ms after an append.
func (l *Log) maybeFlushLocked(records int64) error {
	cfg := l.cfg.Load()
	l.mu.unflushed += records
	if l.mu.unflushed >= cfg.FlushMessages {
		return l.flushLocked()
	}
	if cfg.FlushMs != 1<<63-1 && cfg.nowMs()-l.lastFlushMs.Load() >= cfg.FlushMs {
		return l.flushLocked()
	}
	return nil
}

func durationMs(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// ExpireProducers drops the state of producers idle for longer than
// expirationMs (producer.id.expiration.ms), except those in a transaction.
func (l *Log) ExpireProducers(nowMs, expirationMs int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.mu.closed {
		l.mu.producers.RemoveExpired(nowMs, expirationMs)
	}
}

// FirstUnstableOffset is the first offset of the oldest transaction not yet
// decided (or decided but not yet below the high watermark): the last
// stable offset is the smaller of it and the high watermark. ok is false
// when there is none.
func (l *Log) FirstUnstableOffset() (int64, bool) {
	o := l.firstUnstable.Load()
	return o, o >= 0
}

// OnHighWatermark tells the log its partition's high watermark moved, so
// transactions whose markers it passed stop holding back the last stable
// offset.
func (l *Log) OnHighWatermark(hw int64) {
	l.highWatermark.Store(hw)
	// Without an undecided or unreplicated transaction there is nothing to
	// move: skip the writer lock, which every produce would otherwise take
	// a second time.
	if l.firstUnstable.Load() < 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.producers != nil {
		l.mu.producers.OnHighWatermark(hw)
		l.publishUnstableLocked()
	}
}

func (l *Log) publishUnstableLocked() {
	o, ok := l.mu.producers.FirstUnstableOffset()
	if !ok {
		o = -1
	}
	l.firstUnstable.Store(o)
}

// InTransaction reports whether producerID has a transaction open in this
// log at epoch: its later batches need no verification with the
// transaction coordinator (KIP-890).
func (l *Log) InTransaction(producerID int64, epoch int16) bool {
	if l.firstUnstable.Load() < 0 {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.producers != nil && l.mu.producers.InTransaction(producerID, epoch)
}

// Producers lists the producers with state in this log (DescribeProducers).
func (l *Log) Producers() []ProducerSnapshotEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.mu.producers.Producers()
}

// HighWatermark is the high watermark the partition last reported.
func (l *Log) HighWatermark() int64 { return l.highWatermark.Load() }

// EndOffsetForEpoch answers OffsetForLeaderEpoch (KIP-101, KIP-320): the
// largest leader epoch at or below epoch and the offset where it ended,
// the log end offset for the latest epoch; (-1, -1) when unknown.
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return l.epochs.endOffsetFor(epoch, l.logEndOffset.Load())
}

// LeaderEpochs lists the leader epochs and the offsets they start at.
func (l *Log) LeaderEpochs() []EpochEntry { return l.epochs.snapshot() }

// noteEpochLocked records a batch's leader epoch in the epoch cache when it
// is newer than the latest. Writer only.
func (l *Log) noteEpochLocked(b record.Batch) {
	if e := b.PartitionLeaderEpoch(); e > l.mu.epoch {
		l.epochs.assign(e, b.BaseOffset())
		l.mu.epoch = e
		l.mu.epochDirty = true
	}
}

// syncEpochsLocked writes leader-epoch-checkpoint, with fsync, when the
// cache changed or an append wrote it without one. Out of space it only
// warns: the file is gone then (see writeEpochsLocked), which is safe, and
// retention and truncation, which call it, must work on a full disk.
func (l *Log) syncEpochsLocked() error {
	if !l.mu.epochDirty && !l.mu.epochUnsynced {
		return nil
	}
	if !l.mu.epochDirty {
		// The file holds the cache already: fsync it (and the rename
		// that put it there), which needs no space.
		err := vfs.Fsync(l.fs(), l.epochs.path)
		if err == nil {
			err = vfs.Fsync(l.fs(), l.dir)
		}
		if err == nil {
			l.mu.epochUnsynced = false
			return nil
		}
	}
	err := l.writeEpochsLocked(true)
	if noSpace(err) {
		l.logger.Warn("no space for the leader epoch checkpoint", "dir", l.dir, "err", err)
		return nil
	}
	return err
}

// writeEpochsLocked writes leader-epoch-checkpoint, fsynced or not. When
// the write fails (a full disk) the file is removed, not left stale: an
// older file lacks the newer epochs, a missing one is rebuilt from the
// batch headers at the next start. The cache stays dirty, so the next
// append or flush writes it again.
func (l *Log) writeEpochsLocked(sync bool) error {
	l.mu.epoch = -1
	if e := l.epochs.snapshot(); len(e) > 0 {
		l.mu.epoch = e[len(e)-1].Epoch
	}
	if err := l.epochs.write(sync); err != nil {
		l.mu.epochDirty = true
		l.fs().Remove(l.epochs.path + ".tmp")
		if rerr := l.fs().Remove(l.epochs.path); rerr != nil && !os.IsNotExist(rerr) {
			err = errors.Join(err, rerr)
		}
		return err
	}
	l.mu.epochDirty = false
	l.mu.epochUnsynced = !sync
	l.mu.epochWrites++
	return nil
}

// syncEpochsSealed makes leader-epoch-checkpoint durable before a roll's
// background flush moves the recovery point, since recovery notes only the
// epochs of batches above it. The file is written under the writer lock
// (a small write, once per new epoch) and fsynced outside it, so that
// appends do not wait for the disk.
func (l *Log) syncEpochsSealed() error {
	l.mu.Lock()
	if l.mu.closed || l.mu.offline {
		l.mu.Unlock()
		return errClosed
	}
	if l.mu.epochDirty {
		if err := l.writeEpochsLocked(false); err != nil {
			l.mu.Unlock()
			if noSpace(err) {
				// The file is gone: the next start rebuilds every epoch.
				l.logger.Warn("no space for the leader epoch checkpoint", "dir", l.dir, "err", err)
				return nil
			}
			return err
		}
	}
	if !l.mu.epochUnsynced {
		l.mu.Unlock()
		return nil
	}
	written := l.mu.epochWrites
	l.mu.Unlock()
	err := vfs.Fsync(l.fs(), l.epochs.path)
	if err == nil {
		err = vfs.Fsync(l.fs(), l.dir)
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	if l.mu.epochWrites == written {
		l.mu.epochUnsynced = false
	}
	l.mu.Unlock()
	return nil
}
