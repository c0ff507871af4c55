// Package raftnet carries go.etcd.io/raft/v3 messages between kzero's
// controller voters over TCP, on the controller listener. It is the
// Transport of coord's Controller: the raft loop hands a Ready's messages
// to Send, which never blocks; messages from peers go to Config.Deliver
// (Controller.Step). Raft tolerates lost, duplicated and reordered
// messages, so the transport drops rather than waits, and tells raft
// (OnUnreachable, OnSnapshotFailed) so that the leader probes instead of
// pipelining to a peer that does not hear it.
//
// # Goroutines
//
//   - Send runs on the caller's goroutine (the raft loop): it puts each
//     message on its peer's bounded queue (Config.QueueSize), or drops it
//     when the queue is full.
//   - One writer per peer owns that peer's outbound connection. It takes
//     what is queued (up to 256 messages), dials when it has no
//     connection (with DialTimeout, then backoff from Backoff.Min doubling
//     to Backoff.Max with jitter after each failure, reset on success),
//     encodes the batch into one buffer and writes it with one write per
//     MiB. A batch that finds no connection, or whose write fails or
//     makes no MiB of progress within WriteTimeout, is dropped and
//     reported, and the connection closed. A slow or dead peer thus costs
//     its own writer only: Send and the other peers go on.
//   - The accept loop starts one reader per inbound connection. It
//     handshakes, then reads frames, decodes each message and calls
//     Deliver, one at a time, in the order the peer wrote them.
//   - Close cancels one context that every dial, connection and Deliver
//     watches, closes the listener and waits for all of the above.
//
// Each ordered pair of controllers uses its own connection, dialed by the
// sender: between two voters there are two, one each way, and messages
// flow only from dialer to acceptor after the handshake. Messages arrive
// in the order sent while a connection lasts; across a reconnection the
// old connection's last frames may be delivered after the new one's first
// (raft does not mind).
//
// Send keeps the messages it is given until its writer has encoded them,
// on another goroutine: raft does not modify a Ready's messages or their
// entries afterwards, and encoding only reads them.
//
// Node ids are Kafka's (node.id, from 0); raft ids in messages are node id
// + 1 (RaftID, NodeID), since raft reserves 0 for "nobody".
//
// # Wire format
//
// Everything on a connection is a frame:
//
//	 0           4           8      9
//	+-----------+-----------+------+---------------------+
//	|  length   |   crc     | kind |      payload        |
//	| uint32 BE | uint32 BE | byte |  length-1 bytes     |
//	+-----------+-----------+------+---------------------+
//
// length counts kind and payload; crc is CRC-32C (Castagnoli) over kind and
// payload. Kinds:
//
//	1 hello    the handshake, below
//	2 message  one raftpb.Message in protobuf encoding (raft.proto of
//	           go.etcd.io/raft/v3); its To and From are raft ids, node id + 1
//	3 refuse   the reason a hello was refused, UTF-8, at most 512 bytes
//
// The hello payload:
//
//	 0          8         10        14        18        20
//	+----------+---------+---------+---------+---------+------------------+
//	|  magic   | version |  from   |   to    |  n      |   cluster id     |
//	| 8 bytes  | u16 BE  | i32 BE  | i32 BE  | u16 BE  |  n bytes, UTF-8  |
//	+----------+---------+---------+---------+---------+------------------+
//
// magic is "kz-raft\n"; version is 1 (Version); from and to are node ids;
// n is at most 255.
//
// A connection goes:
//
//	dialer                               acceptor
//	hello{from: dialer, to: acceptor} -->
//	                                  <-- hello{from: acceptor, to: dialer}
//	                                      or refuse, then close
//	message, message, ...             -->
//
// The acceptor refuses a hello of another version or cluster id, addressed
// to another node, or from a node that is not one of its peers; the dialer
// drops a reply that does not match what it dialed. Both log why; the
// dialer logs the refusal's text.
//
// # Bad input
//
// A frame whose length is 0 or more than 1+MaxMessageBytes (before the
// handshake: the size of the largest hello), a checksum mismatch, an
// unexpected kind, an undecodable message, or a message whose To is not
// this node or whose From is not the node of the hello, closes that
// connection only and counts in Stats.BadFrames, as does a connection that
// sends no hello within DialTimeout. Nothing received can make the
// transport panic, and a frame's buffer grows with the bytes that actually
// arrive, not with the length its header claims. A
// message larger than MaxMessageBytes is never sent: it is dropped and
// counted (Stats.TooLarge), and reported like any other loss.
package raftnet
