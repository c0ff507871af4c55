package main

import (
	"log/slog"

	"kzero/coord"
	"kzero/coord/metadata"
	"kzero/coord/txn"
	"kzero/log"
)

// txnConfig is the transaction coordinator's configuration from the
// broker's.
func (c *brokerConfig) txnConfig(logger *slog.Logger, pids *coord.ProducerIDs, markers txn.MarkerWriter) txn.Config {
	return txn.Config{
		NumPartitions:       int32(c.int("transaction.state.log.num.partitions")),
		ReplicationFactor:   int16(c.int("transaction.state.log.replication.factor")),
		MinISR:              c.int("transaction.state.log.min.isr"),
		SegmentBytes:        int64(c.int("transaction.state.log.segment.bytes")),
		MaxTimeout:          msDuration(int64(c.int("transaction.max.timeout.ms"))),
		IDExpiration:        msDuration(int64(c.int("transactional.id.expiration.ms"))),
		AbortCheckInterval:  msDuration(int64(c.int("transaction.abort.timed.out.transaction.cleanup.interval.ms"))),
		ExpireCheckInterval: msDuration(int64(c.int("transaction.remove.expired.transaction.cleanup.interval.ms"))),
		AllocateProducerID:  pids.Next,
		Markers:             markers,
		Logger:              logger,
	}
}

// applyTxnImage tells the transaction coordinator which
// __transaction_state partitions this broker leads, after applyImage
// opened them.
func (b *broker) applyTxnImage(next *metadata.Image) {
	t := next.Topic(txn.TopicName)
	if t == nil {
		for _, p := range b.txns.Leading() {
			b.txns.Resign(p)
		}
		return
	}
	b.txns.SetPartitionCount(int32(len(t.Partitions)))
	for _, p := range t.Partitions {
		part, ok := b.replicas.Partition(log.TopicPartition{Topic: t.Name, Partition: p.Partition})
		if p.Leader == b.nodeID && ok {
			b.txns.Lead(part)
			continue
		}
		b.txns.Resign(p.Partition)
	}
}
