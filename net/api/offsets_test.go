package api_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node"
	"kzero/node/nodetest"
)

// ListOffsets by timestamp finds the first offset, in offset order, whose
// timestamp is at or after the one asked for, even when timestamps are not
// monotonic; -2 and -1 are the log start and the high watermark; -3 (v7+,
// KIP-734) is the exact record holding the largest timestamp, even in the
// middle of a batch.
func TestListOffsetsByTime(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b)
	kzerotest.CreateTopic(t, ctx, cl, "times", 1, nil)
	conn := kzerotest.Dial(t, b.Addr().String())

	const t0 = int64(1_600_000_000_000)
	// Offsets 0-3 in one batch, 4-6 in one batch with the largest
	// timestamp in its middle, 7-9 one batch each through kgo.
	tss := []int64{t0, t0 + 1000, t0 + 2000, t0 + 3000, t0 + 4000, t0 + 100_000, t0 + 5000, t0 + 6000, t0 + 7000, t0 + 8000}
	values := func(from, to int) [][]byte {
		var vs [][]byte
		for i := from; i < to; i++ {
			vs = append(vs, []byte(fmt.Sprint(i)))
		}
		return vs
	}
	for _, r := range [][2]int{{0, 4}, {4, 7}} {
		p := kzerotest.ProduceOnce(t, conn, "times", 0, kzerotest.EncodeTimedBatch(tss[r[0]:r[1]], values(r[0], r[1])))
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil || p.BaseOffset != int64(r[0]) {
			t.Fatalf("produce offsets %v: base %d, %v", r, p.BaseOffset, err)
		}
	}
	for i := 7; i < 10; i++ {
		r := &kgo.Record{Topic: "times", Value: []byte(fmt.Sprint(i)), Timestamp: time.UnixMilli(tss[i])}
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	adm := kadm.NewClient(cl)
	for _, c := range []struct {
		ts, offset, found int64
	}{
		{t0 - 1, 0, t0},
		{t0, 0, t0},
		{t0 + 1, 1, t0 + 1000},
		{t0 + 2500, 3, t0 + 3000},
		{t0 + 4500, 5, t0 + 100_000}, // offset 5 comes before offset 6 (t0+5000)
		{t0 + 50_000, 5, t0 + 100_000},
		{t0 + 100_000, 5, t0 + 100_000},
	} {
		l, err := adm.ListOffsetsAfterMilli(ctx, c.ts, "times")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := l.Lookup("times", 0)
		if o.Err != nil || o.Offset != c.offset || o.Timestamp != c.found {
			t.Errorf("after t0%+d: offset %d timestamp t0%+d (%v), want offset %d timestamp t0%+d",
				c.ts-t0, o.Offset, o.Timestamp-t0, o.Err, c.offset, c.found-t0)
		}
	}

	for _, version := range []int16{1, 4, 7, 10} {
		// Past every timestamp there is no offset: -1, -1.
		if off, ts, err := listOffsetRaw(t, conn, "times", version, t0+100_001); err != nil || off != -1 || ts != -1 {
			t.Errorf("v%d after the largest timestamp: offset %d timestamp %d (%v), want -1 -1", version, off, ts, err)
		}
		if off, _, err := listOffsetRaw(t, conn, "times", version, -2); err != nil || off != 0 {
			t.Errorf("v%d earliest: %d (%v)", version, off, err)
		}
		if off, _, err := listOffsetRaw(t, conn, "times", version, -1); err != nil || off != 10 {
			t.Errorf("v%d latest: %d (%v)", version, off, err)
		}
		if version < 7 {
			continue
		}
		if off, ts, err := listOffsetRaw(t, conn, "times", version, -3); err != nil || off != 5 || ts != t0+100_000 {
			t.Errorf("v%d max timestamp: offset %d timestamp t0%+d (%v), want offset 5 t0+100000", version, off, ts-t0, err)
		}
	}

	// kadm's view of the same.
	maxTs, err := adm.ListMaxTimestampOffsets(ctx, "times")
	if err != nil {
		t.Fatal(err)
	}
	if o, _ := maxTs.Lookup("times", 0); o.Offset != 5 || o.Timestamp != t0+100_000 {
		t.Errorf("kadm max timestamp offset %d timestamp %d", o.Offset, o.Timestamp)
	}
	// An empty partition has no max timestamp record.
	kzerotest.CreateTopic(t, ctx, cl, "empty", 1, nil)
	if off, ts, err := listOffsetRaw(t, conn, "empty", 10, -3); err != nil || off != -1 || ts != -1 {
		t.Errorf("empty partition max timestamp: offset %d timestamp %d (%v), want -1 -1", off, ts, err)
	}
}

// listOffsetRaw asks for partition 0's offset at ts with ListOffsets at
// version.
func listOffsetRaw(t *testing.T, conn *kzerotest.Conn, topic string, version int16, ts int64) (offset, timestamp int64, err error) {
	t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(version)
	req.ReplicaID = -1
	rt := kmsg.NewListOffsetsRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition = 0
	rp.Timestamp = ts
	rp.CurrentLeaderEpoch = -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := conn.Request(req)
	if err != nil {
		t.Fatal(err)
	}
	r := resp.(*kmsg.ListOffsetsResponse)
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		t.Fatalf("ListOffsets response has %d topics", len(r.Topics))
	}
	p := r.Topics[0].Partitions[0]
	return p.Offset, p.Timestamp, kerr.ErrorForCode(p.ErrorCode)
}

// DeleteRecords raises the log start offset, mid-batch if asked: a consumer
// from the start then begins exactly there, a fetch below it is
// OFFSET_OUT_OF_RANGE, an offset past the high watermark is refused, and
// the new start survives a restart.
func TestDeleteRecords(t *testing.T) {
	dir := t.TempDir()
	b := startBroker(t, dir)
	stopped := false
	defer func() {
		if !stopped {
			nodetest.Stop(t, b)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b)
	kzerotest.CreateTopic(t, ctx, cl, "trim", 1, nil)
	// Ten batches of ten records; the cut at 35 falls inside a batch.
	const part, end, cut = int32(0), int64(100), int64(35)
	conn := kzerotest.Dial(t, b.Addr().String())
	for batch := 0; batch < 10; batch++ {
		var vs [][]byte
		for i := 0; i < 10; i++ {
			vs = append(vs, []byte(fmt.Sprint(batch*10+i)))
		}
		if p := kzerotest.ProduceOnce(t, conn, "trim", part, kzerotest.EncodeBatch(time.Now().UnixMilli(), vs...)); p.ErrorCode != 0 {
			t.Fatal(kerr.ErrorForCode(p.ErrorCode))
		}
	}
	adm := kadm.NewClient(cl)

	offsets := kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "trim", Partition: part, At: cut})
	res, err := adm.DeleteRecords(ctx, offsets)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("trim", part); r.Err != nil || r.LowWatermark != cut {
		t.Fatalf("DeleteRecords to %d: low watermark %d, %v", cut, r.LowWatermark, r.Err)
	}

	// Past the high watermark: OFFSET_OUT_OF_RANGE.
	offsets = kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "trim", Partition: part, At: end + 1})
	res, err = adm.DeleteRecords(ctx, offsets)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("trim", part); !errors.Is(r.Err, kerr.OffsetOutOfRange) {
		t.Fatalf("DeleteRecords past the high watermark: %v, want OFFSET_OUT_OF_RANGE", r.Err)
	}

	checkStart := func(b *node.Node) {
		t.Helper()
		cl := nodetest.Client(t, b, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"trim": {part: kgo.NewOffset().AtStart()}}))
		got := kzerotest.ConsumeN(t, ctx, cl, int(end-cut))
		for i, r := range got {
			if r.Offset != cut+int64(i) {
				t.Fatalf("record %d from the start has offset %d, want %d", i, r.Offset, cut+int64(i))
			}
		}
		starts, err := kadm.NewClient(cl).ListStartOffsets(ctx, "trim")
		if err != nil {
			t.Fatal(err)
		}
		if s, _ := starts.Lookup("trim", part); s.Offset != cut {
			t.Fatalf("log start offset %d, want %d", s.Offset, cut)
		}

		conn := kzerotest.Dial(t, b.Addr().String())
		p, _ := kzerotest.FetchOnce(t, conn, "trim", part, cut-1, 0)
		if !errors.Is(kerr.ErrorForCode(p.ErrorCode), kerr.OffsetOutOfRange) {
			t.Fatalf("fetch at %d below the log start %d: %v, want OFFSET_OUT_OF_RANGE", cut-1, cut, kerr.ErrorForCode(p.ErrorCode))
		}
		p, recs := kzerotest.FetchOnce(t, conn, "trim", part, cut, 0)
		if p.ErrorCode != 0 || p.LogStartOffset != cut || len(recs) == 0 || recs[0].Offset != cut {
			t.Fatalf("fetch at the log start: %v, log start %d, %d records", kerr.ErrorForCode(p.ErrorCode), p.LogStartOffset, len(recs))
		}
	}
	checkStart(b)

	stopped = true
	nodetest.Stop(t, b)
	b = startBroker(t, dir)
	defer nodetest.Stop(t, b)
	checkStart(b)

	// -1 deletes up to the high watermark.
	offsets = kadm.Offsets{}
	offsets.Add(kadm.Offset{Topic: "trim", Partition: part, At: -1})
	res, err = kadm.NewClient(nodetest.Client(t, b)).DeleteRecords(ctx, offsets)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Lookup("trim", part); r.Err != nil || r.LowWatermark != end {
		t.Fatalf("DeleteRecords to -1: low watermark %d, %v, want %d", r.LowWatermark, r.Err, end)
	}
}
