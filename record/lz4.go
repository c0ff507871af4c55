package record

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/pierrec/lz4/v4"
)

// The LZ4 frames Kafka clients write (the Java client, librdkafka,
// franz-go) are all of one kind: independent blocks, no block checksums,
// no dictionary. decodeLZ4Frames decodes those itself, each block straight
// into the output with lz4.UncompressBlock, and leaves every other frame
// to pierrec's reader. Like Kafka's reader (KafkaLZ4BlockInputStream) it
// checks the descriptor's header checksum and skips the content checksum
// (it checks a content size, as pierrec's reader does, and Kafka's not):
// the batch's CRC-32C covers every byte of the frame already, and hashing
// the output again with xxHash32, with a copy of each block out of the
// reader's buffer, was a fifth of the broker's CPU on lz4 produce.

// LZ4FrameMagic starts every LZ4 frame (little-endian).
const LZ4FrameMagic = 0x184D2204

const (
	lz4Raw = 1 << 31 // a block size's bit: the block is stored as is

	lz4FlagVersion    = 0xC0 // FLG bits 7-6: the version, 01
	lz4FlagIndep      = 0x20 // FLG bit 5: block independence
	lz4FlagBlockSum   = 0x10 // FLG bit 4: block checksums
	lz4FlagSize       = 0x08 // FLG bit 3: content size
	lz4FlagContentSum = 0x04 // FLG bit 2: content checksum
	lz4FlagReserved   = 0x02 // FLG bit 1: reserved, 0
	lz4FlagDict       = 0x01 // FLG bit 0: dictionary ID
)

// decodeLZ4Frames appends src, a sequence of LZ4 frames, decoded to dst, at
// most limit bytes (beyond that: ErrDecompressedTooLarge). ok is false,
// and dst as it was, when a frame is not of the common kind or does not
// decode here: the caller gives src to the reader, which decodes what it
// can and says what is wrong with the rest.
func decodeLZ4Frames(dst, src []byte, limit int) (out []byte, ok bool, err error) {
	start := len(dst)
	for len(src) > 0 {
		if len(src) < 7 || binary.LittleEndian.Uint32(src) != LZ4FrameMagic {
			return dst[:start], false, nil
		}
		flg, bd := src[4], src[5]
		if flg&lz4FlagVersion != 0x40 || flg&(lz4FlagIndep|lz4FlagBlockSum|lz4FlagReserved|lz4FlagDict) != lz4FlagIndep ||
			bd&0x8F != 0 || bd>>4 < 4 {
			return dst[:start], false, nil
		}
		blockMax := 1 << (8 + 2*int(bd>>4)) // 4: 64 KiB ... 7: 4 MiB
		hc := LZ4HeaderChecksumAt(src)
		if hc < 0 || src[hc] != LZ4HeaderChecksum(src[4:hc]) {
			return dst[:start], false, nil
		}
		p := hc + 1
		frameStart := len(dst)
		for {
			if len(src)-p < 4 {
				return dst[:start], false, nil
			}
			size := binary.LittleEndian.Uint32(src[p:])
			p += 4
			if size == 0 {
				break // the end mark
			}
			n := int(size &^ lz4Raw)
			if n > blockMax || len(src)-p < n {
				return dst[:start], false, nil
			}
			block := src[p : p+n]
			p += n
			if size&lz4Raw != 0 {
				dst = append(dst, block...)
			} else {
				dst = slices.Grow(dst, blockMax)
				m, err := lz4.UncompressBlock(block, dst[len(dst):len(dst)+blockMax])
				if err != nil {
					return dst[:start], false, nil
				}
				dst = dst[:len(dst)+m]
			}
			if len(dst)-start > limit {
				// A block past the limit cost at most blockMax more.
				return dst[:start+limit], true, ErrDecompressedTooLarge
			}
		}
		if flg&lz4FlagSize != 0 && binary.LittleEndian.Uint64(src[6:]) != uint64(len(dst)-frameStart) {
			return dst[:start], false, nil // the reader says so
		}
		if flg&lz4FlagContentSum != 0 {
			if len(src)-p < 4 {
				return dst[:start], false, nil
			}
			p += 4 // not verified, as in Kafka: the batch's CRC covers it
		}
		src = src[p:]
	}
	return dst, true, nil
}

// LZ4HeaderChecksumAt returns the position of the header checksum (HC)
// of the LZ4 frame f, after the magic number and the descriptor (FLG, BD,
// and the content size and dictionary ID if FLG says so), or -1 when f
// does not start with a whole frame header.
func LZ4HeaderChecksumAt(f []byte) int {
	if len(f) < 7 || binary.LittleEndian.Uint32(f) != LZ4FrameMagic {
		return -1
	}
	hc := 6 // magic, FLG, BD
	if f[4]&lz4FlagSize != 0 {
		hc += 8
	}
	if f[4]&lz4FlagDict != 0 {
		hc += 4
	}
	if hc >= len(f) {
		return -1
	}
	return hc
}

// LZ4HeaderChecksum is the header checksum (HC) the LZ4 frame format
// gives descriptor (FLG, BD and the optional content size and dictionary
// ID): the second byte of its xxHash32 with seed 0. Kafka's magic 0 frames
// hash from the frame's magic number instead (msgset).
func LZ4HeaderChecksum(descriptor []byte) byte {
	return byte(xxh32(descriptor) >> 8)
}

// xxh32 is xxHash32 with seed 0 (the xxHash specification); only frame
// headers are hashed with it, so it is written for clarity, not speed.
func xxh32(b []byte) uint32 {
	var ( // variables: their sums wrap, as the algorithm wants
		p1 uint32 = 0x9E3779B1
		p2 uint32 = 0x85EBCA77
		p3 uint32 = 0xC2B2AE3D
		p4 uint32 = 0x27D4EB2F
		p5 uint32 = 0x165667B1
	)
	round := func(acc, in uint32) uint32 { return bits.RotateLeft32(acc+in*p2, 13) * p1 }
	n := uint32(len(b))
	h := p5
	if len(b) >= 16 {
		v1, v2, v3, v4 := p1+p2, p2, uint32(0), 0-p1
		for ; len(b) >= 16; b = b[16:] {
			v1 = round(v1, binary.LittleEndian.Uint32(b))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	}
	h += n
	for ; len(b) >= 4; b = b[4:] {
		h = bits.RotateLeft32(h+binary.LittleEndian.Uint32(b)*p3, 17) * p4
	}
	for _, c := range b {
		h = bits.RotateLeft32(h+uint32(c)*p5, 11) * p1
	}
	h ^= h >> 15
	h *= p2
	h ^= h >> 13
	h *= p3
	h ^= h >> 16
	return h
}
