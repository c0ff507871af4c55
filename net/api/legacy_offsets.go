package api

import (
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
	cands := part.SegmentStarts()
	if len(cands) == 0 {
		return []int64{}, nil
	}
	from := len(cands) - 1
	switch timestamp {
	case -1:
	case -2:
		from = 0
	default:
		for from >= 0 && cands[from].ModifiedMs > timestamp {
			from--
		}
	}
	n := min(int(max(maxNum, 0)), from+1)
	offsets := make([]int64, 0, n+1)
	for i := from; i > from-n; i-- {
		offsets = append(offsets, cands[i].Offset)
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
