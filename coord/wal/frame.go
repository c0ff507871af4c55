package wal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"slices"
)

// Every file this package writes is a sequence of frames:
//
//	 0           4           8      9
//	+-----------+-----------+------+------------------+
//	|  length   |   crc     | kind |     payload      |
//	| uint32 BE | uint32 BE | byte | length-1 bytes   |
//	+-----------+-----------+------+------------------+
//
// length counts kind and payload; crc is CRC-32C (Castagnoli) over kind and
// payload. The first frame of a file is a header (kindHeader) whose payload
// is the magic string and the format version.

const (
	frameHeaderLen = 8
	// maxFrame bounds one frame (a snapshot is one frame): a length above it
	// is a torn or garbage header, never an allocation.
	maxFrame = 1 << 30
)

// Frame kinds.
const (
	kindHeader    byte = 0 // magic + version
	kindEntry     byte = 1 // one raft entry
	kindHardState byte = 2 // raft HardState (term, vote, commit)
	kindSnapMeta  byte = 3 // snapshot metadata: index, term, ConfState
	kindSnapData  byte = 4 // snapshot data: the state machine's bytes
)

const (
	magic         = "kzero-raft"
	formatVersion = 1
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// errTorn marks a frame that is cut short or fails its checksum: the end of
// the valid part of a file.
var errTorn = errors.New("torn frame")

// appendFrame appends one frame to b.
func appendFrame(b []byte, kind byte, payload []byte) []byte {
	n := 1 + len(payload)
	start := len(b)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint32(b, 0)
	b = append(b, kind)
	b = append(b, payload...)
	crc := crc32.Checksum(b[start+frameHeaderLen:], castagnoli)
	binary.BigEndian.PutUint32(b[start+4:], crc)
	return b
}

func headerPayload() []byte {
	return append([]byte(magic), formatVersion)
}

// frameReader reads frames from r, reusing one buffer: a payload is valid
// only until the next call.
type frameReader struct {
	r   *bufio.Reader
	buf []byte
	off int64 // bytes of whole, valid frames read so far
}

func newFrameReader(r io.Reader) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next frame. It returns io.EOF at a clean end, and an
// error wrapping errTorn where the rest of the input is not a whole valid
// frame (a crash mid-write, or garbage); off then is where the valid part
// ends.
func (fr *frameReader) next() (kind byte, payload []byte, err error) {
	var hdr [frameHeaderLen]byte
	n, err := io.ReadFull(fr.r, hdr[:])
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		return 0, nil, fmt.Errorf("%w: %d header bytes at %d", errTorn, n, fr.off)
	}
	length := binary.BigEndian.Uint32(hdr[0:])
	if length == 0 || length > maxFrame {
		return 0, nil, fmt.Errorf("%w: length %d at %d", errTorn, length, fr.off)
	}
	// Read in chunks so a lying length costs at most what the input holds.
	fr.buf = fr.buf[:0]
	for remaining := int(length); remaining > 0; {
		chunk := min(remaining, 1<<20)
		fr.buf = slices.Grow(fr.buf, chunk)
		m, err := io.ReadFull(fr.r, fr.buf[len(fr.buf):len(fr.buf)+chunk])
		fr.buf = fr.buf[:len(fr.buf)+m]
		if err != nil {
			return 0, nil, fmt.Errorf("%w: frame of %d bytes cut at %d bytes at %d", errTorn, length, len(fr.buf), fr.off)
		}
		remaining -= m
	}
	if crc32.Checksum(fr.buf, castagnoli) != binary.BigEndian.Uint32(hdr[4:]) {
		return 0, nil, fmt.Errorf("%w: checksum mismatch at %d", errTorn, fr.off)
	}
	fr.off += frameHeaderLen + int64(length)
	return fr.buf[0], fr.buf[1:], nil
}

// checkHeader verifies a header frame's payload.
func checkHeader(kind byte, payload []byte) error {
	if kind != kindHeader || len(payload) != len(magic)+1 || string(payload[:len(magic)]) != magic {
		return errors.New("not a kzero raft file (bad header frame)")
	}
	if v := payload[len(magic)]; v != formatVersion {
		return fmt.Errorf("unsupported raft file format version %d", v)
	}
	return nil
}
