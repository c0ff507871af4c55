package server

import (
	"testing"
	"time"
)

// TestThrottleMutesReads: a response that throttles its connection is
// sent at once, and the connection's next request is not read until the
// throttle time has passed (KIP-219). The elapsed time is a lower bound,
// which a slow machine cannot break.
func TestThrottleMutesReads(t *testing.T) {
	const d = 400 * time.Millisecond
	s := start(t, Config{}, HandlerFunc(func(r *Request) {
		if string(r.Body) == "throttle me" {
			r.Conn().Throttle(d)
		}
		echo(r)
	}))
	c := dial(t, s)
	c.roundTrip(1, "warm up")
	began := time.Now()
	c.roundTrip(2, "throttle me")
	c.roundTrip(3, "after the mute")
	if el := time.Since(began); el < d {
		t.Fatalf("the request after a %v throttle was answered %v after the throttled one was sent", d, el)
	}
	if m := s.Stats().Mutes; m != 1 {
		t.Fatalf("mutes %d", m)
	}
	c.roundTrip(4, "no longer muted")
}
