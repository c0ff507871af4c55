package txn

import (
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/group"
	"kzero/log"
	"kzero/record"
	"kzero/replica"
)

// OffsetsCompleter ends a transaction's offset commits in a
// __consumer_offsets partition: it writes the marker there and commits or
// drops the staged offsets (the group coordinator).
type OffsetsCompleter interface {
	CompleteTxn(partition int32, producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool) error
}

// LocalMarkers writes markers to the partitions this broker leads: data
// partitions through their replica, __consumer_offsets partitions through
// the group coordinator. It is the MarkerWriter of a single broker and what
// WriteTxnMarkers serves.
type LocalMarkers struct {
	Replicas *replica.Manager
	Offsets  OffsetsCompleter
	// TopicExists reports whether a topic still exists: markers for
	// deleted topics are dropped.
	TopicExists func(topic string) bool
}

// WriteMarker implements MarkerWriter.
func (w LocalMarkers) WriteMarker(tp log.TopicPartition, producerID int64, epoch int16, coordinatorEpoch int32, commit bool, _ int16) error {
	if tp.Topic == group.TopicName && w.Offsets != nil {
		return w.Offsets.CompleteTxn(tp.Partition, producerID, epoch, coordinatorEpoch, commit)
	}
	p, ok := w.Replicas.Partition(tp)
	if !ok {
		if w.TopicExists != nil && !w.TopicExists(tp.Topic) {
			return nil
		}
		return fmt.Errorf("marker for %s: %w", tp, kerr.NotLeaderForPartition)
	}
	typ := record.ControlAbort
	if commit {
		typ = record.ControlCommit
	}
	batch := record.AppendControlBatch(nil, producerID, epoch, coordinatorEpoch, typ, time.Now().UnixMilli())
	info, err := p.AppendCoordinator(batch)
	if err == nil {
		err = p.WaitCommitted(info.LastOffset+1, commitTimeout)
	}
	if err != nil {
		return fmt.Errorf("marker for %s: %w", tp, err)
	}
	return nil
}
