package node

import (
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// BenchmarkLoopStall measures what another connection's produce served on
// an event loop (api.Inline) costs the other connections of that loop
// (docs/perf/loopstall.md): a small produce (one 1 KiB record, partition
// 1) is timed on a connection alone, then beside a producer flat out
// (partition 0, one request in flight) on the same loop (the node has one
// event loop):
//
//   - beside-large: 1 MB batches, a segment roll every 16 appends
//     (segment.bytes 16 MiB);
//   - beside-rolls: 64 KiB batches, a segment roll
//     every 16 appends (segment.bytes 1 MiB, Kafka's least), so the
//     rolls are what the probe waits behind.
//
// It reports the probe's p50, p99 and max round trip and the producer's
// MiB/s:
//
//	go test -run '^$' -bench LoopStall -benchtime 3000x ./node
func BenchmarkLoopStall(b *testing.B) {
	for _, c := range []struct {
		name     string
		records  int // 1 KiB records per batch of the producer beside; 0: none
		segments int
	}{
		{"alone", 0, 16 << 20},
		{"beside-large", 1000, 16 << 20}, // 1000: within max.message.bytes
		{"beside-rolls", 64, 1 << 20},
	} {
		b.Run(c.name, func(b *testing.B) {
			segment := strconv.Itoa(c.segments)
			addr := benchNodeWith(b, func(c *Config) { c.Server.Loops = 1 }, "stall", 2, map[string]*string{"segment.bytes": &segment})
			producer, probe := benchConn(b, addr), benchConn(b, addr)
			small := produceRequestTo("stall", benchBatch(b, 1, 1024), 1)
			for range 50 {
				checkProduced(b, probe.roundTrip(b, small))
			}

			stop := make(chan struct{})
			var wg sync.WaitGroup
			var produced int64
			start := time.Now()
			var beside []byte
			if c.records > 0 {
				beside = produceRequestTo("stall", benchBatch(b, c.records, 1024), 0)
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := producer.c.Write(beside); err != nil {
							b.Error(err)
							return
						}
						if _, err := producer.readErr(); err != nil {
							b.Error(err)
							return
						}
						produced += int64(len(beside))
					}
				})
				time.Sleep(100 * time.Millisecond) // the producer is under way
			}
			var rtts []time.Duration
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				probe.roundTrip(b, small)
				rtts = append(rtts, time.Since(t0))
			}
			b.StopTimer()
			close(stop)
			wg.Wait()
			if beside != nil {
				checkProduced(b, producer.roundTrip(b, beside)) // its appends succeed
			}
			slices.Sort(rtts)
			at := func(q float64) float64 { return float64(rtts[int(q*float64(len(rtts)-1))].Microseconds()) }
			b.ReportMetric(at(0.5), "p50-µs")
			b.ReportMetric(at(0.99), "p99-µs")
			b.ReportMetric(at(1), "max-µs")
			if beside != nil {
				b.ReportMetric(float64(produced)/(1<<20)/time.Since(start).Seconds(), "beside-MiB/s")
			}
		})
	}
}
