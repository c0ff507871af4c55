package main

// Rebalance latency of consumer groups on an in-process kzero: 9 members
// consume a 100-partition topic while records flow; a 10th joins, and the
// benchmark measures the time from its join until every member (it
// included) has consumed a record produced after the join, and every
// partition has been consumed again. Then it leaves, and the next
// iteration starts once the 9 consume every partition again. Three
// protocols, with kgo as the client:
//
//   - classic-eager: the classic protocol with kgo's eager range balancer
//     (every member stops and rejoins);
//   - classic-cooperative: the classic protocol with cooperative-sticky
//     (members keep consuming what they keep; two rebalances);
//   - kip848: the consumer protocol, the broker's "uniform" assignor.
//
// Members heartbeat every 500ms in all three (kgo's HeartbeatInterval for
// the classic protocol, group.consumer.heartbeat.interval.ms for KIP-848),
// so the figures compare the protocols' round trips, not their defaults
// (Kafka's are 3s and 5s). ms/rebalance is the mean of the iterations:
//
//	go test -run='^$' -bench=RebalanceLatency -benchtime=5x ./cmd/kzero/

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest/await"
)

const (
	rebalanceMembers    = 10
	rebalancePartitions = 100
	rebalanceHeartbeat  = 500 * time.Millisecond
)

func BenchmarkRebalanceLatency(b *testing.B) {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	cfg, err := loadConfig(nil, map[string]string{
		"listeners":                                "PLAINTEXT://127.0.0.1:0",
		"log.dirs":                                 b.TempDir(),
		"admin.listener":                           "",
		"group.initial.rebalance.delay.ms":         "0",
		"offsets.topic.num.partitions":             "5",
		"group.consumer.heartbeat.interval.ms":     fmt.Sprint(rebalanceHeartbeat.Milliseconds()),
		"group.consumer.min.heartbeat.interval.ms": "100",
	}, logger)
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
	for _, p := range []struct {
		name string
		opts []kgo.Opt
	}{
		{"classic-eager", []kgo.Opt{kgo.Balancers(kgo.RangeBalancer())}},
		{"classic-cooperative", []kgo.Opt{kgo.Balancers(kgo.CooperativeStickyBalancer())}},
		{"kip848", []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.StickyBalancer())}},
	} {
		runs := 0
		b.Run(p.name, func(b *testing.B) {
			runs++ // the testing package runs this more than once
			benchRebalance(b, br.Addr().String(), fmt.Sprintf("rebalance-%s-%d", p.name, runs), p.opts)
		})
	}
}

// rebalanceMember is a consumer that notes the newest production time
// (the record timestamp, ms) of what it consumed, and of each partition in
// partitions (shared by the members).
type rebalanceMember struct {
	cl     *kgo.Client
	newest atomic.Int64
	done   chan struct{}
}

// partitionNewest is the newest production time consumed of each partition.
type partitionNewest [rebalancePartitions]atomic.Int64

func startRebalanceMember(b *testing.B, addr, group, topic string, opts []kgo.Opt, parts *partitionNewest) *rebalanceMember {
	cl, err := kgo.NewClient(append([]kgo.Opt{
		kgo.SeedBrokers(addr), kgo.ConsumerGroup(group), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtEnd()),
		kgo.HeartbeatInterval(rebalanceHeartbeat), kgo.SessionTimeout(30 * time.Second),
		kgo.FetchMaxWait(100 * time.Millisecond),
	}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	m := &rebalanceMember{cl: cl, done: make(chan struct{})}
	go func() {
		defer close(m.done)
		for {
			fs := cl.PollFetches(context.Background())
			if fs.IsClientClosed() {
				return
			}
			fs.EachRecord(func(r *kgo.Record) {
				ts := r.Timestamp.UnixMilli()
				if ts > m.newest.Load() {
					m.newest.Store(ts)
				}
				if p := &parts[r.Partition]; ts > p.Load() {
					p.Store(ts)
				}
			})
		}
	}()
	return m
}

func (m *rebalanceMember) stop() {
	m.cl.Close() // leaves the group
	<-m.done
}

// waitConsuming waits until every member consumed a record produced at or
// after since (ms), and every partition was consumed since.
func waitConsuming(b *testing.B, ms []*rebalanceMember, parts *partitionNewest, since int64) {
	await.True(b, 2*time.Minute, func() bool {
		for _, m := range ms {
			if m.newest.Load() < since {
				return false
			}
		}
		for i := range parts {
			if parts[i].Load() < since {
				return false
			}
		}
		return true
	}, fmt.Sprintf("every member and partition consuming records from %d", since))
}

func benchRebalance(b *testing.B, addr, topic string, opts []kgo.Opt) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		b.Fatal(err)
	}
	defer prod.Close()
	if _, err := kadm.NewClient(prod).CreateTopic(ctx, rebalancePartitions, 1, nil, topic); err != nil {
		b.Fatal(err)
	}
	// One record per partition every 20ms: 5,000 records/s.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for ctx.Err() == nil {
			<-tick.C
			now := time.Now()
			for p := range int32(rebalancePartitions) {
				prod.Produce(ctx, &kgo.Record{Topic: topic, Partition: p, Timestamp: now, Value: []byte("v")}, nil)
			}
		}
	}()
	defer wg.Wait()
	defer cancel()

	group := topic + "-group"
	parts := new(partitionNewest)
	var members []*rebalanceMember
	defer func() {
		for _, m := range members {
			m.stop()
		}
	}()
	for range rebalanceMembers - 1 {
		members = append(members, startRebalanceMember(b, addr, group, topic, opts, parts))
		waitConsuming(b, members, parts, time.Now().UnixMilli())
	}
	var total time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		joined := startRebalanceMember(b, addr, group, topic, opts, parts)
		members = append(members, joined)
		waitConsuming(b, members, parts, start.UnixMilli())
		total += time.Since(start)
		b.StopTimer()
		members = members[:len(members)-1]
		joined.stop()
		waitConsuming(b, members, parts, time.Now().UnixMilli())
		b.StartTimer()
	}
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "ms/rebalance")
}
