// Package share holds the share partitions of KIP-932 share groups on the
// leader of each topic partition, and the share sessions of the members
// fetching from this broker.
//
// A share partition (Partition) is a share group's view of one topic
// partition: the share-partition start offset (SPSO), below which every
// record is done, and the in-flight records from it up to the
// share-partition end offset (SPEO). Members acquire records with a
// ShareFetch: each acquired record is locked to the member for
// group.share.record.lock.duration.ms and its delivery count goes up. A
// member acknowledges what it acquired: ACCEPT (done), RELEASE (available
// again for any member), REJECT (archived, never delivered again), RENEW
// (the lock starts again; KIP-1222) or GAP (an offset without a record).
// A lock that ends, or a member whose share session ends, gives records
// back; a record given back after group.share.delivery.count.limit
// deliveries is archived instead (a poison record stops being retried).
// The SPSO moves past acknowledged and archived records; at most
// group.share.partition.max.record.locks records are in flight.
//
// Partition is a pure state machine (no I/O, no clock), tested with the
// datadriven scripts in testdata. Manager holds the partitions of every
// share group by topic partition, each behind its own mutex, and the share
// sessions (Sessions) of the members.
//
// Durability: Store is the share coordinator. Each share partition's state
// (SPSO and in-flight records as state batches) is saved in the internal
// topic __share_group_state as a ShareSnapshot record (Kafka's format,
// state_records.go) after every acknowledgement, through the coordinator
// runtime of coord/shards (the partition abs(hash("group:topicId:part")) %
// partitions, an acks=all write that returns once committed), and read
// back when a share partition is built (a new leader, a restarted
// broker); records acquired then are saved as available with their
// delivery counts (their locks do not survive). The share partition
// leader reaches the store in process when it also leads the state
// partition; otherwise it reads and writes the state through Remote
// (ReadShareGroupState and WriteShareGroupState to the state partition's
// leader, which serves them from its Store with ReadFenced and
// WriteFenced: a deposed leader's older leader epoch is fenced). Only
// when no __share_group_state exists yet is a share partition kept in
// memory.
//
// Before a share group is first assigned a share partition, its
// coordinator initializes the state (InitializeShareGroupState, start
// offset -1: the leader starts it at share.auto.offset.reset) and records
// it in the group's ShareGroupStatePartitionMetadata; state already saved
// is kept. As in Kafka, this runs in the background, after the heartbeat
// that found the partition subscribed was answered; the members get it at
// a later heartbeat.
//
// State epochs: a share partition leader writes with the state epoch of
// the state it read. AlterShareGroupOffsets on the share group's
// coordinator initializes the state afresh (Initialize,
// InitializeShareGroupState to another broker) under a newer state
// epoch, so the leader's next write is fenced (FENCED_STATE_EPOCH): the
// entry is marked fenced and the next fetch reads the state again. When
// the last share session of a group on this broker ends, its share
// partitions are saved and put away (Kafka's onGroupEmpty), so a reset
// takes effect even without a write to fence. DescribeShareGroupOffsets
// reads Summary (ReadShareGroupStateSummary).
package share
