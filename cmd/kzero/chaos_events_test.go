package main

// The chaos run's event log: faults, heals, throughput and client errors,
// with wall-clock time (to line up with the nodes' logs) and time since the
// run began, in the test's output and in events.log of the run's directory.

import (
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

type chaosEvents struct {
	t     *testing.T
	begin time.Time
	mu    sync.Mutex
	f     *os.File
}

func newChaosEvents(t *testing.T, path string) *chaosEvents {
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &chaosEvents{t: t, begin: time.Now(), f: f}
}

// log records one event; any goroutine may call it while the test runs.
func (e *chaosEvents) log(format string, args ...any) {
	now := time.Now()
	line := fmt.Sprintf("%s +%-8s %s", now.UTC().Format("15:04:05.000"), now.Sub(e.begin).Truncate(time.Second), fmt.Sprintf(format, args...))
	e.mu.Lock()
	defer e.mu.Unlock()
	fmt.Fprintln(e.f, line)
	e.t.Log(line)
}
