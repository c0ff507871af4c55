package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/bytebufferpool"
)

var compressedCodecs = []Codec{CodecGzip, CodecSnappy, CodecLZ4, CodecZstd}

// compressible is text-like data: records of a few words from a small
// vocabulary, with some random bytes mixed in.
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

func randomBytes(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 2))
	out := make([]byte, n)
	for i := range out {
		out[i] = byte(rng.Uint32())
	}
	return out
}

func testInputs() map[string][]byte {
	return map[string][]byte{
		"empty":        {},
		"one":          {'x'},
		"small":        compressible(300, 1),
		"two-xerial":   compressible(40<<10, 2),  // two 32 KiB snappy chunks
		"many-blocks":  compressible(300<<10, 3), // several 64 KiB lz4 blocks
		"random":       randomBytes(70<<10, 4),
		"zeros-1MiB":   make([]byte, 1<<20),
		"xerial-magic": append([]byte("\x82SNAPPY\x00"), compressible(100, 5)...),
	}
}

func TestCompressRoundTrip(t *testing.T) {
	for _, c := range allCodecs {
		for name, src := range testInputs() {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				prefix := []byte("prefix")
				comp, err := Compress(c, bytes.Clone(prefix), src)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.HasPrefix(comp, prefix) {
					t.Fatal("Compress overwrote dst")
				}
				dst := &bytebufferpool.ByteBuffer{B: []byte("head")}
				if err := Decompress(c, dst, comp[len(prefix):], len(src)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(dst.B, append([]byte("head"), src...)) {
					t.Fatalf("round trip gave %d bytes, want %d", len(dst.B)-4, len(src))
				}
				// franz-go reads what we write.
				if c != CodecNone && len(src) > 0 { // franz-go reads 16 bytes as a raw block
					got, err := kgo.DefaultDecompressor().Decompress(comp[len(prefix):], kgo.CompressionCodecType(c))
					if err != nil {
						t.Fatalf("franz-go cannot decompress: %v", err)
					}
					if !bytes.Equal(got, src) {
						t.Fatal("franz-go decompressed something else")
					}
				}
			})
		}
	}
}

// TestDecompressFranzGo decompresses what franz-go's compressor writes: the
// formats the Java client writes too (xerial snappy, lz4 frames).
func TestDecompressFranzGo(t *testing.T) {
	for _, c := range compressedCodecs {
		for name, src := range testInputs() {
			if len(src) == 0 {
				continue // franz-go does not compress nothing
			}
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				comp := kgoCompress(t, kgo.CompressionCodecType(c), src)
				var dst bytebufferpool.ByteBuffer
				if err := Decompress(c, &dst, comp, len(src)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(dst.B, src) {
					t.Fatalf("decompressed %d bytes, want %d", len(dst.B), len(src))
				}
			})
		}
	}
}

func TestSnappyFraming(t *testing.T) {
	src := compressible(100<<10, 6)
	x, _ := Compress(CodecSnappy, nil, src)
	want := append([]byte("\x82SNAPPY\x00"), 0, 0, 0, 1, 0, 0, 0, 1)
	if !bytes.HasPrefix(x, want) {
		t.Fatalf("xerial header %x, want %x", x[:16], want)
	}
	chunks := 0
	for rest := x[16:]; len(rest) > 0; chunks++ {
		n := binary.BigEndian.Uint32(rest)
		d, err := s2.DecodedLen(rest[4 : 4+n])
		if err != nil || d > 32<<10 {
			t.Fatalf("chunk %d decodes to %d bytes (%v); the Java client reads chunks of 32 KiB", chunks, d, err)
		}
		rest = rest[4+n:]
	}
	if chunks != 4 {
		t.Fatalf("%d chunks for 100 KiB, want 4", chunks)
	}

	cases := map[string][]byte{
		"raw block":             s2.EncodeSnappy(nil, src),
		"xerial":                x,
		"concatenated xerial":   append(bytes.Clone(x), x...),
		"xerial without chunks": x[:16],
	}
	wants := map[string][]byte{
		"raw block":             src,
		"xerial":                src,
		"concatenated xerial":   append(bytes.Clone(src), src...),
		"xerial without chunks": {},
	}
	for name, comp := range cases {
		var dst bytebufferpool.ByteBuffer
		if err := Decompress(CodecSnappy, &dst, comp, 1<<20); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(dst.B, wants[name]) {
			t.Fatalf("%s: decompressed %d bytes, want %d", name, len(dst.B), len(wants[name]))
		}
	}

	for name, comp := range map[string][]byte{
		"chunk length past the end": x[:30],
		"cut chunk length":          x[:18],
		"zero-length chunk":         append(bytes.Clone(x[:16]), 0, 0, 0, 0),
		"bad block":                 append(bytes.Clone(x[:16]), 0, 0, 0, 2, 0xff, 0xff),
		"bad raw block":             {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		var dst bytebufferpool.ByteBuffer
		if err := Decompress(CodecSnappy, &dst, comp, 1<<20); !errors.Is(err, kerr.CorruptMessage) {
			t.Fatalf("%s: %v, want CorruptMessage", name, err)
		}
	}
}

func TestDecompressLimit(t *testing.T) {
	src := make([]byte, 1<<20) // compresses to almost nothing
	for _, c := range allCodecs {
		t.Run(c.String(), func(t *testing.T) {
			comp, err := Compress(c, nil, src)
			if err != nil {
				t.Fatal(err)
			}
			var dst bytebufferpool.ByteBuffer
			if err := Decompress(c, &dst, comp, len(src)); err != nil || len(dst.B) != len(src) {
				t.Fatalf("at the limit: %d bytes, %v", len(dst.B), err)
			}
			for _, limit := range []int{len(src) - 1, 1000, 1} {
				dst.Reset()
				err := Decompress(c, &dst, comp, limit)
				if !errors.Is(err, ErrDecompressedTooLarge) || !errors.Is(err, kerr.MessageTooLarge) {
					t.Fatalf("limit %d: %v, want ErrDecompressedTooLarge", limit, err)
				}
				// The guard stops the output, not just reports it.
				if len(dst.B) > limit+1 {
					t.Fatalf("limit %d: decompressed %d bytes before stopping", limit, len(dst.B))
				}
			}
		})
	}
}

func TestDecompressCorrupt(t *testing.T) {
	for _, c := range compressedCodecs {
		t.Run(c.String(), func(t *testing.T) {
			src := compressible(50<<10, 7)
			comp, _ := Compress(c, nil, src)
			inputs := map[string][]byte{
				"nothing":   {},
				"garbage":   randomBytes(1000, 8),
				"truncated": comp[:len(comp)/2],
			}
			if c != CodecSnappy { // a raw snappy block has no checksum
				flipped := bytes.Clone(comp)
				at := len(flipped) - 3
				if c == CodecLZ4 {
					// In the end mark: the content checksum after it
					// is not checked, as in Kafka (TestLZ4Checksums).
					at = len(flipped) - 6
				}
				flipped[at] ^= 0x40
				inputs["flipped"] = flipped
			}
			for name, in := range inputs {
				var dst bytebufferpool.ByteBuffer
				err := Decompress(c, &dst, in, 1<<20)
				if !errors.Is(err, kerr.CorruptMessage) {
					t.Errorf("%s: %v, want CorruptMessage", name, err)
				}
			}
		})
	}
	var dst bytebufferpool.ByteBuffer
	if err := Decompress(Codec(5), &dst, []byte{1}, 10); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("codec 5: %v", err)
	}
	if _, err := Compress(Codec(5), nil, []byte{1}); err == nil {
		t.Fatal("Compress with codec 5 passed")
	}
}

// TestCompressionAllocs: with pools warm and buffers grown, decompressing
// allocates nothing, and compressing into a big enough dst nothing either.
func TestCompressionAllocs(t *testing.T) {
	if racePoolDrops {
		t.Skip("sync.Pool drops items under the race detector")
	}
	src := compressible(64<<10, 9)
	for _, c := range compressedCodecs {
		t.Run(c.String(), func(t *testing.T) {
			comp, _ := Compress(c, nil, src)
			var dst bytebufferpool.ByteBuffer
			decompress := func() {
				dst.Reset()
				if err := Decompress(c, &dst, comp, 1<<20); err != nil {
					t.Fatal(err)
				}
			}
			decompress()
			if n := testing.AllocsPerRun(100, decompress); n != 0 {
				t.Errorf("Decompress allocates %v times per call", n)
			}
			// Batches of different sizes in turn, as a pooled buffer
			// sees them: once grown for the larger, the buffer keeps
			// its capacity through the smaller.
			small, _ := Compress(c, nil, src[:48<<10])
			dst.Reset()
			if err := Decompress(c, &dst, comp, 1<<20); err != nil {
				t.Fatal(err)
			}
			inTurn := func() {
				for _, in := range [][]byte{small, comp} {
					dst.Reset()
					if err := Decompress(c, &dst, in, 1<<20); err != nil {
						t.Fatal(err)
					}
				}
			}
			if n := testing.AllocsPerRun(100, inTurn); n != 0 {
				t.Errorf("Decompress of a smaller and a larger batch in turn allocates %v times per pair", n)
			}
			out := make([]byte, 0, 2*len(src))
			compress := func() {
				var err error
				if out, err = Compress(c, out[:0], src); err != nil {
					t.Fatal(err)
				}
			}
			compress()
			if n := testing.AllocsPerRun(100, compress); n != 0 {
				t.Errorf("Compress allocates %v times per call", n)
			}
		})
	}
}

func BenchmarkDecompress(b *testing.B) {
	// A 256 KiB records section of 1,000 records with headers.
	var bl Builder
	bl.Reset(BatchHeader{LastOffsetDelta: -1, ProducerID: NoProducerID, BaseSequence: NoSequence})
	for i := range int32(1000) {
		bl.Add(&Record{OffsetDelta: i, TimestampDelta: int64(i), Key: compressible(16, uint64(i)),
			Value: compressible(230, uint64(i)+5000), Headers: []Header{{Key: []byte("trace"), Value: compressible(8, uint64(i))}}})
	}
	src := bl.records
	for _, c := range compressedCodecs {
		b.Run(c.String(), func(b *testing.B) {
			comp, _ := Compress(c, nil, src)
			var dst bytebufferpool.ByteBuffer
			b.SetBytes(int64(len(src)))
			b.ReportAllocs()
			for b.Loop() {
				dst.Reset()
				if err := Decompress(c, &dst, comp, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(src))/float64(len(comp)), "ratio")
		})
	}
}

// TestZstdWindowClaim: a frame may claim a window of up to 128 MiB while
// holding a few bytes; decoding it must cost memory in proportion to the
// output, not the claim.
func TestZstdWindowClaim(t *testing.T) {
	// Frame header: magic, descriptor 0 (no content size, not single
	// segment, no checksum), window descriptor exponent 17: 1<<27 bytes.
	// Then one last raw block holding src.
	src := compressible(1000, 10)
	frame := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 17 << 3}
	bh := uint32(1) | uint32(len(src))<<3 // last, raw, size
	frame = append(frame, byte(bh), byte(bh>>8), byte(bh>>16))
	frame = append(frame, src...)
	comp := bytes.NewBuffer(frame)
	h := new(zstd.Header)
	if err := h.Decode(comp.Bytes()); err != nil || h.WindowSize != 128<<20 || h.HasFCS {
		t.Fatalf("test frame: window %d, content size known %v, %v", h.WindowSize, h.HasFCS, err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var dst bytebufferpool.ByteBuffer
	if err := Decompress(CodecZstd, &dst, comp.Bytes(), 1<<20); err != nil || !bytes.Equal(dst.B, src) {
		t.Fatalf("decompressed %d bytes, %v", len(dst.B), err)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Fatalf("decoding %d bytes allocated %d MiB", len(src), n>>20)
	}
}
