// Package coord is the cluster-state layer (layer 2 in DESIGN.md). Its code
// lives in sub-packages, each with its own contract:
//
//   - coord/metadata: the metadata log replicated with go.etcd.io/raft/v3,
//     its records, the immutable metadata Image every API handler reads, and
//     the Controller that validates admin requests, places replicas and
//     proposes records.
//   - coord/wal: raft's durable state on disk (HardState, entries in a
//     CRC-framed write-ahead log, snapshots), replayed into raft's
//     MemoryStorage on start.
//   - coord/topicconfig: the registry of Apache Kafka topic configs (types,
//     defaults, valid ranges, broker synonyms), their validation, describe
//     with sources and synonyms, and the conversion to kzero/log.Config.
//
// The group and transaction coordinators will be further sub-packages.
package coord
