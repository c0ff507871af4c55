// Package server is kzero's Kafka listener: gnet/v2 event loops that read
// request frames, a per-connection ordered pipeline to a Handler, and a
// response writer that sends encoded bytes and file ranges (sendfile) in
// request order.
//
// # Contract
//
//   - Frames: a 4-byte size, then the request. A negative size, a size above
//     Config.MaxRequestBytes (socket.request.max.bytes) or a request header
//     that does not decode (wire.ParseRequestHeader: truncated, unknown API
//     key) closes that connection and is logged; nothing else is affected.
//   - Order: requests of one connection are served one at a time, in the
//     order they arrived; Serve is called for a request only after the
//     previous one completed (Respond, NoResponse or Fail), and responses
//     are written in request order. This is Kafka's guarantee, which
//     idempotent producers and pipelining clients rely on.
//   - Completion: a handler completes a request from any goroutine, during
//     Serve or later (acks=all, long-poll fetch: a purgatory completes it),
//     so no goroutine blocks per waiting request. Respond hands the server a
//     sealed wire.Response; NoResponse (acks=0) lets the next request go on;
//     Fail closes the connection after the responses before it are written.
//   - File ranges: a response's file ranges are sent with sendfile(2) on the
//     socket, after the bytes before them are flushed. When the socket is
//     full, the rest waits until it drains and is then sent with sendfile
//     too; later responses queue behind it, so order holds. (With
//     Config.CopyWhenBlocked the rest is copied into gnet's write buffer
//     instead.) A file that sendfile cannot read (EINVAL, ENOSYS,
//     EOPNOTSUPP) is copied through a pooled buffer. Stats counts both
//     (ZeroCopyBytes, CopiedBytes). Each range's File is released once its
//     bytes are sent, or when the connection dies. A range shorter on disk
//     than promised closes the connection (the frame size cannot be
//     honoured); so does any other sendfile error.
//   - Memory: requests being read and queued hold at most
//     Config.QueuedMaxRequestBytes in total and
//     Config.ConnQueuedMaxRequestBytes per connection (see below for the
//     exceptions); a connection over either stops reading until its or
//     others' requests complete, and is not closed. Stats.RequestBytesHeld
//     and ReadPauses tell. A connection also stops reading while it holds
//     Config.ConnMaxQueuedRequests requests (inflight.go).
//   - Throttle: Conn.Throttle mutes a connection's reads for a quota's
//     throttle time (throttle.go, KIP-219).
//   - Connection limits (Config.Limits, connlimit.go): at max.connections
//     or a listener's max the acceptor waits for a connection to close;
//     max.connection.creation.rate paces it; a connection over its
//     address's max.connections.per.ip is closed at accept.
//   - Idle: a connection with nothing in flight and no traffic for
//     Config.IdleTimeout (connections.max.idle.ms) is closed.
//   - Accept: the listener is bound with SO_REUSEADDR and without
//     SO_REUSEPORT, so a broker restarted after a crash binds its port at
//     once (connections of the dead process in TIME_WAIT do not block it)
//     and a second process on a port in use still fails. A failed accept
//     (EMFILE, ENFILE, ENOBUFS, ENOMEM) is counted (Stats.AcceptErrors),
//     logged once per run of failures and retried after a backoff (5ms
//     doubling to 1s); open connections are served throughout, and the
//     waiting connections are accepted once descriptors free up.
//   - Stop closes the listener and all connections, then waits for the
//     loops, for running Serve calls and for the user-space TLS relays.
//
// # Goroutines and ownership
//
// Acceptors (one goroutine per listener, listener.go): kzero owns the
// listening sockets, not gnet. Several named listeners (Config.Listeners:
// PLAINTEXT, SASL_PLAINTEXT, ...) share one set of event loops; the
// listener rides to OnOpen as the connection's gnet context, and
// Conn.Listener tells the handler which one a connection came through (a
// TLS listener adds its handshake between accept and hand-over: see TLS
// below). gnet's own accept path ends its main reactor, and with it the
// engine and every connection, on any accept error but EAGAIN, EINTR,
// ECONNRESET and ECONNABORTED: descriptor exhaustion would stop the
// broker serving. So the event loops run as gnet's Client (its engine
// without a listener), and the acceptor takes connections with Go's
// net.Listener (the runtime's poller wakes it; closing the listener stops
// it) and hands each to the loop with the fewest connections
// (Client.EnrollContext, which duplicates the descriptor, registers the
// duplicate and closes the original). That is the simplest way to own
// accept errors with gnet v2.9.7: no second poller of ours, no copy of
// gnet's accept code. The cost is a dup and a hand-over per connection,
// which is nothing next to a Kafka connection's lifetime.
//
// Raw frames: after a v0 SaslHandshake the client sends SASL tokens as
// bare size-prefixed frames. Conn.SetRawFrames (an atomic the loop reads
// per frame) makes the reader hand those over whole, as requests with the
// RawFrame key, and Request.RespondRaw answers without a response header.
//
// Event loop (gnet, one per core by default; a connection stays on one):
// OnOpen, OnTraffic, OnClose, and the tasks queued with EventLoop.Execute.
// It owns Conn.loop (loopState): the frame reader, and the write side: the
// responses being written, gnet's outbound buffer, the socket. Socket
// writes happen there, through gnet (Write, Writev, Flush) or sendfile
// when gnet's outbound buffer is empty, or in a direct write (below);
// AsyncWrite is never used, because gnet runs it from a different queue
// than Execute and the two can reorder.
//
// OnTraffic reads the size prefix (Peek, Discard), takes a pooled buffer
// and fills it as bytes arrive (Read, then read(2) on the socket), so each
// byte is copied once, out of gnet's read buffer or the kernel's, and a
// partial frame is never copied again. The buffer is sized by what has
// arrived, not by the declared size (frame.go): a frame mostly there gets
// its full size at once, one that trickles in grows. A whole frame's
// header is decoded on the loop; the request is queued in the
// connection's inbox (Conn.mu).
//
// Request memory (memory.go, queued.max.request.bytes): frame buffers
// count from the moment they are taken until their request completes, per
// connection (read-ahead behind the request being served) and in total. A
// connection that may not take more pauses its reads (pause.go): gnet
// cannot stop reading a connection, so kzero takes the socket's read
// interest out of the loop's epoll set itself, and the client is held
// back by TCP flow control instead of by the broker's memory. The
// completion that frees memory queues a resume on the loop. A connection
// holding nothing may always read a small frame, so ApiVersions, Metadata
// and heartbeats are answered while the broker is at its cap.
//
// Runner (one goroutine per connection while it has requests, started by
// the loop or by a late completion): pops the inbox and calls Serve, one
// request at a time. If Serve returns before the request completed, the
// runner exits; the completion starts the next runner. Handler state kept
// with Conn.SetValue is only touched by runners, one at a time.
//
// Inline (Config.Inline): a request of an API key the handler serves
// without blocking, arriving while the connection has nothing queued or in
// service, is served on the event loop itself, and a response completed
// during that Serve is written there, with those of the other requests
// the same read brought, once the loop has served them (one writev for a
// pipelining client's answers): no runner goroutine, no Execute wake-up
// of the loop. It saves two hand-offs per request (a produce round trip
// went from ~80-100 us to ~55-65 us on the 2-core test machine). A
// request that completes later goes on as any other.
//
// Completion (any goroutine): Respond appends the response to the
// connection's outbox (Conn.mu) and, if no drain is queued, queues one on
// the loop with Execute. The outbox, not gnet's task queues, orders the
// responses: a drain takes all of it. The drain writes: byte parts of
// consecutive responses are gathered into one writev; a file range first
// flushes them, then sendfile. On EAGAIN the connection is armed in the
// writable poller (a private epoll set and one goroutine: gnet has no
// writable callback), which queues a resume on the loop when the socket
// drains.
//
// Direct write (writer.go, writeDirect): a response completed off the
// connection's loop while that loop holds nothing to write (no drain due,
// nothing pending or in gnet's buffer, no wait for the socket), and of at
// most 256 KiB, is written by the completing goroutine itself, with
// writev and sendfile on the socket and no gnet call: a long-poll fetch
// answered by the produce that satisfied it, on the producer's loop; a
// runner's or a timer's answer. It saves the Execute wake-up of the
// fetch's loop, which cost ~28 us of broker CPU per answer on the 2-core
// test machine. Conn.mu.direct gives it the write side; responses
// completed meanwhile are appended to the outbox and written by it in
// turn. What the socket does not take (a partial writev, sendfile's
// EAGAIN), a Fail's close and any write error are handed to the loop as
// the write state stands (a drain), and the loop goes on from that byte.
// OnClose takes Conn.wmu, which the direct writer holds, so the
// descriptor is not closed and reused under it.
//
// Throttle (throttle.go): Conn.Throttle mutes a connection's reads for a
// throttle time (KIP-219), with the read pause above and a timer.
//
// Sweeper (one goroutine, when IdleTimeout > 0): closes idle connections
// with gnet's concurrency-safe Conn.Close.
//
// Counters (Stats) are atomics, updated by all of the above.
//
// # TLS and kernel TLS
//
// An SSL or SASL_SSL listener (Listener.TLS) runs each connection's
// handshake with crypto/tls on a goroutine of its own, started by the
// acceptor (tls_handshake.go), bounded by TLSSettings.HandshakeTimeout and
// aborted by Stop; a failed handshake (a plaintext client, a bad or
// missing client certificate, a certificate no ssl.principal.mapping.rules
// rule maps) closes that connection only and is counted
// (Stats.TLSHandshakeFailures). The client certificate's principal (its
// subject DN in RFC 2253 form, as Java's X500Principal.getName() writes
// it, mapped by the rules) rides to the Conn (Conn.Principal). Then one of
// two paths, counted (KernelTLSConns, UserTLSConns) and logged per
// listener when it changes:
//
// Kernel TLS (tls_keys.go, tls_kernel.go). crypto/tls does not export a
// session's keys, but its KeyLogWriter hands out the secrets they derive
// from: the TLS 1.3 application traffic secrets, the TLS 1.2 master
// secret. The keys and IVs follow by the RFCs' key schedules (HKDF-Expand-
// Label; the TLS 1.2 PRF over the randoms, the server's read off the
// ServerHello as it is written), the sequence numbers from what the
// handshake sent under them (TLS 1.3: none, session tickets being off;
// TLS 1.2: the Finished, record 0). The handshake's reads stop at record
// boundaries (tls_wire.go), so a request the client sent right behind its
// Finished stays in the socket, not in crypto/tls's buffer. The socket
// then gets TCP_ULP "tls", TLS_RX and TLS_TX, and goes to the event loop
// like a plaintext one: gnet reads and writes plaintext, and fetch
// responses keep going out with sendfile: the kernel encrypts the page
// cache's pages into the socket's buffers, so no byte crosses into user
// space and no syscall is made per record (the encryption pass itself
// stays; a NIC with TLS offload would take that too).
// A record that is not application data (close_notify or another alert,
// a TLS 1.3 KeyUpdate) fails the loop's read with EIO, which closes the
// connection (Stats.KernelTLSRecordCloses). The kernel serves AES-128-GCM,
// AES-256-GCM and ChaCha20-Poly1305 in TLS 1.2 and 1.3; TestKernelKeys
// proves the derived keys, IVs and sequence numbers by protecting records
// exactly as the kernel would against a real crypto/tls client, which
// runs on kernels without kTLS too.
//
// User-space TLS (tls_relay.go), when the kernel refuses (no tls module:
// setsockopt TCP_ULP fails with ENOENT; a cipher suite it does not serve;
// no TLS_RX) or TLSSettings.DisableKernelTLS: the event loop gets one end
// of a Unix socket pair, and two goroutines copy between the other end and
// crypto/tls on the TCP socket. The event loop, the frame reader and the
// response writer are the same on both paths (sendfile into the pair),
// at the cost of a copy and a cipher pass in user space per byte
// (Stats.UserTLSBytes) and two goroutines per connection. The kernel
// takes RX before TX: a kernel that refuses RX leaves a plain TCP socket
// the relay can use; one that took RX and refuses TX (no such kernel is
// known) spoils the connection, which is closed.
//
// TLS.Reload (SIGHUP in cmd/kzero) reads the keystore and truststore
// again; connections accepted afterwards get them, open ones keep theirs.
package server
