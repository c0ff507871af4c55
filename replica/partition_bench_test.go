package replica

import (
	"testing"
)

// BenchmarkLeaderAppend is a leader's Partition.Append of a one-record
// batch (acks=1), one appender and one per core: what the partition adds
// to the log's append.
func BenchmarkLeaderAppend(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		p := lead(b, newManager(b), "t", 1)
		rec := batch(b, 1)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Append(rec, 1); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		p := lead(b, newManager(b), "t", 1)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			rec := batch(b, 1)
			for pb.Next() {
				if _, err := p.Append(rec, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
