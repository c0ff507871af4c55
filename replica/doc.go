// Package replica holds the broker's local partition replicas: it serves
// appends, reads and offset lookups on the partitions this broker leads,
// copies the logs of those it follows, and serves consumers' reads from a
// follower in their rack (KIP-392: PreferredReadReplica on the leader
// names it, Read with fromFollower serves up to the HW the leader sent).
//
// # Roles
//
// A Partition is led, followed or stopped, at a leader epoch, as the
// metadata says (the node's publisher calls MakeLeader, MakeFollower and
// Remove):
//   - A leader appends produce and coordinator writes, tracks each
//     follower's log end offset (LEO) from the follower's fetches, and
//     keeps the high watermark (HW): the smallest LEO of the ISR. The ISR
//     and HW rules are a pure state machine (isr.go, scripted in
//     testdata/isr_*.txt); ISR changes go to the controller as
//     AlterPartition requests (Config.AlterPartition), and the new ISR comes
//     back through the metadata.
//   - A follower copies the leader's log with a fetcher (fetcher.go): one
//     per leader broker, in a fetch session (fetch_session.go, KIP-227),
//     truncating first where its log diverged (leader epochs,
//     OffsetForLeaderEpoch), then appending the leader's batches as they
//     are and taking its HW and log start offset. It tells the leader the
//     HW it knows (KIP-1166), so a leader answers at once when its HW is
//     ahead.
//   - Roles change under the partition's roleMu, which a fetcher holds
//     while it appends: no batch of an old leadership lands after this
//     broker took over.
//
// The HW lives in the log (log.Log.HighWatermark), which persists it in
// replication-offset-checkpoint; consumers never read above it (the last
// stable offset for read_committed).
//
// # Waiting
//
// Waiting never blocks a goroutine per request (purgatory.go): a consumer
// fetch registers a Waiter credited with the bytes HW moves make visible, a
// follower fetch one credited with appended bytes, and an acks=all produce
// or a coordinator write a commit waiter keyed by the offset that commits
// it (Committed): it completes when the HW passes it, fails with
// NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR fell below
// min.insync.replicas meanwhile, with NOT_LEADER_OR_FOLLOWER if the
// leadership ends, or REQUEST_TIMED_OUT.
//
// # Goroutines
//
// Appends and reads run on their callers' goroutines. The Manager runs one
// fetcher goroutine per leader broker this broker follows, a tick loop
// (every replica.lag.time.max.ms / 2: each leader's ISR shrink and HW
// checks), one goroutine per AlterPartition request it sends, and one per
// replica moving between log dirs. Waits
// time out on timers (time.AfterFunc). A fetch Waiter parked with
// Parked.Inline is fired by the client produce (or follower fetch) that
// satisfies it, on that goroutine, as Kafka's produce completes delayed
// fetches; any other firing gets a goroutine of its own. A write's commit waiter
// completes on the goroutine that moved the HW (a follower's fetch) or on
// its timer.
//
// # Moving between log dirs
//
// AlterLogDir moves a replica to another of the broker's log dirs while it
// serves (move.go): a copier goroutine per move fills a future log there
// as a follower fills its log, then holds the log's writes
// (log.Log.HoldWrites: appends, truncations and log start changes wait on
// the log's own lock), copies the rest and has the log manager swap the
// future log in; a write held meanwhile runs on the new log. The
// Partition's log is therefore loaded through an atomic pointer (Log);
// its waiters, roles and ISR stay on the Partition.
//
// This package depends on log, record and net/wire (the fetchers'
// client); net/api calls it, and the node's publisher tells it which
// replicas to lead, follow or drop. A partition whose log cannot open is
// offline (Manager.Offline): its calls answer KAFKA_STORAGE_ERROR until a
// later MakeLeader opens it or it is removed.
package replica
