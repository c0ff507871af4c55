package topicconfig

import (
	"slices"
	"strconv"
	"strings"

	"kzero/log"
)

// LogConfig resolves a topic's configs (its dynamic configs over the broker
// layers over the defaults, as Describe does) into the log's settings.
// Values are validated when they are written (topic create, alter configs,
// broker start); one that fails to parse here anyway keeps log's default.
func LogConfig(topic map[string]string, broker BrokerConfigs) log.Config {
	c := log.DefaultConfig()
	get := func(name string) string {
		v, _ := Value(name, topic, broker)
		return strings.TrimSpace(v)
	}
	long := func(name string, into *int64) {
		if n, err := strconv.ParseInt(get(name), 10, 64); err == nil {
			*into = n
		}
	}
	integer := func(name string, into *int) {
		if n, err := strconv.ParseInt(get(name), 10, 32); err == nil {
			*into = int(n)
		}
	}

	long("segment.bytes", &c.SegmentBytes)
	long("segment.ms", &c.SegmentMs)
	long("segment.jitter.ms", &c.SegmentJitterMs)
	integer("segment.index.bytes", &c.SegmentIndexBytes)
	integer("index.interval.bytes", &c.IndexIntervalBytes)
	integer("max.message.bytes", &c.MaxMessageBytes)
	long("retention.ms", &c.RetentionMs)
	long("retention.bytes", &c.RetentionBytes)
	policy := splitList(get("cleanup.policy"))
	c.Compact = slices.Contains(policy, "compact")
	c.Delete = slices.Contains(policy, "delete")
	if f, err := strconv.ParseFloat(get("min.cleanable.dirty.ratio"), 64); err == nil {
		c.MinCleanableDirtyRatio = f
	}
	long("delete.retention.ms", &c.DeleteRetentionMs)
	long("min.compaction.lag.ms", &c.MinCompactionLagMs)
	long("max.compaction.lag.ms", &c.MaxCompactionLagMs)
	long("file.delete.delay.ms", &c.FileDeleteDelayMs)
	long("flush.messages", &c.FlushMessages)
	long("flush.ms", &c.FlushMs)
	c.LogAppendTime = get("message.timestamp.type") == "LogAppendTime"
	long("message.timestamp.before.max.ms", &c.TimestampBeforeMaxMs)
	long("message.timestamp.after.max.ms", &c.TimestampAfterMaxMs)
	return c
}
