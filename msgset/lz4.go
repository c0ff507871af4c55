package msgset

import (
	"encoding/binary"
	"math/bits"
)

// Magic 0's LZ4 frames (KAFKA-3160). The LZ4 frame format's header
// checksum (HC) is the second byte of the xxHash32 of the frame
// descriptor: FLG, BD and the optional content size and dictionary id.
// Kafka before 0.10 hashed from the frame's magic number instead, and
// kept doing so for magic 0 afterwards so that old consumers can read
// it: on reading a magic 0 frame the checksum is ignored, on writing one
// the wrong one is written. Frame layout:
//
//	magic 0x184D2204 (LE)  FLG  BD  [content size 8]  [dict id 4]  HC  blocks...

const lz4FrameMagic = 0x184D2204

// lz4Descriptor returns the position of the header checksum byte of the
// frame f, or -1 when f does not start with a whole LZ4 frame header.
func lz4Descriptor(f []byte) int {
	if len(f) < 7 || binary.LittleEndian.Uint32(f) != lz4FrameMagic {
		return -1
	}
	hc := 6 // magic, FLG, BD
	if f[4]&0x08 != 0 {
		hc += 8 // content size
	}
	if f[4]&0x01 != 0 {
		hc += 4 // dictionary id
	}
	if hc >= len(f) {
		return -1
	}
	return hc
}

// lz4FixChecksum sets the header checksum of frame f to the one the frame
// format defines and returns the byte it replaced, to be put back with
// lz4Restore. ok is false when f has no whole frame header.
func lz4FixChecksum(f []byte) (old byte, ok bool) {
	hc := lz4Descriptor(f)
	if hc < 0 {
		return 0, false
	}
	old = f[hc]
	f[hc] = byte(xxh32(f[4:hc]) >> 8)
	return old, true
}

// lz4BreakChecksum sets the header checksum of f to Kafka's magic 0 one:
// hashed from the frame's first byte.
func lz4BreakChecksum(f []byte) {
	if hc := lz4Descriptor(f); hc >= 0 {
		f[hc] = byte(xxh32(f[:hc]) >> 8)
	}
}

// xxh32 is xxHash32 with seed 0 (the LZ4 frame format's hash); only frame
// headers are hashed here, so it is written for clarity, not speed.
func xxh32(b []byte) uint32 {
	var (
		p1 uint32 = 2654435761
		p2 uint32 = 2246822519
		p3 uint32 = 3266489917
		p4 uint32 = 668265263
		p5 uint32 = 374761393
	)
	round := func(acc, in uint32) uint32 { return bits.RotateLeft32(acc+in*p2, 13) * p1 }
	n := uint32(len(b))
	var h uint32
	if len(b) >= 16 {
		v1, v2, v3, v4 := p1+p2, p2, uint32(0), 0-p1
		for ; len(b) >= 16; b = b[16:] {
			v1 = round(v1, binary.LittleEndian.Uint32(b))
			v2 = round(v2, binary.LittleEndian.Uint32(b[4:]))
			v3 = round(v3, binary.LittleEndian.Uint32(b[8:]))
			v4 = round(v4, binary.LittleEndian.Uint32(b[12:]))
		}
		h = bits.RotateLeft32(v1, 1) + bits.RotateLeft32(v2, 7) + bits.RotateLeft32(v3, 12) + bits.RotateLeft32(v4, 18)
	} else {
		h = p5
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
