// Package log stores partitions as Apache Kafka does: each partition is a
// folder of segment files holding RecordBatch v2 batches (package record) as
// they came off the wire (offsets, leader epoch and timestamps set in place),
// with sparse offset and time indexes, and the state Kafka keeps beside them
// (producer state, aborted transactions, leader epochs). A Manager owns the
// log dirs and the background work. The record format itself is package
// record; this package adds what needs a log: offsets, producer state, files.
//
// # Contract
//
//   - A Log is one partition: a list of segments, the last one active. Offsets
//     are dense from LogStartOffset to LogEndOffset; every batch is whole and
//     its offsets follow the previous batch's.
//   - Append (append.go) takes a record set and an Origin. A client's
//     (OriginClient) must be one batch: its header, CRC and every record are
//     checked before it queues (record.Batch.ValidateProduce and
//     ValidateRecords, under the topic's Config), then its producer's sequence
//     and epoch (ProducerStates): a retry of one of the producer's last 5
//     batches is answered with its first offsets (Duplicate) and not written
//     again. A coordinator's (OriginCoordinator: transaction markers,
//     transactional offset commits) is checked against the producer's epoch;
//     both get offsets assigned, the leader epoch and, with LogAppendTime, the
//     broker's time written into the caller's bytes. A follower's
//     (OriginReplication) keeps the leader's offsets, which must not go below
//     the log end. Errors wrap the kerr error the producer is answered with.
//   - Group commit: appends that arrive while one is being written queue; the
//     caller that finds the queue idle writes the whole group under the writer
//     lock with one pwritev and wakes the others, handing the queue to the next
//     waiter if more arrived. When Append returns the bytes are in the page
//     cache and readers see them; they are not yet fsynced (see Durability).
//   - Read (read.go) returns a FileRange (a segment, a position, a length) for
//     sendfile, from the batch holding an offset up to maxOffset (the high
//     watermark or last stable offset the caller passes) and maxBytes, the
//     first batch whole past maxBytes when asked (KIP-74). It takes no lock and
//     allocates nothing; an offset at one of the segment's last 16 batches
//     (recent.go) is found without reading a header, others by the sparse
//     index and a walk of headers. The range holds a reference on its segment until
//     Released, so retention or compaction never pulls a file from under a read
//     in flight. Scan decodes batches for the coordinators; OffsetForTimestamp
//     and AbortedTxns serve ListOffsets and read_committed fetches.
//   - Roll: an append goes to a new segment when the active one would pass
//     segment.bytes, its indexes are full, its offsets would not fit an int32
//     relative to its base, or segment.ms (minus jitter) passed since its first
//     batch's timestamp. Rolling seals the segment (the time index gets its max
//     timestamp, indexes shrink to their entries), snapshots producer state at
//     the new base and fsyncs the sealed segment in the background.
//   - Truncation: TruncateTo removes every batch at or above an offset (a
//     follower diverging from its leader; the batch holding the offset goes
//     whole), TruncateFullyAndStartAt empties the log at an offset,
//     DeleteRecordsBefore raises the log start offset and DeleteOldSegments
//     applies retention.ms and retention.bytes (DeleteOldSegmentsBelow stops
//     below a given high watermark). The leader epoch cache follows each, and
//     producer state each truncation. Only whole segments are deleted: renamed
//     .deleted and removed after file.delete.delay.ms, once no read holds them.
//   - Failure: a write or fsync error other than a full disk takes the log
//     offline (no more writes, KAFKA_STORAGE_ERROR) until the broker
//     restarts, as Kafka does for its log dir; what was written before stays
//     readable (offline.go). A full disk (ENOSPC, EDQUOT) is lived through:
//     the failed appends are undone and the log takes writes again once the
//     file system has room (space.go).
//
// Tests inject disk faults through Config.FS (fs.go: failed writes,
// fsyncs, renames and reads, torn writes at a simulated power loss), and
// the invariants build tag turns on expensive checks of the segment list
// and indexes after every change (invariants.go).
//
// # Durability
//
// Kafka's model: replication, not fsync, makes a write durable. An append is
// fsynced only when flush.messages records or flush.ms have passed since the
// last fsync (both unbounded by default), when its segment is rolled (the
// sealed segment is fsynced in the background, in order), and at Close. The
// recovery point is the offset below which the log is known to be on disk; it
// advances after each fsync, and the Manager writes it to the log dir's
// recovery-point-offset-checkpoint every
// log.flush.offset.checkpoint.interval.ms. An append that starts a leader
// epoch changes only the epoch cache in memory; leader-epoch-checkpoint is
// written and fsynced before the recovery point passes the epoch (by a
// flush, a roll's background flush, a truncation or Close), and a new log
// writes none until then. Checkpoints, producer snapshots and meta.properties
// are replaced atomically (a .tmp file written and fsynced, then renamed, the
// folder fsynced); partition.metadata is renamed into place the same way,
// without the fsync.
//
// # Recovery
//
// Open (log.go) first completes or discards the cleaner's interrupted swaps
// (swap.go), removes leftovers (.cleaned, .deleted, .tmp, indexes without
// their segment), then opens the segments. Unless the log dir was shut down
// cleanly (.kafka_cleanshutdown) the segments from the one holding the
// recovery point onwards are read batch by batch: framing, offsets and CRC;
// the log is cut at the first bad batch (a torn or corrupt tail), later
// segments are dropped, and the indexes of the segments read are rebuilt. A
// segment whose index fails its checks is recovered too, and an index a read
// finds damaged is rebuilt in the background (index_repair.go). Producer
// state is loaded from the newest usable snapshot at or below the log end and
// the batches after it are replayed; the leader epoch cache comes from
// leader-epoch-checkpoint plus the epochs of the batches recovery read (as
// Kafka's segment recovery assigns them), or from all the batch headers when
// the file is missing or unreadable.
//
// # The cleaner
//
// For cleanup.policy=compact a Cleaner (cleaner*.go, offset_map.go) keeps at
// least the latest record of each key, as Kafka's log cleaner does: see
// cleaner.go for what it may clean (never the active segment, past the high
// watermark or an open transaction) and cleaner_txn.go for aborted
// transactions and markers. It reads sealed segments without the writer lock
// and writes each cleaned group of segments to .cleaned files; the swap takes
// the writer lock and is given up when the log changed since the cleaner read
// it (swap.go for the crash-safe steps).
//
// # Producer state and transactions
//
// ProducerStates (producer_state.go) keeps, per producer id, its epoch and
// its last 5 batches' sequences and offsets, and the open transactions, whose
// first offsets bound the last stable offset until their marker is below the
// high watermark. It is snapshotted (<offset>.snapshot) at each roll and at
// Close, and producers idle for producer.id.expiration.ms without an open
// transaction are expired. A segment's .txnindex lists the transactions
// aborted by markers in that segment, for read_committed fetches
// (AbortedTxns).
//
// # Goroutines and locking
//
// Log.mu is the writer lock: appends (a group at a time), rolls, truncations,
// retention, the cleaner's swap and producer state run under it. Readers take
// no lock: the segment list is an immutable slice replaced on change, and the
// offsets and a segment's size are atomics published after the bytes they
// cover are written. Segments are reference counted (each read acquires and
// releases its segment). Append runs on its caller's goroutine; a Log starts
// goroutines only for the background fsync of sealed segments (one at a time,
// in order) and index rebuilds, and a timer per deleted segment
// (file.delete.delay.ms). The Manager runs one goroutine per periodic
// task after Start: retention, flush.ms, checkpoints, producer id expiry and
// the cleaner (log.cleaner.backoff.ms between runs). One FileCache per
// Manager bounds the open files of sealed segments (file_cache.go); the
// active segment's stays open.
//
// # Files
//
// A log dir (log.dirs) holds meta.properties, the checkpoint files
// (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
// replication-offset-checkpoint, cleaner-offset-checkpoint),
// .kafka_cleanshutdown after a clean Close, and a folder per partition,
// <topic>-<partition> (a deleted one renamed ...-delete, one set aside
// ...-stray, the copy of a replica moving to this dir
// <topic>-<partition>.<id>-future: future.go; __cluster_metadata-0 is the
// metadata quorum's and left alone). A
// partition folder holds, per segment, <base offset>.log, .index, .timeindex
// and, once a transaction aborted in it, .txnindex (20-digit base offsets, as
// Kafka names them), plus <offset>.snapshot producer snapshots,
// leader-epoch-checkpoint and partition.metadata (the topic id). Every file
// is in Kafka's format.
package log
