// Package coord is the cluster-state layer (layer 2 in DESIGN.md). This
// package holds the metadata Controller: this node's member of the metadata
// quorum, which replicates the metadata log with go.etcd.io/raft/v3, applies
// it into immutable metadata images, and turns admin requests (create and
// delete topics, create partitions, alter configs, allocate producer ids,
// ACLs and SCRAM credentials) into records. Its sub-packages:
//
//   - coord/metadata: the records and their encoding, the Image, and the
//     pure state machine that applies records to an image (no I/O, no
//     clock, no randomness: every voter computes the same image).
//   - coord/wal: raft's durable state on disk (HardState and entries in a
//     CRC-framed write-ahead log, snapshots), replayed on start.
//   - coord/topicconfig: Kafka's topic configs: registry, validation,
//     describe with sources and synonyms, conversion to kzero/log.Config.
//   - coord/raftnet: the raft transport between controller voters (TCP on
//     the controller listener, kzero's own framing, documented there).
//   - coord/group and coord/txn: the group coordinator (__consumer_offsets)
//     and the transaction coordinator (__transaction_state).
//   - coord/control: the active controller's decisions as a pure state
//     machine (broker registration, heartbeats and fencing, leader
//     election, ISR changes, ElectLeaders, reassignments, replica
//     placement): image and event in, records and answer out. The raft
//     loop on the quorum leader runs it every tick (liveness.go); the admin
//     methods below decide with it on the caller's goroutine.
//
// # The metadata log
//
// New opens the folder (the node passes <first log dir>/__cluster_metadata-0),
// bootstraps it when new and Config.Bootstrap allows (a snapshot at index 1
// naming the voters; a single voter also writes the cluster id and
// features into it, so they are durable before any entry), replays the
// newest snapshot and the WAL, and starts the raft loop; a single voter
// elects itself at once. A node whose log dirs hold data passes Bootstrap
// false: a missing metadata log is then refused, never replaced by a new
// cluster. Register then names a new quorum's cluster (the first
// ClusterRecord to commit wins) and registers this broker (RegisterBroker,
// whose metadata offset becomes the broker epoch). Every SnapshotEvery
// applied entries (default 10000) the image is written as a snapshot and
// the WAL compacted behind it, keeping SnapshotKeep entries for followers.
//
// A raft entry carries one proposal: groups of records, each group applied
// all or nothing and answered with its own Kafka error code. The proposer
// decides from the image it sees (validation, placement, random topic
// ids); when the entry commits, each group is checked again against the
// image of that moment (metadata.Builder.Check) so that concurrent
// proposals cannot both create one topic or hand out one producer id block.
//
// # Cluster admin requests
//
// ElectLeaders (elect.go), AlterPartitionReassignments and
// ListPartitionReassignments (reassign.go) and UnregisterBroker
// (brokers.go) first catch up with the quorum's commit index (a read
// barrier: raft's ReadIndex, readindex.go), then decide with coord/control
// on this node's image and propose the records; any node serves them and
// answers as the quorum leader would, raft forwarding a follower's
// proposal to the leader (where Kafka forwards the request to its active
// controller).
// A decision made on an image that moved on before its entry applied is
// refused by Check and applies nothing; it is decided again on the newer
// image (settle, decide.go), a few times at most.
//
// # Goroutines
//
//   - The raft loop owns the raft.RawNode, the wal.Storage, the pending
//     proposals and the building of images. It ticks raft, steps proposals
//     and incoming messages, and handles each Ready in raft's order: persist
//     (fsynced when raft says so), send, apply, publish, Advance, maybe
//     snapshot. Proposals queued together share one Ready and one fsync.
//   - The notifier calls subscribers with (prev, next) in apply order
//     (images that applied while a subscriber ran are coalesced: the raft
//     loop queues them and never waits), then wakes the callers whose
//     proposals those images answered: a CreateTopics returns after
//     subscribers saw its topics.
//   - Callers (API handlers) read Controller.Image, an atomic pointer, with
//     no lock, and call the admin methods from any goroutine; those encode
//     their proposal on the caller's goroutine and wait for its outcome or
//     their context.
//
// A storage failure stops the raft loop (raft cannot go on after a lost
// write): later calls fail with ErrClosed, Err says why.
//
// # Several voters
//
// Config.Peers and a Transport (coord/raftnet) make a static quorum of 3 or
// 5 voters (controller.quorum.voters): Controller.Step takes their
// messages, the transport's losses reach raft through ReportUnreachable and
// ReportSnapshotFailed, proposals on a follower are forwarded to the leader
// by raft, and a follower behind the leader's compacted log gets a
// snapshot. Quorum reports the leader, the term and each voter's progress
// (DescribeQuorum). Broker liveness, fencing, controlled shutdown and
// partition leader election run on the quorum leader (liveness.go, with
// coord/control's decisions); partition leaders change their ISR with
// AlterPartition (alter_partition.go). Every node is a voter today:
// broker-only nodes that follow the log without voting are still to come.
package coord
