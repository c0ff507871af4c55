package log

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"kzero/record"
)

// Compaction (cleanup.policy=compact) keeps, for every key, at least its
// latest record, as Apache Kafka's log cleaner does:
//
//   - A log has a clean part, already compacted, followed by a dirty part,
//     from its first dirty offset (persisted by the manager in the log dir's
//     cleaner-offset-checkpoint). The cleaner picks the log whose dirty part
//     is the largest share of its cleanable bytes, if above
//     min.cleanable.dirty.ratio, or any log with dirty records older than
//     max.compaction.lag.ms.
//   - It never cleans the active segment, past the high watermark or an open
//     transaction, nor segments holding records newer than
//     min.compaction.lag.ms; the end of what it may clean is rounded down to
//     a segment boundary.
//   - It maps each key of the dirty part to its latest offset (OffsetMap),
//     stopping early when the map is full, then rewrites every segment from
//     the log start up to the end of what it mapped, keeping a record when
//     its offset is at least the map's offset for its key. Records keep their
//     offsets; batches keep their base offset, offset range, producer fields
//     and codec.
//   - A tombstone (null value) stays until its batch's delete horizon
//     (KIP-534): the first pass that keeps it stamps the batch with
//     now + delete.retention.ms, and passes after that time drop it.
//   - Small adjacent segments are merged into one, up to segment.bytes, and
//     each cleaned segment replaces its originals under the writer lock
//     (see swap.go for the crash-safe steps). Readers never lock and never
//     miss a range: a read that holds an old segment keeps reading its bytes.
//
// A batch emptied by cleaning is dropped, unless it is its producer's last
// batch: then its header stays, with no records, so the producer's sequence
// and epoch survive (Kafka does the same). Transactions: see txnTracker.

// CleanerConfig holds the log cleaner's broker settings.
type CleanerConfig struct {
	// DedupeBufferSize is log.cleaner.dedupe.buffer.size: the memory of the
	// offset map, 24 bytes a key.
	DedupeBufferSize int64
	// LoadFactor is log.cleaner.io.buffer.load.factor: how full the map
	// gets before a pass stops mapping.
	LoadFactor float64
	// IOBufferSize is the size of the read and write buffers
	// (log.cleaner.io.buffer.size); reads grow for a larger batch.
	IOBufferSize int
	// HighWatermark returns a log's high watermark, which cleaning never
	// passes. Nil means the log end offset (a log with no replicas).
	HighWatermark func(*Log) int64
	Logger        *slog.Logger
}

// DefaultCleanerConfig returns Apache Kafka's defaults.
func DefaultCleanerConfig() CleanerConfig {
	return CleanerConfig{
		DedupeBufferSize: 128 << 20,
		LoadFactor:       0.9,
		IOBufferSize:     512 << 10,
	}
}

// CleanStats describes one cleaning pass over a log.
type CleanStats struct {
	Dir          string
	FirstDirty   int64 // the first dirty offset before the pass
	EndOffset    int64 // the first dirty offset after it
	Segments     int   // segments read
	Groups       int   // cleaned segments written
	BytesRead    int64
	BytesWritten int64
	RecordsRead  int64
	RecordsKept  int64
	Duration     time.Duration
}

// Cleaner compacts logs, one pass at a time. It owns one offset map of
// DedupeBufferSize bytes, allocated on the first pass; CleanOnce calls run
// one at a time. Several Cleaners (log.cleaner.threads) may share a set of
// logs: a log is cleaned by one of them at a time.
type Cleaner struct {
	cfg CleanerConfig
	mu  sync.Mutex // one pass at a time

	// Owned by the pass holding mu.
	m    *OffsetMap
	rr   record.Iter
	bld  record.Builder
	scan batchScanner
	out  []byte // a rebuilt batch
	wbuf []byte // the cleaned segment's write buffer
	last CleanStats

	// inflateLimit bounds what one batch may decompress to; tests lower it.
	inflateLimit int
	crashAt      swapStep // tests: stop a swap as if the broker crashed there
}

// cleanerState is what the cleaner keeps on each log.
type cleanerState struct {
	firstDirty  atomic.Int64 // offsets below it are clean
	busy        atomic.Bool  // a cleaner is cleaning the log
	uncleanable atomic.Bool  // cleaning failed on the log's data: skip it
}

// FirstDirtyOffset is the offset from which the log is not yet compacted:
// the log's entry in the cleaner-offset-checkpoint.
func (l *Log) FirstDirtyOffset() int64 { return l.cleaner.firstDirty.Load() }

// SetFirstDirtyOffset restores the first dirty offset from the
// cleaner-offset-checkpoint when the log is loaded. An offset outside the
// log counts as the log start.
func (l *Log) SetFirstDirtyOffset(offset int64) { l.cleaner.firstDirty.Store(offset) }

// lowerFirstDirty moves the first dirty offset down to offset, for a log
// truncated there: what is appended after it is dirty.
func (l *Log) lowerFirstDirty(offset int64) {
	for {
		cur := l.cleaner.firstDirty.Load()
		if cur <= offset || l.cleaner.firstDirty.CompareAndSwap(cur, offset) {
			return
		}
	}
}

// errCleanAborted means the log changed under a pass (truncated, deleted,
// closed) and the pass gave up; nothing is lost and a later pass retries.
var errCleanAborted = errors.New("cleaning aborted: the log changed")

// NewCleaner returns a cleaner.
func NewCleaner(cfg CleanerConfig) *Cleaner {
	d := DefaultCleanerConfig()
	if cfg.DedupeBufferSize <= 0 {
		cfg.DedupeBufferSize = d.DedupeBufferSize
	}
	if cfg.LoadFactor <= 0 || cfg.LoadFactor > 1 {
		cfg.LoadFactor = d.LoadFactor
	}
	if cfg.IOBufferSize <= 0 {
		cfg.IOBufferSize = d.IOBufferSize
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Cleaner{cfg: cfg, inflateLimit: record.DecompressLimit}
}

// LastStats describes the last pass that cleaned a log.
func (c *Cleaner) LastStats() CleanStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// CleanOnce cleans the filthiest of logs, if one needs it: the compacted
// log with the highest dirty ratio above its min.cleanable.dirty.ratio, or
// one whose max.compaction.lag.ms has passed. It reports whether it cleaned
// a log; the caller backs off (log.cleaner.backoff.ms) when it did not. A
// log whose data fails cleaning is marked uncleanable and skipped after;
// the error is returned.
func (c *Cleaner) CleanOnce(logs []*Log) (cleaned bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var best *cleanPlan
	for _, l := range logs {
		cfg := l.cfg.Load()
		if !cfg.Compact || l.cleaner.uncleanable.Load() || l.cleaner.busy.Load() {
			continue
		}
		p, ok := c.plan(l)
		if !ok || !((p.mustClean && p.dirtyBytes > 0) || p.ratio() > cfg.MinCleanableDirtyRatio) {
			continue
		}
		if best == nil || p.ratio() > best.ratio() {
			best = &p
		}
	}
	if best == nil {
		return false, nil
	}
	st, err := c.cleanLog(best)
	switch {
	case errors.Is(err, errCleanAborted):
		return false, nil
	case err != nil:
		best.log.cleaner.uncleanable.Store(true)
		c.cfg.Logger.Error("log cleaning failed, the log is marked uncleanable", "dir", best.log.dir, "err", err)
		return false, err
	}
	c.last = st
	c.cfg.Logger.Info("cleaned log", "dir", st.Dir, "first_dirty", st.FirstDirty, "end", st.EndOffset,
		"segments", st.Segments, "cleaned_segments", st.Groups, "bytes_read", st.BytesRead,
		"bytes_written", st.BytesWritten, "records_read", st.RecordsRead, "records_kept", st.RecordsKept,
		"duration", st.Duration)
	return true, nil
}

// cleanPlan is what a pass over one log would clean.
type cleanPlan struct {
	log        *Log
	segs       []*Segment // the segment list the plan was made from
	firstDirty int64
	rawDirty   int64 // the stored first dirty offset the plan read
	dirtySeg   int   // index in segs of the segment holding firstDirty
	endSeg     int   // index of the first segment not to clean
	cleanBytes int64
	dirtyBytes int64
	mustClean  bool // max.compaction.lag.ms has passed
}

func (p *cleanPlan) ratio() float64 {
	total := p.cleanBytes + p.dirtyBytes
	if total == 0 {
		return 0
	}
	return float64(p.dirtyBytes) / float64(total)
}

// plan finds what of l may be cleaned now; ok is false when nothing.
func (c *Cleaner) plan(l *Log) (p cleanPlan, ok bool) {
	cfg := l.cfg.Load()
	now := cfg.nowMs()
	segs := l.Segments()
	active := len(segs) - 1
	p = cleanPlan{log: l, segs: segs}
	p.rawDirty = l.cleaner.firstDirty.Load()
	p.firstDirty = p.rawDirty
	if start := l.LogStartOffset(); p.firstDirty < start || p.firstDirty > l.LogEndOffset() {
		p.firstDirty = start
	}
	limit := segs[active].base
	if c.cfg.HighWatermark != nil {
		limit = min(limit, c.cfg.HighWatermark(l))
	}
	if off, ok := l.firstUnstableOffset(); ok {
		limit = min(limit, off)
	}
	p.dirtySeg = max(segmentIndex(segs, p.firstDirty), 0)
	if lag := cfg.MinCompactionLagMs; lag > 0 {
		for i := p.dirtySeg; i < active; i++ {
			if segs[i].largestTimestamp() > now-lag {
				limit = min(limit, segs[i].base)
				break
			}
		}
	}
	p.endSeg = min(max(segmentIndex(segs, limit), 0), active)
	if p.endSeg <= p.dirtySeg {
		return p, false
	}
	for _, s := range segs[:p.dirtySeg] {
		p.cleanBytes += s.Size()
	}
	earliest := int64(-1)
	for _, s := range segs[p.dirtySeg:p.endSeg] {
		p.dirtyBytes += s.Size()
		if ts := s.firstBatchTs.Load(); ts > 0 && (earliest < 0 || ts < earliest) {
			earliest = ts
		}
	}
	p.mustClean = earliest >= 0 && earliest < now-max(cfg.MaxCompactionLagMs, 0)
	return p, true
}

// segmentIndex is the index in segs of the last segment with a base offset
// at or below off, -1 when none.
func segmentIndex(segs []*Segment, off int64) int {
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
	return i
}

// firstUnstableOffset is the first offset of the log's earliest
// transaction that is open or not yet resolved below the high watermark.
func (l *Log) firstUnstableOffset() (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.producers == nil {
		return 0, false
	}
	return l.mu.producers.FirstUnstableOffset()
}

// producerLast is what the cleaner needs of a producer's state: the last
// offset of its last data batch (-1 none) and its epoch.
type producerLast struct {
	lastOffset int64
	epoch      int16
}

// lastProducerBatches snapshots the producers' last batches.
func (l *Log) lastProducerBatches() map[int64]producerLast {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[int64]producerLast)
	if l.mu.producers == nil {
		return out
	}
	for _, e := range l.mu.producers.Producers() {
		out[e.ProducerID] = producerLast{lastOffset: e.LastOffset, epoch: e.Epoch}
	}
	return out
}

// cleanLog runs one pass over the log of p.
func (c *Cleaner) cleanLog(p *cleanPlan) (CleanStats, error) {
	l := p.log
	if !l.cleaner.busy.CompareAndSwap(false, true) {
		return CleanStats{}, errCleanAborted
	}
	defer l.cleaner.busy.Store(false)
	begin := time.Now()
	cfg := l.cfg.Load()
	now := cfg.nowMs()
	st := CleanStats{Dir: l.dir, FirstDirty: p.firstDirty}

	segs := p.segs[:p.endSeg]
	for i, s := range segs {
		if s.acquire() != nil {
			for _, s := range segs[:i] {
				s.Release()
			}
			return st, errCleanAborted
		}
	}
	defer func() {
		for _, s := range segs {
			s.Release()
		}
	}()

	if c.m == nil {
		m, err := NewOffsetMap(c.cfg.DedupeBufferSize, c.cfg.LoadFactor)
		if err != nil {
			return st, err
		}
		c.m = m
	}
	all := l.Segments()
	end, err := c.buildOffsetMap(segs[p.dirtySeg:], p.firstDirty, p.segs[p.endSeg].base,
		collectAbortedTxns(all, segs[p.dirtySeg].base), cfg)
	if err != nil {
		return st, err
	}
	n := 0
	for n < len(segs) && segs[n].base < end {
		n++
	}
	x := &cleanContext{
		m:         c.m,
		txn:       newTxnTracker(collectAbortedTxns(all, segs[0].base)),
		producers: l.lastProducerBatches(),
		now:       now,
		horizon:   now + cfg.DeleteRetentionMs,
		stats:     &st,
	}
	for _, g := range groupSegments(segs[:n], cfg) {
		if err := c.cleanGroup(l, g, x, cfg); err != nil {
			return st, err
		}
		st.Segments += len(g)
		st.Groups++
	}
	l.cleaner.firstDirty.CompareAndSwap(p.rawDirty, end)
	st.EndOffset = end
	st.Duration = time.Since(begin)
	return st, nil
}

// buildOffsetMap fills the offset map from the dirty segments, from offset
// dirty, and returns the offset the map covers up to: limit, the base
// offset of the segment after them, or the end of the last batch mapped
// when the map filled up first.
func (c *Cleaner) buildOffsetMap(segs []*Segment, dirty, limit int64, aborted []AbortedTxn, cfg *Config) (int64, error) {
	m := c.m
	m.Clear()
	txn := newTxnTracker(aborted)
	end := dirty
	for i, s := range segs {
		c.scan.reset(s, s.Size(), c.cfg.IOBufferSize, cfg.MaxMessageBytes)
		for {
			b, _, err := c.scan.next()
			if err != nil {
				return 0, err
			}
			if b == nil {
				break
			}
			if err := b.Validate(); err != nil {
				return 0, fmt.Errorf("segment %d: %w", s.base, err)
			}
			if b.IsControl() {
				if _, _, err := txn.onControl(b, &c.rr); err != nil {
					return 0, fmt.Errorf("segment %d: %w", s.base, err)
				}
			} else if !txn.onData(b) && b.LastOffset() >= dirty {
				if int(b.NumRecords()) > m.Free() {
					if end == dirty {
						return 0, fmt.Errorf("offset map of %d entries cannot hold a batch of %d records: raise log.cleaner.dedupe.buffer.size",
							m.Capacity(), b.NumRecords())
					}
					return end, nil
				}
				if err := c.mapBatch(b, dirty); err != nil {
					return 0, fmt.Errorf("segment %d: %w", s.base, err)
				}
			}
			end = max(end, b.NextOffset())
		}
		if i+1 < len(segs) {
			end = max(end, segs[i+1].base)
		}
	}
	return max(end, limit), nil
}

// mapBatch puts the keys of b's records at or after dirty into the map.
func (c *Cleaner) mapBatch(b record.Batch, dirty int64) error {
	r := &c.rr
	if err := r.Reset(b, c.inflateLimit); err != nil {
		return err
	}
	for r.Next() {
		if k := r.Record().Key; k != nil && r.Offset() >= dirty {
			c.m.Put(k, r.Offset())
		}
	}
	return r.Err()
}

// groupSegments splits segs into runs of adjacent segments that fit one
// segment: at most segment.bytes in all, index entries that fit
// segment.index.bytes, and offsets within 2^31 of the first base offset.
func groupSegments(segs []*Segment, cfg *Config) [][]*Segment {
	var groups [][]*Segment
	interval := int64(max(cfg.IndexIntervalBytes, 1))
	maxEntries := int64(cfg.SegmentIndexBytes / 12) // time index entries are the larger
	for len(segs) > 0 {
		size := segs[0].Size()
		n := 1
		for n < len(segs) {
			s := segs[n]
			next := size + s.Size()
			lastOffset := s.NextOffset() - 1
			if n+1 < len(segs) {
				lastOffset = segs[n+1].base - 1
			}
			if next > cfg.SegmentBytes || next/interval+int64(n)+3 > maxEntries ||
				lastOffset-segs[0].base > 1<<31-1 {
				break
			}
			size = next
			n++
		}
		groups = append(groups, segs[:n])
		segs = segs[n:]
	}
	return groups
}
