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
//   - coord/shards: the coordinator runtime both of them run on (a shard
//     per partition of their internal topic, loaded on leadership and
//     dropped on resignation, writes that wait for the HW) and Kafka's
//     tables from a failed write to the error their callers get
//     (errors.go: GroupError, TxnError).
//   - coord/share: the share partitions of KIP-932 share groups and the
//     share coordinator (__share_group_state).
//   - coord/coordrecord: the codec of the coordinators' records, as Kafka
//     lays them out in __consumer_offsets and __share_group_state.
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
// ReportSnapshot, proposals on a follower are forwarded to the leader
// by raft, and a follower behind the leader's compacted log gets a
// snapshot. Quorum reports the leader, the term and each voter's progress
// (DescribeQuorum). Broker liveness, fencing, controlled shutdown and
// partition leader election run on the quorum leader (liveness.go, with
// coord/control's decisions); partition leaders change their ISR with
// AlterPartition (alter_partition.go). When the leader changes, this
// node's proposals still waiting are proposed again to the new one (one
// forwarded to a leader that died is lost; a copy that applies twice is
// refused by Check the second time, and the caller gets the first
// answer).
//
// # Roles and learners
//
// Config.Role is process.roles. Combined and ControllerOnly nodes are
// voters; a ControllerOnly one registers no broker (it names a new
// cluster, so a quorum of controllers alone has its id) and, while it
// leads, runs the active controller for the brokers.
//
// A BrokerOnly node is a raft learner, not a reader of the committed log
// over some other protocol: etcd raft sends learners MsgApp and MsgSnap
// like followers, never counts them in a quorum nor lets them campaign
// (promotable is false), and a learner forwards proposals and ReadIndex to
// the leader like a follower (stepFollower), so broker registration,
// AlterPartition, read barriers, controlled shutdown and liveness (the
// leader's Progress of a learner has RecentActive like a voter's: its
// heartbeat) work unchanged on broker-only nodes. Its log is raft's own,
// so catch-up by log or by snapshot and restart from its WAL come for
// free; and DescribeQuorum's observers are the learners' Progress.
//
// Joining (learner.go): a new learner starts with empty storage and never
// bootstraps. Its transport dials the controllers and keeps a connection
// to every voter; a voter that accepts one tells its Controller
// (AddLearner), and the quorum leader proposes a ConfChangeV2
// AddLearnerNode, again every election timeout until it applies (raft
// takes one configuration change at a time). No address needs to survive
// in the configuration or the image: voters reach a learner over the
// connection it dialed (coord/raftnet, "Learners"). Every node snapshots
// right after a configuration grows: raft sends a new member the leader's
// newest snapshot, and a member refuses one whose configuration does not
// name it. The learner then registers as a broker once its image has the
// cluster. UnregisterBroker of a learner proposes RemoveNode; a removed
// learner that still runs gets no more entries until it restarts and
// connects again.
//
// Only the quorum leader knows each replica's progress: it relays its
// Quorum to every node twice a second over the transport
// (Broadcaster, ReceiveQuorum), so any node answers DescribeQuorum as the
// leader would while the view is fresh, as a Kafka broker forwards it to
// the active controller.
package coord
