package msgset

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/record"
)

// FuzzUpconvert feeds message sets from the wire (Produce v0-v2), wrapped
// ones included, so the decompressors see mutated frames: any input is
// refused with a Kafka error or becomes a batch the log accepts.
func FuzzUpconvert(f *testing.F) {
	for _, magic := range []int8{0, 1} {
		for _, codec := range legacyCodecs {
			f.Add(kmsgSet(f, magic, codec, testMsgs))
		}
	}
	var c Converter
	for _, codec := range legacyCodecs {
		// Sets as kzero writes them, magic 0 LZ4 with Kafka's checksum.
		down, err := c.Downconvert(nil, v2Batch(f, codec, false, testMsgs), 0, 0)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(down)
	}
	f.Fuzz(func(t *testing.T, set []byte) {
		out, err := c.Upconvert(nil, set, 1<<20)
		if err != nil {
			var ke *kerr.Error
			if !errors.As(err, &ke) {
				t.Fatalf("error without a Kafka code: %v", err)
			}
			return
		}
		b, rest, err := record.ParseBatch(out)
		if err != nil || len(rest) != 0 {
			t.Fatalf("result does not parse: %v", err)
		}
		if err := b.ValidateProduce(); err != nil {
			t.Fatalf("result does not validate: %v", err)
		}
	})
}

// FuzzDownconvert feeds stored batches whose records are mutated (the CRC
// is made right again, as a batch on disk was checked when it came in): it
// never panics, and what it writes is a message set that reads back.
func FuzzDownconvert(f *testing.F) {
	for _, codec := range legacyCodecs {
		f.Add([]byte(v2Batch(f, codec, false, testMsgs)), int8(1), int64(0))
		f.Add([]byte(v2Batch(f, codec, true, testMsgs)), int8(0), int64(102))
	}
	var c Converter
	f.Fuzz(func(t *testing.T, raw []byte, magic int8, first int64) {
		b, _, err := record.ParseBatch(raw)
		if err != nil {
			return
		}
		b.UpdateCRC()
		magic &= 1
		out, err := c.Downconvert(nil, b, magic, first)
		if err != nil {
			return
		}
		for len(out) > 0 {
			_, rest, partial, err := readEntry(out)
			if err != nil || partial {
				t.Fatalf("down-converted set does not read back: %v partial %v", err, partial)
			}
			out = rest
		}
	})
}
