package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// BenchmarkConsumeTLS consumes the same workload (1 KiB records, 8
// partitions, produced beforehand over PLAINTEXT) from one broker over
// PLAINTEXT, over SSL with kernel TLS (user-space TLS if the kernel
// refuses: the tls_path metric says which ran), and over SSL forced to
// user-space TLS, side by side:
//
//	go test -run='^$' -bench=ConsumeTLS -benchtime=200000x -count=3 ./cmd/kzero/
//
// %sendfile is the share of fetched record bytes sent with sendfile (into
// the socket for PLAINTEXT and kTLS, into the relay's socket pair for
// user-space TLS); relay-B/op the bytes user-space TLS encrypted; cpu-s/GiB
// the process's CPU time (broker and client: they share the process) per
// GiB consumed.
func BenchmarkConsumeTLS(b *testing.B) {
	c := newTestCerts(b)
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	over := map[string]string{"log.dirs": b.TempDir(), "admin.listener": ""}
	props := sslProps(c)
	for i := 0; i+1 < len(props); i += 2 {
		over[props[i]] = props[i+1]
	}
	cfg, err := loadConfig(nil, over, logger)
	if err != nil {
		b.Fatal(err)
	}
	br, err := startNode(cfg, logger)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = br.Stop(ctx)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	run := 0
	for _, l := range []struct{ name, listener string }{{"plaintext", "PLAINTEXT"}, {"ssl-ktls", "SSL"}, {"ssl-user", "SSLUSER"}} {
		b.Run(l.name, func(b *testing.B) {
			run++
			topic := fmt.Sprintf("bench-%d", run)
			prod := benchProducerTopic(b, ctx, br.Addr().String(), topic)
			produceN(b, ctx, prod, b.N)
			prod.Close()
			opts := []kgo.Opt{kgo.SeedBrokers(br.ListenerAddr(l.listener).String()), kgo.ConsumeTopics(topic),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
			if l.listener != "PLAINTEXT" {
				opts = append(opts, kgo.DialTLSConfig(c.client("")))
			}
			cl, err := kgo.NewClient(opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer cl.Close()
			before, cpu0 := br.ServerStats(), cpuTime()
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
			after, cpu := br.ServerStats(), cpuTime()-cpu0
			zero, copied := after.ZeroCopyBytes-before.ZeroCopyBytes, after.CopiedBytes-before.CopiedBytes
			b.ReportMetric(100*float64(zero)/float64(max(zero+copied, 1)), "%sendfile")
			b.ReportMetric(float64(after.UserTLSBytes-before.UserTLSBytes)/float64(b.N), "relay-B/op")
			b.ReportMetric(cpu.Seconds()/(float64(b.N)*benchRecordBytes/(1<<30)), "cpu-s/GiB")
			if l.listener == "SSL" {
				b.ReportMetric(float64(after.KernelTLSConns-before.KernelTLSConns), "ktls-conns")
			}
		})
	}
}

// benchProducerTopic is benchProducer for a topic of its own.
func benchProducerTopic(b *testing.B, ctx context.Context, addr, topic string) *kgo.Client {
	p, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(),
		kgo.ProducerBatchCompression(kgo.NoCompression()))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := kadm.NewClient(p).CreateTopic(ctx, benchPartitions, 1, nil, topic); err != nil {
		p.Close()
		b.Fatal(err)
	}
	return p
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
