package msgset

// The conversion kernels alone, per codec: a batch of 100 records of
// ~200 bytes down to message format v1, and a v1 message set up to v2.
//
//	go test -run='^$' -bench=. -benchmem ./msgset/

import (
	"fmt"
	"testing"
)

func benchMsgs() []testMsg {
	msgs := make([]testMsg, 100)
	for i := range msgs {
		msgs[i] = testMsg{int64(1700000000000 + i), fmt.Appendf(nil, "key-%d", i), fmt.Appendf(nil, "value %d %0200d", i, i)}
	}
	return msgs
}

func BenchmarkDownconvert(b *testing.B) {
	msgs := benchMsgs()
	for _, codec := range legacyCodecs {
		b.Run(codec.String(), func(b *testing.B) {
			batch := v2Batch(b, codec, false, msgs)
			var c Converter
			var dst []byte
			b.SetBytes(int64(len(batch)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = c.Downconvert(dst[:0], batch, 1, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUpconvert(b *testing.B) {
	msgs := benchMsgs()
	for _, codec := range legacyCodecs {
		b.Run(codec.String(), func(b *testing.B) {
			set := kmsgSet(b, 1, codec, msgs)
			var c Converter
			var dst []byte
			b.SetBytes(int64(len(set)))
			b.ReportAllocs()
			for b.Loop() {
				var err error
				if dst, err = c.Upconvert(dst[:0], set, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
