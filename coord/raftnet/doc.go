// Package raftnet carries go.etcd.io/raft/v3 messages between kzero's
// controller voters over TCP, on the controller listener. It is the
// Transport of coord's Controller: the raft loop hands a Ready's messages
// to Send, which never blocks; messages from peers go to Config.Deliver
// (Controller.Step). Raft tolerates lost, duplicated and reordered
// messages, so the transport drops rather than waits, and tells raft
// (OnUnreachable, OnSnapshot) so that the leader probes instead of
// pipelining to a peer that does not hear it. A snapshot is reported
// whether it was written or not: raft waits for that report.
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
// With Config.TLS the controller listener serves TLS (its protocol is SSL
// in listener.security.protocol.map) and the hello and every frame go
// inside it; Config.ClientTLS is the side that dials voters and
// controllers, the host dialed checked against the certificate. With
// client certificates required, only nodes the truststore trusts take
// part.
//
// With Config.SASL the controller listener authenticates every
// connection with SASL (its protocol is SASL_PLAINTEXT, or SASL_SSL
// with TLS): right after TCP (and TLS), before its hello, the dialer logs
// in with Config.ClientSASL (the "SASL" section below has the frames), and
// the acceptor reads nothing else until the exchange succeeded. A
// connection that sends anything else first, names a mechanism the
// listener does not enable, or fails the exchange is answered with a
// refuse frame (Kafka's message for the failure) and closed, both after
// Config.FailedAuthenticationDelay (connection.failed.authentication.delay.ms); it is
// logged and counted in Stats.AuthFailures, and none of its frames is
// read, so no raft message of an unauthenticated node is delivered. Any
// user the exchange accepts is a peer: the hello then decides which node
// it is. The whole handshake (TLS, SASL, hello) is bounded by DialTimeout.
//
// Each ordered pair of controllers uses its own connection, dialed by the
// sender: between two voters there are two, one each way, and messages
// flow only from dialer to acceptor after the handshake. A learner's
// connection is the exception (below): it carries messages both ways. Messages arrive
// in the order sent while a connection lasts; across a reconnection the
// old connection's last frames may be delivered after the new one's first
// (raft does not mind).
//
// Send keeps the messages it is given until its writer has encoded them,
// on another goroutine: raft does not modify a Ready's messages or their
// entries afterwards, and encoding only reads them.
//
// # Learners
//
// A broker-only node (Config.Learner) is a raft learner with no controller
// listener: Kafka's broker-only nodes have none, and a learner's address
// would otherwise have to be configured, carried in the raft configuration
// and kept across snapshots. Instead it dials the controllers and each
// connection it dials carries messages both ways: the learner's writer
// and a reader on its side; on the controller, serveLearner reads, and a
// writer for that learner pumps its queue into the same connection. The
// learner dials Config.Bootstrap (controller.quorum.bootstrap.servers, or
// the voters' addresses) with a hello addressed to -1 (any node); the
// controller answers with its own id and a voters frame naming every voter
// and its address, and the learner dials each voter it has no link to, so
// that whichever voter leads can reach it. A link whose connection ends
// dials again with backoff (a learner that had nothing to send would
// otherwise never be reached again); two addresses of one controller
// keep one link. A controller tells OnLearner when a learner's hello is
// done (coord adds it to the quorum), and refuses a learner hello from a
// node that is one of its voters.
//
// The quorum leader also sends quorum frames (Broadcast): its view of the
// quorum, opaque here, to every voter and learner, so any node answers
// DescribeQuorum as the leader would. They share the peers' queues with
// raft messages and are dropped when a queue is full.
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
//	4 quorum   the quorum leader's view of the quorum, coord's encoding
//	           (JSON), delivered to Config.DeliverQuorum
//	5 voters   sent by a controller right after its hello to a learner:
//	           the voters and their controller listeners, below
//	6 auth     a SASL token, before the hello (below)
//
// The hello payload:
//
//	 0          8         10        14        18        20
//	+----------+---------+---------+---------+---------+------------------+
//	|  magic   | version |  from   |   to    |  n      |   cluster id     |
//	| 8 bytes  | u16 BE  | i32 BE  | i32 BE  | u16 BE  |  n bytes, UTF-8  |
//	+----------+---------+---------+---------+---------+------------------+
//
// magic is "kz-raft\n"; version is 1 (Version); from and to are node ids
// (a learner's hello has to -1: it dials by address); n is at most 255.
//
// The voters payload, count entries of at most 64:
//
//	 0        2                                 repeated count times
//	+--------+------------------------------------------------------+
//	| count  |  id i32 BE | len u16 BE | host:port, len bytes (1-255) |
//	| u16 BE |                                                      |
//	+--------+------------------------------------------------------+
//
// A connection goes:
//
//	dialer                               acceptor
//	hello{from: dialer, to: acceptor} -->
//	                                  <-- hello{from: acceptor, to: dialer}
//	                                      or refuse, then close
//	message, message, ...             -->
//
// and for a learner:
//
//	learner                              controller
//	hello{from: learner, to: -1}      -->
//	                                  <-- hello{from: controller, to: learner}
//	                                  <-- voters
//	message, message, ...             <->  message, quorum, ...
//
// The acceptor refuses a hello of another version or cluster id (an empty
// id, a node that has yet to learn its cluster, matches any), addressed
// to another node, or from a node that is not one of its peers (a
// learner's hello: from one of its voters, or to a learner); the dialer
// drops a reply that does not match what it dialed. Both log why; the
// dialer logs the refusal's text.
//
// # SASL
//
// On a SASL controller listener a connection begins with auth frames:
//
//	dialer                               acceptor
//	auth{n u8, mechanism n bytes, token} -->
//	                                  <-- auth{status u8, token}
//	                                      or refuse, then close
//	auth{token}                       -->  (while neither side is done)
//	                                  <-- auth{status u8, token}
//	hello ...                         -->  (as above)
//
// The first auth frame names the mechanism (1 to 64 bytes) and carries the
// client's first token; status is 1 when the acceptor has authenticated
// the dialer, 0 when it expects another token. Tokens are at most 64 KiB,
// an exchange at most 4 client tokens (SCRAM takes 2), and the frames
// before the hello at most that: the acceptor's net/sasl exchange (PLAIN,
// SCRAM-SHA-256/512, OAUTHBEARER) parses each token, the dialer's
// franz-go mechanism produces them. Both ends must agree that the
// exchange is done before the dialer sends its hello.
//
// # Bad input
//
// A frame whose length is 0 or more than 1+MaxMessageBytes (before the
// handshake: the size of the largest hello, or of an auth frame during
// SASL), a checksum mismatch, an
// unexpected kind, an undecodable message, or a message whose To is not
// this node or whose From is not the node of the hello, closes that
// connection only and counts in Stats.BadFrames, as does a connection that
// sends no hello within DialTimeout. Nothing received can make the
// transport panic, and a frame's buffer grows with the bytes that actually
// arrive, not with the length its header claims. A
// message larger than MaxMessageBytes is never sent: it is dropped and
// counted (Stats.TooLarge), and reported like any other loss.
package raftnet
