package replica

import (
	"os"
	"path/filepath"
	"time"

	"kzero/log"
	"kzero/record"
)

// The partition's log, read through its replica: the network layer and the
// coordinators ask these, never the log itself.

// LogStartOffset is the first offset the log holds.
func (p *Partition) LogStartOffset() int64 { return p.Log().LogStartOffset() }

// LogEndOffset is the offset the next append gets.
func (p *Partition) LogEndOffset() int64 { return p.Log().LogEndOffset() }

// OffsetForTimestamp finds the first record at or after ts (ListOffsets).
func (p *Partition) OffsetForTimestamp(ts int64) (log.RecordPosition, bool, error) {
	return p.Log().OffsetForTimestamp(ts)
}

// MaxTimestamp finds the record with the largest timestamp (ListOffsets -3).
func (p *Partition) MaxTimestamp() (log.RecordPosition, bool, error) { return p.Log().MaxTimestamp() }

// EndOffsetForEpoch answers OffsetForLeaderEpoch from the leader epoch cache.
func (p *Partition) EndOffsetForEpoch(epoch int32) (int32, int64) {
	return p.Log().EndOffsetForEpoch(epoch)
}

// InTransaction reports whether the producer at epoch has a transaction
// open in this partition.
func (p *Partition) InTransaction(producerID int64, epoch int16) bool {
	return p.Log().InTransaction(producerID, epoch)
}

// Producers lists the partition's producer states (DescribeProducers).
func (p *Partition) Producers() []log.ProducerSnapshotEntry { return p.Log().Producers() }

// ScanAll calls fn with every batch from the log start to its end, open
// transactions included: a coordinator loading its state.
func (p *Partition) ScanAll(fn func(record.Batch) error) error {
	return p.Log().Scan(p.Log().LogStartOffset(), p.Log().LogEndOffset(), fn)
}

// SegmentStart is where a segment starts and when its file last changed.
type SegmentStart struct{ Offset, ModifiedMs int64 }

// SegmentStarts lists ListOffsets v0's candidates as Kafka 3.9 made them
// (UnifiedLog.legacyFetchOffsetsBefore): each segment's base offset,
// raised to the log start offset, with its file's modification time (0
// for a file deleted meanwhile, as Java's lastModified of a missing file),
// then the log end offset stamped now when the active segment holds
// anything.
func (p *Partition) SegmentStarts() []SegmentStart {
	l := p.Log()
	segs := l.Segments()
	if len(segs) == 0 {
		return nil
	}
	out := make([]SegmentStart, 0, len(segs)+1)
	start := l.LogStartOffset()
	for _, s := range segs {
		var modified int64
		if fi, err := os.Stat(filepath.Join(l.Dir(), log.FileName(s.BaseOffset(), log.LogSuffix))); err == nil {
			modified = fi.ModTime().UnixMilli()
		}
		out = append(out, SegmentStart{max(s.BaseOffset(), start), modified})
	}
	if segs[len(segs)-1].Size() > 0 {
		out = append(out, SegmentStart{l.LogEndOffset(), time.Now().UnixMilli()})
	}
	return out
}
