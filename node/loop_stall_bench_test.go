package node

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkLoopStall measures what a large append served on an event loop
// (api.Inline) costs the other connections of that loop: a small produce
// (one 1 KiB record, partition 1) is timed on a connection alone, then
// beside a producer flat out with 1 MB batches (partition 0, one in
// flight) on the same loop: the node has one event loop. The topic rolls
// a segment every 16 appends (segment.bytes 16 MiB), so rolls are among
// the appends the probe waits behind. It reports the probe's p50, p99 and
// max round trip and the large producer's MiB/s:
//
//	go test -run '^$' -bench LoopStall -benchtime 3000x ./node
func BenchmarkLoopStall(b *testing.B) {
	for _, mode := range []string{"alone", "beside-large"} {
		b.Run(mode, func(b *testing.B) {
			segment := "16777216"
			addr := benchNodeWith(b, func(c *Config) { c.Server.Loops = 1 }, "stall", 2, map[string]*string{"segment.bytes": &segment})
			big, probe := benchConn(b, addr), benchConn(b, addr)
			large := produceRequestTo("stall", benchBatch(b, 1000, 1024), 0) // within max.message.bytes
			small := produceRequestTo("stall", benchBatch(b, 1, 1024), 1)
			for range 50 {
				checkProduced(b, probe.roundTrip(b, small))
			}

			stop := make(chan struct{})
			var wg sync.WaitGroup
			var bigBytes int64
			start := time.Now()
			if mode != "alone" {
				wg.Go(func() {
					for {
						select {
						case <-stop:
							return
						default:
						}
						if _, err := big.c.Write(large); err != nil {
							b.Error(err)
							return
						}
						if _, err := big.readErr(); err != nil {
							b.Error(err)
							return
						}
						bigBytes += int64(len(large))
					}
				})
				time.Sleep(100 * time.Millisecond) // the large producer is under way
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
			if mode != "alone" {
				checkProduced(b, big.roundTrip(b, large)) // the large appends succeed
			}
			slices.Sort(rtts)
			at := func(q float64) float64 { return float64(rtts[int(q*float64(len(rtts)-1))].Microseconds()) }
			b.ReportMetric(at(0.5), "p50-µs")
			b.ReportMetric(at(0.99), "p99-µs")
			b.ReportMetric(at(1), "max-µs")
			if mode != "alone" {
				b.ReportMetric(float64(bigBytes)/(1<<20)/time.Since(start).Seconds(), "large-MiB/s")
			}
		})
	}
}
