package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest"
)

// One topic of 1000 partitions: each gets records and a consumer of the
// topic reads every one of them back, in order per partition.
func TestThousandPartitions(t *testing.T) {
	dir := t.TempDir()
	// Small preallocated indexes keep 2000 index files cheap.
	b := startTestBroker(t, dir, "log.index.size.max.bytes", "65536")
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const partitions, perPartition = 1000, 3
	cl := newClient(t, b, kgo.DefaultProduceTopic("wide"), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	// Creating 1000 partitions opens 1000 logs before the answer: give it
	// more than kadm's default 15 s on a loaded machine.
	adm := kadm.NewClient(cl)
	adm.SetTimeoutMillis(90000)
	if res, err := adm.CreateTopic(ctx, partitions, 1, nil, "wide"); err != nil || res.Err != nil {
		t.Fatalf("create topic wide: %v %v", err, res.Err)
	}

	var rs []*kgo.Record
	for i := 0; i < perPartition; i++ {
		for p := int32(0); p < partitions; p++ {
			rs = append(rs, &kgo.Record{Partition: p, Value: fmt.Appendf(nil, "%d/%d", p, i)})
		}
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "wide")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(ends["wide"]); n != partitions {
		t.Fatalf("end offsets listed for %d partitions", n)
	}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Err != nil || o.Offset != perPartition {
			t.Errorf("partition %d: end offset %d, %v", o.Partition, o.Offset, o.Err)
		}
	})

	cons := newClient(t, b, kgo.ConsumeTopics("wide"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := make([]int64, partitions)
	for _, r := range kzerotest.ConsumeN(t, ctx, cons, partitions*perPartition) {
		if want := fmt.Sprintf("%d/%d", r.Partition, next[r.Partition]); string(r.Value) != want || r.Offset != next[r.Partition] {
			t.Fatalf("partition %d offset %d holds %q, want offset %d %q", r.Partition, r.Offset, r.Value, next[r.Partition], want)
		}
		next[r.Partition]++
	}
}

// 500 connections open at once, each producing a record and fetching it
// back; every connection is served and the broker stays usable.
func TestManyConnections(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	const conns, partitions = 500, 8
	cl := newClient(t, b)
	kzerotest.CreateTopic(t, ctx, cl, "crowd", partitions, nil)
	addr := b.Addr().String()
	opened := b.ServerStats().ConnectionsOpened

	// Open every connection first, then use them all at once.
	raws := make([]*kzerotest.Conn, conns)
	for i := range raws {
		raws[i] = kzerotest.Dial(t, addr)
	}
	errs := make(chan error, conns)
	var wg sync.WaitGroup
	for i, conn := range raws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- produceAndFetch(conn, int32(i%partitions), fmt.Sprintf("conn %d", i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := b.ServerStats()
	if n := s.ConnectionsOpened - opened; n < conns {
		t.Fatalf("broker saw %d new connections, want %d", n, conns)
	}
	if open := s.ConnectionsOpened - s.ConnectionsClosed; open < conns {
		t.Fatalf("%d connections open, want at least %d", open, conns)
	}

	ends, err := kadm.NewClient(cl).ListEndOffsets(ctx, "crowd")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	ends.Each(func(o kadm.ListedOffset) { total += o.Offset })
	if total != conns {
		t.Fatalf("%d records stored, want %d", total, conns)
	}
}

// produceAndFetch produces value to partition over conn and fetches from
// the offset it was given, expecting value there.
func produceAndFetch(conn *kzerotest.Conn, partition int32, value string) error {
	p, err := conn.Produce("crowd", partition, kzerotest.EncodeBatch(time.Now().UnixMilli(), []byte(value)))
	if err != nil {
		return fmt.Errorf("%s: produce: %w", value, err)
	}
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return fmt.Errorf("%s: produce: %w", value, err)
	}
	fp, recs, err := conn.Fetch("crowd", partition, p.BaseOffset, 0)
	if err != nil {
		return fmt.Errorf("%s: fetch: %w", value, err)
	}
	if err := kerr.ErrorForCode(fp.ErrorCode); err != nil {
		return fmt.Errorf("%s: fetch: %w", value, err)
	}
	if len(recs) == 0 || string(recs[0].Value) != value || recs[0].Offset != p.BaseOffset {
		return fmt.Errorf("%s: fetch at %d returned %d records", value, p.BaseOffset, len(recs))
	}
	return nil
}
