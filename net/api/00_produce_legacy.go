package api

// Produce v0-v2 (Kafka 0.8-0.10, removed in Kafka 4 by KIP-896) carry
// message sets of magic 0 and 1. Each partition's set is up-converted to
// one RecordBatch v2 (kzero/msgset) and appended as a current client's
// batch is, so the log, its validation and its readers know only v2.
// The responses are kmsg's for the version: v0 without throttle time, v2
// with the log append time.

import (
	"sync"
	"sync/atomic"

	"kzero/msgset"
	"kzero/record"
)

// conversions counts the work done for old clients, for /metrics.
var conversions struct {
	produceSets, produceBytes     atomic.Int64
	fetchPartitions, fetchBatches atomic.Int64
	fetchBytes                    atomic.Int64
}

// ConversionStats is what was converted for clients of message formats
// v0/v1 since start.
type ConversionStats struct {
	ProduceSets     int64 // message sets up-converted (one per partition of a Produce v0-v2)
	ProduceBytes    int64 // bytes of those sets
	FetchPartitions int64 // partitions of Fetch v0-v3 responses down-converted
	FetchBatches    int64 // v2 batches down-converted
	FetchBytes      int64 // bytes of message sets sent after conversion
}

// Conversions returns the conversion counters.
func Conversions() ConversionStats {
	c := &conversions
	return ConversionStats{c.produceSets.Load(), c.produceBytes.Load(), c.fetchPartitions.Load(), c.fetchBatches.Load(), c.fetchBytes.Load()}
}

// converters keeps msgset Converters (their buffers) between requests.
var converters = sync.Pool{New: func() any { return new(msgset.Converter) }}

// upconvertLimit bounds what a wrapper message may decompress to, as the
// log bounds a compressed batch (64 times the default max.message.bytes).
const upconvertLimit = 64 << 20

// upconvert turns the message set of a Produce v0-v2 partition into the
// one v2 batch the log appends. The batch gets a buffer of its own (not
// pooled): the log may hold the bytes it appends from.
func upconvert(set []byte) ([]byte, error) {
	conversions.produceSets.Add(1)
	conversions.produceBytes.Add(int64(len(set)))
	c := converters.Get().(*msgset.Converter)
	defer converters.Put(c)
	return c.Upconvert(make([]byte, 0, len(set)+record.BatchHeaderSize), set, upconvertLimit)
}
