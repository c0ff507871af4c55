package await

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestPollWaitsForTheCondition(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var n atomic.Int32
		go func() {
			time.Sleep(time.Second)
			n.Store(1)
		}()
		start := time.Now()
		if !Poll(time.Minute, func() bool { return n.Load() == 1 }) {
			t.Fatal("Poll gave up on a condition that came true")
		}
		if waited := time.Since(start); waited < time.Second || waited > time.Second+tick {
			t.Fatalf("Poll returned %v after the start, the condition came true after 1s", waited)
		}
	})
}

func TestPollGivesUpAtTheTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		checks := 0
		start := time.Now()
		if Poll(time.Second, func() bool { checks++; return false }) {
			t.Fatal("Poll reported a false condition true")
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("Poll gave up after %v, not at its 1s timeout", waited)
		}
		if checks < 2 {
			t.Fatalf("%d checks", checks)
		}
	})
}

func TestPollTrueAtOnceDoesNotWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		if !Poll(time.Second, func() bool { return true }) || time.Since(start) != 0 {
			t.Fatal("a true condition waited")
		}
	})
}

func TestPollCtxEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		start := time.Now()
		if PollCtx(ctx, func() bool { return false }) {
			t.Fatal("PollCtx reported a false condition true")
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("PollCtx gave up after %v, not when its context ended at 1s", waited)
		}
	})
}
