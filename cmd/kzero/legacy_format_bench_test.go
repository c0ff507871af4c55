package main

// The cost of serving an old consumer: the same records consumed by a
// current client (Fetch v17, magic 2, sendfile) and by the same client
// pinned to Kafka 0.10.1 (Fetch v3, message format v1: every batch read
// into memory, decompressed, rewritten as one message per record or one
// recompressed wrapper), uncompressed and lz4.
//
//	go test -run='^$' -bench=BenchmarkConsumeOldFetch -benchtime=50000x -count=3 ./cmd/kzero/

import (
	"context"
	"crypto/rand"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kversion"

	"kzero/net/api"
)

func BenchmarkConsumeOldFetch(b *testing.B) {
	for _, codec := range []struct {
		name string
		c    kgo.CompressionCodec
	}{{"none", kgo.NoCompression()}, {"lz4", kgo.Lz4Compression()}} {
		for _, fetch := range []struct {
			name string
			v    *kversion.Versions
		}{{"current", nil}, {"v3", kversion.V0_10_1()}} {
			b.Run("codec="+codec.name+"/fetch="+fetch.name, func(b *testing.B) {
				addr, _, stop := benchBrokers[0].start(b)
				defer stop()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
				defer cancel()
				prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(benchTopic),
					kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite(), kgo.ProducerBatchCompression(codec.c))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := kadm.NewClient(prod).CreateTopic(ctx, benchPartitions, 1, nil, benchTopic); err != nil {
					b.Fatal(err)
				}
				// 1 KiB values that compress about 4:1.
				value := make([]byte, benchRecordBytes)
				rand.Read(value[:benchRecordBytes/4])
				for i := benchRecordBytes / 4; i < benchRecordBytes; i++ {
					value[i] = value[i%(benchRecordBytes/4)]
				}
				for i := 0; i < b.N; i++ {
					prod.Produce(ctx, &kgo.Record{Value: value}, func(_ *kgo.Record, err error) {
						if err != nil {
							b.Error(err)
						}
					})
				}
				if err := prod.Flush(ctx); err != nil {
					b.Fatal(err)
				}
				prod.Close()

				opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ConsumeTopics(benchTopic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart())}
				if fetch.v != nil {
					opts = append(opts, kgo.MaxVersions(fetch.v))
				}
				cl, err := kgo.NewClient(opts...)
				if err != nil {
					b.Fatal(err)
				}
				defer cl.Close()
				before := api.Conversions()
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
				converted := api.Conversions().FetchBatches - before.FetchBatches
				if (fetch.v != nil) != (converted > 0) {
					b.Fatalf("%d batches down-converted", converted)
				}
			})
		}
	}
}
