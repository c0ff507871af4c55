// Package shards is the coordinator runtime the group coordinator
// (__consumer_offsets) and the transaction coordinator
// (__transaction_state) share: failover is written once, here.
//
// A coordinator's state is split by partition of its internal topic; the
// part of one partition is a shard, served by the broker that leads the
// partition. A Table holds a coordinator's shards by partition and moves
// them with leadership:
//
//   - Lead makes a shard for a partition this broker now leads and loads
//     it in the background: the coordinator reads the partition (outside
//     the shard's lock) and installs what it read (under it). Until then
//     the shard answers COORDINATOR_LOAD_IN_PROGRESS. Each lead makes a new
//     shard with the partition's leader epoch: a load of a shard that was
//     replaced (a newer epoch) or resigned meanwhile never installs.
//   - Resign drops a shard: its coordinator unloads the state (waiting
//     requests are told NOT_COORDINATOR), and a write of the shard waiting
//     for the high watermark stops waiting and fails with
//     NOT_LEADER_OR_FOLLOWER (NOT_COORDINATOR to its caller).
//   - Lock finds a key's shard and locks it, or says why it cannot serve:
//     an error wrapping kerr.NotCoordinator (no shard, or resigned) or
//     kerr.CoordinatorLoadInProgress.
//
// A shard's mutex guards its coordinator's state and its writes, so the
// order of records in the partition is the order of changes. A write
// (Shard.WriteLocked) appends one batch to the partition and waits until
// the high watermark passes it (the replicas have it) or the commit
// timeout ends: a coordinator answers a change only once it is committed.
//
// Errors are Go errors wrapping franz-go's kerr sentinels. An append error
// becomes what the coordinator's caller is told through one table per kind
// of coordinator (GroupError, TxnError), Kafka's mappings.
package shards
