package main

// A node killed in its first seconds must come back as the same cluster
// with every record it acknowledged, or refuse to start with a clear
// message: never a new cluster, never a deleted partition (issue 19).

import (
	"kzero/kzerotest"

	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// acked is what a killed node answered before it died.
type acked struct {
	mu        sync.Mutex
	clusterID string
	created   bool             // CreateTopics answered success
	records   map[int64]string // offset in partition 0 -> value
}

// crashTopic is created and written by each iteration.
const crashTopic = "crash"

// workload creates the topic and produces to it with acks=all and
// idempotence, recording every answer, until ctx ends.
func (a *acked) workload(ctx context.Context, addr string) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.DefaultProduceTopic(crashTopic), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0), kgo.RetryTimeout(2*time.Second), kgo.RecordDeliveryTimeout(3*time.Second))
	if err != nil {
		return
	}
	// Close fails what is still buffered; the node is dead by then, and an
	// idempotent producer may retry its producer id for long.
	defer func() { go cl.Close() }()
	adm := kadm.NewClient(cl)
	if m, err := adm.BrokerMetadata(ctx); err == nil {
		a.mu.Lock()
		a.clusterID = m.Cluster
		a.mu.Unlock()
	}
	res, err := adm.CreateTopic(ctx, 2, 1, nil, crashTopic)
	if err != nil || res.Err != nil {
		return
	}
	a.mu.Lock()
	a.created = true
	a.mu.Unlock()
	for i := 0; ctx.Err() == nil; i++ {
		v := strconv.Itoa(i)
		done := make(chan struct{})
		cl.Produce(ctx, &kgo.Record{Value: []byte(v)}, func(r *kgo.Record, err error) {
			if err == nil {
				a.mu.Lock()
				a.records[r.Offset] = v
				a.mu.Unlock()
			}
			close(done)
		})
		select {
		case <-done:
		case <-ctx.Done():
			return
		}
	}
}

func TestCrashInFirstSeconds(t *testing.T) {
	iterations := 200
	if s := os.Getenv("KZERO_CRASH_ITERATIONS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatal(err)
		}
		iterations = n
	}
	if testing.Short() || raceEnabled {
		iterations = 20
	}
	kzeroBinary(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	const parallel = 2
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < parallel; w++ {
		wg.Go(func() {
			for i := range next {
				crashIteration(t, rand.New(rand.NewPCG(seed, uint64(i))), i)
			}
		})
	}
	deadline := time.Now().Add(8 * time.Minute)
	for i := 0; i < iterations && !t.Failed() && time.Now().Before(deadline); i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// crashIteration starts a node on a fresh dir, kills it at a random moment
// of its first second and a half, sometimes starts and kills it again before
// it is ready, then restarts it and checks what it acknowledged.
func crashIteration(t *testing.T, rnd *rand.Rand, i int) {
	dir := t.TempDir()
	args := binaryArgs(dir, "num.partitions=2")
	a := &acked{records: map[int64]string{}}

	p := launch(t, args...)
	killAt := time.Duration(rnd.Int64N(int64(1500 * time.Millisecond)))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case line := <-p.First():
			if addr, ok := kzerotest.ReadyAddr(line); ok {
				a.workload(ctx, addr)
			}
		case <-ctx.Done():
		}
	})
	time.Sleep(killAt) // pacing: the kill lands at a random point of the start
	p.Kill()
	cancel()
	wg.Wait()
	// What was acknowledged before the kill; a promise can still run after
	// workload returned, so the map is copied under the lock.
	a.mu.Lock()
	clusterID, created, records := a.clusterID, a.created, maps.Clone(a.records)
	a.mu.Unlock()

	if rnd.IntN(3) == 0 { // a second start killed early, maybe before it is ready
		p := launch(t, args...)
		time.Sleep(time.Duration(rnd.Int64N(int64(300 * time.Millisecond)))) // pacing: a random kill point
		p.Kill()
	}
	if rnd.IntN(3) == 0 { // restarts that fail on a port in use, as supervisors retry
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		for range 1 + rnd.IntN(3) {
			p := launch(t, append(slices.Clone(args), "--override", "listeners=PLAINTEXT://"+ln.Addr().String())...)
			<-p.Done()
		}
		ln.Close()
	}

	p = launch(t, args...)
	defer p.Kill()
	// Refusing to start is allowed, with a reason; coming back empty is not.
	if err := p.WaitReady(60 * time.Second); err != nil {
		t.Errorf("iteration %d (killed at %v): the restart did not come up: %v", i, killAt, err)
		return
	}
	addr := p.Addr
	rctx, rcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer rcancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	m, err := adm.Metadata(rctx, crashTopic)
	if err != nil {
		t.Errorf("iteration %d: metadata after restart: %v", i, err)
		return
	}
	what := fmt.Sprintf("iteration %d (killed at %v, created %v, %d acked)", i, killAt, created, len(records))
	if clusterID != "" && m.Cluster != clusterID {
		t.Errorf("%s: came back as cluster %q, was %q\n%s", what, m.Cluster, clusterID, p.Stderr)
		return
	}
	if !created {
		return
	}
	td, ok := m.Topics[crashTopic]
	if !ok || td.Err != nil || len(td.Partitions) != 2 {
		t.Errorf("%s: topic after restart: %v, err %v\n%s", what, ok, td.Err, p.Stderr)
		return
	}
	for part := range 2 {
		if _, err := os.Stat(filepath.Join(dir, fmt.Sprintf("%s-%d", crashTopic, part))); err != nil {
			t.Errorf("%s: partition %d's folder: %v", what, part, err)
		}
	}
	if len(records) == 0 {
		return
	}
	ends, err := adm.ListEndOffsets(rctx, crashTopic)
	if err != nil {
		t.Errorf("%s: end offsets: %v", what, err)
		return
	}
	end, _ := ends.Lookup(crashTopic, 0)
	if end.Err != nil || end.Offset < int64(len(records)) {
		t.Errorf("%s: partition 0 ends at %d (%v), %d records were acknowledged\n%s", what, end.Offset, end.Err, len(records), p.Stderr)
		return
	}
	cons, err := kgo.NewClient(kgo.SeedBrokers(addr),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{crashTopic: {0: kgo.NewOffset().AtStart()}}))
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	got := map[int64]string{}
	for int64(len(got)) < end.Offset && rctx.Err() == nil {
		cons.PollFetches(rctx).EachRecord(func(r *kgo.Record) { got[r.Offset] = string(r.Value) })
	}
	for off, v := range records {
		if got[off] != v {
			t.Errorf("%s: offset %d holds %q, %q was acknowledged there", what, off, got[off], v)
		}
	}
}
