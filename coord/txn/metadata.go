package txn

import (
	"maps"
	"math"
	"slices"
	"strings"

	"kzero/log"
)

// noProducerID is the producer id of none (-1).
const noProducerID = -1

// txnMeta is one transactional id's state: what its last record says.
// Values are copied to make a transition and replace the old one once the
// record is written.
type txnMeta struct {
	id             string
	producerID     int64
	prevProducerID int64 // the producer id before the last rotation, for retries
	nextProducerID int64 // the producer id to rotate to when this transaction completes (TV2)
	epoch          int16
	lastEpoch      int16 // the epoch before the last bump, for retries (KIP-360)
	timeoutMs      int32
	state          State
	partitions     map[log.TopicPartition]struct{}
	startMs        int64 // when the ongoing transaction started; -1 none
	updateMs       int64
	clientVersion  int16 // the transaction version the client uses (1 or 2)

	// markersDone are the partitions whose markers are written, kept by
	// the one goroutine finishing a prepared transaction across retries.
	markersDone map[log.TopicPartition]struct{}
}

// clone returns a copy to transition.
func (m *txnMeta) clone() *txnMeta {
	c := *m
	c.markersDone = nil
	c.partitions = maps.Clone(m.partitions)
	if c.partitions == nil {
		c.partitions = map[log.TopicPartition]struct{}{}
	}
	return &c
}

// sortedPartitions lists the transaction's partitions by topic and number.
func (m *txnMeta) sortedPartitions() []log.TopicPartition {
	out := slices.Collect(maps.Keys(m.partitions))
	slices.SortFunc(out, func(a, b log.TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition) - int(b.Partition)
	})
	return out
}

// epochExhausted reports whether the epoch cannot be bumped again: Kafka
// keeps the last values free so a fence can still bump once.
func epochExhausted(epoch int16) bool { return epoch >= math.MaxInt16-1 }

// hasAll reports whether every partition of tps is in the transaction.
func (m *txnMeta) hasAll(tps []log.TopicPartition) bool {
	for _, tp := range tps {
		if _, ok := m.partitions[tp]; !ok {
			return false
		}
	}
	return true
}
