// Package wal keeps a go.etcd.io/raft/v3 node's durable state in a folder:
// the HardState and log entries in a write-ahead log, and snapshots of the
// state machine. Storage wraps raft's MemoryStorage, which raft reads; the
// files are the durable copy, replayed into it on Open.
//
// # Files
//
//	raft.wal                  header frame, then entry and HardState frames
//	snap-<20-digit index>.snap header, snapshot metadata, snapshot data
//
// Every file is a sequence of CRC-32C framed records (frame.go has the byte
// layout, codec.go the payloads). Save appends a Ready's entries and
// HardState with one write and, when raft says the Ready must sync, one
// fsync, before returning: raft's contract is that nothing of a Ready is
// acknowledged (messages sent, Advance called) before it is durable.
//
// CreateSnapshot writes a snapshot file atomically (temporary file, fsync,
// rename, fsync of the folder), then rewrites the WAL the same way with only
// the entries after the compaction point and the last HardState, then
// deletes older snapshots. A crash at any step leaves a state Open reads:
// replay skips WAL entries a snapshot covers.
//
// # Recovery
//
// Open loads the newest snapshot, then reads the WAL. Reading stops at the
// first frame that is cut short or fails its checksum, the trace of a crash
// during a write: the file is truncated there and a warning logged (those
// bytes were never fsynced, so raft never acknowledged them). An entry whose
// index is at or below the last one read replaces the tail, as raft
// overwrites an uncommitted suffix. What cannot come from a crash (an
// unreadable snapshot, a gap between snapshot and log, an unknown frame
// kind with a valid checksum) fails Open with ErrCorrupt. Nothing read from
// disk can make Open panic.
//
// # Ownership
//
// One goroutine, the raft loop, owns a Storage and calls all its methods;
// raft, on that same goroutine, calls the raft.Storage methods of the
// embedded MemoryStorage. After a failed write, fsync or rename the Storage
// refuses further writes with the same error (the WAL's tail is unknown):
// the owner must stop. Its files are written through an FS (fs.go), the
// operating system's unless a test injects faults with OpenFS.
package wal
