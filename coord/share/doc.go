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
// Durability: the share partitions' state is kept in memory on the
// partition leader only. A new leader, or a restarted broker, starts each
// share partition again where share.auto.offset.reset puts it (the
// default, latest: the high watermark); Kafka persists it in
// __share_group_state through its share coordinator, which kzero does
// not do yet.
package share
