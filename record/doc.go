// Package record is Kafka's record format, RecordBatch v2 (magic 2), as
// the wire and the disk carry it: the one encoding of records that kzero
// stores, replicates and serves. It is a leaf: it knows bytes, not logs,
// partitions or brokers, and imports nothing from kzero.
//
//   - Batch (batch.go) is a view of one batch in a byte slice: accessors
//     for the 61-byte header, ParseBatch to split a batch off a record set
//     by its length, setters for the fields a broker rewrites in place
//     (base offset, leader epoch, append time), the CRC-32C, and the header
//     checks: Validate (what any stored or replicated batch must pass) and
//     ValidateProduce (what Kafka also asks of a client's batch).
//   - ValidateRecords (validate.go) walks every record of a client batch
//     before it is appended, decompressing it within InflateLimit, under a
//     Policy: the share of a topic's config the records are checked
//     against (timestamps, keys in a compacted log). Errors lists records
//     at fault by index, as ProduceResponse's RecordErrors. Checks that
//     need a log's state (producer sequences, offsets) are log's.
//   - Record and Header (record.go) are one decoded record; Iter (iter.go)
//     iterates a batch's records without copying them and, in steady
//     state, without allocating.
//   - Builder (builder.go) writes batches from records; AppendBatch frames
//     a records section that is already encoded.
//   - Compress and Decompress (compression.go): gzip, snappy (xerial and
//     raw), lz4 (frame) and zstd, framed as the Java client frames them,
//     with pooled encoders and decoders and a bound on decompressed size.
//   - Control records (control.go): transaction markers, ParseControl and
//     AppendControlBatch.
//
// Errors wrap the kerr error a broker answers with (CORRUPT_MESSAGE,
// INVALID_RECORD, MESSAGE_TOO_LARGE, ...), so a handler turns them into
// codes with errors.As. No function panics on input bytes; every decoder
// has a fuzz target (FuzzParseBatch, FuzzIter, FuzzValidateRecords,
// FuzzControlRecord).
//
// A Batch, Builder or Iter belongs to one goroutine; the package-level
// pools of codecs and buffers are safe for concurrent use.
package record
