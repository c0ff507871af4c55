package log

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kzero/record"
)

// BenchmarkClean measures cleaning throughput: bytes of log read per
// second by one pass over a log of 1 KiB records in batches of 16, where
// 10% of the keys are unique (each key written about ten times), with the
// default 128 MiB offset map.
//
//	go test -run='^$' -bench=BenchmarkClean -benchtime=3x ./log/
func BenchmarkClean(b *testing.B) {
	for _, codec := range []record.Codec{record.CodecNone, record.CodecLZ4, record.CodecZstd} {
		b.Run(codec.String(), func(b *testing.B) { benchmarkClean(b, codec, 64<<20) })
	}
}

func benchmarkClean(b *testing.B, codec record.Codec, size int) {
	clk := newClock()
	cfg := clConfig(clk)
	cfg.SegmentBytes = 8 << 20
	cfg.SegmentIndexBytes = 1 << 20
	cfg.IndexIntervalBytes = 4096
	cfg.MinCleanableDirtyRatio = 0.5
	src := filepath.Join(b.TempDir(), "src")
	l, err := Open(src, cfg, OpenOptions{})
	if err != nil {
		b.Fatal(err)
	}
	const recordSize, perBatch = 1024, 16
	records := size / recordSize
	keys := records / 10
	rng := rand.New(rand.NewPCG(7, 7))
	val := strings.Repeat("v", recordSize-40)
	for i := 0; i < records; i += perBatch {
		var kvs []kv
		for j := range perBatch {
			kvs = append(kvs, kv{k: fmt.Sprintf("key-%08d", rng.IntN(keys)), v: fmt.Sprintf("%08d", i+j) + val})
		}
		if _, err := l.Append(clBatch(b, codec, clk.Ms(), kvs...), OriginClient, 0); err != nil {
			b.Fatal(err)
		}
	}
	l.Roll()
	input := l.Size()
	if err := l.Close(); err != nil {
		b.Fatal(err)
	}
	c := NewCleaner(CleanerConfig{Logger: clCleaner(0).cfg.Logger})
	b.SetBytes(input)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		dir := filepath.Join(b.TempDir(), fmt.Sprint(i))
		copyDir(b, src, dir)
		l, err := Open(dir, cfg, OpenOptions{CleanShutdown: true})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		cleaned, err := c.CleanOnce([]*Log{l})
		if err != nil || !cleaned {
			b.Fatalf("clean: %v %v", cleaned, err)
		}
		b.StopTimer()
		st := c.LastStats()
		b.ReportMetric(float64(st.RecordsKept)/float64(st.RecordsRead), "kept/read")
		b.ReportMetric(float64(st.BytesWritten)/float64(st.BytesRead), "out/in")
		b.ReportMetric(float64(st.RecordsRead*recordSize)/st.Duration.Seconds()/1e6, "record-MB/s")
		l.Close()
		os.RemoveAll(dir)
		b.StartTimer()
	}
}

func copyDir(b *testing.B, from, to string) {
	if err := os.MkdirAll(to, 0o755); err != nil {
		b.Fatal(err)
	}
	ents, err := os.ReadDir(from)
	if err != nil {
		b.Fatal(err)
	}
	for _, e := range ents {
		in, err := os.Open(filepath.Join(from, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		out, err := os.Create(filepath.Join(to, e.Name()))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(out, in); err != nil {
			b.Fatal(err)
		}
		in.Close()
		out.Close()
	}
}
