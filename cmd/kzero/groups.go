package main

import (
	"log/slog"
	"time"

	"kzero/coord/group"
	"kzero/coord/metadata"
	"kzero/log"
)

// groupConfig is the group coordinator's configuration from the broker's.
func (c *brokerConfig) groupConfig(logger *slog.Logger) group.Config {
	return group.Config{
		NumPartitions:          int32(c.int("offsets.topic.num.partitions")),
		ReplicationFactor:      int16(c.int("offsets.topic.replication.factor")),
		InitialRebalanceDelay:  msDuration(c.long("group.initial.rebalance.delay.ms")),
		MinSessionTimeout:      msDuration(c.long("group.min.session.timeout.ms")),
		MaxSessionTimeout:      msDuration(c.long("group.max.session.timeout.ms")),
		MaxSize:                c.int("group.max.size"),
		OffsetsRetention:       time.Duration(c.long("offsets.retention.minutes")) * time.Minute,
		RetentionCheckInterval: msDuration(c.long("offsets.retention.check.interval.ms")),
		OffsetMetadataMaxBytes: c.int("offset.metadata.max.bytes"),
		Logger:                 logger,
	}
}

// applyGroupImage tells the group coordinator which __consumer_offsets
// partitions this broker leads, after applyImage opened them.
func (b *broker) applyGroupImage(next *metadata.Image) {
	t := next.Topic(group.TopicName)
	if t == nil {
		for _, p := range b.groups.Leading() {
			b.groups.Resign(p)
		}
		return
	}
	b.groups.SetPartitionCount(int32(len(t.Partitions)))
	for _, p := range t.Partitions {
		part, ok := b.replicas.Partition(log.TopicPartition{Topic: t.Name, Partition: p.Partition})
		if p.Leader == b.nodeID && ok {
			b.groups.Lead(part)
			continue
		}
		b.groups.Resign(p.Partition)
	}
}
