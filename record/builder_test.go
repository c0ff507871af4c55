package record

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// toRecords converts kmsg records to ours, aliasing their bytes.
func toRecords(recs []kmsg.Record) []Record {
	out := make([]Record, len(recs))
	for i, k := range recs {
		r := Record{Attributes: k.Attributes, TimestampDelta: k.TimestampDelta64, OffsetDelta: k.OffsetDelta, Key: k.Key, Value: k.Value}
		for _, h := range k.Headers {
			r.Headers = append(r.Headers, Header{Key: []byte(h.Key), Value: h.Value})
		}
		out[i] = r
	}
	return out
}

// kmsgDecode decodes b with franz-go only: the batch with kmsg, the records
// section with kgo's decompressor, each record with kmsg.
func kmsgDecode(t *testing.T, b []byte) (kmsg.RecordBatch, []kmsg.Record) {
	t.Helper()
	var k kmsg.RecordBatch
	if err := k.ReadFrom(b); err != nil {
		t.Fatal(err)
	}
	raw, err := kgo.DefaultDecompressor().Decompress(k.Records, kgo.CompressionCodecType(k.Attributes&7))
	if err != nil {
		t.Fatal(err)
	}
	var recs []kmsg.Record
	for len(raw) > 0 {
		var r kmsg.Record
		if err := r.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		n := int(r.Length) + varintLen(int64(r.Length))
		recs, raw = append(recs, r), raw[n:]
	}
	return k, recs
}

func TestBuilderMatchesKmsg(t *testing.T) {
	want := sampleRecords(50, 20)
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			h := BatchHeader{
				BaseOffset: 77, PartitionLeaderEpoch: 4, Codec: codec, Transactional: true,
				BaseTimestamp: 1_000_000, MaxTimestamp: 0, LastOffsetDelta: -1,
				ProducerID: 9, ProducerEpoch: 2, BaseSequence: 10,
			}
			var bl Builder
			bl.Reset(h)
			for _, r := range toRecords(want) {
				bl.Add(&r)
			}
			out, err := bl.AppendTo([]byte("prefix"))
			if err != nil {
				t.Fatal(err)
			}
			if string(out[:6]) != "prefix" {
				t.Fatal("AppendTo overwrote dst")
			}
			b, rest, err := ParseBatch(out[6:])
			if err != nil || len(rest) != 0 {
				t.Fatalf("ParseBatch: %v, %d bytes left", err, len(rest))
			}
			if err := b.ValidateProduce(); err != nil {
				t.Fatal(err)
			}
			k, got := kmsgDecode(t, b)
			if k.FirstOffset != 77 || k.PartitionLeaderEpoch != 4 || k.Attributes != int16(codec)|attrTransactional ||
				k.LastOffsetDelta != 49 || k.FirstTimestamp != 1_000_000 || k.MaxTimestamp != 1_000_000+49*7 ||
				k.ProducerID != 9 || k.ProducerEpoch != 2 || k.FirstSequence != 10 || k.NumRecords != 50 {
				t.Fatalf("header decoded as %+v", k)
			}
			if len(got) != len(want) {
				t.Fatalf("%d records, want %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.OffsetDelta != w.OffsetDelta || g.TimestampDelta64 != w.TimestampDelta64 ||
					!bytes.Equal(g.Key, w.Key) || (g.Key == nil) != (w.Key == nil) ||
					!bytes.Equal(g.Value, w.Value) || (g.Value == nil) != (w.Value == nil) ||
					len(g.Headers) != len(w.Headers) {
					t.Fatalf("record %d: %+v, want %+v", i, g, w)
				}
				for j := range g.Headers {
					if g.Headers[j].Key != w.Headers[j].Key || !bytes.Equal(g.Headers[j].Value, w.Headers[j].Value) ||
						(g.Headers[j].Value == nil) != (w.Headers[j].Value == nil) {
						t.Fatalf("record %d header %d: %+v", i, j, g.Headers[j])
					}
				}
			}
			checkRecords(t, b, want)
			if codec == CodecNone {
				// Byte for byte what franz-go encodes.
				kh := idempotentHeader(codec)
				kh.FirstOffset, kh.PartitionLeaderEpoch, kh.Attributes = 77, 4, attrTransactional
				kh.LastOffsetDelta, kh.FirstTimestamp, kh.MaxTimestamp = 49, 1_000_000, 1_000_000+49*7
				kh.ProducerID, kh.ProducerEpoch, kh.FirstSequence = 9, 2, 10
				if !bytes.Equal(b, kmsgBatch(t, kh, want)) {
					t.Fatal("uncompressed batch differs from franz-go's encoding")
				}
			}
		})
	}
}

// TestBuilderCompaction rewrites a batch the way the cleaner does: keeping
// some records, its last one dropped, under the original header.
func TestBuilderCompaction(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			orig := sampleRecords(5, 21)
			orig[4].TimestampDelta64 = 1000 // the max timestamp is the dropped record's
			hdr := idempotentHeader(codec)
			hdr.Attributes |= attrTransactional
			hdr.LastOffsetDelta = 4
			hdr.MaxTimestamp = hdr.FirstTimestamp + 1000
			src := Batch(kmsgBatch(t, hdr, orig))

			var r Iter
			defer r.Release()
			if err := r.Reset(src, 0); err != nil {
				t.Fatal(err)
			}
			var bl Builder
			bl.Reset(src.Header())
			for r.Next() {
				if d := r.Record().OffsetDelta; d == 1 || d == 3 {
					bl.Add(r.Record())
				}
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			out, err := bl.AppendTo(nil)
			if err != nil {
				t.Fatal(err)
			}
			b := Batch(out)
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			if b.BaseOffset() != src.BaseOffset() || b.LastOffsetDelta() != 4 || b.MaxTimestamp() != src.MaxTimestamp() ||
				b.Attributes() != src.Attributes() || b.ProducerID() != 42 || b.ProducerEpoch() != 3 ||
				b.BaseSequence() != 100 || b.LastSequence() != src.LastSequence() ||
				b.BaseTimestamp() != src.BaseTimestamp() || b.PartitionLeaderEpoch() != src.PartitionLeaderEpoch() {
				t.Fatalf("rewritten header lost the original's fields: %+v", b.Header())
			}
			if b.NumRecords() != 2 {
				t.Fatalf("%d records, want 2", b.NumRecords())
			}
			checkRecords(t, b, []kmsg.Record{orig[1], orig[3]})

			// Nothing kept: an empty batch that keeps the producer's state.
			bl.Reset(src.Header())
			out, err = bl.AppendTo(nil)
			if err != nil {
				t.Fatal(err)
			}
			b = Batch(out)
			if err := b.Validate(); err != nil {
				t.Fatal(err)
			}
			if b.NumRecords() != 0 || b.NextOffset() != src.NextOffset() || b.LastSequence() != src.LastSequence() {
				t.Fatalf("empty rewrite: %+v", b.Header())
			}
			checkRecords(t, b, nil)
		})
	}
}

func TestBuilderHeaderRoundTrip(t *testing.T) {
	h := BatchHeader{
		BaseOffset: 1 << 40, PartitionLeaderEpoch: -1, Codec: CodecLZ4,
		LogAppendTime: true, Transactional: true, Control: true, DeleteHorizon: true,
		BaseTimestamp: -1, MaxTimestamp: 12345, LastOffsetDelta: 9,
		ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence,
	}
	var bl Builder
	bl.Reset(h)
	bl.Add(&Record{OffsetDelta: 3, Value: []byte("v")})
	out, err := bl.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := Batch(out).Header(); got != h {
		t.Fatalf("header %+v, want %+v", got, h)
	}
}

func TestBuilderErrors(t *testing.T) {
	base := BatchHeader{LastOffsetDelta: -1, ProducerID: NoProducerID, BaseSequence: NoSequence}
	cases := map[string]struct {
		h    BatchHeader
		recs []Record
	}{
		"offset deltas decrease":  {base, []Record{{OffsetDelta: 1}, {OffsetDelta: 0}}},
		"offset deltas repeat":    {base, []Record{{OffsetDelta: 1}, {OffsetDelta: 1}}},
		"negative offset delta":   {base, []Record{{OffsetDelta: -1}}},
		"empty, no last delta":    {base, nil},
		"last delta below record": {func() BatchHeader { h := base; h.LastOffsetDelta = 2; return h }(), []Record{{OffsetDelta: 3}}},
		"last delta -2":           {func() BatchHeader { h := base; h.LastOffsetDelta = -2; return h }(), nil},
		"codec 5":                 {func() BatchHeader { h := base; h.Codec = 5; return h }(), []Record{{}}},
	}
	for name, c := range cases {
		var bl Builder
		bl.Reset(c.h)
		for _, r := range c.recs {
			bl.Add(&r)
		}
		dst := []byte("keep")
		out, err := bl.AppendTo(dst)
		if err == nil {
			t.Errorf("%s: AppendTo passed", name)
		}
		if string(out) != "keep" {
			t.Errorf("%s: dst changed to %q", name, out)
		}
	}
	// Reset clears a sticky error.
	var bl Builder
	bl.Reset(base)
	bl.Add(&Record{OffsetDelta: -1})
	bl.Reset(base)
	bl.Add(&Record{})
	if _, err := bl.AppendTo(nil); err != nil || bl.Len() != 1 {
		t.Fatalf("after Reset: %v, %d records", err, bl.Len())
	}
}

// TestBuilderAllocs: a warm Builder appending to a big enough dst
// allocates nothing.
func TestBuilderAllocs(t *testing.T) {
	recs := toRecords(sampleRecords(100, 22))
	for _, codec := range allCodecs {
		var bl Builder
		dst := make([]byte, 0, 64<<10)
		build := func() {
			bl.Reset(BatchHeader{Codec: codec, LastOffsetDelta: -1, ProducerID: NoProducerID, BaseSequence: NoSequence})
			for i := range recs {
				bl.Add(&recs[i])
			}
			var err error
			if dst, err = bl.AppendTo(dst[:0]); err != nil {
				t.Fatal(err)
			}
		}
		build()
		if racePoolDrops && codec != CodecNone {
			continue // sync.Pool drops items under the race detector
		}
		if n := testing.AllocsPerRun(50, build); n != 0 {
			t.Errorf("%s: building a batch allocates %v times", codec, n)
		}
	}
}
