package msgset

import "kzero/record"

// Magic 0's LZ4 frames (KAFKA-3160). The LZ4 frame format's header
// checksum (HC) is the second byte of the xxHash32 of the frame
// descriptor: FLG, BD and the optional content size and dictionary id.
// Kafka before 0.10 hashed from the frame's magic number instead, and
// kept doing so for magic 0 afterwards so that old consumers can read
// it: on reading a magic 0 frame the checksum is ignored, on writing one
// the wrong one is written. Frame layout:
//
//	magic 0x184D2204 (LE)  FLG  BD  [content size 8]  [dict id 4]  HC  blocks...

// lz4FixChecksum sets the header checksum of frame f to the one the frame
// format defines and returns the byte it replaced, to be put back with
// lz4Restore. ok is false when f has no whole frame header.
func lz4FixChecksum(f []byte) (old byte, ok bool) {
	hc := record.LZ4HeaderChecksumAt(f)
	if hc < 0 {
		return 0, false
	}
	old = f[hc]
	f[hc] = record.LZ4HeaderChecksum(f[4:hc])
	return old, true
}

// lz4BreakChecksum sets the header checksum of f to Kafka's magic 0 one:
// hashed from the frame's first byte.
func lz4BreakChecksum(f []byte) {
	if hc := record.LZ4HeaderChecksumAt(f); hc >= 0 {
		f[hc] = record.LZ4HeaderChecksum(f[:hc])
	}
}
