package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/valyala/bytebufferpool"
)

// A compressed batch holds its whole records section as one block of the
// codec's stream format:
//
//	gzip    RFC 1952 members (the Java client writes one)
//	snappy  xerial framing, or a raw snappy block (older clients, librdkafka):
//	          "\x82SNAPPY\x00"  version int32 = 1  compatible int32 = 1
//	          then chunks: length int32 (big-endian)  raw snappy block
//	lz4     LZ4 frame format (not the raw block format); see lz4.go
//	zstd    zstd frames
//
// Encoders and decoders are pooled: building one costs far more than using
// it, and a broker decompresses every compressed batch it validates.

// ErrDecompressedTooLarge means a records section decompresses to more than
// the limit the caller set: a decompression bomb, or a batch above the
// partition's max message bytes. It wraps kerr.MessageTooLarge.
var ErrDecompressedTooLarge = fmt.Errorf("decompressed records exceed the limit: %w", kerr.MessageTooLarge)

var errUnknownCodec = errors.New("unknown compression codec")

// Decompress appends src, a records section compressed with c, decompressed
// to dst.B. At most limit bytes are appended (limit <= 0 means
// math.MaxInt32); beyond that it fails with ErrDecompressedTooLarge. Malformed
// input gives an error wrapping kerr.CorruptMessage. On error dst.B may hold
// part of the output.
func Decompress(c Codec, dst *bytebufferpool.ByteBuffer, src []byte, limit int) error {
	if limit <= 0 || limit > math.MaxInt32 {
		limit = math.MaxInt32
	}
	err := decompress(c, dst, src, limit)
	if err == nil || errors.Is(err, ErrDecompressedTooLarge) {
		return err
	}
	return fmt.Errorf("decompressing %s records: %w: %w", c, err, kerr.CorruptMessage)
}

func decompress(c Codec, dst *bytebufferpool.ByteBuffer, src []byte, limit int) (err error) {
	if c == CodecNone {
		if len(src) > limit {
			return ErrDecompressedTooLarge
		}
		dst.B = append(dst.B, src...)
		return nil
	}
	if len(src) == 0 {
		// Some decoders read no input as an empty stream; no encoder
		// writes one.
		return io.ErrUnexpectedEOF
	}
	switch c {
	case CodecGzip:
		d := gzipReaders.Get().(*gzipReader)
		d.src.Reset(src)
		if err = d.r.Reset(&d.src); err == nil {
			dst.B, err = readLimited(dst.B, &d.r, len(src), limit)
		}
		d.src.Reset(nil)
		gzipReaders.Put(d)
	case CodecSnappy:
		dst.B, err = decodeSnappy(dst.B, src, limit)
	case CodecLZ4:
		var ok bool
		if dst.B, ok, err = decodeLZ4Frames(dst.B, src, limit); ok {
			break
		}
		d := lz4Readers.Get().(*lz4Reader)
		d.src.Reset(src)
		d.r.Reset(&d.src)
		dst.B, err = readLimited(dst.B, d.r, len(src), limit)
		d.r.Reset(nil) // returns the block buffer to lz4's pool
		d.src.Reset(nil)
		lz4Readers.Put(d)
	case CodecZstd:
		d := zstdReaders.Get().(*zstd.Decoder)
		dst.B, err = decodeZstd(d, dst.B, src, limit)
		zstdReaders.Put(d)
	default:
		err = errUnknownCodec
	}
	return err
}

// Compress appends src compressed with c to dst, framed as the Java client
// frames it, at the codec's default level.
func Compress(c Codec, dst, src []byte) ([]byte, error) {
	switch c {
	case CodecNone:
		return append(dst, src...), nil
	case CodecGzip:
		e := gzipWriters.Get().(*gzipWriter)
		e.out.b = dst
		e.w.Reset(&e.out)
		_, err := e.w.Write(src)
		if err == nil {
			err = e.w.Close()
		}
		dst, e.out.b = e.out.b, nil
		gzipWriters.Put(e)
		return dst, err
	case CodecSnappy:
		return encodeXerial(dst, src), nil
	case CodecLZ4:
		e := lz4Writers.Get().(*lz4Writer)
		e.out.b = dst
		e.w.Reset(&e.out)
		_, err := e.w.Write(src)
		if err == nil {
			err = e.w.Close()
		}
		dst, e.out.b = e.out.b, nil
		e.w.Reset(nil)
		lz4Writers.Put(e)
		return dst, err
	case CodecZstd:
		e := zstdWriters.Get().(*zstd.Encoder)
		dst = e.EncodeAll(src, dst)
		zstdWriters.Put(e)
		return dst, nil
	}
	return dst, fmt.Errorf("compressing with %s: %w", c, errUnknownCodec)
}

// readLimited appends what r yields to dst until io.EOF, failing once more
// than limit bytes come out. hint (the compressed size) sizes the first
// growth of an empty dst.
func readLimited(dst []byte, r io.Reader, hint, limit int) ([]byte, error) {
	start := len(dst)
	if cap(dst)-start < 512 {
		dst = slices.Grow(dst, min(max(2*hint, 4<<10), limit+1))
	}
	for stalls := 0; ; {
		if len(dst) == cap(dst) {
			// Double what was read, but never past one byte over the
			// limit: a bomb costs at most about twice the limit.
			dst = slices.Grow(dst, max(1, min(len(dst)-start, start+limit+1-len(dst))))
		}
		// Read at most one byte past the limit: enough to see it crossed.
		end := cap(dst)
		if most := start + limit + 1; end > most {
			end = most
		}
		n, err := r.Read(dst[len(dst):end])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst, ErrDecompressedTooLarge
		}
		switch {
		case err == io.EOF:
			return dst, nil
		case err != nil:
			return dst, err
		case n == 0:
			if stalls++; stalls > 100 {
				return dst, io.ErrNoProgress
			}
		default:
			stalls = 0
		}
	}
}

// sliceWriter is an io.Writer appending to b, the target of stream encoders.
type sliceWriter struct{ b []byte }

func (w *sliceWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

type gzipReader struct {
	r   gzip.Reader
	src bytes.Reader
}

type gzipWriter struct {
	w   *gzip.Writer
	out sliceWriter
}

type lz4Reader struct {
	r   *lz4.Reader
	src bytes.Reader
}

type lz4Writer struct {
	w   *lz4.Writer
	out sliceWriter
}

// zstdMaxWindow is the largest window a frame may ask for: zstd's default
// limit (window log 27), which covers the Java client at every level.
const zstdMaxWindow = 128 << 20

// decodeZstd appends src decoded to dst, at most limit bytes. It decodes
// in memory (DecodeAll), where the output is the history: a streaming
// decoder would allocate a ring as large as the window each frame claims,
// up to 128 MiB for a few bytes of input. The decoder stops at the
// capacity it is given; when the output needs more, the room doubles, up
// to limit, and the decode starts over, so the work stays within twice
// the output's, and a warm buffer decodes in one pass.
// When the frame and block headers parse, their bound of the output
// (zstdBound) sizes the first room, so the decode takes one pass.
func decodeZstd(d *zstd.Decoder, dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	room := min(limit, max(cap(dst)-start, 4*len(src), 16<<10))
	if bound, ok := zstdBound(src); ok {
		room = int(min(uint64(limit), max(bound, 1)))
	}
	// A first frame declaring more than limit is too large, or lies and
	// fails: either way there is nothing to decode.
	if h := (zstd.Header{}); h.Decode(src) == nil && h.HasFCS && h.FrameContentSize > uint64(limit) {
		return dst, ErrDecompressedTooLarge
	}
	for {
		buf := slices.Grow(dst[:start], room)
		out, err := d.DecodeAll(src, buf[:start:start+room])
		if !errors.Is(err, zstd.ErrDecoderSizeExceeded) {
			// The decoder stays within the room it was given (its cap
			// limit), in buf: hand back buf's whole capacity, not the
			// room's, or a pooled buffer shrinks to each batch's bound
			// and the next, larger batch reallocates it.
			return buf[:len(out)], err
		}
		if room == limit {
			return buf[:start], ErrDecompressedTooLarge
		}
		room = min(limit, 2*room)
		dst = buf
	}
}

// zstdBlockMax is the most one zstd block decodes to (Block_Maximum_Size,
// RFC 8878 3.1.1.2.4), unless the window is smaller.
const zstdBlockMax = 128 << 10

// zstdBound is an upper bound of what src, a sequence of zstd frames,
// decodes to, read from the frame and block headers alone: a raw or RLE
// block gives its size, a compressed block at most the block maximum, a
// frame with a content size at most that (the decoder fails a frame that
// exceeds it). Encoders fill every block but a frame's last, so for real
// data the bound is within a block per frame of the output. ok is false
// when the headers do not parse; the decoder then says why.
func zstdBound(src []byte) (bound uint64, ok bool) {
	for len(src) > 0 {
		var h zstd.Header
		rest, err := h.DecodeAndStrip(src)
		if err != nil {
			return 0, false
		}
		if h.Skippable {
			if uint64(h.SkippableSize) > uint64(len(rest)) {
				return 0, false
			}
			src = rest[h.SkippableSize:]
			continue
		}
		blockMax := min(h.WindowSize, zstdBlockMax)
		if h.SingleSegment {
			blockMax = min(h.FrameContentSize, zstdBlockMax)
		}
		var frame uint64
		for last := false; !last; {
			if len(rest) < 3 {
				return 0, false
			}
			bh := uint32(rest[0]) | uint32(rest[1])<<8 | uint32(rest[2])<<16
			rest = rest[3:]
			last = bh&1 != 0
			size := uint64(bh >> 3)
			var in uint64
			switch (bh >> 1) & 3 {
			case 0: // raw
				frame += size
				in = size
			case 1: // RLE: one byte repeated size times
				frame += size
				in = 1
			case 2: // compressed
				frame += blockMax
				in = size
			default:
				return 0, false
			}
			if in > uint64(len(rest)) {
				return 0, false
			}
			rest = rest[in:]
		}
		if h.HasFCS {
			frame = min(frame, h.FrameContentSize)
		}
		if h.HasCheckSum {
			if len(rest) < 4 {
				return 0, false
			}
			rest = rest[4:]
		}
		bound += frame
		src = rest
	}
	return bound, true
}

var (
	gzipReaders = sync.Pool{New: func() any { return new(gzipReader) }}
	gzipWriters = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
		return &gzipWriter{w: w}
	}}
	lz4Readers = sync.Pool{New: func() any { return &lz4Reader{r: lz4.NewReader(nil)} }}
	lz4Writers = sync.Pool{New: func() any {
		w := lz4.NewWriter(nil)
		// 64 KiB blocks, as the Java client writes them; the default
		// 4 MiB would make every small batch pay for a 4 MiB buffer.
		_ = w.Apply(lz4.BlockSizeOption(lz4.Block64Kb))
		return &lz4Writer{w: w}
	}}
	zstdReaders = sync.Pool{New: func() any {
		// With concurrency 1 and only DecodeAll the decoder runs on
		// the caller's goroutine and starts none, so a pooled decoder
		// that the GC drops leaks nothing.
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(zstdMaxWindow),
			zstd.WithDecodeAllCapLimit(true),
		)
		if err != nil {
			panic(err) // constant options: a programming error
		}
		return d
	}}
	zstdWriters = sync.Pool{New: func() any {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(1),
			zstd.WithEncoderLevel(zstd.SpeedDefault),
			zstd.WithZeroFrames(true), // an empty section is still a frame
		)
		if err != nil {
			panic(err) // constant options: a programming error
		}
		return e
	}}
)

var xerialMagic = []byte("\x82SNAPPY\x00")

const (
	xerialHeaderSize = 16       // magic, version, compatible version
	xerialBlockSize  = 32 << 10 // the Java client's chunk size
)

// encodeXerial appends src as xerial-framed snappy chunks to dst.
func encodeXerial(dst, src []byte) []byte {
	dst = append(dst, xerialMagic...)
	dst = binary.BigEndian.AppendUint32(dst, 1) // version
	dst = binary.BigEndian.AppendUint32(dst, 1) // minimum compatible version
	for len(src) > 0 {
		chunk := src[:min(len(src), xerialBlockSize)]
		src = src[len(chunk):]
		dst = slices.Grow(dst, 4+s2.MaxEncodedLen(len(chunk)))
		at := len(dst)
		block := s2.EncodeSnappy(dst[at+4:cap(dst)], chunk)
		binary.BigEndian.PutUint32(dst[at:at+4], uint32(len(block)))
		dst = dst[:at+4+len(block)]
	}
	return dst
}

var errXerial = errors.New("malformed xerial snappy framing")

// decodeSnappy appends src decoded to dst: xerial-framed when it starts
// with the xerial magic, else one raw snappy block.
func decodeSnappy(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < xerialHeaderSize || !bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
		return appendSnappyBlock(dst, src, limit)
	}
	src = src[xerialHeaderSize:]
	start := len(dst)
	for len(src) > 0 {
		// snappy-java reads concatenated streams: a header may follow
		// a chunk.
		if len(src) >= xerialHeaderSize && bytes.Equal(src[:len(xerialMagic)], xerialMagic) {
			src = src[xerialHeaderSize:]
			continue
		}
		if len(src) < 4 {
			return dst, errXerial
		}
		n := binary.BigEndian.Uint32(src)
		src = src[4:]
		if uint64(n) > uint64(len(src)) {
			return dst, errXerial
		}
		var err error
		if dst, err = appendSnappyBlock(dst, src[:n], limit-(len(dst)-start)); err != nil {
			return dst, err
		}
		src = src[n:]
	}
	return dst, nil
}

// appendSnappyBlock appends the raw snappy block src decoded to dst, if it
// decodes to at most limit bytes.
func appendSnappyBlock(dst, src []byte, limit int) ([]byte, error) {
	n, err := s2.DecodedLen(src)
	if err != nil {
		return dst, err
	}
	if n > limit {
		return dst, ErrDecompressedTooLarge
	}
	dst = slices.Grow(dst, n)
	at := len(dst)
	if _, err := s2.Decode(dst[at:at+n], src); err != nil {
		return dst, err
	}
	return dst[:at+n], nil
}
