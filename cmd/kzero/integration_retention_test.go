package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest"
	"kzero/kzerotest/await"
	"kzero/node/nodetest"
)

// Retention deletes whole old segments of a topic with small segment.bytes
// and retention.bytes; a consumer from the earliest offset then starts at
// the new log start (the base of the oldest segment kept) and receives
// every later record in order.
func TestConsumeAfterRetentionDeletedSegments(t *testing.T) {
	dir := t.TempDir()
	b := startTestBroker(t, dir, "log.retention.check.interval.ms", "100")
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	cl := newClient(t, b, kgo.DefaultProduceTopic("rolling"), kgo.ProducerBatchCompression(kgo.NoCompression()))
	segment, retention := "1048576", "2097152" // segment.bytes's minimum is 1 MiB
	kzerotest.CreateTopic(t, ctx, cl, "rolling", 1, map[string]*string{"segment.bytes": &segment, "retention.bytes": &retention})

	const records, size = 1500, 4 << 10 // about 6 MiB: six segments
	pad := strings.Repeat("r", size-8)
	var rs []*kgo.Record
	for i := 0; i < records; i++ {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%08d%s", i, pad)})
	}
	if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
		t.Fatal(err)
	}

	// Retention may already run while the records arrive and may delete
	// more until it has caught up: the consumer must start at the log
	// start as it stands between the two reads around it.
	adm := kadm.NewClient(cl)
	logStart := func() int64 {
		starts, err := adm.ListStartOffsets(ctx, "rolling")
		if err != nil {
			t.Fatal(err)
		}
		o, _ := starts.Lookup("rolling", 0)
		if o.Err != nil {
			t.Fatal(o.Err)
		}
		return o.Offset
	}
	// Wait until retention has caught up: the log start moved and the
	// oldest segment is one retention keeps (the log without it is below
	// retention.bytes), so no later check deletes more.
	l := nodetest.PartitionLog(t, b, "rolling", 0)
	await.True(t, 60*time.Second, func() bool {
		segs := l.Segments()
		return l.LogStartOffset() > 0 && l.Size()-segs[0].Size() < 2097152
	}, "retention to delete every segment beyond retention.bytes")
	before := logStart()
	if before == 0 {
		t.Fatal("the log start did not move")
	}

	cons := newClient(t, b, kgo.ConsumeTopics("rolling"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := kzerotest.ConsumeThrough(t, ctx, cons, records-1)
	first := got[0].Offset
	after := logStart()
	if first < before || first > after {
		t.Fatalf("consumer from the earliest offset began at %d; the log start was %d before and %d after", first, before, after)
	}
	// The log start is the base of the oldest segment kept (which a later
	// retention pass may have renamed for deletion meanwhile).
	base := filepath.Join(dir, "rolling-0", fmt.Sprintf("%020d.log", after))
	if _, err := os.Stat(base); err != nil {
		if _, err2 := os.Stat(base + ".deleted"); err2 != nil {
			t.Fatalf("the log start %d is not a segment base: %v", after, err)
		}
	}
	segs, _ := filepath.Glob(filepath.Join(dir, "rolling-0", "*.log"))
	t.Logf("log start %d, then %d after retention, %d segments left", before, after, len(segs))
	for i, r := range got {
		want := first + int64(i)
		if r.Offset != want || string(r.Value[:8]) != fmt.Sprintf("%08d", want) || len(r.Value) != size {
			t.Fatalf("record %d after the log start: offset %d value %q..., want offset %d", i, r.Offset, r.Value[:8], want)
		}
	}

	// A consumer whose position lay in a deleted segment is told
	// OFFSET_OUT_OF_RANGE and resets to the new log start.
	conn := kzerotest.Dial(t, b.Addr().String())
	if p, _ := kzerotest.FetchOnce(t, conn, "rolling", 0, 10, 0); p.ErrorCode != kerr.OffsetOutOfRange.Code {
		t.Fatalf("fetch in a deleted segment: %v", kerr.ErrorForCode(p.ErrorCode))
	}
	before = logStart()
	behind := newClient(t, b, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"rolling": {0: kgo.NewOffset().At(10)}}),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	first = kzerotest.ConsumeThrough(t, ctx, behind, records-1)[0].Offset
	if after = logStart(); first < before || first > after {
		t.Fatalf("a consumer at a deleted offset resumed at %d; the log start was %d before and %d after", first, before, after)
	}
}
