package record

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
)

// noProducer is the header of a client batch without idempotence.
func noProducer(codec Codec, ts int64) BatchHeader {
	return BatchHeader{Codec: codec, BaseTimestamp: ts, LastOffsetDelta: -1,
		ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence}
}

// AppendBatch around the records section a Builder wrote, under the
// Builder's header, writes the Builder's batch byte for byte.
func TestAppendBatch(t *testing.T) {
	for _, c := range allCodecs {
		var bl Builder
		bl.Reset(noProducer(c, 1_700_000_000_000))
		for i := range 5 {
			bl.Add(&Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte("k"), Value: compressible(200, uint64(i))})
		}
		want, err := bl.AppendTo(nil)
		if err != nil {
			t.Fatal(err)
		}
		b := Batch(want)
		h := b.Header()
		got, err := AppendBatch([]byte("prefix"), &h, b.NumRecords(), b.RecordsBytes())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got[:6], []byte("prefix")) || !bytes.Equal(got[6:], want) {
			t.Fatalf("%s: AppendBatch differs from the Builder's batch", c)
		}
	}
}

// The policy's share of validation: timestamps outside the window and
// keyless records in a compacted log are listed by index, a timestamp
// among them making the error INVALID_TIMESTAMP; LogAppendTime and
// unbounded windows check no timestamp. The largest record timestamp
// comes back.
func TestValidateRecordsPolicy(t *testing.T) {
	const now = 1_700_000_000_000
	var bl Builder
	bl.Reset(noProducer(CodecLZ4, now))
	for i, r := range []Record{
		{Key: []byte("k")},
		{TimestampDelta: -3_600_000, Key: []byte("k")},
		{TimestampDelta: 10},
		{TimestampDelta: 3_600_000, Key: []byte("k")},
	} {
		r.OffsetDelta = int32(i)
		bl.Add(&r)
	}
	raw, err := bl.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	b := Batch(raw)
	if err := b.ValidateProduce(); err != nil {
		t.Fatal(err)
	}
	window := Policy{MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: 60_000, TimestampAfterMaxMs: 60_000}
	for _, c := range []struct {
		name    string
		p       Policy
		want    *kerr.Error // nil: accepted
		indexes []int32
	}{
		{"window", window, kerr.InvalidTimestamp, []int32{1, 3}},
		{"window, compacted", Policy{MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: 60_000, TimestampAfterMaxMs: 60_000, Compact: true}, kerr.InvalidTimestamp, []int32{1, 2, 3}},
		{"log append time, compacted", Policy{MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: 60_000, TimestampAfterMaxMs: 60_000, LogAppendTime: true, Compact: true}, kerr.InvalidRecord, []int32{2}},
		{"log append time", Policy{MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: 60_000, TimestampAfterMaxMs: 60_000, LogAppendTime: true}, nil, nil},
		{"unbounded", Policy{MaxMessageBytes: 1 << 20, TimestampBeforeMaxMs: -1, TimestampAfterMaxMs: -1}, nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			maxTs, err := b.ValidateRecords(c.p, now)
			if c.want == nil {
				if err != nil || maxTs != now+3_600_000 {
					t.Fatalf("ValidateRecords: %d, %v; want %d, nil", maxTs, err, now+3_600_000)
				}
				return
			}
			var re *Errors
			if !errors.As(err, &re) || re.Err != c.want || len(re.Records) != len(c.indexes) {
				t.Fatalf("ValidateRecords: %v, want %v for records %v", err, c.want, c.indexes)
			}
			for i, r := range re.Records {
				if r.Index != c.indexes[i] || r.Message == "" {
					t.Fatalf("rejected %+v, want indexes %v", re.Records, c.indexes)
				}
			}
			if maxTs != -1 {
				t.Fatalf("rejected batch gives max timestamp %d", maxTs)
			}
		})
	}
}

// FuzzValidateRecords frames fuzz bytes as a client batch's records
// section (codec bits, record count, compressed here or taken as they are)
// with a correct length and CRC. ValidateProduce and ValidateRecords must
// not panic; they refuse with a Kafka error, or accept a batch whose every
// record an Iter reads at offset delta equal to its index, the largest
// timestamp being the one ValidateRecords returns.
func FuzzValidateRecords(f *testing.F) {
	three := recordsOf(f, 3)
	f.Add(byte(CodecNone), int32(3), three)
	f.Add(byte(CodecNone), int32(1000), three)
	f.Add(byte(CodecNone), int32(1), append([]byte{0}, three[1:]...))
	for _, c := range allCodecs[1:] {
		f.Add(byte(c), int32(3), three)        // compressed here
		f.Add(byte(c)|8, int32(3), three)      // flagged, not compressed
		f.Add(byte(c)|8, int32(3), three[:20]) // truncated
	}
	const now = 1_700_000_000_000
	p := Policy{MaxMessageBytes: 64 << 10, TimestampBeforeMaxMs: -1, TimestampAfterMaxMs: -1, Compact: true}
	f.Fuzz(func(t *testing.T, mode byte, count int32, data []byte) {
		codec, section := fuzzSection(t, mode, data)
		h := noProducer(codec, now)
		h.LastOffsetDelta = count - 1
		raw, err := AppendBatch(nil, &h, count, section)
		if err != nil {
			t.Fatal(err)
		}
		b := Batch(raw)
		maxTs, err := int64(-1), b.ValidateProduce()
		if err == nil {
			maxTs, err = b.ValidateRecords(p, now)
		}
		if err != nil {
			var ke *kerr.Error
			if !errors.As(err, &ke) {
				t.Fatalf("error %v wraps no Kafka error", err)
			}
			return
		}
		var it Iter
		defer it.Release()
		if err := it.Reset(b, DecompressLimit); err != nil {
			t.Fatalf("accepted batch does not decompress: %v", err)
		}
		n, largest := int32(0), int64(-1)
		for ; it.Next(); n++ {
			if it.Record().OffsetDelta != n || it.Record().Key == nil {
				t.Fatalf("record %d: offset delta %d, key %q", n, it.Record().OffsetDelta, it.Record().Key)
			}
			largest = max(largest, it.Timestamp())
		}
		if it.Err() != nil || n != b.NumRecords() || largest != maxTs {
			t.Fatalf("accepted batch reads %d of %d records, max timestamp %d (ValidateRecords: %d): %v", n, b.NumRecords(), largest, maxTs, it.Err())
		}
	})
}

// recordsOf is the uncompressed records section of n keyed records.
func recordsOf(tb testing.TB, n int) []byte {
	var bl Builder
	bl.Reset(noProducer(CodecNone, 0))
	for i := range n {
		bl.Add(&Record{OffsetDelta: int32(i), TimestampDelta: int64(i), Key: []byte("key"), Value: compressible(50, uint64(i))})
	}
	out, err := bl.AppendTo(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return Batch(out).RecordsBytes()
}
