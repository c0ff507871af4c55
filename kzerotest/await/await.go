// Package await waits in tests for a condition that another process, the
// kernel or another goroutine makes true, when nothing signals it: a
// broker binary's admin API, a socket's state, a multi-node cluster's
// metadata, a counter an event loop bumps. It polls, because there is no
// event to wait on across those boundaries; where the code under test
// offers one (a channel, a subscriber, a WaitGroup), a test waits on that
// instead, and in-process timers are tested in a testing/synctest bubble.
//
// The timeout is a bound against hangs, never an assertion about speed:
// pick one far above the expected wait. It imports nothing of kzero, so
// the tests of every layer can use it.
package await

import (
	"context"
	"testing"
	"time"
)

// tick is how often a condition is checked. A check that takes longer
// (a request over the network) delays the next one: a time.Ticker drops
// the ticks it missed.
const tick = 5 * time.Millisecond

// Poll checks cond at once and then on every tick until it is true
// (Poll returns true) or timeout passed (Poll returns false, after a last
// check).
func Poll(timeout time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return PollCtx(ctx, cond)
}

// PollCtx is Poll bounded by ctx instead of a timeout.
func PollCtx(ctx context.Context, cond func() bool) bool {
	if cond() {
		return true
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			if cond() {
				return true
			}
		case <-ctx.Done():
			return cond()
		}
	}
}

// True waits until cond is true and fails the test with what (the awaited
// state, e.g. "the group is Stable") if it is not within timeout.
func True(t testing.TB, timeout time.Duration, cond func() bool, what string) {
	t.Helper()
	if !Poll(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// TrueCtx is True bounded by ctx (the test's deadline) instead of a
// timeout.
func TrueCtx(t testing.TB, ctx context.Context, cond func() bool, what string) {
	t.Helper()
	if !PollCtx(ctx, cond) {
		t.Fatalf("waiting for %s: %v", what, context.Cause(ctx))
	}
}
