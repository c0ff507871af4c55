package log

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"kzero/vfs"
)

// metadataLogDir is the metadata quorum's folder in the first log dir, as
// Kafka names it; the manager leaves it alone.
const metadataLogDir = "__cluster_metadata-0"

// cleanShutdownFile marks a log dir closed cleanly (Kafka's name).
const cleanShutdownFile = ".kafka_cleanshutdown"

// ManagerConfig holds the broker-level log settings (Kafka's log.* keys).
type ManagerConfig struct {
	Dirs                     []string      // log.dirs
	Defaults                 Config        // topic config defaults
	RetentionCheckInterval   time.Duration // log.retention.check.interval.ms
	FlushCheckInterval       time.Duration // log.flush.scheduler.interval.ms
	CheckpointInterval       time.Duration // log.flush.offset.checkpoint.interval.ms
	ProducerIDExpiration     time.Duration // producer.id.expiration.ms
	ProducerIDExpirationScan time.Duration // producer.id.expiration.check.interval.ms
	CleanerEnable            bool          // log.cleaner.enable
	CleanerBackoff           time.Duration // log.cleaner.backoff.ms
	CleanerDedupeBufferSize  int64         // log.cleaner.dedupe.buffer.size
	// MaxSegmentFiles bounds the idle open files of sealed segments over
	// every log (kzero's log.segment.open.files.max); 0 takes
	// DefaultMaxSegmentFiles.
	MaxSegmentFiles int
	Logger          *slog.Logger
}

// DefaultManagerConfig returns Kafka's defaults for dirs.
func DefaultManagerConfig(dirs ...string) ManagerConfig {
	return ManagerConfig{
		Dirs:                     dirs,
		Defaults:                 DefaultConfig(),
		RetentionCheckInterval:   5 * time.Minute,
		FlushCheckInterval:       time.Second,
		CheckpointInterval:       time.Minute,
		ProducerIDExpiration:     24 * time.Hour,
		ProducerIDExpirationScan: 10 * time.Minute,
		CleanerEnable:            true,
		CleanerBackoff:           15 * time.Second,
		CleanerDedupeBufferSize:  128 << 20,
	}
}

// Manager owns the log dirs: it opens every partition's log at start,
// places new ones, and runs the background work (retention, flushes,
// checkpoints, producer id expiry). It is safe for concurrent use.
type Manager struct {
	cfg    ManagerConfig
	logger *slog.Logger
	locks  []*os.File
	files  *FileCache
	// offline counts the logs of mu.logs an I/O error took offline
	// (OpenOptions.Offline).
	offline atomic.Int64

	props  map[string]MetaProperties // log dir -> its meta.properties, where it has one
	strays int                       // partition folders set aside as stray, found or moved
	// uncleanDirs counts the log dirs found without the clean shutdown
	// marker (a crash, or new).
	uncleanDirs int

	mu struct {
		sync.RWMutex
		logs    map[TopicPartition]*Log
		dirOf   map[TopicPartition]string
		futures map[TopicPartition]futureLog // replicas moving to another log dir (future.go)
		// preferred: the log dir AlterReplicaLogDirs named for a partition
		// not created yet; GetOrCreate places it there.
		preferred map[TopicPartition]string
		// gone: partitions deleted since the last Checkpoint, whose old
		// offsets the checkpoint files on disk still hold.
		gone map[TopicPartition]bool
	}
	// checkpointMu makes one Checkpoint at a time: they share the files'
	// temporary names (a replica move checkpoints outside the schedule).
	checkpointMu sync.Mutex
	stop         chan struct{}
	wg           sync.WaitGroup

	// cleanerBackoff is log.cleaner.backoff.ms in nanoseconds, changed at
	// runtime by SetCleanerBackoff (a dynamic broker config in Kafka),
	// which wakes the cleaner through cleanerWake.
	cleanerBackoff atomic.Int64
	cleanerWake    chan struct{}
}

// OpenManager locks each log dir, reads its checkpoints and opens every
// partition log in it, recovering those a crash left unclean.
func OpenManager(cfg ManagerConfig) (*Manager, error) {
	if len(cfg.Dirs) == 0 {
		return nil, errors.New("log.dirs is empty")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	cfg.Dirs = slices.Clone(cfg.Dirs)
	for i, d := range cfg.Dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, fmt.Errorf("log dir %s: %w", d, err)
		}
		cfg.Dirs[i] = abs
	}
	m := &Manager{cfg: cfg, logger: cfg.Logger, stop: make(chan struct{}), cleanerWake: make(chan struct{}, 1), props: map[string]MetaProperties{},
		files: NewFileCache(cfg.MaxSegmentFiles)}
	m.mu.logs = map[TopicPartition]*Log{}
	m.mu.dirOf = map[TopicPartition]string{}
	m.mu.futures = map[TopicPartition]futureLog{}
	m.mu.preferred = map[TopicPartition]string{}
	var futures []pendingFuture
	for _, dir := range cfg.Dirs {
		found, err := m.openDir(dir)
		futures = append(futures, found...)
		if err != nil {
			m.closeLogs()
			m.unlock()
			return nil, err
		}
	}
	if err := m.resolveFutures(futures); err != nil {
		m.closeLogs()
		m.unlock()
		return nil, err
	}
	return m, nil
}

// ClosedCleanly reports whether every log dir was shut down cleanly before
// this open. After a crash a broker may have lost records it held (what
// was not yet on disk), which the controller must know before it trusts
// the broker as an eligible leader (KIP-966).
func (m *Manager) ClosedCleanly() bool { return m.uncleanDirs == 0 }

// openDir opens the logs in dir; it returns the future logs' folders
// found, for resolveFutures.
func (m *Manager) openDir(dir string) ([]pendingFuture, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open log dir lock: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		return nil, fmt.Errorf("log dir %s is in use by another process: %w", dir, err)
	}
	m.locks = append(m.locks, lock)
	mp, ok, err := ReadMetaProperties(dir)
	if err != nil {
		return nil, fmt.Errorf("log dir %s: unreadable identity, refusing to start: %w", dir, err)
	}
	if ok {
		m.props[dir] = mp
	}

	marker := filepath.Join(dir, cleanShutdownFile)
	_, err = os.Stat(marker)
	clean := err == nil
	if !clean {
		m.uncleanDirs++
	}
	recovery, err := ReadCheckpoint(m.fs(), filepath.Join(dir, RecoveryPointCheckpoint))
	if err != nil {
		m.logger.Warn("ignoring unreadable checkpoint; recovering every log", "dir", dir, "err", err)
		recovery, clean = map[TopicPartition]int64{}, false
	}
	starts, err := ReadCheckpoint(m.fs(), filepath.Join(dir, LogStartOffsetCheckpoint))
	if err != nil {
		m.logger.Warn("ignoring unreadable checkpoint", "dir", dir, "err", err)
		starts = map[TopicPartition]int64{}
	}
	hws, err := ReadCheckpoint(m.fs(), filepath.Join(dir, ReplicationCheckpoint))
	if err != nil {
		m.logger.Warn("ignoring unreadable checkpoint", "dir", dir, "err", err)
		hws = map[TopicPartition]int64{}
	}
	dirty, err := ReadCheckpoint(m.fs(), filepath.Join(dir, CleanerCheckpoint))
	if err != nil {
		m.logger.Warn("ignoring unreadable checkpoint", "dir", dir, "err", err)
		dirty = map[TopicPartition]int64{}
	}
	var futures []pendingFuture
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read log dir: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		if e.Name() == metadataLogDir {
			continue // the metadata quorum's own folder, not a partition
		}
		if strings.HasSuffix(e.Name(), "-delete") {
			os.RemoveAll(filepath.Join(dir, e.Name()))
			continue
		}
		if tp, ok := parseFutureName(e.Name()); ok {
			futures = append(futures, pendingFuture{tp: tp, dir: dir, path: filepath.Join(dir, e.Name()), opts: OpenOptions{
				RecoveryPoint:  recovery[tp],
				LogStartOffset: starts[tp],
				HighWatermark:  hws[tp],
				CleanShutdown:  clean,
				Logger:         m.logger,
				Files:          m.files,
				Offline:        &m.offline,
			}})
			continue
		}
		if strings.HasSuffix(e.Name(), straySuffix) {
			m.strays++
			continue
		}
		tp, ok := ParseTopicPartition(e.Name())
		if !ok {
			continue
		}
		l, err := Open(filepath.Join(dir, e.Name()), m.cfg.Defaults, OpenOptions{
			RecoveryPoint:  recovery[tp],
			LogStartOffset: starts[tp],
			HighWatermark:  hws[tp],
			CleanShutdown:  clean,
			Logger:         m.logger,
			Files:          m.files,
			Offline:        &m.offline,
		})
		if err != nil {
			return nil, fmt.Errorf("open log %s: %w", tp, err)
		}
		if off, ok := dirty[tp]; ok {
			l.SetFirstDirtyOffset(off)
		}
		m.mu.logs[tp] = l
		m.mu.dirOf[tp] = dir
	}
	// A crash from here on must not be taken for a clean shutdown.
	if err := m.fs().Remove(marker); err != nil && !os.IsNotExist(err) {
		return nil, fmt.Errorf("remove clean shutdown marker: %w", err)
	}
	return futures, nil
}

// Identity checks the log dirs' meta.properties against each other and
// against nodeID, and returns the cluster id they name: "" when no dir has
// been formatted yet.
func (m *Manager) Identity(nodeID int32) (string, error) {
	return checkIdentity(nodeID, m.cfg.Dirs, m.props)
}

// Format gives every log dir that has no meta.properties one naming
// clusterID and nodeID, durably, before anything is written under that
// cluster's name. Formatted dirs are left alone.
func (m *Manager) Format(clusterID string, nodeID int32) error {
	for _, d := range m.cfg.Dirs {
		if _, ok := m.props[d]; ok {
			continue
		}
		mp := MetaProperties{ClusterID: clusterID, NodeID: nodeID, DirectoryID: newDirectoryID()}
		if err := writeMetaProperties(m.fs(), d, mp); err != nil {
			return fmt.Errorf("format log dir %s: %w", d, err)
		}
		m.props[d] = mp
		m.logger.Info("formatted log dir", "dir", d, "cluster_id", clusterID, "node_id", nodeID)
	}
	return nil
}

// straySuffix ends a partition folder set aside because the metadata does
// not name it (Kafka's name: <topic>-<partition>.<unique id>-stray).
const straySuffix = "-stray"

// SetAside moves a partition's log out of the way without deleting it: it
// is closed and its folder renamed <topic>-<partition>.<id>-stray, for the
// operator to inspect. The manager no longer holds it. It returns the new
// path.
func (m *Manager) SetAside(tp TopicPartition) (string, error) {
	// A future log is a copy of this one, being made: it goes.
	if err := m.DeleteFuture(tp); err != nil {
		return "", fmt.Errorf("set aside %s: %w", tp, err)
	}
	m.mu.Lock()
	l, ok := m.mu.logs[tp]
	dir := m.mu.dirOf[tp]
	delete(m.mu.logs, tp)
	delete(m.mu.dirOf, tp)
	if ok {
		l.forgetOffline()
	}
	m.mu.Unlock()
	if !ok {
		return "", fmt.Errorf("set aside %s: no such log", tp)
	}
	if err := l.Close(); err != nil {
		return "", fmt.Errorf("set aside %s: %w", tp, err)
	}
	l.orphan() // a read's late release must not touch the old path
	id := newDirectoryID()
	to := filepath.Join(dir, fmt.Sprintf("%s.%x%s", tp, id, straySuffix))
	if err := m.fs().Rename(l.Dir(), to); err != nil {
		return "", fmt.Errorf("set aside %s: %w", tp, err)
	}
	if err := vfs.Fsync(m.fs(), dir); err != nil {
		return "", fmt.Errorf("set aside %s: %w", tp, err)
	}
	m.mu.Lock()
	m.strays++
	m.mu.Unlock()
	return to, nil
}

// Strays counts the partition folders set aside as stray in the log dirs.
func (m *Manager) Strays() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.strays
}

// Get returns the log of a partition this broker holds.
func (m *Manager) Get(tp TopicPartition) (*Log, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	l, ok := m.mu.logs[tp]
	return l, ok
}

// Logs returns every log with its partition.
func (m *Manager) Logs() map[TopicPartition]*Log {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make(map[TopicPartition]*Log, len(m.mu.logs))
	for tp, l := range m.mu.logs {
		out[tp] = l
	}
	return out
}

// GetOrCreate returns the partition's log, creating it with cfg in the log
// dir that holds the fewest partitions. A cfg without an FS gets the
// Defaults' (a test's fault-injecting file system reaches every log so).
func (m *Manager) GetOrCreate(tp TopicPartition, cfg Config) (*Log, error) {
	if cfg.FS == nil {
		cfg.FS = m.cfg.Defaults.FS
	}
	m.mu.Lock()
	if l, ok := m.mu.logs[tp]; ok {
		m.mu.Unlock()
		return l, nil
	}
	dir, ok := m.mu.preferred[tp]
	if !ok {
		count := map[string]int{}
		for _, d := range m.mu.dirOf {
			count[d]++
		}
		dir = m.cfg.Dirs[0]
		for _, d := range m.cfg.Dirs[1:] {
			if count[d] < count[dir] {
				dir = d
			}
		}
	}
	l, err := Open(filepath.Join(dir, tp.String()), cfg, OpenOptions{Logger: m.logger, Files: m.files, Offline: &m.offline})
	if err != nil {
		m.mu.Unlock()
		return nil, err
	}
	m.mu.logs[tp] = l
	m.mu.dirOf[tp] = dir
	delete(m.mu.preferred, tp)
	stale := m.mu.gone[tp]
	m.mu.Unlock()
	if stale {
		// Re-created before the checkpoints forgot its deleted log: a
		// crash now would open the new log with the old one's recovery
		// point, beyond its data, and skip its recovery. Kafka
		// checkpoints a dir after each deletion; kzero does it here,
		// once, when it matters.
		if err := m.Checkpoint(); err != nil {
			m.logger.Warn("checkpoint after re-creating a deleted partition failed", "partition", tp, "err", err)
		}
	}
	return l, nil
}

// OfflineLogs is the number of the Manager's logs an I/O error took
// offline: a counter, so callers on every request (Metadata) pay nothing
// while no log is offline.
func (m *Manager) OfflineLogs() int { return int(m.offline.Load()) }

// Delete removes a partition's log, and its future log if it was moving:
// its folder is renamed with a -delete suffix (so a crash finishes the job
// at the next start) and removed.
func (m *Manager) Delete(tp TopicPartition) error {
	ferr := m.DeleteFuture(tp)
	m.mu.Lock()
	l, ok := m.mu.logs[tp]
	delete(m.mu.logs, tp)
	delete(m.mu.dirOf, tp)
	delete(m.mu.preferred, tp)
	if ok {
		if m.mu.gone == nil {
			m.mu.gone = map[TopicPartition]bool{}
		}
		m.mu.gone[tp] = true
	}
	if ok {
		l.forgetOffline()
	}
	m.mu.Unlock()
	if !ok {
		return ferr
	}
	if err := deleteRenamed(l); err != nil {
		return err
	}
	return ferr
}

// Start runs the background work until Close.
func (m *Manager) Start() {
	m.every(m.cfg.RetentionCheckInterval, m.applyRetention)
	m.every(m.cfg.FlushCheckInterval, m.flushDue)
	m.every(m.cfg.CheckpointInterval, func() {
		if err := m.Checkpoint(); err != nil {
			m.logger.Error("checkpoint failed", "err", err)
		}
	})
	if m.cfg.CleanerEnable {
		m.startCleaner()
	}
	m.every(m.cfg.ProducerIDExpirationScan, func() {
		now := time.Now().UnixMilli()
		for _, l := range m.Logs() {
			l.ExpireProducers(now, m.cfg.ProducerIDExpiration.Milliseconds())
		}
	})
}

func (m *Manager) every(d time.Duration, f func()) {
	if d <= 0 {
		return
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				f()
			}
		}
	}()
}

func (m *Manager) applyRetention() {
	for tp, l := range m.Logs() {
		if n, err := l.DeleteOldSegments(); err != nil {
			m.logger.Error("retention failed", "partition", tp, "err", err)
		} else if n > 0 {
			m.logger.Info("retention deleted segments", "partition", tp, "segments", n)
		}
	}
}

// SetCleanerBackoff changes log.cleaner.backoff.ms, the cleaner's wait
// when no log needs cleaning, from the next wait on; a wait under way is
// cut short. Kafka restarts its cleaner threads for the same effect.
func (m *Manager) SetCleanerBackoff(d time.Duration) {
	if d <= 0 || m.cleanerBackoff.Swap(int64(d)) == int64(d) {
		return
	}
	select {
	case m.cleanerWake <- struct{}{}:
	default:
	}
}

// startCleaner runs the log cleaner: it cleans the dirtiest compacted log
// while there is one to clean, then waits log.cleaner.backoff.ms.
func (m *Manager) startCleaner() {
	cc := DefaultCleanerConfig()
	cc.DedupeBufferSize = m.cfg.CleanerDedupeBufferSize
	cc.HighWatermark = (*Log).HighWatermark
	cc.Logger = m.logger
	c := NewCleaner(cc)
	if m.cfg.CleanerBackoff <= 0 {
		return
	}
	m.cleanerBackoff.CompareAndSwap(0, int64(m.cfg.CleanerBackoff))
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTimer(time.Duration(m.cleanerBackoff.Load()))
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-m.cleanerWake:
			case <-t.C:
				m.cleanRound(c)
			}
			t.Reset(time.Duration(m.cleanerBackoff.Load()))
		}
	}()
}

// cleanRound cleans the dirtiest compacted log while there is one to
// clean.
func (m *Manager) cleanRound(c *Cleaner) {
	for {
		select {
		case <-m.stop:
			return
		default:
		}
		all := m.Logs()
		logs := make([]*Log, 0, len(all))
		for _, l := range all {
			logs = append(logs, l)
		}
		cleaned, err := c.CleanOnce(logs)
		if err != nil {
			m.logger.Error("log cleaner", "err", err)
		}
		if !cleaned || err != nil {
			return
		}
		st := c.LastStats()
		m.logger.Info("cleaned log", "dir", st.Dir, "segments", st.Segments, "bytes_read", st.BytesRead, "bytes_written", st.BytesWritten)
	}
}

// flushDue fsyncs the logs whose flush.ms has passed.
func (m *Manager) flushDue() {
	for tp, l := range m.Logs() {
		cfg := l.cfg.Load()
		if cfg.FlushMs == 1<<63-1 || cfg.nowMs()-l.lastFlushMs.Load() < cfg.FlushMs {
			continue
		}
		if err := l.Flush(); err != nil {
			m.logger.Error("flush failed", "partition", tp, "err", err)
		}
	}
}

// dirFailed takes every log of dir offline after err, an I/O error writing
// one of the dir's own files (a checkpoint), as Kafka takes the log dir
// offline: their appends and the replica layer's answers for them become
// KAFKA_STORAGE_ERROR until the broker restarts; the other dirs' logs keep
// serving.
func (m *Manager) dirFailed(dir string, err error) {
	m.mu.RLock()
	var logs []*Log
	for tp, l := range m.mu.logs {
		if m.mu.dirOf[tp] == dir {
			logs = append(logs, l)
		}
	}
	for _, f := range m.mu.futures {
		if f.dir == dir {
			logs = append(logs, f.log)
		}
	}
	m.mu.RUnlock()
	for _, l := range logs {
		l.mu.Lock()
		l.goOfflineLocked("writing a checkpoint of its log dir failed", err)
		l.mu.Unlock()
	}
}

// Checkpoint writes each log dir's recovery point and log start offset
// checkpoint files. A dir whose checkpoint cannot be written keeps its
// older files; unless the file system is full (space.go) its logs go
// offline (dirFailed).
func (m *Manager) Checkpoint() error {
	m.checkpointMu.Lock()
	defer m.checkpointMu.Unlock()
	m.mu.RLock()
	files := map[string]func(*Log) (int64, bool){
		RecoveryPointCheckpoint:  func(l *Log) (int64, bool) { return l.RecoveryPoint(), true },
		LogStartOffsetCheckpoint: func(l *Log) (int64, bool) { return l.LogStartOffset(), true },
		ReplicationCheckpoint:    func(l *Log) (int64, bool) { return l.HighWatermark(), true },
		CleanerCheckpoint: func(l *Log) (int64, bool) {
			return l.FirstDirtyOffset(), l.Config().Compact
		},
	}
	gone := maps.Clone(m.mu.gone)                           // written below without them: forgotten once written
	out := map[string]map[string]map[TopicPartition]int64{} // file, dir, partition
	for name, get := range files {
		out[name] = map[string]map[TopicPartition]int64{}
		for _, d := range m.cfg.Dirs {
			out[name][d] = map[TopicPartition]int64{}
		}
		for tp, l := range m.mu.logs {
			if off, ok := get(l); ok {
				out[name][m.mu.dirOf[tp]][tp] = off
			}
		}
		// A future log is in another dir than its partition's current
		// log, so the two never share an entry.
		for tp, f := range m.mu.futures {
			if off, ok := get(f.log); ok {
				out[name][f.dir][tp] = off
			}
		}
	}
	m.mu.RUnlock()
	var errs []error
	for name, byDir := range out {
		for d, offsets := range byDir {
			if err := WriteCheckpoint(m.fs(), filepath.Join(d, name), offsets); err != nil {
				errs = append(errs, fmt.Errorf("log dir %s: %w", d, err))
				if !noSpace(err) {
					m.dirFailed(d, err)
				}
			}
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	if len(gone) > 0 {
		m.mu.Lock()
		for tp := range gone {
			delete(m.mu.gone, tp)
		}
		m.mu.Unlock()
	}
	return nil
}

// Close stops the background work, closes every log (flushing it), writes
// the checkpoints and marks each log dir cleanly shut down.
func (m *Manager) Close() error {
	close(m.stop)
	m.wg.Wait()
	err := m.closeLogs()
	if cerr := m.Checkpoint(); err == nil {
		err = cerr
	}
	if err == nil {
		for _, d := range m.cfg.Dirs {
			if werr := vfs.WriteFile(m.fs(), filepath.Join(d, cleanShutdownFile), nil, true); werr != nil {
				err = werr
			}
		}
	}
	if noSpace(err) {
		// The logs' data is in the page cache at least; what failed is a
		// checkpoint, a producer snapshot, an fsync or the clean shutdown
		// marker. A dir not marked clean is recovered at the next start
		// from its older checkpoints.
		m.logger.Warn("log dir full at shutdown: the next start recovers from the older checkpoints", "err", err)
		err = nil
	}
	m.unlock()
	return err
}

func (m *Manager) closeLogs() error {
	var first error
	for tp, l := range m.Logs() {
		if err := l.Close(); err != nil && first == nil {
			first = fmt.Errorf("close log %s: %w", tp, err)
		}
	}
	for tp, l := range m.Futures() {
		if err := l.Close(); err != nil && first == nil {
			first = fmt.Errorf("close future log %s: %w", tp, err)
		}
	}
	return first
}

func (m *Manager) unlock() {
	for _, f := range m.locks {
		f.Close()
	}
	m.locks = nil
}

// Files is the cache of sealed segment files the logs share.
func (m *Manager) Files() *FileCache { return m.files }

// Dirs are the log dirs (log.dirs).
func (m *Manager) Dirs() []string { return m.cfg.Dirs }
