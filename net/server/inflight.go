package server

// A per-connection cap on requests held (Config.ConnMaxQueuedRequests):
// the request memory caps (memory.go) bound the bytes a connection's
// requests hold, but a client pipelining tiny requests (a few dozen bytes
// each, in the smallest buffers) could still queue many thousands of
// them, each a Request and an inbox slot. Past the cap the loop stops
// reading the connection, as for its memory cap, and the completion that
// brings it back under resumes it (releaseFrame wakes a connection
// waiting on its own requests).

// DefaultConnMaxQueuedRequests is Kafka's queued.max.requests default.
const DefaultConnMaxQueuedRequests = 500

// overRequestCap reports whether c holds as many requests as it may, and
// then pauses its reads until one completes. On the loop, before reading a
// frame.
func (c *Conn) overRequestCap() bool {
	max := c.srv.cfg.ConnMaxQueuedRequests
	if max <= 0 || c.frames.Load() < int32(max) {
		return false
	}
	// The flag is set before checking again, so a completion in between
	// either sees it or is seen (as reserve does for memory).
	c.waitOwn.Store(true)
	if c.frames.Load() < int32(max) {
		c.waitOwn.Store(false)
		return false
	}
	c.pauseReading()
	return true
}
