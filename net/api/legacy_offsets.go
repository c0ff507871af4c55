package api

import (
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
)

// Replica ids of a ListOffsets request: a consumer's, and a debugging
// tool's (which may ask a follower).
const (
	consumerReplicaID  = -1
	debuggingReplicaID = -2
)

// legacyOffsets answers one partition of ListOffsets v0 as Kafka 3.9 did
// (UnifiedLog.legacyFetchOffsetsBefore): the candidates are each segment's
// base offset (raised to the log start offset), stamped with the time its
// file was last modified, then the log end offset stamped now when the
// active segment holds anything. Timestamp -1 starts from the last
// candidate, -2 from the first, any other from the last one modified at or
// before it; up to maxNum offsets are returned from there back to the
// first, in descending order. A consumer is never told of an offset above
// the high watermark: those are dropped and the high watermark leads.
// Timestamps below -2 are UNSUPPORTED_VERSION, as in Kafka.
func (h *Handler) legacyOffsets(tp log.TopicPartition, timestamp int64, maxNum int32, replicaID int32) ([]int64, error) {
	if timestamp < -2 {
		return nil, kerr.UnsupportedVersion
	}
	part, err := h.replicas.Get(tp)
	if err != nil {
		return nil, err
	}
	if !part.IsLeader() && replicaID != debuggingReplicaID {
		return nil, kerr.NotLeaderForPartition
	}
	l := part.Log()
	segs := l.Segments()
	if len(segs) == 0 {
		return []int64{}, nil
	}
	type candidate struct{ offset, modified int64 }
	cands := make([]candidate, 0, len(segs)+1)
	start := l.LogStartOffset()
	for _, s := range segs {
		var modified int64
		// A segment deleted meanwhile keeps time 0, as a missing
		// file's lastModified is in Java.
		if fi, err := os.Stat(filepath.Join(l.Dir(), log.FileName(s.BaseOffset(), log.LogSuffix))); err == nil {
			modified = fi.ModTime().UnixMilli()
		}
		cands = append(cands, candidate{max(s.BaseOffset(), start), modified})
	}
	if segs[len(segs)-1].Size() > 0 {
		cands = append(cands, candidate{l.LogEndOffset(), time.Now().UnixMilli()})
	}
	from := len(cands) - 1
	switch timestamp {
	case -1:
	case -2:
		from = 0
	default:
		for from >= 0 && cands[from].modified > timestamp {
			from--
		}
	}
	n := min(int(max(maxNum, 0)), from+1)
	offsets := make([]int64, 0, n+1)
	for i := from; i > from-n; i-- {
		offsets = append(offsets, cands[i].offset)
	}
	// Descending already: candidates ascend. Kafka sorts them anyway,
	// which matters only for equal offsets (a base raised to the start).
	if replicaID == consumerReplicaID {
		hw := part.HighWatermark()
		i := 0
		for i < len(offsets) && offsets[i] > hw {
			i++
		}
		if i > 0 {
			offsets = append([]int64{hw}, offsets[i:]...)
		}
	}
	return offsets, nil
}
