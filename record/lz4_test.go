package record

import (
	"bytes"
	"errors"
	"testing"

	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/valyala/bytebufferpool"
)

// pierrecFrame is src written by pierrec's writer with opts.
func pierrecFrame(t testing.TB, src []byte, opts ...lz4.Option) []byte {
	t.Helper()
	var out bytes.Buffer
	w := lz4.NewWriter(&out)
	if err := w.Apply(opts...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(src); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// readerDecode is what pierrec's reader makes of src, read as Decompress
// reads it (a reader that stops making progress fails).
func readerDecode(src []byte) ([]byte, error) {
	return readLimited(nil, lz4.NewReader(bytes.NewReader(src)), len(src), 64<<20)
}

// TestLZ4FramesDecodedHere: the frames Kafka clients write (franz-go's,
// this package's own, with and without a content size, in every block
// size, compressible or stored raw, several in a row) are decoded by
// decodeLZ4Frames, to what pierrec's reader makes of them; frames of other
// kinds are left to the reader, which decodes them.
func TestLZ4FramesDecodedHere(t *testing.T) {
	text, noise := compressible(600<<10, 11), randomBytes(300<<10, 12)
	own, _ := Compress(CodecLZ4, nil, text)
	here := map[string][]byte{
		"franz-go":         kgoCompress(t, kgo.CodecLz4, text),
		"own":              own,
		"random, raw":      pierrecFrame(t, noise),
		"content size":     pierrecFrame(t, text, lz4.SizeOption(uint64(len(text)))),
		"no checksum":      pierrecFrame(t, text, lz4.ChecksumOption(false)),
		"256 KiB blocks":   pierrecFrame(t, text, lz4.BlockSizeOption(lz4.Block256Kb)),
		"1 MiB blocks":     pierrecFrame(t, text, lz4.BlockSizeOption(lz4.Block1Mb)),
		"4 MiB blocks":     pierrecFrame(t, text, lz4.BlockSizeOption(lz4.Block4Mb)),
		"two frames":       append(bytes.Clone(own), own...),
		"one byte":         pierrecFrame(t, []byte{'x'}),
		"content size 0":   pierrecFrame(t, nil, lz4.SizeOption(0)),
		"size and noise":   pierrecFrame(t, noise, lz4.SizeOption(uint64(len(noise)))),
		"own, 3 in a row":  bytes.Repeat(own, 3),
		"franz-go, random": kgoCompress(t, kgo.CodecLz4, noise),
	}
	for name, src := range here {
		want, err := readerDecode(src)
		if err != nil {
			t.Fatalf("%s: the reader fails: %v", name, err)
		}
		got, ok, err := decodeLZ4Frames([]byte("head"), src, 64<<20)
		if !ok || err != nil {
			t.Errorf("%s: not decoded here (ok %v, %v)", name, ok, err)
			continue
		}
		if !bytes.Equal(got[4:], want) || string(got[:4]) != "head" {
			t.Errorf("%s: decoded %d bytes, the reader %d", name, len(got)-4, len(want))
		}
	}

	elsewhere := map[string][]byte{
		"block checksums": pierrecFrame(t, text, lz4.BlockChecksumOption(true)),
		"legacy":          pierrecFrame(t, text, lz4.LegacyOption(true)),
	}
	for name, src := range elsewhere {
		if got, ok, err := decodeLZ4Frames([]byte("head"), src, 64<<20); ok || err != nil || string(got) != "head" {
			t.Errorf("%s: decoded here (ok %v, %v, %d bytes)", name, ok, err, len(got))
		}
		var dst bytebufferpool.ByteBuffer
		if err := Decompress(CodecLZ4, &dst, src, 64<<20); err != nil || !bytes.Equal(dst.B, text) {
			t.Errorf("%s: the reader gave %d bytes, %v", name, len(dst.B), err)
		}
	}
}

// A wrong header checksum fails the frame, as in Kafka; a wrong content
// checksum does not, as in Kafka (the batch's CRC covers those bytes).
func TestLZ4Checksums(t *testing.T) {
	text := compressible(100<<10, 13)
	for _, opts := range [][]lz4.Option{nil, {lz4.SizeOption(uint64(len(text)))}} {
		frame := pierrecFrame(t, text, opts...)
		hc := 6
		if len(opts) > 0 {
			hc += 8
		}
		bad := bytes.Clone(frame)
		bad[hc] ^= 1
		var dst bytebufferpool.ByteBuffer
		if err := Decompress(CodecLZ4, &dst, bad, 1<<20); !errors.Is(err, kerr.CorruptMessage) {
			t.Errorf("header checksum flipped (descriptor of %d bytes): %v, want CorruptMessage", hc-4, err)
		}
		bad = bytes.Clone(frame)
		bad[len(bad)-1] ^= 1
		dst.Reset()
		if err := Decompress(CodecLZ4, &dst, bad, 1<<20); err != nil || !bytes.Equal(dst.B, text) {
			t.Errorf("content checksum flipped: %d bytes, %v; Kafka does not check it", len(dst.B), err)
		}
	}
}

// xxh32 gives the specification's reference values, on every length path
// (under 16 bytes, a multiple of 16, and beyond with a tail).
func TestXXH32(t *testing.T) {
	for in, want := range map[string]uint32{
		"":    0x02CC5D05,
		"a":   0x550D7456,
		"abc": 0x32D153FF,
		"Nobody inspects the spammish repetition": 0xE2293B2F,
	} {
		if got := xxh32([]byte(in)); got != want {
			t.Errorf("xxh32(%q) = %#x, want %#x", in, got, want)
		}
	}
}

// FuzzLZ4Frames: on any input decodeLZ4Frames does not panic, and what it
// decodes is what pierrec's reader decodes, unless the reader refuses the
// frame for its content checksum, which Kafka does not check.
func FuzzLZ4Frames(f *testing.F) {
	text := compressible(5000, 14)
	f.Add(pierrecFrame(f, text))
	f.Add(pierrecFrame(f, text, lz4.SizeOption(uint64(len(text)))))
	f.Add(pierrecFrame(f, randomBytes(3000, 15)))
	f.Add(kgoCompress(f, kgo.CodecLz4, text))
	f.Add(pierrecFrame(f, text, lz4.BlockChecksumOption(true)))
	f.Add([]byte{0x04, 0x22, 0x4d, 0x18, 0x60, 0x40, 0x82, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, src []byte) {
		got, ok, err := decodeLZ4Frames(nil, src, 1<<20)
		if !ok {
			if err != nil || len(got) != 0 {
				t.Fatalf("declined with %d bytes, %v", len(got), err)
			}
			return
		}
		if errors.Is(err, ErrDecompressedTooLarge) {
			if want, rerr := readerDecode(src); rerr == nil && len(want) <= 1<<20 {
				t.Fatalf("too large, where the reader decodes %d bytes", len(want))
			}
			return
		}
		want, rerr := readerDecode(src)
		if errors.Is(rerr, lz4.ErrInvalidFrameChecksum) {
			return
		}
		if err != nil || rerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("decoded %d bytes (%v), the reader %d (%v)", len(got), err, len(want), rerr)
		}
	})
}
