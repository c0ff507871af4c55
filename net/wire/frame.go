package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// SizeLen is the length of a frame's size prefix.
const SizeLen = 4

// DefaultMaxRequestBytes is the default of socket.request.max.bytes, the
// largest request frame a broker accepts (not counting the size prefix).
const DefaultMaxRequestBytes = 104857600

var (
	// ErrNegativeSize is returned for a frame whose size prefix is negative.
	ErrNegativeSize = errors.New("wire: negative frame size")
	// ErrFrameTooLarge is returned for a frame whose size is above the limit.
	ErrFrameTooLarge = errors.New("wire: frame larger than the limit")
)

// FrameSize decodes the size prefix at the start of p (at least SizeLen
// bytes) and checks it: the size must not be negative nor above max.
func FrameSize(p []byte, max int) (int, error) {
	size := int32(binary.BigEndian.Uint32(p))
	switch {
	case size < 0:
		return 0, fmt.Errorf("size %d: %w", size, ErrNegativeSize)
	case int64(size) > int64(max):
		return 0, fmt.Errorf("size %d, limit %d: %w", size, max, ErrFrameTooLarge)
	}
	return int(size), nil
}
