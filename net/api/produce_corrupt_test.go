package api_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest"
	"kzero/node/nodetest"
	"kzero/record"
)

// withRecords is batch with its records section, count and codec bits
// replaced, and its length and CRC made right again: only the inside is
// wrong.
func withRecords(batch []byte, codec record.Codec, count int32, section []byte) []byte {
	h := record.Batch(batch).Header()
	h.Codec, h.LastOffsetDelta = codec, count-1
	out, err := record.AppendBatch(nil, &h, count, section)
	if err != nil {
		panic(err) // only a section above 2 GiB fails
	}
	return out
}

// Batches whose CRC is right but whose records are not, the kinds the
// reliability issue found stored, are refused over the wire with Kafka's
// error and stored nowhere; a consumer then reads the partition's good
// records and reaches its end instead of looping on a poisoned offset.
func TestProduceRefusesCorruptBatches(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	kzerotest.CreateTopic(t, ctx, nodetest.Client(t, b), "poison", 1, nil)
	conn := kzerotest.Dial(t, b.Addr().String())
	plog := nodetest.PartitionLog(t, b, "poison", 0)

	now := time.Now().UnixMilli()
	if p := kzerotest.ProduceOnce(t, conn, "poison", 0, kzerotest.EncodeBatch(now, []byte("first"))); p.ErrorCode != 0 || p.BaseOffset != 0 {
		t.Fatalf("good batch: offset %d, %v", p.BaseOffset, kerr.ErrorForCode(p.ErrorCode))
	}

	model := kzerotest.EncodeBatch(now, bytes.Repeat([]byte("a"), 200), bytes.Repeat([]byte("b"), 200), bytes.Repeat([]byte("c"), 200))
	three := model[record.BatchHeaderSize:]
	// A record after its length: attributes, timestamp delta, offset
	// delta, null key, null value, no headers.
	body := []byte{0, 0, 0, 1, 1, 0}
	varint := func(n int64) []byte { return binary.AppendVarint(nil, n) }
	rec := func(length int64, body []byte) []byte { return append(varint(length), body...) }
	cases := []struct {
		name  string
		batch []byte
		want  *kerr.Error
	}{
		{"garbage records", withRecords(model, record.CodecNone, 3, bytes.Repeat([]byte("garbage!"), 80)), kerr.InvalidRecord},
		{"first record length 0", withRecords(model, record.CodecNone, 1, rec(0, body)), kerr.InvalidRecord},
		{"first record length negative", withRecords(model, record.CodecNone, 1, rec(-4, body)), kerr.InvalidRecord},
		{"first record length 10 too long", withRecords(model, record.CodecNone, 1, rec(int64(len(body))+10, body)), kerr.InvalidRecord},
		{"record length varint overflows", withRecords(model, record.CodecNone, 1, append(bytes.Repeat([]byte{0xff}, 10), 0x7f)), kerr.InvalidRecord},
		{"value longer than the record", withRecords(model, record.CodecNone, 1, rec(8, []byte{0, 0, 0, 1, 40, 'x', 'y', 0})), kerr.InvalidRecord},
		{"huge header count", withRecords(model, record.CodecNone, 1, rec(10, append([]byte{0, 0, 0, 1, 1}, binary.AppendVarint(nil, 1<<40)...))), kerr.InvalidRecord},
		{"300 records declared, 3 held", withRecords(model, record.CodecNone, 300, three), kerr.InvalidRecord},
		{"1000 records declared, 3 held", withRecords(model, record.CodecNone, 1000, three), kerr.CorruptMessage},
	}
	for _, c := range []record.Codec{record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd} {
		full, err := record.Compress(c, nil, three)
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases,
			struct {
				name  string
				batch []byte
				want  *kerr.Error
			}{c.String() + " flagged, not compressed", withRecords(model, c, 3, three), kerr.InvalidRecord},
			struct {
				name  string
				batch []byte
				want  *kerr.Error
			}{c.String() + " truncated", withRecords(model, c, 3, full[:len(full)/2]), kerr.InvalidRecord},
		)
	}
	for _, c := range cases {
		p := kzerotest.ProduceOnce(t, conn, "poison", 0, c.batch)
		if p.ErrorCode != c.want.Code {
			t.Errorf("%s: %v, want %v", c.name, kerr.ErrorForCode(p.ErrorCode), c.want)
		}
		if p.ErrorMessage == nil || p.BaseOffset != -1 {
			t.Errorf("%s: message %v, base offset %d", c.name, p.ErrorMessage, p.BaseOffset)
		}
		if leo := plog.LogEndOffset(); leo != 1 {
			t.Fatalf("%s: stored, LEO %d", c.name, leo)
		}
	}

	if p := kzerotest.ProduceOnce(t, conn, "poison", 0, kzerotest.EncodeBatch(now, []byte("last"))); p.ErrorCode != 0 || p.BaseOffset != 1 {
		t.Fatalf("good batch after the refusals: offset %d, %v", p.BaseOffset, kerr.ErrorForCode(p.ErrorCode))
	}
	consumer := nodetest.Client(t, b, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"poison": {0: kgo.NewOffset().AtStart()}}))
	recs := kzerotest.ConsumeThrough(t, ctx, consumer, 1)
	if len(recs) != 2 || string(recs[0].Value) != "first" || string(recs[1].Value) != "last" {
		t.Fatalf("consumed %d records: %v", len(recs), recs)
	}
}
