package server

import "time"

// Throttling a connection (KIP-219): a handler whose client is over its
// quota answers at once with throttle_time_ms set, and the connection is
// then muted, not read, for that long, so a client that ignores the
// throttle time cannot go on sending. The mute uses the read pause of
// pause.go: the loop checks the mute before each frame it reads, takes the
// socket's read interest out while muted, and a timer queues the resume
// when the mute ends. A memory pause and a mute can overlap: whichever
// resume comes first reads again only if the other no longer holds (the
// memory check re-pauses in the reader, the mute check here).
//
// Requests read before the mute began (pipelined behind the throttled
// one) are still served; Kafka reads one request of a connection at a
// time, kzero reads ahead up to ConnQueuedMaxRequestBytes, so a muted
// connection may have that much more served. The throttle times of those
// responses grow with the rate, so the client's long-run rate is held to
// its quota all the same.

// Throttle mutes the connection for d from now, or until a later mute
// already set ends. From any goroutine; a handler calls it when it
// answers with a throttle time.
func (c *Conn) Throttle(d time.Duration) {
	if d <= 0 {
		return
	}
	until := c.srv.now() + int64(d)
	for {
		old := c.muteUntil.Load()
		if until <= old {
			return
		}
		if c.muteUntil.CompareAndSwap(old, until) {
			break
		}
	}
	c.srv.stats.mutes.Add(1)
	time.AfterFunc(d, c.wakeReading)
}

// muted reports whether reads are muted now. On the loop, before each
// frame.
func (c *Conn) muted() bool {
	u := c.muteUntil.Load()
	return u != 0 && c.srv.now() < u
}

// pauseForMute takes the read interest out until the mute's timer
// resumes. On the loop.
func (c *Conn) pauseForMute() {
	if !c.loop.paused {
		c.loop.paused = true
		c.setReadInterest(false)
	}
}

// Size is the request's size as Kafka's quotas count a produce
// (RequestChannel.Request.sizeInBytes): its header and body, without the
// 4-byte size in front. While the request is served.
func (r *Request) Size() int {
	if r.frame == nil {
		return len(r.Body)
	}
	return len(r.frame.B)
}
