// Package replica holds the broker's local partition replicas and serves
// appends, reads and offset lookups on them.
//
// A Partition wraps one log this broker leads with the leader epoch, the
// high watermark (HW) and last stable offset (LSO) that bound what
// consumers see, and the ISR the metadata gives it. There is no follower
// role yet: the HW is this broker's own log end offset, acks=all checks
// only that the ISR the metadata names is at least min.insync.replicas,
// and long-poll fetches wait on the partitions they watch. Replication
// (followers, an offset-keyed purgatory for acks=all, the HW as the
// smallest ISR log end offset) is the cluster issue's second part. Every
// field a reader needs is an atomic; the writer side runs under the
// partition's mutex.
//
// Waiting never blocks a goroutine per request: a waiter registers a
// callback on the partitions it watches, and the append or HW move that
// satisfies it (or its timer) runs the callback once.
//
// This package depends on log only; the network layer (net/api) calls it,
// and the node's metadata publisher (kzero/node) tells it which replicas to
// lead or drop. A partition whose log cannot open is offline: its calls
// answer KAFKA_STORAGE_ERROR.
package replica
