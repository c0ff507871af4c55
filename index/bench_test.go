package index

import (
	"math/rand/v2"
	"path/filepath"
	"testing"

	"kzero/vfs"
)

const benchBytes = 10 << 20 // Kafka's default segment.index.bytes

// fullOffsetIndex returns a 10 MiB offset index with every slot used, the
// entries 4 offsets and 1 KiB apart (positions must stay below 2 GiB).
func fullOffsetIndex(b *testing.B) *OffsetIndex {
	x, err := OpenOffsetIndex(vfs.OS, filepath.Join(b.TempDir(), "b.index"), 0, benchBytes)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.Close() })
	for i := 0; !x.Full(); i++ {
		if err := x.Append(int64(i)*4, int64(i)*1024); err != nil {
			b.Fatal(err)
		}
	}
	return x
}

// targets returns 1<<16 lookup targets drawn from [lo, hi).
func targets(lo, hi int64) []int64 {
	rng := rand.New(rand.NewPCG(1, 2))
	ts := make([]int64, 1<<16)
	for i := range ts {
		ts[i] = lo + rng.Int64N(hi-lo)
	}
	return ts
}

func BenchmarkOffsetLookupRandom(b *testing.B) {
	x := fullOffsetIndex(b)
	ts := targets(0, x.Last().Offset+4)
	b.ResetTimer()
	var sink OffsetPosition
	for i := 0; b.Loop(); i++ {
		sink = x.Lookup(ts[i&(len(ts)-1)])
	}
	_ = sink
}

// BenchmarkOffsetLookupTail looks up offsets in the last 1,000 entries, where
// consumers that keep up and followers fetch.
func BenchmarkOffsetLookupTail(b *testing.B) {
	x := fullOffsetIndex(b)
	end := x.Last().Offset + 4
	ts := targets(end-4000, end)
	b.ResetTimer()
	var sink OffsetPosition
	for i := 0; b.Loop(); i++ {
		sink = x.Lookup(ts[i&(len(ts)-1)])
	}
	_ = sink
}

func BenchmarkOffsetAppend(b *testing.B) {
	x, err := OpenOffsetIndex(vfs.OS, filepath.Join(b.TempDir(), "b.index"), 0, benchBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	var next int64
	for b.Loop() {
		if x.Full() {
			b.StopTimer()
			x.Reset()
			next = 0
			b.StartTimer()
		}
		if err := x.Append(next, next); err != nil {
			b.Fatal(err)
		}
		next++
	}
}

func BenchmarkTimeLookupRandom(b *testing.B) {
	x, err := OpenTimeIndex(vfs.OS, filepath.Join(b.TempDir(), "b.timeindex"), 0, benchBytes)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Close()
	const t0 = 1_700_000_000_000
	for i := 0; !x.Full(); i++ {
		if err := x.MaybeAppend(t0+int64(i)*10, int64(i)*4); err != nil {
			b.Fatal(err)
		}
	}
	ts := targets(t0-10, x.Last().Timestamp+10)
	b.ResetTimer()
	var sink TimestampOffset
	for i := 0; b.Loop(); i++ {
		sink = x.Lookup(ts[i&(len(ts)-1)])
	}
	_ = sink
}
