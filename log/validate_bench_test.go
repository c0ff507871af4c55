package log

import (
	"fmt"
	"testing"
	"time"

	"kzero/record"
)

// validateBenchBatch is a client batch of 1 KiB records (16-byte keys,
// text-like values that compress about 3:1) filling size bytes before
// compression, stamped now.
func validateBenchBatch(tb testing.TB, size int, codec record.Codec) []byte {
	tb.Helper()
	var bl record.Builder
	bl.Reset(record.BatchHeader{Codec: codec, BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1,
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence})
	for i := range size / 1024 {
		bl.Add(&record.Record{OffsetDelta: int32(i), TimestampDelta: int64(i % 3), Key: compressible(16, uint64(i)),
			Value: compressible(1024-30, uint64(i)+7)})
	}
	out, err := bl.AppendTo(nil)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkAppendValidate is Log.Append of one client batch: 1 KiB records
// in 16 KiB and 1 MiB batches, uncompressed, lz4 and zstd. SetBytes is the
// uncompressed size, so MB/s compare across codecs. It needs nothing but
// Append, so the same file measures the code before record validation.
func BenchmarkAppendValidate(b *testing.B) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecLZ4, record.CodecZstd} {
		for _, size := range []int{16 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/batch=%dKiB", codec, size>>10), func(b *testing.B) {
				cfg := DefaultConfig()
				cfg.MaxMessageBytes = 2 << 20
				cfg.FileDeleteDelayMs = 0
				cfg.SegmentBytes = 1 << 30
				l := openTestLog(b, b.TempDir(), cfg)
				defer l.Close()
				batch := validateBenchBatch(b, size, codec)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := l.Append(batch, OriginClient, 0); err != nil {
						b.Fatal(err)
					}
					if l.Size() > 256<<20 {
						l.DeleteRecordsBefore(l.LogEndOffset())
					}
				}
			})
		}
	}
}

// BenchmarkClientValidation is the CPU a client batch's checks cost before
// it is written, without the write: the header and CRC (ValidateProduce),
// then every record (ValidateRecords), on the batches of
// BenchmarkAppendValidate. Before record validation the kernel was
// ValidateProduce alone: run this file with ValidateRecords dropped at the
// parent commit to compare.
func BenchmarkClientValidation(b *testing.B) {
	cfg := DefaultConfig()
	cfg.MaxMessageBytes = 2 << 20
	for _, codec := range []record.Codec{record.CodecNone, record.CodecLZ4, record.CodecZstd} {
		for _, size := range []int{16 << 10, 1 << 20} {
			b.Run(fmt.Sprintf("%s/batch=%dKiB", codec, size>>10), func(b *testing.B) {
				batch := record.Batch(validateBenchBatch(b, size, codec))
				now := time.Now().UnixMilli()
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					if err := batch.ValidateProduce(); err != nil {
						b.Fatal(err)
					}
					if _, err := batch.ValidateRecords(cfg.recordPolicy(), now); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
