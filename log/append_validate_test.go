package log

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/record"
)

var (
	allCodecs        = []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4, record.CodecZstd}
	compressedCodecs = allCodecs[1:]
)

// compressible is text-like data, as record's tests make it: words from a
// small vocabulary with some random bytes mixed in.
func compressible(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := []string{"kafka", "offset", "partition", "leader", "epoch", "record ", "batch\n", "0123"}
	out := make([]byte, 0, n)
	for len(out) < n {
		if rng.IntN(10) == 0 {
			out = append(out, byte(rng.Uint32()))
			continue
		}
		out = append(out, words[rng.IntN(len(words))]...)
	}
	return out[:n]
}

// clientBatch wraps a records section in a client batch header (no
// producer id, stamped now, codec bits as given) with a correct length and
// CRC: only what is inside the records can be wrong.
func clientBatch(codec record.Codec, count int32, section []byte) []byte {
	now := time.Now().UnixMilli()
	b, err := record.AppendBatch(nil, &record.BatchHeader{Codec: codec, BaseTimestamp: now, MaxTimestamp: now,
		LastOffsetDelta: count - 1, ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch,
		BaseSequence: record.NoSequence}, count, section)
	if err != nil {
		panic(err) // only a section above 2 GiB fails
	}
	return b
}

// goodRecords is the records section of n well-formed records with offset
// deltas 0..n-1.
func goodRecords(n int) []byte {
	return recordsSection(n, func(i int) record.Record {
		return record.Record{TimestampDelta: int64(i), Key: []byte("key"), Value: compressible(100, uint64(i)),
			Headers: []record.Header{{Key: []byte("h"), Value: []byte("v")}}}
	})
}

// recordsSection is the uncompressed records section of n records, the
// i-th from rec(i) at offset delta i.
func recordsSection(n int, rec func(i int) record.Record) []byte {
	var bl record.Builder
	bl.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: record.NoProducerID,
		ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence})
	for i := range n {
		r := rec(i)
		r.OffsetDelta = int32(i)
		bl.Add(&r)
	}
	out, err := bl.AppendTo(nil)
	if err != nil {
		panic(err)
	}
	return record.Batch(out).RecordsBytes()
}

// varintRecord is a record whose fields after the length are given.
func varintRecord(fields ...[]byte) []byte {
	body := bytes.Join(fields, nil)
	return append(binary.AppendVarint(nil, int64(len(body))), body...)
}

func vi(n int64) []byte { return binary.AppendVarint(nil, n) }

func mustCompress(t testing.TB, c record.Codec, src []byte) []byte {
	t.Helper()
	out, err := record.Compress(c, nil, src)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// zstdBomb is a zstd frame without a content size that inflates to n
// bytes (a multiple of 128 KiB) of zeros from RLE blocks of 4 bytes each:
// 32 KiB of input for 1 GiB of output.
func zstdBomb(n int) []byte {
	// Magic; descriptor 0 (no content size, no checksum); window
	// descriptor exponent 7: 1<<17 bytes, the largest block.
	out := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3}
	const block = 128 << 10
	for i := 0; i < n/block; i++ {
		hdr := uint32(block)<<3 | 1<<1 // RLE
		if i == n/block-1 {
			hdr |= 1 // last block
		}
		out = append(out, byte(hdr), byte(hdr>>8), byte(hdr>>16), 0)
	}
	return out
}

// storedState is what must not change when an append is refused.
type storedState struct {
	leo, size int64
	fileSize  int64
}

func stored(t *testing.T, l *Log) storedState {
	t.Helper()
	segs := l.Segments()
	st, err := os.Stat(segmentPath(l.dir, segs[len(segs)-1].base, LogSuffix))
	if err != nil {
		t.Fatal(err)
	}
	return storedState{leo: l.LogEndOffset(), size: l.Size(), fileSize: st.Size()}
}

// Every kind of corrupt batch the reliability issue lists, each with a
// correct CRC, is refused with Kafka's error and nothing is stored; a good
// batch after them is stored at the next offset.
func TestAppendRefusesCorruptRecords(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	mustAppend(t, l, clientBatch(record.CodecNone, 3, goodRecords(3)))

	three := goodRecords(3)
	first := varintRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(0))
	garbage := compressible(300, 99)
	bigLen := append(vi(int64(len(first)-1)+10), first[1:]...)
	noSnappy := append([]byte("\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01"), 0, 0, 0, 50, 1, 2, 3)
	cases := []struct {
		name  string
		batch []byte
		want  *kerr.Error
	}{
		{"garbage records", clientBatch(record.CodecNone, 3, garbage), kerr.InvalidRecord},
		{"first record length 0", clientBatch(record.CodecNone, 1, append(vi(0), first[1:]...)), kerr.InvalidRecord},
		{"first record length negative", clientBatch(record.CodecNone, 1, append(vi(-5), first[1:]...)), kerr.InvalidRecord},
		{"first record length 10 too long", clientBatch(record.CodecNone, 1, bigLen), kerr.InvalidRecord},
		{"record length varint overflows", clientBatch(record.CodecNone, 1, append(bytes.Repeat([]byte{0xff}, 10), 0x7f)), kerr.InvalidRecord},
		{"value longer than the record", clientBatch(record.CodecNone, 1, varintRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(50), []byte("short"), vi(0))), kerr.InvalidRecord},
		{"huge header count", clientBatch(record.CodecNone, 1, varintRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(1<<40))), kerr.InvalidRecord},
		// More records than bytes: the header check answers first.
		{"1000 records declared, 3 held", clientBatch(record.CodecNone, 1000, three), kerr.CorruptMessage},
		{"300 records declared, 3 held", clientBatch(record.CodecNone, 300, three), kerr.InvalidRecord},
		{"3 records declared, 2 held", clientBatch(record.CodecNone, 3, goodRecords(2)), kerr.InvalidRecord},
		{"bytes after the last record", clientBatch(record.CodecNone, 3, append(bytes.Clone(three), 0)), kerr.InvalidRecord},
		{"offset delta not its index", clientBatch(record.CodecNone, 2, append(goodRecords(1), goodRecords(1)...)), kerr.InvalidRecord},
		{"null header key", clientBatch(record.CodecNone, 1, varintRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(1), vi(-1), vi(-1))), kerr.InvalidRecord},
		{"gzip flagged, not compressed", clientBatch(record.CodecGzip, 3, three), kerr.InvalidRecord},
		{"snappy flagged, not compressed", clientBatch(record.CodecSnappy, 3, three), kerr.InvalidRecord},
		{"snappy xerial chunk past the end", clientBatch(record.CodecSnappy, 3, noSnappy), kerr.InvalidRecord},
		{"lz4 flagged, not compressed", clientBatch(record.CodecLZ4, 3, three), kerr.InvalidRecord},
		{"zstd flagged, not compressed", clientBatch(record.CodecZstd, 3, three), kerr.InvalidRecord},
		{"compressed, no records section", clientBatch(record.CodecLZ4, 3, nil), kerr.InvalidRecord},
		{"compressed records are garbage", clientBatch(record.CodecZstd, 3, mustCompress(t, record.CodecZstd, garbage)), kerr.InvalidRecord},
		{"compressed count too high", clientBatch(record.CodecGzip, 4, mustCompress(t, record.CodecGzip, three)), kerr.InvalidRecord},
	}
	for _, c := range compressedCodecs {
		full := mustCompress(t, c, three)
		cases = append(cases, struct {
			name  string
			batch []byte
			want  *kerr.Error
		}{c.String() + " truncated", clientBatch(c, 3, full[:len(full)*2/3]), kerr.InvalidRecord})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := stored(t, l)
			info, err := l.Append(c.batch, OriginClient, 0)
			if !errors.Is(err, c.want) {
				t.Fatalf("Append: %v, want %v", err, c.want)
			}
			var ke *kerr.Error
			if errors.As(err, &ke); ke != c.want {
				t.Fatalf("error %v answers %v first, want %v", err, ke, c.want)
			}
			if info.FirstOffset != -1 {
				t.Fatalf("refused append reports first offset %d", info.FirstOffset)
			}
			if after := stored(t, l); after != before {
				t.Fatalf("refused batch changed the log: %+v, was %+v", after, before)
			}
		})
	}
	if info := mustAppend(t, l, clientBatch(record.CodecNone, 3, three)); info.FirstOffset != 3 {
		t.Fatalf("good batch after refusals at offset %d, want 3", info.FirstOffset)
	}
}

// A batch that inflates to 1 GiB is refused with MESSAGE_TOO_LARGE after
// at most record.InflateLimit bytes of output, not inflated: the allocations of
// the refusal stay far below the claim. A zstd frame or snappy block that
// declares its size is refused before decoding.
func TestAppendRefusesCompressionBombs(t *testing.T) {
	cfg := testConfig()
	cfg.MaxMessageBytes = 64 << 10 // a 4 MiB inflate limit keeps the test quick
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	limit := record.InflateLimit(cfg.MaxMessageBytes)
	if limit != 64*cfg.MaxMessageBytes {
		t.Fatalf("inflate limit %d, want 64 times max.message.bytes", limit)
	}
	declared := zstdBomb(128 << 10)
	declared[4] = 0x80 // descriptor: 4-byte content size follows the window byte
	declared = append(declared[:6], append(binary.LittleEndian.AppendUint32(nil, 1<<30), declared[6:]...)...)
	snappy := append(binary.AppendUvarint(nil, 1<<30), 0, 0, 0, 0)
	for _, c := range []struct {
		name  string
		batch []byte
	}{
		{"zstd 1 GiB, no content size", clientBatch(record.CodecZstd, 1000, zstdBomb(1<<30))},
		{"zstd declaring 1 GiB", clientBatch(record.CodecZstd, 1000, declared)},
		{"snappy declaring 1 GiB", clientBatch(record.CodecSnappy, 1000, snappy)},
		{"zstd just above the limit", clientBatch(record.CodecZstd, 1000, zstdBomb(limit+128<<10))},
		// No declared size: inflated up to the limit, not beyond.
		{"gzip past the limit", clientBatch(record.CodecGzip, 1000, mustCompress(t, record.CodecGzip, make([]byte, limit+1<<20)))},
		{"lz4 past the limit", clientBatch(record.CodecLZ4, 1000, mustCompress(t, record.CodecLZ4, make([]byte, limit+1<<20)))},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := stored(t, l)
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			_, err := l.Append(c.batch, OriginClient, 0)
			runtime.ReadMemStats(&m1)
			if !errors.Is(err, kerr.MessageTooLarge) {
				t.Fatalf("Append: %v, want MESSAGE_TOO_LARGE", err)
			}
			if alloc := m1.TotalAlloc - m0.TotalAlloc; alloc > uint64(3*limit) && !racePoolDrops {
				t.Fatalf("refusing allocated %d bytes, more than 3 times the %d limit", alloc, limit)
			}
			if after := stored(t, l); after != before {
				t.Fatalf("refused batch changed the log: %+v, was %+v", after, before)
			}
		})
	}
}

// Timestamps and keys are checked per record and reported by index, as
// Kafka's RecordErrors; a timestamp error makes it INVALID_TIMESTAMP.
func TestAppendRecordErrors(t *testing.T) {
	cfg := testConfig()
	cfg.TimestampBeforeMaxMs = 60_000
	cfg.TimestampAfterMaxMs = 60_000
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	deltas := []int64{0, -3_600_000, 10, 3_600_000}
	section := recordsSection(len(deltas), func(i int) record.Record {
		return record.Record{TimestampDelta: deltas[i], Key: []byte("k")}
	})
	_, err := l.Append(clientBatch(record.CodecLZ4, 4, mustCompress(t, record.CodecLZ4, section)), OriginClient, 0)
	var re *record.Errors
	if !errors.As(err, &re) || re.Err != kerr.InvalidTimestamp || len(re.Records) != 2 ||
		re.Records[0].Index != 1 || re.Records[1].Index != 3 {
		t.Fatalf("out of range timestamps: %v", err)
	}
	if l.LogEndOffset() != 0 {
		t.Fatalf("LEO %d after a refused batch", l.LogEndOffset())
	}
}

// The batch's max timestamp is the largest record timestamp, as Kafka
// writes it, whatever the producer put there; the CRC stays right.
func TestAppendWritesMaxTimestamp(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	b := record.Batch(clientBatch(record.CodecNone, 3, goodRecords(3))) // deltas 0, 1, 2
	base := b.BaseTimestamp()
	b.SetMaxTimestamp(base + 1000)
	mustAppend(t, l, b)
	r, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := record.ParseBatch(readRange(t, r))
	r.Release()
	if err != nil || got.Validate() != nil {
		t.Fatalf("stored batch: %v %v", err, got.Validate())
	}
	if got.MaxTimestamp() != base+2 {
		t.Fatalf("stored max timestamp %d, want %d", got.MaxTimestamp(), base+2)
	}
}

// Validation allocates nothing per append in steady state, compressed
// batches included (pooled decoders and buffers).
func TestAppendValidateAllocatesNothing(t *testing.T) {
	if racePoolDrops {
		t.Skip("the race detector makes sync.Pool drop entries and instruments allocations")
	}
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			cfg := testConfig()
			cfg.Compact = true // walks keys too
			l := openTestLog(t, t.TempDir(), cfg)
			defer l.Close()
			batch := validateBenchBatch(t, 16<<10, c)
			for range 10 {
				mustAppend(t, l, batch)
			}
			if n := testing.AllocsPerRun(100, func() {
				if _, err := l.Append(batch, OriginClient, 0); err != nil {
					t.Fatal(err)
				}
			}); n != 0 {
				t.Errorf("Append of a %s batch allocates %.1f per call", c, n)
			}
		})
	}
}

// FuzzAppendClient wraps fuzz bytes in a client batch (codec bits, record
// count, a records section compressed here or taken as it is), with a
// correct length and CRC, and appends it to one log shared by every input.
// Append must not panic; it either refuses the batch with a Kafka error and
// stores nothing, or stores a batch whose every record a record.Iter reads
// back.
func FuzzAppendClient(f *testing.F) {
	three := goodRecords(3)
	f.Add(byte(record.CodecNone), int32(3), three)
	f.Add(byte(record.CodecNone), int32(1000), three)
	f.Add(byte(record.CodecNone), int32(1), append(vi(0), three[1:]...))
	f.Add(byte(record.CodecNone), int32(1), varintRecord([]byte{0}, vi(0), vi(0), vi(-1), vi(-1), vi(1<<40)))
	for _, c := range compressedCodecs {
		f.Add(byte(c), int32(3), three)                            // compressed here
		f.Add(byte(c)|8, int32(3), three)                          // flagged, not compressed
		f.Add(byte(c)|8, int32(3), mustCompress(f, c, three)[:20]) // truncated
	}
	f.Add(byte(record.CodecZstd)|8, int32(3), zstdBomb(1<<20))
	cfg := testConfig()
	cfg.MaxMessageBytes = 64 << 10 // inflate limit 4 MiB: bombs stay quick
	l := openTestLog(f, f.TempDir(), cfg)
	f.Cleanup(func() { l.Close() })
	f.Fuzz(func(t *testing.T, mode byte, count int32, data []byte) {
		codec := record.Codec(mode & 7 % 5)
		section := data
		if mode&8 == 0 && codec != record.CodecNone {
			section = mustCompress(t, codec, data)
		}
		leo, size := l.LogEndOffset(), l.Size()
		info, err := l.Append(clientBatch(codec, count, section), OriginClient, 0)
		if err != nil {
			var ke *kerr.Error
			if !errors.As(err, &ke) {
				t.Fatalf("error %v wraps no Kafka error", err)
			}
			if l.LogEndOffset() != leo || l.Size() != size {
				t.Fatalf("refused append moved LEO %d to %d, size %d to %d", leo, l.LogEndOffset(), size, l.Size())
			}
			return
		}
		r, err := l.Read(info.FirstOffset, 8<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		raw := readRange(t, r)
		r.Release()
		b, _, err := record.ParseBatch(raw)
		if err != nil || b.Validate() != nil {
			t.Fatalf("stored batch: %v, %v", err, b.Validate())
		}
		var rr record.Iter
		defer rr.Release()
		if err := rr.Reset(b, record.DecompressLimit); err != nil {
			t.Fatalf("stored batch does not decompress: %v", err)
		}
		n := int32(0)
		for ; rr.Next(); n++ {
			if rr.Offset() != info.FirstOffset+int64(n) {
				t.Fatalf("record %d at offset %d, want %d", n, rr.Offset(), info.FirstOffset+int64(n))
			}
		}
		if rr.Err() != nil || n != b.NumRecords() {
			t.Fatalf("stored batch reads %d of %d records: %v", n, b.NumRecords(), rr.Err())
		}
	})
}
