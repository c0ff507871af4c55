package log

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"kzero/vfs"
)

// A segment's .txnindex lists the transactions aborted by markers written
// in that segment, in marker order. Entries are 34 bytes, big-endian, as in
// Apache Kafka:
//
//	offset  size  field
//	     0     2  version            (0)
//	     2     8  producerId
//	    10     8  firstOffset        (the transaction's first offset)
//	    18     8  lastOffset         (the abort marker's offset)
//	    26     8  lastStableOffset   (the partition's LSO when it aborted)
//
// The file has no header and is not preallocated: its size is a multiple
// of 34, and it exists only once a transaction was aborted in the segment.
const (
	txnEntrySize    = 34
	txnEntryVersion = 0
)

// ErrCorruptTxnIndex means a .txnindex file is not a whole number of
// entries or holds an entry of an unknown version. The log rebuilds the
// index from the segments when it sees it.
var ErrCorruptTxnIndex = errors.New("corrupt transaction index")

// AbortedTxn is one entry of a transaction index: a transaction of
// ProducerID spanning FirstOffset..LastOffset (its abort marker) that was
// aborted while the last stable offset was LastStableOffset. A fetch at
// read_committed returns the ProducerID and FirstOffset of those in range.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// TxnIndex is a segment's aborted-transaction index.
//
// Ownership: the log's writer appends, truncates, renames and deletes;
// Collect and Entries may run on any goroutine at the same time. The entries
// live in memory as an immutable slice published through an atomic pointer
// (the file is only their durable copy), so readers never lock and never
// touch the file. Aborts are rare, so an append's allocation does not
// matter; a fetch's Collect allocates nothing.
type TxnIndex struct {
	entries atomic.Pointer[[]AbortedTxn]

	mu struct {
		sync.Mutex
		path string
		f    File // nil until the file exists
	}
	fs FS
}

// OpenTxnIndex opens the transaction index at path and loads its entries.
// A missing file is an empty index: the file is created on the first Append.
// A file of the wrong size or with an unknown entry version gives an error
// wrapping ErrCorruptTxnIndex. The file is opened, created, truncated,
// renamed and removed in fs.
func OpenTxnIndex(fs FS, path string) (*TxnIndex, error) {
	t := &TxnIndex{fs: fs}
	t.mu.path = path
	f, err := fs.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		t.entries.Store(new([]AbortedTxn))
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open txn index: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read txn index %s: %w", path, err)
	}
	f.Close() // the entries are in memory; Append reopens the file
	entries, err := DecodeTxnIndex(data)
	if err != nil {
		return nil, fmt.Errorf("txn index %s: %w", path, err)
	}
	t.entries.Store(&entries)
	return t, nil
}

// DecodeTxnIndex parses the contents of a .txnindex file. Errors wrap
// ErrCorruptTxnIndex.
func DecodeTxnIndex(data []byte) ([]AbortedTxn, error) {
	if len(data)%txnEntrySize != 0 {
		return nil, fmt.Errorf("%d bytes is not a whole number of %d-byte entries: %w", len(data), txnEntrySize, ErrCorruptTxnIndex)
	}
	entries := make([]AbortedTxn, 0, len(data)/txnEntrySize)
	for pos := 0; pos < len(data); pos += txnEntrySize {
		e := data[pos : pos+txnEntrySize]
		if v := int16(binary.BigEndian.Uint16(e)); v != txnEntryVersion {
			return nil, fmt.Errorf("entry at %d has version %d: %w", pos, v, ErrCorruptTxnIndex)
		}
		entries = append(entries, AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		})
	}
	return entries, nil
}

// appendTxnEntry appends the 34-byte encoding of a to dst.
func appendTxnEntry(dst []byte, a AbortedTxn) []byte {
	dst = binary.BigEndian.AppendUint16(dst, txnEntryVersion)
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(a.LastStableOffset))
}

// Entries returns the index's entries in append order. The slice is shared
// with other readers: do not modify it.
func (t *TxnIndex) Entries() []AbortedTxn { return *t.entries.Load() }

// Path is the index file's current path.
func (t *TxnIndex) Path() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.mu.path
}

// Append adds an aborted transaction, creating the file if needed. Its
// LastOffset must be above the last entry's: markers are appended in order.
// The entry is visible to Collect once written to the file (not yet fsynced).
func (t *TxnIndex) Append(a AbortedTxn) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := *t.entries.Load()
	if n := len(cur); n > 0 && cur[n-1].LastOffset >= a.LastOffset {
		return fmt.Errorf("txn index %s: aborted txn last offset %d is not above the previous %d", t.mu.path, a.LastOffset, cur[n-1].LastOffset)
	}
	if t.mu.f == nil {
		f, err := t.fs.OpenFile(t.mu.path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("create txn index: %w", err)
		}
		t.mu.f = f
	}
	var buf [txnEntrySize]byte
	pos := int64(len(cur)) * txnEntrySize
	if _, err := t.mu.f.WriteAt(appendTxnEntry(buf[:0], a), pos); err != nil {
		// Cut a torn entry, so the file stays whole entries.
		t.mu.f.Truncate(pos)
		return fmt.Errorf("append to txn index %s: %w", t.mu.path, err)
	}
	// Readers hold slices no longer than cur, so writing past them into a
	// shared backing array is safe; TruncateTo never shares one.
	next := append(cur, a)
	t.entries.Store(&next)
	return nil
}

// Collect appends to dst the aborted transactions that overlap the fetch
// range [fetchOffset, upperBoundOffset): those that end at or after
// fetchOffset and begin before upperBoundOffset. done reports that an entry
// with a last stable offset at or above upperBoundOffset was seen: no later
// segment can hold an aborted transaction that overlaps the range, so the
// search stops here. Safe to call concurrently with the writer.
func (t *TxnIndex) Collect(dst []AbortedTxn, fetchOffset, upperBoundOffset int64) (_ []AbortedTxn, done bool) {
	for _, a := range *t.entries.Load() {
		if a.LastOffset >= fetchOffset && a.FirstOffset < upperBoundOffset {
			dst = append(dst, a)
		}
		if a.LastStableOffset >= upperBoundOffset {
			return dst, true
		}
	}
	return dst, false
}

// TruncateTo removes the entries whose marker is at or after offset, for a
// log truncated to offset.
func (t *TxnIndex) TruncateTo(offset int64) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	cur := *t.entries.Load()
	for i, a := range cur {
		if a.LastOffset >= offset {
			return t.truncateLocked(cur, i)
		}
	}
	return nil
}

// Reset removes every entry, for a segment being rebuilt.
func (t *TxnIndex) Reset() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.truncateLocked(*t.entries.Load(), 0)
}

// truncateLocked keeps the first n entries of cur. The kept entries move to
// a new array: readers may still hold cur, and the next Append must not
// overwrite what they see.
func (t *TxnIndex) truncateLocked(cur []AbortedTxn, n int) error {
	size := int64(n) * txnEntrySize
	var err error
	if t.mu.f != nil {
		err = t.mu.f.Truncate(size)
	} else if err = vfs.Truncate(t.fs, t.mu.path, size); errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	if err != nil {
		return fmt.Errorf("truncate txn index %s: %w", t.mu.path, err)
	}
	kept := append([]AbortedTxn(nil), cur[:n]...)
	t.entries.Store(&kept)
	return nil
}

// Sync flushes the file to disk, if it exists.
func (t *TxnIndex) Sync() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.mu.f == nil {
		return nil
	}
	if err := t.mu.f.Sync(); err != nil {
		return fmt.Errorf("fsync txn index %s: %w", t.mu.path, err)
	}
	return nil
}

// Rename moves the file, if it exists, to path; the index uses path from
// then on either way.
func (t *TxnIndex) Rename(path string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.fs.Rename(t.mu.path, path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("rename txn index: %w", err)
	}
	t.mu.path = path
	return nil
}

// Close closes the file. The entries stay readable; a later Append
// reopens the file.
func (t *TxnIndex) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closeLocked()
}

func (t *TxnIndex) closeLocked() error {
	if t.mu.f == nil {
		return nil
	}
	err := t.mu.f.Close()
	t.mu.f = nil
	if err != nil {
		return fmt.Errorf("close txn index %s: %w", t.mu.path, err)
	}
	return nil
}

// Delete closes and removes the file. Entries already loaded stay readable
// for fetches in flight.
func (t *TxnIndex) Delete() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	cerr := t.closeLocked()
	if err := t.fs.Remove(t.mu.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("delete txn index: %w", err)
	}
	return cerr
}
