// Package coord is the cluster-state layer (layer 2 in DESIGN.md). This
// package holds the metadata Controller: this node's member of the metadata
// quorum, which replicates the metadata log with go.etcd.io/raft/v3, applies
// it into immutable metadata images, and turns admin requests (create and
// delete topics, create partitions, alter configs, allocate producer ids)
// into records. Its sub-packages:
//
//   - coord/metadata: the records and their encoding, the Image, and the
//     pure state machine that applies records to an image (no I/O, no
//     clock, no randomness: every voter computes the same image).
//   - coord/wal: raft's durable state on disk (HardState and entries in a
//     CRC-framed write-ahead log, snapshots), replayed on start.
//   - coord/topicconfig: Kafka's topic configs: registry, validation,
//     describe with sources and synonyms, conversion to kzero/log.Config.
//   - coord/control: the active controller's decisions as a pure state
//     machine (broker registration, heartbeats and fencing, leader
//     election, ISR changes, ElectLeaders, reassignments, replica
//     placement): image and event in, records and answer out.
//
// The group and transaction coordinators will be further sub-packages.
//
// # The metadata log
//
// Open opens the folder (the broker passes <first log dir>/__cluster_metadata-0),
// bootstraps it when new (a snapshot at index 1 naming the voters), replays
// the newest snapshot and the WAL, elects itself when it is the only voter,
// names a new cluster (ClusterRecord, FeatureLevel metadata.version=27), and
// registers this broker (RegisterBroker, whose metadata offset becomes the
// broker epoch). Every SnapshotEvery applied entries (default 10000) the
// image is written as a snapshot and the WAL compacted behind it.
//
// A raft entry carries one proposal: groups of records, each group applied
// all or nothing and answered with its own Kafka error code. The proposer
// decides from the image it sees (validation, placement, random topic
// ids); when the entry commits, each group is checked again against the
// image of that moment (metadata.Builder.Check) so that concurrent
// proposals cannot both create one topic or hand out one producer id block.
//
// # Goroutines
//
//   - The raft loop owns the raft.RawNode, the wal.Storage, the pending
//     proposals and the building of images. It ticks raft, steps proposals
//     and incoming messages, and handles each Ready in raft's order: persist
//     (fsynced when raft says so), send, apply, publish, Advance, maybe
//     snapshot. Proposals queued together share one Ready and one fsync.
//   - The notifier calls subscribers with (prev, next) for each published
//     image, in apply order, then wakes the callers whose proposals that
//     image answered: a CreateTopics returns after subscribers saw its
//     topics.
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
// The design is raft's: Config.Peers and a Transport make a quorum of 3 or
// 5 voters, Controller.Step takes their messages, proposals on a follower
// are forwarded to the leader by raft, and a follower behind the log gets a
// snapshot. No Transport is implemented yet, so Open refuses Peers: this
// version runs one voter inside the broker.
package coord
