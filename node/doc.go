// Package node is one kzero node as a library: Start opens the log dirs,
// starts the Kafka listener, joins the metadata quorum, and wires the
// replicas, the group and transaction coordinators and the API handlers to
// the metadata; Stop takes it down in the reverse order. cmd/kzero only
// parses flags and server.properties into a Config and calls Start, so
// tests can run several nodes in one process.
//
// # Roles
//
// Config.Role is process.roles. A combined node (the default) is all of
// the above. A controller-only node opens its log dirs (the metadata log
// lives in the first), serves the controller listener and the admin
// listener, and votes; it starts no Kafka listener, no replicas, no
// coordinators. A broker-only node is all the broker parts with a learner
// of the metadata quorum: its raft transport listens nowhere and dials
// the controllers (BootstrapServers, else the voters' addresses), which
// reach it back over those connections (coord/raftnet, "Learners").
//
// # Listeners
//
// Config.Listeners are the named client listeners (PLAINTEXT,
// SASL_PLAINTEXT), served by one net/server on one set of event loops.
// Each is registered in the metadata log with its advertised address and
// security protocol, and clients are told the addresses of the listener
// they came through. SASL listeners cap frames at sasl.server.max.receive.size
// until authenticated. The inter-broker listener must not need
// authentication yet: kzero's own inter-broker clients do not authenticate
// (and with an authorizer, their principal, User:ANONYMOUS, belongs in
// super.users, as in Kafka with a PLAINTEXT inter-broker listener).
//
// # Identity on disk
//
// Every log dir holds meta.properties (cluster.id, node.id, directory.id).
// Start refuses dirs that disagree with each other or with node.id, a
// metadata log of another cluster, and a missing metadata log when the
// dirs hold data: a node with data never becomes a new, empty cluster.
// Dirs with no meta.properties take the metadata log's cluster id.
//
// # The metadata publisher
//
// Each metadata image is applied to the node's parts in apply order, on
// the controller's notifier goroutine (publisher.go). For each partition:
//
//   - become leader: this node is the partition's leader in the new image
//     (new partition, new leader epoch, or changed configs): its log is
//     opened or created and the replica led at the image's epoch and ISR;
//   - become follower: this node is a replica but not the leader: the
//     replica stops leading (clients get NOT_LEADER_OR_FOLLOWER) and keeps
//     its log; fetching from the leader comes with replication;
//   - stop replica: the partition left this node (moved away) and its log
//     is kept until the topic is deleted; a deleted topic's logs are
//     deleted (renamed -delete, removed in the background).
//
// Then the group and transaction coordinators are told which partitions of
// __consumer_offsets and __transaction_state this node leads: they load
// those and unload the rest. At start, partition logs on disk that the
// metadata does not give this node are stray: renamed aside
// (<topic>-<partition>.<id>-stray), logged and counted, never deleted.
package node
