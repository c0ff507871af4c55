package index

import "errors"

var (
	// ErrCorrupt is returned (wrapped with the file and the failed check) when an
	// index file does not pass the checks on open. The log answers it by
	// rebuilding the index from the segment.
	ErrCorrupt = errors.New("index: corrupt index file")

	// ErrFull is returned by an append on an index that has no free slot.
	ErrFull = errors.New("index: index is full")

	// ErrOutOfOrder is returned by an append that would break the order of the
	// entries: an offset not above the last one (time index: below the last
	// one), or a file position not above the last one.
	ErrOutOfOrder = errors.New("index: entry out of order")

	// ErrOverflow is returned by an append whose relative offset or file
	// position does not fit the entry's 32-bit field as Kafka reads it
	// (0 to 2^31-1).
	ErrOverflow = errors.New("index: relative offset or position overflows 32 bits")
)
