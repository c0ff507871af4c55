package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// kmsgRecords encodes recs with franz-go's encoder, filling in each
// record's Length.
func kmsgRecords(recs []kmsg.Record) []byte {
	var out []byte
	for i := range recs {
		r := recs[i]
		r.Length = 0
		body := r.AppendTo(nil)
		r.Length = int32(len(body) - 1) // Length 0 took one byte
		out = r.AppendTo(out)
	}
	return out
}

// kmsgBatch encodes a batch with franz-go's encoder: hdr's fields as given,
// records compressed with franz-go's compressor when hdr.Attributes says so,
// and Length, NumRecords and CRC computed.
func kmsgBatch(t testing.TB, hdr kmsg.RecordBatch, recs []kmsg.Record) []byte {
	t.Helper()
	raw := kmsgRecords(recs)
	if c := kgo.CompressionCodecType(hdr.Attributes & 7); c != kgo.CodecNone {
		raw = kgoCompress(t, c, raw)
	}
	hdr.Magic = 2
	hdr.NumRecords = int32(len(recs))
	hdr.Records = raw
	hdr.CRC = 0
	b := hdr.AppendTo(nil)
	binary.BigEndian.PutUint32(b[8:], uint32(len(b)-12))
	binary.BigEndian.PutUint32(b[17:], crc32.Checksum(b[21:], crc32.MakeTable(crc32.Castagnoli)))
	return b
}

func kgoCompress(t testing.TB, c kgo.CompressionCodecType, src []byte) []byte {
	t.Helper()
	var codec kgo.CompressionCodec
	switch c {
	case kgo.CodecGzip:
		codec = kgo.GzipCompression()
	case kgo.CodecSnappy:
		codec = kgo.SnappyCompression()
	case kgo.CodecLz4:
		codec = kgo.Lz4Compression()
	case kgo.CodecZstd:
		codec = kgo.ZstdCompression()
	}
	comp, err := kgo.DefaultCompressor(codec)
	if err != nil {
		t.Fatal(err)
	}
	out, got := comp.Compress(new(bytes.Buffer), src)
	if got != c {
		t.Fatalf("franz-go compressed with %v, want %v", got, c)
	}
	return bytes.Clone(out)
}

// sampleRecords is a mix of null, empty and filled keys, values and headers.
func sampleRecords(n int, seed uint64) []kmsg.Record {
	rng := rand.New(rand.NewPCG(seed, seed))
	recs := make([]kmsg.Record, n)
	for i := range recs {
		r := &recs[i]
		r.OffsetDelta = int32(i)
		r.TimestampDelta64 = int64(i) * 7
		switch i % 3 {
		case 0:
			r.Key = nil
		case 1:
			r.Key = []byte{}
		default:
			r.Key = fmt.Appendf(nil, "key-%d", i)
		}
		if i%5 != 4 {
			r.Value = bytes.Repeat(fmt.Appendf(nil, "value %d ", i), 1+rng.IntN(20))
		}
		for h := range i % 4 {
			var v []byte
			if h != 1 {
				v = fmt.Appendf(nil, "hv%d", h)
			}
			r.Headers = append(r.Headers, kmsg.Header{Key: fmt.Sprintf("h%d", h), Value: v})
		}
	}
	return recs
}

func idempotentHeader(codec Codec) kmsg.RecordBatch {
	return kmsg.RecordBatch{
		FirstOffset:          1234,
		PartitionLeaderEpoch: 7,
		Attributes:           int16(codec),
		FirstTimestamp:       1_700_000_000_000,
		MaxTimestamp:         1_700_000_000_999,
		ProducerID:           42,
		ProducerEpoch:        3,
		FirstSequence:        100,
	}
}

func TestBatchAccessorsMatchKmsg(t *testing.T) {
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			recs := sampleRecords(10, 1)
			hdr := idempotentHeader(codec)
			hdr.Attributes |= attrTransactional
			hdr.LastOffsetDelta = 9
			raw := kmsgBatch(t, hdr, recs)
			// Two batches back to back, then a torn third.
			buf := append(append(bytes.Clone(raw), raw...), raw[:30]...)
			for i := range 2 {
				b, rest, err := ParseBatch(buf)
				if err != nil {
					t.Fatalf("batch %d: %v", i, err)
				}
				buf = rest
				if err := b.Validate(); err != nil {
					t.Fatal(err)
				}
				if err := b.ValidateProduce(); err != nil {
					t.Fatal(err)
				}
				var k kmsg.RecordBatch
				if err := k.ReadFrom(b); err != nil {
					t.Fatal(err)
				}
				checks := []struct {
					name      string
					got, want int64
				}{
					{"BaseOffset", b.BaseOffset(), k.FirstOffset},
					{"Length", int64(b.Length()), int64(k.Length)},
					{"Size", int64(b.Size()), int64(k.Length) + 12},
					{"PartitionLeaderEpoch", int64(b.PartitionLeaderEpoch()), int64(k.PartitionLeaderEpoch)},
					{"Magic", int64(b.Magic()), int64(k.Magic)},
					{"CRC", int64(int32(b.CRC())), int64(k.CRC)},
					{"Attributes", int64(b.Attributes()), int64(k.Attributes)},
					{"Compression", int64(b.Compression()), int64(codec)},
					{"LastOffsetDelta", int64(b.LastOffsetDelta()), int64(k.LastOffsetDelta)},
					{"LastOffset", b.LastOffset(), k.FirstOffset + 9},
					{"NextOffset", b.NextOffset(), k.FirstOffset + 10},
					{"BaseTimestamp", b.BaseTimestamp(), k.FirstTimestamp},
					{"MaxTimestamp", b.MaxTimestamp(), k.MaxTimestamp},
					{"ProducerID", b.ProducerID(), k.ProducerID},
					{"ProducerEpoch", int64(b.ProducerEpoch()), int64(k.ProducerEpoch)},
					{"BaseSequence", int64(b.BaseSequence()), int64(k.FirstSequence)},
					{"LastSequence", int64(b.LastSequence()), int64(k.FirstSequence) + 9},
					{"NumRecords", int64(b.NumRecords()), int64(k.NumRecords)},
				}
				for _, c := range checks {
					if c.got != c.want {
						t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
					}
				}
				if !bytes.Equal(b.RecordsBytes(), k.Records) {
					t.Error("RecordsBytes differs from kmsg's Records")
				}
				if !b.IsTransactional() || b.IsControl() || b.LogAppendTime() || b.HasDeleteHorizon() {
					t.Errorf("flags of attributes %#x wrong", b.Attributes())
				}
			}
			if _, _, err := ParseBatch(buf); !errors.Is(err, ErrShortBatch) {
				t.Fatalf("torn batch: %v, want ErrShortBatch", err)
			}
		})
	}
}

var allCodecs = []Codec{CodecNone, CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

func TestBatchSetters(t *testing.T) {
	hdr := idempotentHeader(CodecNone)
	hdr.LastOffsetDelta = 2
	b := Batch(kmsgBatch(t, hdr, sampleRecords(3, 2)))
	crc := b.CRC()
	b.SetBaseOffset(99)
	b.SetPartitionLeaderEpoch(12)
	if b.BaseOffset() != 99 || b.PartitionLeaderEpoch() != 12 {
		t.Fatalf("setters: base %d epoch %d", b.BaseOffset(), b.PartitionLeaderEpoch())
	}
	if b.CRC() != crc || b.Validate() != nil {
		t.Fatal("base offset and leader epoch must lie outside the CRC")
	}
	b.SetLogAppendTime(5555)
	if !b.LogAppendTime() || b.MaxTimestamp() != 5555 {
		t.Fatalf("SetLogAppendTime: attrs %#x max %d", b.Attributes(), b.MaxTimestamp())
	}
	if err := b.Validate(); err != nil {
		t.Fatalf("after SetLogAppendTime: %v", err)
	}
	var k kmsg.RecordBatch
	if err := k.ReadFrom(b); err != nil || k.MaxTimestamp != 5555 || k.Attributes&attrLogAppendTime == 0 {
		t.Fatalf("kmsg reads %+v, %v", k, err)
	}
}

func TestLastSequenceWraps(t *testing.T) {
	hdr := idempotentHeader(CodecNone)
	hdr.FirstSequence = 1<<31 - 2
	hdr.LastOffsetDelta = 3
	b := Batch(kmsgBatch(t, hdr, sampleRecords(4, 3)))
	if got := b.LastSequence(); got != 1 {
		t.Fatalf("LastSequence = %d, want 1 (wrapped)", got)
	}
	hdr.FirstSequence = NoSequence
	b = Batch(kmsgBatch(t, hdr, sampleRecords(4, 3)))
	if got := b.LastSequence(); got != NoSequence {
		t.Fatalf("LastSequence without a base sequence = %d", got)
	}
}

func TestBatchErrors(t *testing.T) {
	good := func() []byte {
		hdr := idempotentHeader(CodecNone)
		hdr.LastOffsetDelta = 2
		return kmsgBatch(t, hdr, sampleRecords(3, 4))
	}
	fix := func(b []byte) []byte { Batch(b).UpdateCRC(); return b }
	// legacy is a v0/v1 message set: offset, size, crc, magic, attributes,
	// [timestamp], key, value.
	legacy := func(magic byte) []byte {
		body := []byte{0, 0, 0, 0, magic, 0}
		if magic == 1 {
			body = append(body, 0, 0, 0, 0, 0, 0, 0, 1)
		}
		body = append(body, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 'v')
		b := binary.BigEndian.AppendUint64(nil, 0)
		b = binary.BigEndian.AppendUint32(b, uint32(len(body)))
		return append(b, body...)
	}
	cases := []struct {
		name    string
		bytes   []byte
		produce bool // error from ValidateProduce only
		want    error
	}{
		{"magic 0", legacy(0), false, kerr.UnsupportedVersion},
		{"magic 1", legacy(1), false, kerr.UnsupportedVersion},
		{"magic 1 padded past a v2 header", func() []byte {
			b := good()
			b[offMagic] = 1
			return b
		}(), false, kerr.UnsupportedVersion},
		{"magic 3", func() []byte { b := good(); b[offMagic] = 3; return b }(), false, kerr.CorruptMessage},
		{"bad crc", func() []byte { b := good(); b[len(b)-1] ^= 1; return b }(), false, kerr.CorruptMessage},
		{"crc field", func() []byte { b := good(); b[offCRC] ^= 1; return b }(), false, kerr.CorruptMessage},
		{"short", good()[:BatchHeaderSize-1], false, kerr.CorruptMessage},
		{"tiny", good()[:5], false, kerr.CorruptMessage},
		{"torn", good()[:70], false, kerr.CorruptMessage},
		{"length below header", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[offBatchLength:], 20)
			return b
		}(), false, kerr.CorruptMessage},
		{"negative length", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[offBatchLength:], 0xffffff00)
			return b
		}(), false, kerr.CorruptMessage},
		{"negative last offset delta", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 0xffffffff)
			return fix(b)
		}(), false, kerr.CorruptMessage},
		{"negative count", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[offRecordsCount:], 0xffffffff)
			return fix(b)
		}(), false, kerr.CorruptMessage},
		{"count beyond offset range", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[offRecordsCount:], 4)
			return fix(b)
		}(), false, kerr.CorruptMessage},
		{"count beyond bytes", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 1000)
			binary.BigEndian.PutUint32(b[offRecordsCount:], 1000)
			return fix(b)
		}(), false, kerr.CorruptMessage},
		{"codec 5", func() []byte { b := good(); b[offAttributes+1] |= 5; return fix(b) }(), false, kerr.CorruptMessage},
		{"empty without producer", func() []byte {
			hdr := idempotentHeader(CodecNone)
			hdr.ProducerID = NoProducerID
			return kmsgBatch(t, hdr, nil)
		}(), false, kerr.InvalidRecord},
		{"empty with producer", kmsgBatch(t, idempotentHeader(CodecNone), nil), true, kerr.InvalidRecord},
		{"gap in offsets", func() []byte {
			b := good()
			binary.BigEndian.PutUint32(b[offLastOffsetDelta:], 5)
			return fix(b)
		}(), true, kerr.InvalidRecord},
		{"control", func() []byte { b := good(); b[offAttributes+1] |= attrControl; return fix(b) }(), true, kerr.InvalidRecord},
		{"transactional without producer", func() []byte {
			hdr := idempotentHeader(CodecNone)
			hdr.ProducerID = NoProducerID
			hdr.Attributes = attrTransactional
			hdr.LastOffsetDelta = 0
			return kmsgBatch(t, hdr, sampleRecords(1, 5))
		}(), true, kerr.InvalidRecord},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, rest, err := ParseBatch(c.bytes)
			if err == nil {
				if len(rest) != 0 {
					t.Fatalf("%d bytes left after the batch", len(rest))
				}
				err = b.Validate()
				if c.produce {
					if err != nil {
						t.Fatalf("Validate: %v, want success", err)
					}
					err = b.ValidateProduce()
				}
			}
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			// Validate checks its own framing too, on a Batch cut any way.
			if err := Batch(c.bytes).Validate(); err == nil && !c.produce {
				t.Fatalf("Validate of the raw bytes passed")
			}
		})
	}
}

func TestValidateWithoutParse(t *testing.T) {
	hdr := idempotentHeader(CodecNone)
	hdr.LastOffsetDelta = 2
	b := kmsgBatch(t, hdr, sampleRecords(3, 6))
	for _, n := range []int{0, 1, 12, BatchHeaderSize - 1, len(b) - 1} {
		if err := Batch(b[:n]).Validate(); !errors.Is(err, kerr.CorruptMessage) {
			t.Fatalf("%d bytes: %v", n, err)
		}
	}
	if err := Batch(append(bytes.Clone(b), 0)).Validate(); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("a byte too many: %v", err)
	}
}

func benchmarkValidate(b *testing.B, size int) {
	var bl Builder
	bl.Reset(BatchHeader{LastOffsetDelta: -1, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence})
	value := bytes.Repeat([]byte("x"), 1000)
	for i := int32(0); ; i++ {
		bl.Add(&Record{OffsetDelta: i, Value: value})
		if (int(i)+1)*1010 >= size {
			break
		}
	}
	batch, err := bl.AppendTo(nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(batch)))
	b.ReportAllocs()
	for b.Loop() {
		if err := Batch(batch).Validate(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkValidate(b *testing.B) {
	b.Run("16KiB", func(b *testing.B) { benchmarkValidate(b, 16<<10) })
	b.Run("1MiB", func(b *testing.B) { benchmarkValidate(b, 1<<20) })
}

// FuzzParseBatch feeds arbitrary bytes to ParseBatch, Validate and every
// accessor, as they are and with the CRC fixed up (which random bytes never
// match): none may panic, errors must wrap a Kafka error, and a batch that
// validates must agree with franz-go's decoder and iterate without panic.
func FuzzParseBatch(f *testing.F) {
	hdr := idempotentHeader(CodecNone)
	hdr.LastOffsetDelta = 2
	f.Add(kmsgBatch(f, hdr, sampleRecords(3, 7)))
	hdr = idempotentHeader(CodecGzip)
	hdr.LastOffsetDelta = 1
	f.Add(kmsgBatch(f, hdr, sampleRecords(2, 8)))
	f.Add(AppendControlBatch(nil, 1, 2, 3, ControlCommit, 4))
	f.Add([]byte{})
	f.Add(make([]byte, BatchHeaderSize))
	kafkaErr := func(err error) bool {
		return errors.Is(err, kerr.CorruptMessage) || errors.Is(err, kerr.UnsupportedVersion) ||
			errors.Is(err, kerr.InvalidRecord) || errors.Is(err, kerr.MessageTooLarge)
	}
	check := func(t *testing.T, b Batch) {
		_ = b.PartitionLeaderEpoch() + b.BaseSequence() + b.LastSequence() + b.NumRecords()
		_ = b.NextOffset() + b.MaxTimestamp() + b.BaseTimestamp() + b.ProducerID()
		_, _, _, _, _ = b.Compression(), b.IsControl(), b.IsTransactional(), b.LogAppendTime(), b.HasDeleteHorizon()
		_, _ = b.ProducerEpoch(), b.Header()
		verr, perr := b.Validate(), b.ValidateProduce()
		if verr != nil && perr == nil {
			t.Fatal("ValidateProduce passed what Validate refused")
		}
		if (verr != nil && !kafkaErr(verr)) || (perr != nil && !kafkaErr(perr)) {
			t.Fatalf("errors %v, %v wrap no Kafka error", verr, perr)
		}
		if verr != nil {
			return
		}
		var k kmsg.RecordBatch
		if err := k.ReadFrom(b); err != nil {
			t.Fatalf("valid batch kmsg cannot read: %v", err)
		}
		if k.FirstOffset != b.BaseOffset() || k.NumRecords != b.NumRecords() || int64(k.Length)+12 != int64(len(b)) ||
			k.LastOffsetDelta != b.LastOffsetDelta() || !bytes.Equal(k.Records, b.RecordsBytes()) {
			t.Fatal("valid batch decodes differently with kmsg")
		}
		if b.IsControl() {
			if _, err := b.ControlType(); err != nil && !kafkaErr(err) {
				t.Fatalf("ControlType error %v wraps no Kafka error", err)
			}
		}
		var r Iter
		defer r.Release()
		if err := r.Reset(b, 1<<20); err == nil {
			for r.Next() {
				_ = r.Offset() + r.Timestamp()
			}
			if err := r.Err(); err != nil && !kafkaErr(err) {
				t.Fatalf("record error %v wraps no Kafka error", err)
			}
		} else if !kafkaErr(err) {
			t.Fatalf("Reset error %v wraps no Kafka error", err)
		}
	}
	f.Fuzz(func(t *testing.T, buf []byte) {
		for range 3 {
			b, rest, err := ParseBatch(buf)
			if err != nil {
				if !errors.Is(err, kerr.CorruptMessage) && !errors.Is(err, kerr.UnsupportedVersion) {
					t.Fatalf("ParseBatch error %v wraps no Kafka error", err)
				}
				return
			}
			if len(b)+len(rest) != len(buf) || len(b) < BatchHeaderSize {
				t.Fatalf("split %d bytes into %d + %d", len(buf), len(b), len(rest))
			}
			check(t, b)
			fixed := Batch(bytes.Clone(b))
			fixed.UpdateCRC()
			check(t, fixed)
			buf = rest
		}
	})
}
