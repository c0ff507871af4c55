package main

// Produce and consume through the real network path with kgo, against an
// in-process kzero and, in the same run, franz-go's kfake (the reference
// peer of PERFORMANCE-GOALS.md): 1 KiB records, 8 partitions, acks=1, no
// compression. The consume benchmark also reports the share of fetched
// record bytes kzero sent with sendfile.
//
//	go test -run='^$' -bench=. -benchtime=100000x -count=3 ./cmd/kzero/
//
// The client shares the machine with the broker, so these figures bound
// the broker's speed from below; compare the two brokers within one run.

import (
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/net/server"
)

const (
	benchRecordBytes = 1 << 10
	benchPartitions  = 8
	benchTopic       = "bench"
)

// benchBroker starts one broker for a benchmark: its address, its server
// statistics (nil for kfake) and how to stop it.
type benchBroker struct {
	name  string
	start func(b *testing.B) (addr string, stats func() server.Stats, stop func())
}

var benchBrokers = []benchBroker{
	{"kzero", func(b *testing.B) (string, func() server.Stats, func()) {
		logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		cfg, err := loadConfig(nil, map[string]string{
			"listeners":      "PLAINTEXT://127.0.0.1:0",
			"log.dirs":       b.TempDir(),
			"admin.listener": "",
		}, logger)
		if err != nil {
			b.Fatal(err)
		}
		br, err := startNode(cfg, logger)
		if err != nil {
			b.Fatal(err)
		}
		return br.Addr().String(), br.ServerStats, func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := br.Stop(ctx); err != nil {
				b.Error(err)
			}
		}
	}},
	{"kfake", func(b *testing.B) (string, func() server.Stats, func()) {
		c, err := kfake.NewCluster(kfake.NumBrokers(1))
		if err != nil {
			b.Fatal(err)
		}
		return c.ListenAddrs()[0], nil, c.Close
	}},
}

// benchProducer is a kgo producer as the benchmarks use it: acks=1, no
// idempotence, no compression, to the bench topic (created on first use).
func benchProducer(b *testing.B, ctx context.Context, addr string) *kgo.Client {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(benchTopic),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, benchPartitions, 1, nil, benchTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		cl.Close()
		b.Fatal(err)
	}
	return cl
}

// produceN produces n records of benchRecordBytes and waits for them all.
func produceN(b *testing.B, ctx context.Context, cl *kgo.Client, n int) {
	value := make([]byte, benchRecordBytes)
	rand.Read(value)
	var failed atomic.Pointer[error]
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.CompareAndSwap(nil, &err)
		}
	}
	for i := 0; i < n; i++ {
		cl.Produce(ctx, &kgo.Record{Value: value}, done)
	}
	if err := cl.Flush(ctx); err != nil {
		b.Fatal(err)
	}
	if err := failed.Load(); err != nil {
		b.Fatal(*err)
	}
}

func BenchmarkProduce(b *testing.B) {
	eachBrokerProducer(b, func(b *testing.B, ctx context.Context, cl *kgo.Client) {
		b.SetBytes(benchRecordBytes)
		b.ResetTimer()
		produceN(b, ctx, cl, b.N)
	})
}

// eachBrokerProducer runs f as a sub-benchmark per broker, with a
// benchProducer on it.
func eachBrokerProducer(b *testing.B, f func(b *testing.B, ctx context.Context, cl *kgo.Client)) {
	for _, br := range benchBrokers {
		b.Run("broker="+br.name, func(b *testing.B) {
			addr, _, stop := br.start(b)
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			cl := benchProducer(b, ctx, addr)
			defer cl.Close()
			f(b, ctx, cl)
		})
	}
}

func BenchmarkConsume(b *testing.B) {
	for _, br := range benchBrokers {
		b.Run("broker="+br.name, func(b *testing.B) {
			addr, stats, stop := br.start(b)
			defer stop()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			prod := benchProducer(b, ctx, addr)
			produceN(b, ctx, prod, b.N)
			prod.Close()

			cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(benchTopic),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			var before server.Stats
			if stats != nil {
				before = stats()
			}
			b.SetBytes(benchRecordBytes)
			b.ResetTimer()
			for n := 0; n < b.N; {
				fs := cl.PollFetches(ctx)
				if err := fs.Err(); err != nil {
					b.Fatal(err)
				}
				n += fs.NumRecords()
			}
			b.StopTimer()
			if stats != nil {
				after := stats()
				zero, copied := after.ZeroCopyBytes-before.ZeroCopyBytes, after.CopiedBytes-before.CopiedBytes
				if zero+copied == 0 {
					b.Fatal("no file bytes were sent")
				}
				b.ReportMetric(100*float64(zero)/float64(zero+copied), "%sendfile")
			}
		})
	}
}

// BenchmarkProduceRoundTrip is one 1 KiB record per produce request, each
// waited for (acks=1): the broker's per-request latency, which bounds a
// producer that does not batch (and the end-to-end latency goals).
func BenchmarkProduceRoundTrip(b *testing.B) {
	eachBrokerProducer(b, func(b *testing.B, ctx context.Context, cl *kgo.Client) {
		value := make([]byte, benchRecordBytes)
		rand.Read(value)
		r := &kgo.Record{Value: value, Partition: 0}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(benchRecordBytes)
		b.ResetTimer()
		for range b.N {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: value}).FirstErr(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProduceBeside is the round trip of a small produce while
// another connection of the same event loop (num.network.threads=1) sends
// 1 MiB batches: whether serving those holds up the loop's other
// connections. Produce is served on the event loop (api.Inline) unless
// its batches are compressed beyond 16 KiB. Neighbours:
//
//   - idle: no other connection, the baseline;
//   - zstd: 1 MiB of text in zstd batches (decompressed to validate, off
//     the loop);
//   - plain: 1 MiB uncompressed batches (one large append, on the loop);
//   - roll: the same with 1 MiB segments, so every batch rolls a segment
//     (file create, index mmap, the old segment's flush handed off).
//
// Reports the p50, p99 and p99.9 round trips.
//
//	go test -run='^$' -bench=ProduceBeside -benchtime=2000x -count=3 ./cmd/kzero/
func BenchmarkProduceBeside(b *testing.B) {
	text := []byte(strings.Repeat("the quick brown fox jumps over the lazy dog ", 24)) // ~1 KiB, compresses well
	random := make([]byte, 1024)
	rand.Read(random)
	for _, nb := range []struct {
		name    string
		codec   kgo.CompressionCodec
		value   []byte
		segment string
	}{
		{name: "idle"},
		{name: "zstd", codec: kgo.ZstdCompression(), value: text},
		{name: "plain", codec: kgo.NoCompression(), value: random},
		{name: "roll", codec: kgo.NoCompression(), value: random, segment: "1048576"},
	} {
		b.Run(nb.name, func(b *testing.B) {
			props := map[string]string{"listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": b.TempDir(),
				"admin.listener": "", "num.network.threads": "1"}
			if nb.segment != "" {
				props["log.segment.bytes"] = nb.segment
			}
			logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			cfg, err := loadConfig(nil, props, logger)
			if err != nil {
				b.Fatal(err)
			}
			br, err := startNode(cfg, logger)
			if err != nil {
				b.Fatal(err)
			}
			defer br.Stop(context.Background())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addr := br.Addr().String()
			small := benchProducer(b, ctx, addr)
			defer small.Close()
			if nb.value != nil {
				heavy, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(benchTopic), kgo.RequiredAcks(kgo.LeaderAck()),
					kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(nb.codec), kgo.ProducerBatchMaxBytes(16<<20),
					kgo.ProducerLinger(5*time.Millisecond), kgo.RecordPartitioner(kgo.ManualPartitioner()))
				if err != nil {
					b.Fatal(err)
				}
				defer heavy.Close()
				done := make(chan struct{})
				defer func() { cancel(); <-done }()
				go func() {
					defer close(done)
					for ctx.Err() == nil {
						for range 1024 { // 1 MiB a batch
							heavy.Produce(ctx, &kgo.Record{Partition: 1, Value: nb.value}, nil)
						}
						heavy.Flush(ctx)
					}
				}()
			}
			value := make([]byte, 100)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if err := small.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: value}).FirstErr(); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-us")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-us")
			b.ReportMetric(float64(lat[len(lat)*999/1000].Microseconds()), "p99.9-us")
		})
	}
}
