package main

import (
	"log/slog"
	"strings"
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

		ConsumerSessionTimeout:       msDuration(c.long("group.consumer.session.timeout.ms")),
		ConsumerMinSessionTimeout:    msDuration(c.long("group.consumer.min.session.timeout.ms")),
		ConsumerMaxSessionTimeout:    msDuration(c.long("group.consumer.max.session.timeout.ms")),
		ConsumerHeartbeatInterval:    msDuration(c.long("group.consumer.heartbeat.interval.ms")),
		ConsumerMinHeartbeatInterval: msDuration(c.long("group.consumer.min.heartbeat.interval.ms")),
		ConsumerMaxHeartbeatInterval: msDuration(c.long("group.consumer.max.heartbeat.interval.ms")),
		ConsumerMaxSize:              c.int("group.consumer.max.size"),
		ConsumerAssignors:            splitList(c.str("group.consumer.assignors")),
		ConsumerMigrationPolicy:      strings.ToLower(strings.TrimSpace(c.str("group.consumer.migration.policy"))),
		Logger:                       logger,
	}
}

// splitList reads a comma-separated list config.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// imageTopics is a metadata image as the group coordinator resolves
// consumer group subscriptions against it.
type imageTopics struct{ img *metadata.Image }

func (t imageTopics) Version() int64 { return t.img.Offset() }

func (t imageTopics) ByName(name string) (group.TopicInfo, bool) {
	if tp := t.img.Topic(name); tp != nil {
		return topicInfo(tp), true
	}
	return group.TopicInfo{}, false
}

func (t imageTopics) ByID(id [16]byte) (group.TopicInfo, bool) {
	if tp := t.img.TopicByID(id); tp != nil {
		return topicInfo(tp), true
	}
	return group.TopicInfo{}, false
}

func (t imageTopics) All() []group.TopicInfo {
	ts := t.img.Topics()
	out := make([]group.TopicInfo, len(ts))
	for i, tp := range ts {
		out[i] = topicInfo(tp)
	}
	return out
}

func topicInfo(t *metadata.Topic) group.TopicInfo {
	return group.TopicInfo{Name: t.Name, ID: t.ID, Partitions: int32(len(t.Partitions)), Internal: t.Internal()}
}

// applyGroupImage tells the group coordinator which __consumer_offsets
// partitions this broker leads, after applyImage opened them.
func (b *broker) applyGroupImage(next *metadata.Image) {
	b.groups.SetTopics(imageTopics{next})
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
