package log

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kzero/record"
)

// The append and read paths allocate nothing per call in steady state.
func TestAppendAndReadAllocateNothing(t *testing.T) {
	if racePoolDrops {
		t.Skip("the race detector makes sync.Pool drop entries and instruments allocations")
	}
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	batch := makeBatch(t, 16, 1024, record.CodecNone)
	for i := 0; i < 10; i++ { // warm the pools
		mustAppend(t, l, batch)
	}
	if n := testing.AllocsPerRun(200, func() {
		if _, err := l.Append(batch, OriginClient, 0); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("Append allocates %.1f per call", n)
	}
	end := l.LogEndOffset()
	if n := testing.AllocsPerRun(200, func() {
		r, err := l.Read(end/2, 1<<20, end, true)
		if err != nil || r.Empty() {
			t.Fatal(err)
		}
		r.Release()
	}); n != 0 {
		t.Errorf("Read allocates %.1f per call", n)
	}
}

// benchSizes are the batch sizes the storage issue measures, with 1 KiB records.
var benchSizes = []int{16 << 10, 1 << 20}

// BenchmarkAppend measures Log.Append of 1 KiB records batched into 16 KiB
// and 1 MiB batches; BenchmarkPlainWrite is the same bytes written with a
// write() loop, the ceiling it is compared with.
func BenchmarkAppend(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("batch=%dKiB", size>>10), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MaxMessageBytes = 2 << 20
			cfg.FileDeleteDelayMs = 0
			cfg.SegmentBytes = 1 << 30
			l := openTestLog(b, b.TempDir(), cfg)
			defer l.Close()
			batch := makeBatch(b, size/1024, 1024-20, record.CodecNone)
			b.SetBytes(int64(len(batch)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := l.Append(batch, OriginClient, 0); err != nil {
					b.Fatal(err)
				}
				// Keep the disk and page cache bounded like BenchmarkPlainWrite:
				// at most about 1 GiB of file.
				if l.Size() > 1<<30 {
					l.DeleteRecordsBefore(l.LogEndOffset())
				}
			}
		})
	}
}

func BenchmarkPlainWrite(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("batch=%dKiB", size>>10), func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "plain"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			buf := makeBatch(b, size/1024, 1024-20, record.CodecNone)
			b.SetBytes(int64(len(buf)))
			var written int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.Write(buf); err != nil {
					b.Fatal(err)
				}
				// Same disk bound as BenchmarkAppend: start a new file.
				if written += int64(len(buf)); written > 1<<30 {
					f.Truncate(0)
					f.Seek(0, 0)
					written = 0
				}
			}
		})
	}
}

// BenchmarkRead measures resolving a fetch offset to a file range in a
// 1 GiB-class segment: segment search, index lookup, header scan.
func BenchmarkRead(b *testing.B) {
	cfg := DefaultConfig()
	l := openTestLog(b, b.TempDir(), cfg)
	defer l.Close()
	batch := makeBatch(b, 16, 1000, record.CodecNone)
	for i := 0; i < 20000; i++ {
		if _, err := l.Append(batch, OriginClient, 0); err != nil {
			b.Fatal(err)
		}
	}
	end := l.LogEndOffset()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		off := int64(i*7919) % end
		r, err := l.Read(off, 1<<20, end, true)
		if err != nil {
			b.Fatal(err)
		}
		r.Release()
	}
}

// BenchmarkAppendVsWrite interleaves, call by call, a Log.Append and a
// plain write() of the same batch to a second file, and reports each one's
// throughput and their ratio. Interleaving exposes both to the same page
// cache and VM state, which on a shared VM moves more than either does.
func BenchmarkAppendVsWrite(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprintf("batch=%dKiB", size>>10), func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.MaxMessageBytes = 2 << 20
			cfg.FileDeleteDelayMs = 0
			cfg.SegmentBytes = 256 << 20
			dir := b.TempDir()
			l := openTestLog(b, filepath.Join(dir, "log"), cfg)
			defer l.Close()
			f, err := os.Create(filepath.Join(dir, "plain"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			batch := makeBatch(b, size/1024, 1024-20, record.CodecNone)
			plain := append([]byte(nil), batch...)
			var appendNs, writeNs, written int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				if _, err := l.Append(batch, OriginClient, 0); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				if _, err := f.Write(plain); err != nil {
					b.Fatal(err)
				}
				t2 := time.Now()
				appendNs += t1.Sub(t0).Nanoseconds()
				writeNs += t2.Sub(t1).Nanoseconds()
				// Both files stay under about 1 GiB, freed the same way.
				if written += int64(len(batch)); written > 1<<30 {
					l.DeleteRecordsBefore(l.LogEndOffset())
					f.Truncate(0)
					f.Seek(0, 0)
					written = 0
				}
			}
			bytes := float64(b.N) * float64(len(batch))
			b.ReportMetric(bytes/float64(appendNs)*1e3, "append-MB/s")
			b.ReportMetric(bytes/float64(writeNs)*1e3, "write-MB/s")
			b.ReportMetric(float64(writeNs)/float64(appendNs), "append/write")
		})
	}
}

// BenchmarkRoll is one append of a 16 KiB batch followed by a roll: the
// time an appender (and, for inline produce, its event loop) holds the
// log's lock to start a new segment. A roll seals the old segment, creates
// the new one's files and writes the producer snapshot; the fsyncs are
// left to the background flush.
func BenchmarkRoll(b *testing.B) {
	cfg := DefaultConfig()
	cfg.FileDeleteDelayMs = 0
	cfg.SegmentIndexBytes = 1 << 20
	l := openTestLog(b, b.TempDir(), cfg)
	defer l.Close()
	batch := makeBatch(b, 16, 1024-20, record.CodecNone)
	b.ResetTimer()
	for range b.N {
		if _, err := l.Append(batch, OriginClient, 0); err != nil {
			b.Fatal(err)
		}
		if err := l.Roll(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		l.bg.Wait() // each roll on its own: no flush of the last one in flight
		b.StartTimer()
		if len(l.Segments()) > 200 {
			b.StopTimer()
			l.DeleteRecordsBefore(l.LogEndOffset())
			b.StartTimer()
		}
	}
}
