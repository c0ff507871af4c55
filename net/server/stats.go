package server

import "sync/atomic"

// Stats is a snapshot of the server's counters, all totals since Start.
type Stats struct {
	ConnectionsOpened int64
	ConnectionsClosed int64
	// AcceptErrors counts failed accepts (out of descriptors: EMFILE,
	// ENFILE; out of kernel memory: ENOBUFS, ENOMEM) and accepted
	// connections that could not be handed to an event loop; each is
	// retried after a backoff.
	AcceptErrors int64
	// IdleClosed counts connections closed by IdleTimeout.
	IdleClosed int64
	// Rejected counts connections closed for a bad frame: a negative or
	// oversize size, or a malformed request header.
	Rejected int64
	// Requests counts requests handed to the handler.
	Requests int64
	// ZeroCopyBytes counts file range bytes sent with sendfile; CopiedBytes
	// those read and written through a buffer (sendfile cannot read the
	// file, or CopyWhenBlocked and the socket was full), and those sent
	// with sendfile into a user-space TLS relay, which copies them.
	ZeroCopyBytes int64
	CopiedBytes   int64
	// RequestBytesHeld is the request memory held now (a gauge): the
	// buffers of frames being read and of requests not yet completed, as
	// capped by Config.QueuedMaxRequestBytes.
	RequestBytesHeld int64
	// ReadPauses counts the times a connection stopped reading because it
	// or the server was at its request memory cap.
	ReadPauses int64
	// FrameGrowBytes counts bytes copied when a partly read frame moved to
	// a larger buffer (a large frame that arrived slowly).
	FrameGrowBytes int64
	// FreeFrameBytes is the capacity of the free request buffers of 1 MiB
	// and more kept for reuse now (a gauge, shared by all servers of the
	// process; frame_pool.go).
	FreeFrameBytes int64
	// SocketFull counts the times a file range found the socket full (and
	// waited for it to drain, or was copied with CopyWhenBlocked).
	SocketFull int64
	// TLSHandshakes counts completed TLS handshakes; TLSHandshakeFailures
	// those that failed (the connection was closed: a bad or missing client
	// certificate, a plaintext client, the handshake timeout, a
	// certificate no ssl.principal.mapping.rules rule maps).
	TLSHandshakes        int64
	TLSHandshakeFailures int64
	// KernelTLSConns counts TLS connections the kernel took (kTLS:
	// fetches go out with sendfile); UserTLSConns those served through the
	// user-space relay; UserTLSBytes the bytes the relay encrypted for
	// clients.
	KernelTLSConns int64
	UserTLSConns   int64
	UserTLSBytes   int64
	// KernelTLSRecordCloses counts kTLS connections closed on a record that
	// is not application data (an alert, a TLS 1.3 KeyUpdate).
	KernelTLSRecordCloses int64
	// Mutes counts connections muted for a throttle time (Conn.Throttle).
	Mutes int64
	// ConnectionsLimited counts connections closed at accept for their
	// address's limit; AcceptWaits the times the acceptor waited for a
	// slot or for the creation rate (connlimit.go).
	ConnectionsLimited, AcceptWaits int64
	// ResponseWrites counts the writes of gathered response bytes (one
	// writev each): responses completed together go out in one.
	ResponseWrites int64
	// Runners counts runner goroutines started: for requests not served
	// on the loop (not Inline, or queued behind a request being served).
	Runners int64
	// DirectWrites counts responses written by the goroutine that
	// completed them rather than by their connection's loop (writeDirect);
	// DirectHandovers the times such a write left the rest to the loop
	// (the socket was full, or the connection is closing).
	DirectWrites, DirectHandovers int64
}

// counters are the live Stats, updated by event loops and handlers.
type counters struct {
	opened, closed, acceptErrors   atomic.Int64
	idleClosed, rejected, requests atomic.Int64
	zeroCopy, copied, socketFull   atomic.Int64
	readPauses, frameGrow, mutes   atomic.Int64
	connLimited, acceptWaits       atomic.Int64
	responseWrites, runners        atomic.Int64
	directWrites, directHandovers  atomic.Int64

	tlsHandshakes, tlsFailed atomic.Int64
	kernelTLS, userTLS       atomic.Int64
	userTLSBytes             atomic.Int64
	kernelTLSRecordCloses    atomic.Int64
}

func (c *counters) snapshot() Stats {
	return Stats{
		ConnectionsOpened: c.opened.Load(),
		ConnectionsClosed: c.closed.Load(),
		AcceptErrors:      c.acceptErrors.Load(),
		IdleClosed:        c.idleClosed.Load(),
		Rejected:          c.rejected.Load(),
		Requests:          c.requests.Load(),
		ZeroCopyBytes:     c.zeroCopy.Load(),
		CopiedBytes:       c.copied.Load(),
		SocketFull:        c.socketFull.Load(),
		ReadPauses:        c.readPauses.Load(),
		FrameGrowBytes:    c.frameGrow.Load(),
		FreeFrameBytes:    framePool.large.freeBytes(),

		TLSHandshakes:         c.tlsHandshakes.Load(),
		TLSHandshakeFailures:  c.tlsFailed.Load(),
		KernelTLSConns:        c.kernelTLS.Load(),
		UserTLSConns:          c.userTLS.Load(),
		UserTLSBytes:          c.userTLSBytes.Load(),
		KernelTLSRecordCloses: c.kernelTLSRecordCloses.Load(),
		Mutes:                 c.mutes.Load(),
		ConnectionsLimited:    c.connLimited.Load(),
		AcceptWaits:           c.acceptWaits.Load(),
		ResponseWrites:        c.responseWrites.Load(),
		Runners:               c.runners.Load(),
		DirectWrites:          c.directWrites.Load(),
		DirectHandovers:       c.directHandovers.Load(),
	}
}
