// Package metadata is the cluster metadata as a pure state machine: the
// records of the metadata log (record.go, with their byte layout), the
// proposals that carry them in raft entries (entry.go), the immutable Image
// they build (image.go), the Builder that applies them (apply.go), and the
// snapshot encoding of an Image (snapshot.go). It does no I/O and reads no
// clock; randomness (topic ids, placement) is the proposer's, written into
// the records. Applying the same entries to the same image gives the same
// image on every node.
//
// # Records
//
//	RegisterBroker   broker id, incarnation, epoch, rack, listeners; (v1) fenced,
//	                 in controlled shutdown, the offset of the registration
//	BrokerChange     fences, unfences a broker or puts it in controlled shutdown
//	UnregisterBroker removes a broker's registration
//	TopicRecord      topic name and 16-byte id (a random UUID v4, never zero)
//	PartitionRecord  a partition's replicas, ISR, leader, leader and partition epochs;
//	                 (v1) adding and removing replicas, leader recovery state
//	PartitionChange  changes leader, ISR, assignment or recovery state, bumping
//	                 the partition epoch (and the leader epoch with the leader)
//	RemoveTopic      deletes a topic with its partitions and configs
//	ConfigRecord     sets or deletes a topic's or a broker's dynamic config
//	ProducerIDBlock  hands a broker the producer ids [first, first+size)
//	FeatureLevel     finalizes a feature (metadata.version, ...)
//	ClusterRecord    names the cluster, once
//
// Each record starts with its type and a version byte; decoders refuse what
// they do not know (ErrUnknownRecord) and never panic on bad bytes.
//
// # Applying
//
// A Proposal is groups of records. Builder.Check decides whether a group
// applies as a whole to the current state: a topic name must be free (and
// not collide with another once '.' and '_' are the same), a new partition
// must be its topic's next one, a changed partition must carry the current
// partition epoch plus one (and a PartitionChange must leave it consistent:
// the ISR a non-empty set of replicas, the leader in it or none), a broker
// change must name the broker's current epoch, a producer id block must
// start at the next free id. Builder.Apply then changes the image; it fails only on records that
// cannot apply at all, from damaged snapshots.
//
// # Concurrency
//
// An Image is immutable once a Builder finishes it: any number of
// goroutines read it without locks. Its sorted views (Topics, Brokers) are
// built once, on first use. A Builder belongs to one goroutine.
package metadata
