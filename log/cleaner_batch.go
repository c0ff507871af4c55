package log

import (
	"errors"
	"fmt"
	"os"
	"time"

	"kzero/record"
)

// cleanContext is the state of one pass's rewrite of a log.
type cleanContext struct {
	m         *OffsetMap
	txn       *txnTracker
	producers map[int64]producerLast
	now       int64
	horizon   int64 // the delete horizon this pass stamps: now + delete.retention.ms
	stats     *CleanStats
}

// lastOfProducer reports whether b is its producer's last batch, whose
// header must stay so the producer's sequence and epoch survive: its last
// data batch, or, for a producer with none left, a marker of its epoch.
func (x *cleanContext) lastOfProducer(b record.Batch) bool {
	p, ok := x.producers[b.ProducerID()]
	switch {
	case !ok:
		return false
	case p.lastOffset >= 0:
		return b.LastOffset() == p.lastOffset
	}
	return b.IsControl() && b.ProducerEpoch() == p.epoch
}

// keep decides whether the record r is reading from b stays: it has a
// key, no later record of the key is in the map, and, for a tombstone,
// the batch's delete horizon has not passed.
func (x *cleanContext) keep(b record.Batch, r *record.Iter) bool {
	rec := r.Record()
	if rec.Key == nil {
		return false // compaction cannot keep a record without a key
	}
	if r.Offset() < x.m.Get(rec.Key) {
		return false
	}
	return rec.Value != nil || !b.HasDeleteHorizon() || x.now < b.BaseTimestamp()
}

// cleanGroup rewrites the segments of g into one cleaned segment and swaps
// it in.
func (c *Cleaner) cleanGroup(l *Log, g []*Segment, x *cleanContext, cfg *Config) error {
	base := g[0].base
	w, err := createCleaned(l.dir, base, cfg, c.wbuf[:0], c.cfg.IOBufferSize)
	if err != nil {
		return err
	}
	sizes := make([]int64, len(g))
	for i, s := range g {
		sizes[i] = s.Size()
		c.scan.reset(s, sizes[i], c.cfg.IOBufferSize, cfg.MaxMessageBytes)
		for {
			b, pos, err := c.scan.next()
			if err == nil && b == nil {
				break
			}
			if err == nil {
				err = c.cleanBatch(b, w, x)
			}
			if err != nil {
				w.discard()
				return fmt.Errorf("clean segment %d at %d: %w", s.base, pos, err)
			}
		}
		x.stats.BytesRead += sizes[i]
	}
	if err := w.finish(); err != nil {
		w.discard()
		return err
	}
	c.wbuf = w.buf[:0]
	x.stats.BytesWritten += w.pos
	// Like Kafka, the cleaned segment keeps the modification time of the
	// last segment it replaces, which retention falls back to.
	if st, err := os.Stat(g[len(g)-1].path); err == nil {
		os.Chtimes(cleanedPath(l.dir, base, LogSuffix), time.Time{}, st.ModTime())
	}
	l.mu.Lock()
	err = l.replaceSegmentsLocked(g, sizes, base, c.crashAt)
	l.mu.Unlock()
	return err
}

// cleanBatch writes what of b stays to w.
func (c *Cleaner) cleanBatch(b record.Batch, w *cleanedSegment, x *cleanContext) error {
	if err := b.Validate(); err != nil {
		return err
	}
	x.stats.RecordsRead += int64(b.NumRecords())
	keepHeader := b.ProducerID() != record.NoProducerID && x.lastOfProducer(b)
	if b.IsControl() {
		removable, kept, err := x.txn.onControl(b, &c.rr)
		if err != nil {
			return err
		}
		if kept != nil {
			if err := w.seg.txn.Load().Append(*kept); err != nil {
				return err
			}
		}
		expired := removable && b.HasDeleteHorizon() && x.now >= b.BaseTimestamp()
		switch {
		case expired && keepHeader:
			return c.writeEmpty(b, w)
		case expired:
			return nil
		case removable && !b.HasDeleteHorizon():
			return c.rewriteWithHorizon(b, w, x, true)
		}
		x.stats.RecordsKept += int64(b.NumRecords())
		return w.append(b)
	}
	if x.txn.onData(b) {
		if keepHeader {
			return c.writeEmpty(b, w)
		}
		return nil
	}

	r := &c.rr
	if err := r.Reset(b, c.inflateLimit); err != nil {
		return err
	}
	c.bld.Reset(headerOf(b))
	kept, dropped, tombstones := 0, 0, false
	for r.Next() {
		if !x.keep(b, r) {
			dropped++
			continue
		}
		c.bld.Add(r.Record())
		kept++
		tombstones = tombstones || r.Record().Value == nil
	}
	if err := r.Err(); err != nil {
		return err
	}
	x.stats.RecordsKept += int64(kept)
	stamp := tombstones && !b.HasDeleteHorizon()
	switch {
	case kept == 0 && keepHeader:
		return c.writeEmpty(b, w)
	case kept == 0:
		return nil
	case stamp:
		return c.rewriteWithHorizon(b, w, x, false)
	case dropped == 0:
		return w.append(b) // unchanged: copy its bytes
	}
	return c.writeBuilt(w)
}

// rewriteWithHorizon writes b with the kept records (all with all) and the
// delete horizon of this pass in its base timestamp; record timestamp
// deltas move to the new base.
func (c *Cleaner) rewriteWithHorizon(b record.Batch, w *cleanedSegment, x *cleanContext, all bool) error {
	h := headerOf(b)
	h.DeleteHorizon = true
	h.BaseTimestamp = x.horizon
	c.bld.Reset(h)
	r := &c.rr
	if err := r.Reset(b, c.inflateLimit); err != nil {
		return err
	}
	for r.Next() {
		if all || x.keep(b, r) {
			rec := r.Record()
			rec.TimestampDelta += b.BaseTimestamp() - x.horizon
			c.bld.Add(rec)
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	return c.writeBuilt(w)
}

// writeEmpty writes b's header with no records, keeping its offset range
// and producer fields.
func (c *Cleaner) writeEmpty(b record.Batch, w *cleanedSegment) error {
	h := headerOf(b)
	h.Codec = record.CodecNone
	h.DeleteHorizon = false
	h.BaseTimestamp = b.MaxTimestamp()
	h.MaxTimestamp = b.MaxTimestamp()
	c.bld.Reset(h)
	return c.writeBuilt(w)
}

func (c *Cleaner) writeBuilt(w *cleanedSegment) error {
	out, err := c.bld.AppendTo(c.out[:0])
	if err != nil {
		return err
	}
	c.out = out
	return w.append(record.Batch(out))
}

// headerOf is the header a rewrite of b keeps: its base offset and offset
// range, producer fields, attributes and codec. The largest timestamp is
// recomputed from the kept records, except under LogAppendTime.
func headerOf(b record.Batch) record.BatchHeader {
	h := record.BatchHeader{
		BaseOffset:           b.BaseOffset(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		Codec:                b.Compression(),
		LogAppendTime:        b.LogAppendTime(),
		Transactional:        b.IsTransactional(),
		Control:              b.IsControl(),
		DeleteHorizon:        b.HasDeleteHorizon(),
		BaseTimestamp:        b.BaseTimestamp(),
		LastOffsetDelta:      b.LastOffsetDelta(),
		ProducerID:           b.ProducerID(),
		ProducerEpoch:        b.ProducerEpoch(),
		BaseSequence:         b.BaseSequence(),
	}
	if b.LogAppendTime() {
		h.MaxTimestamp = b.MaxTimestamp()
	}
	return h
}

// batchScanner reads the batches of a segment in order through a reused
// buffer, without the writer's lock: the cleaner reads only sealed
// segments, below the size they had when the scan began.
type batchScanner struct {
	fd       int
	base     int64
	buf      []byte
	data     []byte // read, not yet returned
	pos      int64  // file position of data[0]
	end      int64
	maxBatch int64
}

var errBatchTooLarge = errors.New("batch larger than the cleaner's largest read buffer")

func (r *batchScanner) reset(s *Segment, size int64, bufSize, maxMessage int) {
	r.fd, r.base, r.pos, r.end, r.data = s.fd, s.base, 0, size, nil
	if cap(r.buf) < bufSize {
		r.buf = make([]byte, bufSize)
	}
	r.maxBatch = int64(max(maxMessage, bufSize, 16<<20))
}

// next returns the next batch, valid until the following call, and its
// file position; a nil batch at the end.
func (r *batchScanner) next() (record.Batch, int64, error) {
	for {
		need := int64(record.LogOverhead)
		if len(r.data) >= record.LogOverhead {
			n := record.LogOverhead + int64(record.Batch(r.data).Length())
			switch {
			case n < record.BatchHeaderSize || r.pos+n > r.end:
				return nil, r.pos, fmt.Errorf("batch of %d bytes in %d left: %w", n, r.end-r.pos, record.ErrShortBatch)
			case n > r.maxBatch:
				return nil, r.pos, fmt.Errorf("%w: %d bytes", errBatchTooLarge, n)
			case int64(len(r.data)) >= n:
				b, pos := record.Batch(r.data[:n]), r.pos
				r.data, r.pos = r.data[n:], r.pos+n
				return b, pos, nil
			}
			need = n
		}
		from := r.pos + int64(len(r.data))
		if from >= r.end {
			if len(r.data) == 0 {
				return nil, r.pos, nil
			}
			return nil, r.pos, fmt.Errorf("%d bytes at the end of the segment: %w", len(r.data), record.ErrShortBatch)
		}
		r.buf = r.buf[:cap(r.buf)]
		kept := copy(r.buf, r.data)
		if need > int64(len(r.buf)) {
			nb := make([]byte, need)
			copy(nb, r.buf[:kept])
			r.buf = nb
		}
		n := min(int64(len(r.buf)-kept), r.end-from)
		if err := preadFull(r.fd, r.buf[kept:int64(kept)+n], from); err != nil {
			return nil, r.pos, fmt.Errorf("read segment %d: %w", r.base, err)
		}
		r.data = r.buf[:int64(kept)+n]
	}
}
