package main

// Transactional throughput beside idempotent throughput, in one run, on
// kzero and on kfake: 1 KiB records, 8 partitions, acks=all, 100 records
// per transaction (each: produce to every partition, flush, commit; with
// transactions v2 that is the implicit partition adds, EndTxn and the
// markers). The first transaction, which sets up the producer id, the
// coordinator and its internal topic, is not timed.
//
//	go test -run='^$' -bench=BenchmarkTransactions -benchtime=20000x -count=3 ./cmd/kzero/

import (
	"context"
	"crypto/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

const recordsPerTxn = 100

func BenchmarkTransactions(b *testing.B) {
	for _, br := range benchBrokers {
		for _, mode := range []string{"idempotent", "txn-100"} {
			b.Run(br.name+"/"+mode, func(b *testing.B) {
				benchTransactions(b, br, mode != "idempotent")
			})
		}
	}
}

func benchTransactions(b *testing.B, br benchBroker, transactional bool) {
	addr, _, stop := br.start(b)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.DefaultProduceTopic(benchTopic),
		kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerLinger(0)}
	if transactional {
		opts = append(opts, kgo.TransactionalID("bench-"+br.name))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, benchPartitions, 1, nil, benchTopic); err != nil {
		b.Fatal(err)
	}
	value := make([]byte, benchRecordBytes)
	rand.Read(value)
	var failed atomic.Pointer[error]
	done := func(_ *kgo.Record, err error) {
		if err != nil {
			failed.CompareAndSwap(nil, &err)
		}
	}
	round := func(n int) error {
		if transactional {
			if err := cl.BeginTransaction(); err != nil {
				return err
			}
		}
		for range n {
			cl.Produce(ctx, &kgo.Record{Value: value}, done)
		}
		err := cl.Flush(ctx)
		if err == nil && transactional {
			err = cl.EndTransaction(ctx, kgo.TryCommit)
		}
		return err
	}
	if err := round(1); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchRecordBytes)
	b.ResetTimer()
	for sent := 0; sent < b.N; sent += recordsPerTxn {
		if err := round(min(recordsPerTxn, b.N-sent)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if p := failed.Load(); p != nil {
		b.Fatal(*p)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
}
