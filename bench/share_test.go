package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Each record counts once by partition and offset, whichever consumer
// receives it and however often; the rest are redeliveries.
func TestShareReceipt(t *testing.T) {
	s := newShareReceipt(2)
	recs := func(offsets ...int64) []*kgo.Record {
		out := make([]*kgo.Record, len(offsets))
		for i, o := range offsets {
			out[i] = &kgo.Record{Offset: o}
		}
		return out
	}
	var firsts []int64
	first := func(r *kgo.Record) { firsts = append(firsts, r.Offset) }
	for _, c := range []struct {
		p       int32
		offsets []int64
	}{{0, []int64{0, 1, 2}}, {1, []int64{0, 200}}, {0, []int64{1, 2, 3}}, {1, []int64{200}}} {
		if err := s.receive(c.p, recs(c.offsets...), first); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.stats(); got.Redelivered != 3 || got.AckErrors != 0 {
		t.Errorf("stats %+v, want 3 redelivered", got)
	}
	if len(firsts) != 6 {
		t.Errorf("first deliveries %v, want 6", firsts)
	}
	// A partition or offset the topic cannot have is the broker's error.
	for _, bad := range []struct {
		p int32
		o int64
	}{{2, 0}, {-1, 0}, {0, -1}, {0, maxShareOffset}} {
		if err := s.receive(bad.p, recs(bad.o), first); err == nil {
			t.Errorf("partition %d offset %d taken", bad.p, bad.o)
		}
	}
	// Partition 0 holds offsets 0..3, all received; partition 1 holds
	// 0..200 and lacks 1..199.
	ends := kadm.ListedOffsets{"t": {0: {Topic: "t", Partition: 0, Offset: 4}, 1: {Topic: "t", Partition: 1, Offset: 201}}}
	if err := s.verify(ends, "t"); err == nil || strings.Contains(err.Error(), "partition 0") || !strings.Contains(err.Error(), "partition 1: received 2 of offsets 0..200") {
		t.Errorf("verify = %v, want partition 1's gap", err)
	}
	for o := int64(1); o < 200; o++ {
		s.receive(1, recs(o), first)
	}
	if err := s.verify(ends, "t"); err != nil {
		t.Errorf("verify of a complete receipt: %v", err)
	}
	// An offset past the end is not a record of the topic.
	ends["t"][0] = kadm.ListedOffset{Topic: "t", Partition: 0, Offset: 3}
	if err := s.verify(ends, "t"); err == nil || !strings.Contains(err.Error(), "1 past them") {
		t.Errorf("verify = %v, want an offset past the end", err)
	}
	delete(ends["t"], 1)
	if err := s.verify(ends, "t"); err == nil || !strings.Contains(err.Error(), "partition 1: no end offset") {
		t.Errorf("verify = %v, want partition 1 missing", err)
	}
	s.acked(nil, kgo.ShareAckResults{{Topic: "t", Partition: 1}, {Topic: "t", Partition: 0, Err: context.DeadlineExceeded}})
	if got := s.stats(); got.AckErrors != 1 || !strings.Contains(got.FirstAckError, "t[0]") {
		t.Errorf("ack errors %+v", got)
	}
}

// share-mixed-4 against kzero: records flow while the share consumers
// join, so partitions move between members as each joins, and every
// member forgets a partition and acknowledges what it read of it in one
// ShareFetch. Every offset arrives once (Run fails the run otherwise),
// with no acknowledgement refused and nothing redelivered: a broker that
// gave back a forgotten partition's records before taking their
// acknowledgements refuses them (INVALID_RECORD_STATE) and hands them to
// another member. It builds kzero (go build), so it skips under -short.
func TestShareMixedOnKzero(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kzero")
	}
	ws, err := ResolveWorkloads([]string{"share-mixed-4"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	results, err := Run(ctx, ws, Options{Targets: []Target{{Label: "kzero", Start: "kzero"}}, Scale: 0.3})
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("%d results", len(results))
	}
	r := results[0]
	if r.Error != "" || r.Share == nil || r.Produce == nil || r.Consume == nil || r.Consume.Records < r.Produce.Records || r.Produce.Records == 0 {
		t.Fatalf("result %+v", r)
	}
	t.Logf("%d records produced, %d consumed; share stats %+v", r.Produce.Records, r.Consume.Records, *r.Share)
	if r.Share.AckErrors != 0 || r.Share.Redelivered != 0 {
		t.Fatalf("share stats %+v: acknowledgements refused or records redelivered", r.Share)
	}
}
