package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/kzerotest"
	"kzero/node/nodetest"
	"kzero/record"
)

// A batch with keyless records sent to a compacted topic is rejected with
// INVALID_RECORD and, from Produce v8, the index of each keyless record.
func TestProduceRecordErrors(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	compact := "compact"
	kzerotest.CreateTopic(t, ctx, nodetest.Client(t, b), "keyed", 1, map[string]*string{"cleanup.policy": &compact})

	var bld record.Builder
	bld.Reset(record.BatchHeader{PartitionLeaderEpoch: -1, BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1,
		ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
	bld.Add(&record.Record{OffsetDelta: 0, Key: []byte("k"), Value: []byte("keyed")})
	bld.Add(&record.Record{OffsetDelta: 1, Value: []byte("no key")})
	bld.Add(&record.Record{OffsetDelta: 2, Value: []byte("no key either")})
	batch, err := bld.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	conn := kzerotest.Dial(t, b.Addr().String())
	p, err := conn.Produce("keyed", 0, batch)
	if err != nil {
		t.Fatal(err)
	}
	if p.ErrorCode != kerr.InvalidRecord.Code || len(p.ErrorRecords) != 2 ||
		p.ErrorRecords[0].RelativeOffset != 1 || p.ErrorRecords[1].RelativeOffset != 2 || p.ErrorRecords[0].ErrorMessage == nil {
		t.Fatalf("response: error %v, records %+v", kerr.ErrorForCode(p.ErrorCode), p.ErrorRecords)
	}
}
