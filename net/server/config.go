package server

import (
	"log/slog"
	"time"

	"kzero/net/wire"
)

// Defaults, Kafka's.
const (
	// DefaultMaxRequestBytes is socket.request.max.bytes.
	DefaultMaxRequestBytes = wire.DefaultMaxRequestBytes
	// DefaultIdleTimeout is connections.max.idle.ms.
	DefaultIdleTimeout = 600000 * time.Millisecond
)

// Config is the listener's configuration. The zero value of a field means
// its default.
type Config struct {
	// Addr is the TCP address to listen on, host:port; port 0 picks a free
	// port (Server.Addr tells which).
	Addr string
	// Loops is the number of event loops; 0 means one per CPU.
	Loops int
	// MaxRequestBytes is socket.request.max.bytes: a larger request frame
	// closes its connection.
	MaxRequestBytes int
	// IdleTimeout is connections.max.idle.ms: a connection with no request
	// in flight and no bytes read or written for this long is closed. A
	// negative value never closes idle connections.
	IdleTimeout time.Duration
	// SocketSendBuffer and SocketRecvBuffer set SO_SNDBUF and SO_RCVBUF
	// (socket.send.buffer.bytes, socket.receive.buffer.bytes); 0 leaves the
	// kernel's default, which autotunes.
	SocketSendBuffer, SocketRecvBuffer int
	// CopyWhenBlocked changes what a file range does when the socket is
	// full: by default it waits until the socket drains and goes on with
	// sendfile (zero-copy for every byte, at the cost of a wake-up through
	// the writable poller); with CopyWhenBlocked the rest of the range is
	// read into gnet's write buffer at once, and so are later ranges until
	// that buffer is empty (fewer wake-ups, more copies, and the buffer
	// grows to the size of the response).
	CopyWhenBlocked bool
	// Inline names the API keys whose requests the handler serves without
	// blocking (it completes them within Serve or hands them to a
	// callback): those are served on the event loop itself when the
	// connection has nothing else queued, and their response is written
	// there at once, with no goroutine start and no loop wake-up. nil
	// serves every request on a runner goroutine.
	Inline func(apiKey int16) bool
	// Logger receives connection-level events; nil means slog.Default().
	Logger *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.MaxRequestBytes <= 0 {
		c.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
