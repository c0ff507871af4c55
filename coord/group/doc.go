// Package group is the group coordinator for Kafka's classic consumer group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), for KIP-848's
// consumer group protocol (ConsumerGroupHeartbeat, ConsumerGroupDescribe),
// for KIP-1071's streams groups (StreamsGroupHeartbeat,
// StreamsGroupDescribe), for KIP-932's share groups (ShareGroupHeartbeat,
// ShareGroupDescribe) and for committed offsets (OffsetCommit, OffsetFetch, OffsetDelete,
// TxnOffsetCommit), kept in the internal compacted topic
// __consumer_offsets.
//
// # Partitioning
//
// A group belongs to partition abs(hash(group id)) % partitions of
// __consumer_offsets, hash being Java's String.hashCode (see PartitionFor),
// so that Kafka tools and clients agree on where a group lives. The broker
// leading that partition is the group's coordinator.
//
// # State and persistence
//
// Each partition this broker leads is a shard: the groups that hash to it,
// their members and generations and their committed offsets. Every change
// that must survive a restart is written to the partition first, as
// records in Kafka's own format (kmsg's OffsetCommitKey/Value and
// GroupMetadataKey/Value, and the consumer group records of
// consumer_records.go; a null value is a tombstone), through the
// coordinator runtime (coord/shards: an acks=-1 append, then a wait until
// the high watermark passes it), and applied once it is committed. A
// failed write answers what shards.GroupError says (Kafka 4's one table
// for the group coordinator). The runtime moves shards with leadership:
// when the broker becomes a partition's leader (at start-up, after a
// failover) the shard is rebuilt by reading the partition from its log
// start; until then requests for its groups get
// COORDINATOR_LOAD_IN_PROGRESS (but SyncGroup REBALANCE_IN_PROGRESS and
// Heartbeat no error, as Kafka answers them), and requests for groups of
// partitions led elsewhere, or resigned, get NOT_COORDINATOR.
//
// # Errors
//
// The coordinator reports errors as Go errors wrapping franz-go's kerr
// sentinels, nil for none: a method's result (Heartbeat), one per item
// (CommitOffsets, LeaveGroup's members), or a result's Err field
// (JoinResult, ConsumerHeartbeatResult, ...); the API handlers turn them
// into codes at the edge. A failed write keeps its text under the
// sentinel shards.GroupError gives it. Where Kafka sends a text of its
// own with an error (GROUP_ID_NOT_FOUND's "Group g not found."), the
// result carries it beside Err (ErrMessage, or the kmsg response's
// ErrorMessage).
//
// # The state machine
//
// Group is Kafka's classic group state machine (Empty, PreparingRebalance,
// CompletingRebalance, Stable, Dead) with no I/O and no clock: every input
// carries the time in milliseconds, timers are deadlines the group reports
// (NextDeadline) and the owner drives with Tick, writes are requests the
// owner takes (takeStores), performs and reports back (stored), and
// responses are callbacks the group queues (takeReady) for the owner to run
// once it released its locks. Tests drive it deterministically.
//
// A JoinGroup or SyncGroup that must wait for the rest of the group holds
// no goroutine: its completion callback is kept on the member and called
// when the group moves on.
//
// # Goroutines
//
// A shard's lock (the runtime's) guards its groups and the partition's
// writes, held while a write waits for the high watermark. Requests run on the callers'
// goroutines; each group has one timer (time.AfterFunc) armed at its next
// deadline; a shard loads on a goroutine of its own; one timer expires
// offsets every offsets.retention.check.interval.ms. Callbacks run after
// the shard's mutex is released, on whichever goroutine moved the group.
//
// # Consumer groups (KIP-848)
//
// A group using the consumer protocol keeps its state in consumerGroup: the
// group epoch, each member's subscription (topic names or an RE2 regular
// expression, resolved against the topics SetTopics gives), the target
// assignment the server-side assignor ("uniform" or "range") computed at
// the assignment epoch, and each member's current assignment and epoch.
// It changes only by replaying records: a heartbeat computes the records of
// its change (member metadata, group epoch, target assignment, current
// assignment), the shard writes them in one batch, then replays them; a
// load replays the same records, so it rebuilds what was served. A member
// gets a partition only once its previous owner revoked it (it is reported
// no longer owned); a member that does not heartbeat within
// group.consumer.session.timeout.ms, or does not revoke within its
// rebalance timeout, is fenced and the group epoch bumped. A static member
// leaving with epoch -2 keeps its partitions for its next incarnation.
// Offsets are committed with the member epoch (STALE_MEMBER_EPOCH), an
// older epoch being accepted for partitions held since then (KIP-1251).
//
// A group is classic or consumer: an empty group converts either way when
// a member of the other protocol joins (keeping its offsets). Groups with
// members migrate online as group.consumer.migration.policy allows
// (consumer_migration.go): a consumer heartbeat joining a classic group of
// consumers upgrades it, its members becoming classic members of the
// consumer group (consumer_classic.go: JoinGroup, SyncGroup, Heartbeat and
// LeaveGroup with generation = member epoch, assigned server side); a
// classic JoinGroup joins a consumer group as such a member; when the
// last consumer protocol member leaves and only classic members remain,
// the group downgrades to a classic group and rebalances. With the policy
// "disabled" a group with members of one protocol refuses the other's
// (GROUP_ID_NOT_FOUND for a consumer heartbeat, INCONSISTENT_GROUP_PROTOCOL
// for a JoinGroup).
//
// # Streams groups (KIP-1071)
//
// A group using the streams protocol keeps its state in streamsGroup
// (streams_*.go), changed only by replaying Kafka's streams records
// (types 17, 19-23) as consumer groups are: the group epoch, the
// application's topology (sent by the first member; updates are refused
// as in Kafka 4.2), each member's process, endpoint and tasks, and the
// target assignment of the sticky task assignor (active tasks balanced
// and sticky, group.streams.num.standby.replicas standbys on other
// processes, no warm-ups). Each heartbeat checks the topology against the
// metadata image: missing source topics, missing internal topics (which
// the heartbeat hands to its caller to create, with the partition counts
// the topology implies) and wrongly partitioned ones leave the group
// NotReady with no tasks. Tasks move between members only once revoked,
// as partitions do in consumer groups; sessions and revocations time out
// the same way. Static members, source topic regular expressions, and
// warm-up tasks or task offsets a member reports are refused, as Kafka
// 4.3 refuses them. A group's streams.* group configs (the metadata
// image's, handed in with each heartbeat) override the broker's
// group.streams.* for it (streams_config.go).
//
// # Share groups (KIP-932)
//
// A share group (share_group.go) keeps the same kind of state as a
// consumer group, in the share group records of share_records.go: the
// group epoch, each member's subscribed topic names, the target assignment
// of the simple assignor (assignor_simple.go: Kafka's SimpleAssignor, each
// partition shared by ceil(members/partitions) members), and each member's
// current assignment and epoch.
// Members of a share group consume partitions together (each partition's
// leader hands every record to one of them), so a partition may be
// assigned to several members, nothing is revoked first, and a member
// moves to its target as soon as it heartbeats: the group is Empty or
// Stable. A member that does not heartbeat within
// group.share.session.timeout.ms is fenced and the group epoch bumped.
// Share groups commit no offsets (their progress is the share partitions'
// state, kept by the partition leaders), are never expired, and are
// refused to the classic and consumer protocols (INCONSISTENT_GROUP_PROTOCOL
// for a JoinGroup, GROUP_ID_NOT_FOUND otherwise).
//
// # Deleted topics
//
// SetTopics compares each metadata image with the previous one: the
// offsets of a topic that disappeared are deleted from every group of the
// loaded shards (tombstones written, in the background), and a group left
// empty without offsets is deleted, as Kafka does on partition deletion.
//
// # Transactions
//
// Offsets committed in a transaction (TxnOffsetCommit) are written at once
// as one transactional batch of the producer and staged per group and
// producer id, invisible to OffsetFetch (require_stable gets
// UNSTABLE_OFFSET_COMMIT for their partitions) until the transaction
// coordinator calls CompleteTxn: it writes the commit or abort marker to
// the partition under the shard's lock, then commits or drops the staged
// offsets. A staged offset replaces a committed one only if its record is
// later in the log (Kafka's rule, which compaction preserves). A load
// replays the same from the transactional batches and markers; a
// transaction still open at the end stays staged.
//
// Not implemented: per-group configs (IncrementalAlterConfigs on GROUP
// resources).
package group
