// Package txn is the transaction coordinator (KIP-98, KIP-447, KIP-890):
// it owns transactional ids, their producer ids and epochs and the state of
// their transactions, kept in the internal compacted topic
// __transaction_state.
//
// # Partitioning
//
// A transactional id belongs to partition abs(hash(id)) % partitions of
// __transaction_state (Kafka's hash, as for groups); the broker leading that
// partition is its coordinator. Each led partition is a shard of the
// coordinator runtime (coord/shards), rebuilt by reading the partition
// when this broker becomes its leader, and again at each new leader epoch
// (the coordinator epoch stamped on markers); until then requests get
// COORDINATOR_LOAD_IN_PROGRESS, and requests for ids of partitions led
// elsewhere get NOT_COORDINATOR. Errors are Go errors wrapping kerr
// sentinels; a failed state write answers what shards.TxnError says
// (Kafka's TransactionStateManager table).
//
// # The state machine
//
// Empty -> Ongoing (partitions added) -> PrepareCommit or PrepareAbort ->
// CompleteCommit or CompleteAbort -> Ongoing (the next transaction) ...
// Every transition is written to the partition (a TxnMetadataKey/Value
// record in Kafka's format) before it takes effect. The Prepare record is
// the point of no return: once it is written the client is answered, and
// the coordinator writes the COMMIT or ABORT markers to every partition of
// the transaction (MarkerWriter) and then the Complete record, retrying
// until it can. A coordinator that loads a Prepare state finishes it.
//
// Transactions version 2 (KIP-890 part 2, EndTxn v5, Produce v12,
// TxnOffsetCommit v5): partitions are added implicitly by the partition
// leader's verification (AddPartitions with add), and every EndTxn bumps
// the producer epoch, so markers carry the new epoch and a late write of
// the old one is fenced. When the epoch runs out the id gets a new
// producer id (NextProducerID, then ProducerID; PrevProducerID answers
// retries).
//
// Fencing: InitProducerId bumps the epoch (or, once exhausted, rotates the
// producer id); an ongoing transaction is aborted first with a bumped
// epoch, and the caller retries on CONCURRENT_TRANSACTIONS. A transaction
// open longer than its timeout is aborted the same way by a periodic check
// (transaction.abort.timed.out.transaction.cleanup.interval.ms).
// Transactional ids idle longer than transactional.id.expiration.ms are
// removed with a tombstone.
//
// # Goroutines
//
// A shard's lock (the runtime's) guards its transactions and the
// partition's writes, so records are in the order of the changes; a write
// holds it until the high watermark passes the record. Markers are written on a goroutine per ending transaction,
// outside the lock. Timers check timeouts and expirations.
package txn
