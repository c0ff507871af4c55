// Package replica holds the broker's local partition replicas and serves
// appends, reads and offset lookups on them.
//
// A Partition wraps one log with what replication adds on top: the leader
// epoch, the high watermark (HW) and last stable offset (LSO) that bound
// what consumers see, the in-sync replica set, and the purgatories where
// acks=all appends and long-poll fetches wait. Every field a reader needs is
// an atomic; the writer side runs under the partition's mutex.
//
// Waiting never blocks a goroutine per request: a waiter registers a
// callback on the partitions it watches, and the append or HW move that
// satisfies it (or its timer) runs the callback once.
//
// This package depends on log only; the network layer (net/api) calls it,
// the controller (coord) tells it which replicas to lead or follow.
package replica
