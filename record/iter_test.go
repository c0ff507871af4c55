package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// checkRecords iterates b and compares every record with want.
func checkRecords(t *testing.T, b Batch, want []kmsg.Record) {
	t.Helper()
	var r Iter
	defer r.Release()
	if err := r.Reset(b, 1<<20); err != nil {
		t.Fatal(err)
	}
	i := 0
	for ; r.Next(); i++ {
		if i >= len(want) {
			t.Fatalf("more than %d records", len(want))
		}
		got, w := r.Record(), &want[i]
		if got.OffsetDelta != w.OffsetDelta || got.TimestampDelta != w.TimestampDelta64 || got.Attributes != w.Attributes {
			t.Fatalf("record %d: delta %d ts %d attrs %d, want %d %d %d", i,
				got.OffsetDelta, got.TimestampDelta, got.Attributes, w.OffsetDelta, w.TimestampDelta64, w.Attributes)
		}
		if r.Offset() != b.BaseOffset()+int64(w.OffsetDelta) {
			t.Fatalf("record %d: offset %d", i, r.Offset())
		}
		wantTS := b.BaseTimestamp() + w.TimestampDelta64
		if b.LogAppendTime() {
			wantTS = b.MaxTimestamp()
		}
		if r.Timestamp() != wantTS {
			t.Fatalf("record %d: timestamp %d, want %d", i, r.Timestamp(), wantTS)
		}
		sameBytes(t, "key", got.Key, w.Key)
		sameBytes(t, "value", got.Value, w.Value)
		if len(got.Headers) != len(w.Headers) {
			t.Fatalf("record %d: %d headers, want %d", i, len(got.Headers), len(w.Headers))
		}
		for j, h := range got.Headers {
			if string(h.Key) != w.Headers[j].Key || h.Key == nil {
				t.Fatalf("record %d header %d: key %q, want %q", i, j, h.Key, w.Headers[j].Key)
			}
			sameBytes(t, "header value", h.Value, w.Headers[j].Value)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if i != len(want) {
		t.Fatalf("%d records, want %d", i, len(want))
	}
}

// sameBytes compares with null distinct from empty.
func sameBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if (got == nil) != (want == nil) || !bytes.Equal(got, want) {
		t.Fatalf("%s %q (nil %v), want %q (nil %v)", what, got, got == nil, want, want == nil)
	}
}

func TestIterMatchesKmsg(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			for _, n := range []int{1, 2, 17, 300} {
				recs := sampleRecords(n, uint64(n))
				recs[n-1].TimestampDelta64 = -5 // deltas may be negative
				recs[0].Attributes = 0
				hdr := idempotentHeader(codec)
				hdr.LastOffsetDelta = int32(n - 1)
				checkRecords(t, Batch(kmsgBatch(t, hdr, recs)), recs)
				hdr.Attributes |= attrLogAppendTime
				checkRecords(t, Batch(kmsgBatch(t, hdr, recs)), recs)
			}
		})
	}
}

func TestIterAliasesBatch(t *testing.T) {
	recs := sampleRecords(3, 9)
	hdr := idempotentHeader(CodecNone)
	hdr.LastOffsetDelta = 2
	b := kmsgBatch(t, hdr, recs)
	var r Iter
	if err := r.Reset(b, 0); err != nil {
		t.Fatal(err)
	}
	if !r.Next() || !r.Next() {
		t.Fatal(r.Err())
	}
	v := r.Record().Value
	if cap(v) != len(v) {
		t.Fatal("a value's capacity reaches past it: an append would overwrite the next field")
	}
	i := bytes.Index(b, v)
	v[0] ^= 0xff
	if i < 0 || b[i] != v[0] {
		t.Fatal("value does not alias the batch")
	}
}

// rawBatch wraps a hand-made records section in a valid uncompressed batch.
func rawBatch(count int32, records []byte) Batch {
	b := make([]byte, BatchHeaderSize, BatchHeaderSize+len(records))
	b = append(b, records...)
	binary.BigEndian.PutUint32(b[offBatchLength:], uint32(len(b)-LogOverhead))
	b[offMagic] = MagicV2
	binary.BigEndian.PutUint32(b[offLastOffsetDelta:], uint32(max(count-1, 0)))
	binary.BigEndian.PutUint64(b[offProducerID:], ^uint64(0))
	binary.BigEndian.PutUint32(b[offRecordsCount:], uint32(count))
	Batch(b).UpdateCRC()
	return b
}

func TestIterErrors(t *testing.T) {
	one := kmsgRecords(sampleRecords(3, 10)[2:]) // key, value, two headers
	two := append(kmsgRecords(sampleRecords(1, 11)), one...)
	// record builds a record from its fields after the length.
	record := func(fields ...[]byte) []byte {
		body := bytes.Join(fields, nil)
		return append(binary.AppendVarint(nil, int64(len(body))), body...)
	}
	v := func(n int64) []byte { return binary.AppendVarint(nil, n) }
	cases := []struct {
		name    string
		count   int32
		records []byte
	}{
		{"fewer records than the count", 3, two},
		{"more records than the count", 1, two},
		{"trailing byte", 1, append(bytes.Clone(one), 0)},
		{"truncated record", 1, one[:len(one)-1]},
		{"negative length", 1, v(-3)},
		{"length past the end", 1, append(v(100), one[1:]...)},
		{"unterminated varint", 1, bytes.Repeat([]byte{0xff}, 11)},
		{"no attributes", 1, record()},
		{"no timestamp", 1, record([]byte{0})},
		{"offset delta too big", 1, record([]byte{0}, v(0), v(1<<31), v(-1), v(-1), v(0))},
		{"key past the end", 1, record([]byte{0}, v(0), v(0), v(5), []byte("ab"))},
		{"key length -2", 1, record([]byte{0}, v(0), v(0), v(-2), v(-1), v(0))},
		{"no header count", 1, record([]byte{0}, v(0), v(0), v(-1), v(-1))},
		{"negative header count", 1, record([]byte{0}, v(0), v(0), v(-1), v(-1), v(-1))},
		{"header count too big", 1, record([]byte{0}, v(0), v(0), v(-1), v(-1), v(1000), v(0), v(0))},
		{"null header key", 1, record([]byte{0}, v(0), v(0), v(-1), v(-1), v(1), v(-1), v(-1))},
		{"header value past the end", 1, record([]byte{0}, v(0), v(0), v(-1), v(-1), v(1), v(1), []byte("k"), v(9), []byte("x"))},
		{"bytes left in the record", 1, record([]byte{0}, v(0), v(0), v(-1), v(-1), v(0), []byte{7})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r Iter
			defer r.Release()
			if err := r.Reset(rawBatch(c.count, c.records), 0); err != nil {
				t.Fatal(err)
			}
			for r.Next() {
			}
			if !errors.Is(r.Err(), kerr.CorruptMessage) {
				t.Fatalf("Err() = %v, want CorruptMessage", r.Err())
			}
			if r.Next() {
				t.Fatal("Next after an error")
			}
		})
	}
	// A well-formed record with every field at its edge decodes.
	var r Iter
	ok := record([]byte{0x7f}, v(-1<<40), v(1<<31-1), v(0), v(-1), v(1), v(0), v(0))
	if err := r.Reset(rawBatch(1, ok), 0); err != nil || !r.Next() {
		t.Fatalf("edge record: %v", r.Err())
	}
	rec := r.Record()
	if rec.Attributes != 0x7f || rec.TimestampDelta != -1<<40 || rec.OffsetDelta != 1<<31-1 ||
		rec.Key == nil || len(rec.Key) != 0 || rec.Value != nil || len(rec.Headers) != 1 ||
		rec.Headers[0].Key == nil || rec.Headers[0].Value == nil {
		t.Fatalf("edge record decoded as %+v", rec)
	}
	if r.Next() || r.Err() != nil {
		t.Fatalf("after the only record: %v", r.Err())
	}

	if err := r.Reset(Batch(make([]byte, 20)), 0); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("short batch: %v", err)
	}
	neg := rawBatch(1, one)
	binary.BigEndian.PutUint32(neg[offRecordsCount:], 0xffffffff)
	if err := r.Reset(neg, 0); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("negative count: %v", err)
	}
	if r.Next() {
		t.Fatal("Next after a failed Reset")
	}
}

func TestIterDecompressLimit(t *testing.T) {
	recs := []kmsg.Record{{Value: make([]byte, 100_000)}}
	hdr := idempotentHeader(CodecZstd)
	b := kmsgBatch(t, hdr, recs)
	var r Iter
	defer r.Release()
	if err := r.Reset(b, 50_000); !errors.Is(err, ErrDecompressedTooLarge) {
		t.Fatalf("Reset: %v, want ErrDecompressedTooLarge", err)
	}
	if r.Next() || !errors.Is(r.Err(), ErrDecompressedTooLarge) {
		t.Fatalf("after a failed Reset: Next, Err %v", r.Err())
	}
	if err := r.Reset(b, 200_000); err != nil || !r.Next() {
		t.Fatalf("within the limit: %v %v", err, r.Err())
	}
}

// TestIterAllocs: iterating allocates nothing per record, and
// Reset on a compressed batch nothing once pools and buffers are warm.
func TestIterAllocs(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			recs := sampleRecords(200, 12)
			hdr := idempotentHeader(codec)
			hdr.LastOffsetDelta = 199
			b := Batch(kmsgBatch(t, hdr, recs))
			var r Iter
			defer r.Release()
			iterate := func() {
				if err := r.Reset(b, 1<<20); err != nil {
					t.Fatal(err)
				}
				n := 0
				for r.Next() {
					n++
				}
				if r.Err() != nil || n != 200 {
					t.Fatalf("%d records, %v", n, r.Err())
				}
			}
			iterate()
			if racePoolDrops && codec != CodecNone {
				t.Skip("sync.Pool drops items under the race detector")
			}
			if n := testing.AllocsPerRun(50, iterate); n != 0 {
				t.Fatalf("Reset and 200 records allocate %v times", n)
			}
		})
	}
}

func BenchmarkIter(b *testing.B) {
	for _, codec := range []Codec{CodecNone, CodecLZ4, CodecZstd} {
		b.Run(codec.String(), func(b *testing.B) {
			recs := sampleRecords(1000, 13)
			hdr := idempotentHeader(codec)
			hdr.LastOffsetDelta = 999
			batch := Batch(kmsgBatch(b, hdr, recs))
			var r Iter
			defer r.Release()
			b.ReportAllocs()
			for b.Loop() {
				if err := r.Reset(batch, 1<<20); err != nil {
					b.Fatal(err)
				}
				for r.Next() {
				}
				if r.Err() != nil {
					b.Fatal(r.Err())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
		})
	}
}

// FuzzIter iterates records from arbitrary bytes in a batch with
// valid framing and CRC, for each codec: either the bytes compressed (so the
// records section is garbage) or the bytes as the compressed section (so the
// decompressor sees garbage). Nothing may panic; errors must wrap a Kafka
// error; a batch that iterates cleanly must agree with kmsg's decoder.
func FuzzIter(f *testing.F) {
	f.Add(byte(0), int32(3), kmsgRecords(sampleRecords(3, 14)))
	f.Add(byte(0), int32(1), kmsgRecords(sampleRecords(1, 15)))
	for _, c := range compressedCodecs {
		raw, _ := Compress(c, nil, kmsgRecords(sampleRecords(2, 16)))
		f.Add(byte(c), int32(2), raw)
		f.Add(byte(c)|8, int32(2), raw)
	}
	f.Fuzz(func(t *testing.T, mode byte, count int32, data []byte) {
		codec, section := fuzzSection(t, mode, data)
		b := rawBatch(count, section)
		binary.BigEndian.PutUint16(b[offAttributes:], uint16(codec))
		b.UpdateCRC()

		var r Iter
		defer r.Release()
		err := r.Reset(b, 1<<20)
		var got []kmsg.Record
		for err == nil && r.Next() {
			rec := r.Record()
			k := kmsg.Record{Attributes: rec.Attributes, TimestampDelta64: rec.TimestampDelta,
				OffsetDelta: rec.OffsetDelta, Key: rec.Key, Value: rec.Value}
			for _, h := range rec.Headers {
				k.Headers = append(k.Headers, kmsg.Header{Key: string(h.Key), Value: h.Value})
			}
			got = append(got, k)
		}
		if err == nil {
			err = r.Err()
		}
		if err != nil {
			if !errors.Is(err, kerr.CorruptMessage) && !errors.Is(err, kerr.MessageTooLarge) {
				t.Fatalf("error %v wraps no Kafka error", err)
			}
			return
		}
		if int32(len(got)) != count {
			t.Fatalf("%d records, count %d", len(got), count)
		}
		// A clean read re-encodes to the same bytes with kmsg's encoder.
		plain := section // uncompressed, or empty and not decompressed
		if r.buf != nil {
			plain = r.buf.B
		}
		if re := kmsgRecords(got); !bytes.Equal(re, plain) && canonicalVarints(plain) {
			t.Fatalf("records re-encode differently:\n%x\n%x", re, plain)
		}
	})
}

// fuzzSection is the codec and records section a fuzz input names: codec
// mode&7 % 5, data compressed with it, or taken as the compressed section
// as it is when mode&8 is set.
func fuzzSection(t *testing.T, mode byte, data []byte) (Codec, []byte) {
	codec := Codec(mode & 7 % 5)
	if mode&8 != 0 || codec == CodecNone {
		return codec, data
	}
	section, err := Compress(codec, nil, data)
	if err != nil {
		t.Fatal(err)
	}
	return codec, section
}

// canonicalVarints reports whether every record in b encodes its varints
// minimally, as kmsg does: only then must a re-encoding match byte for
// byte. It walks b as an Iter would, assuming b decodes.
func canonicalVarints(b []byte) bool {
	for len(b) > 0 {
		// A non-minimal varint ends with a 0x00 continuation byte or
		// is a 0x80-padded zero; checking the first byte of the
		// length is not enough, so re-encode the record and compare.
		var rec Record
		rest, err := rec.decode(b)
		if err != nil {
			return false
		}
		if !bytes.Equal(appendRecord(nil, &rec), b[:len(b)-len(rest)]) {
			return false
		}
		b = rest
	}
	return true
}
