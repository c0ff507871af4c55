package log

import (
	"math"
	"time"

	"kzero/record"
)

// Config holds the settings of one log, named after the Kafka topic configs
// they carry (segment.bytes, retention.ms, ...). The zero value is not
// usable; start from DefaultConfig.
type Config struct {
	SegmentBytes       int64 // segment.bytes
	SegmentMs          int64 // segment.ms
	SegmentJitterMs    int64 // segment.jitter.ms
	SegmentIndexBytes  int   // segment.index.bytes
	IndexIntervalBytes int   // index.interval.bytes
	MaxMessageBytes    int   // max.message.bytes: the largest batch accepted

	RetentionMs    int64 // retention.ms; -1 keeps segments forever
	RetentionBytes int64 // retention.bytes; -1 means no size limit

	Compact bool // cleanup.policy contains "compact"
	Delete  bool // cleanup.policy contains "delete"

	MinCleanableDirtyRatio float64 // min.cleanable.dirty.ratio
	DeleteRetentionMs      int64   // delete.retention.ms: tombstone lifetime after cleaning
	MinCompactionLagMs     int64   // min.compaction.lag.ms
	MaxCompactionLagMs     int64   // max.compaction.lag.ms

	FileDeleteDelayMs int64 // file.delete.delay.ms
	FlushMessages     int64 // flush.messages: fsync after this many unflushed records
	FlushMs           int64 // flush.ms: fsync when the oldest unflushed write is this old

	LogAppendTime        bool  // message.timestamp.type=LogAppendTime
	TimestampBeforeMaxMs int64 // message.timestamp.before.max.ms; <0 disables
	TimestampAfterMaxMs  int64 // message.timestamp.after.max.ms; <0 disables

	// Now is the clock; tests replace it. Nil means time.Now.
	Now func() time.Time
	// FS is the file system the log's files are written in (fs.go);
	// tests replace it to inject faults (fs.go), for every log of a
	// Manager through ManagerConfig.Defaults. Nil means the operating
	// system's. Fixed for a log's life: SetConfig keeps it.
	FS FS
}

// DefaultConfig returns Apache Kafka's defaults for the topic configs above.
func DefaultConfig() Config {
	return Config{
		SegmentBytes:           1 << 30,
		SegmentMs:              7 * 24 * 3600 * 1000,
		SegmentIndexBytes:      10 << 20,
		IndexIntervalBytes:     4096,
		MaxMessageBytes:        1048588,
		RetentionMs:            7 * 24 * 3600 * 1000,
		RetentionBytes:         -1,
		Delete:                 true,
		MinCleanableDirtyRatio: 0.5,
		DeleteRetentionMs:      24 * 3600 * 1000,
		MaxCompactionLagMs:     math.MaxInt64,
		FileDeleteDelayMs:      60000,
		FlushMessages:          math.MaxInt64,
		FlushMs:                math.MaxInt64,
		TimestampBeforeMaxMs:   math.MaxInt64,
		TimestampAfterMaxMs:    3600000,
	}
}

func (c *Config) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Config) nowMs() int64 { return c.now().UnixMilli() }

// recordPolicy is the share of c that a client batch's records are
// checked against (record.Batch.ValidateRecords).
func (c *Config) recordPolicy() record.Policy {
	return record.Policy{
		MaxMessageBytes:      c.MaxMessageBytes,
		TimestampBeforeMaxMs: c.TimestampBeforeMaxMs,
		TimestampAfterMaxMs:  c.TimestampAfterMaxMs,
		LogAppendTime:        c.LogAppendTime,
		Compact:              c.Compact,
	}
}
