package log

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"kzero/vfs"
)

func txnIndexPath(t testing.TB) string {
	return filepath.Join(t.TempDir(), "00000000000000000000.txnindex")
}

func openTxnIndex(t testing.TB, path string) *TxnIndex {
	t.Helper()
	ti, err := OpenTxnIndex(vfs.OS, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ti.Close() })
	return ti
}

func TestTxnIndexByteLayout(t *testing.T) {
	path := txnIndexPath(t)
	ti := openTxnIndex(t, path)
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file exists before the first append: %v", err)
	}
	entries := []AbortedTxn{
		{ProducerID: 0x0102030405060708, FirstOffset: 0x1112131415161718, LastOffset: 0x2122232425262728, LastStableOffset: 0x3132333435363738},
		{ProducerID: -1, FirstOffset: 0, LastOffset: 0x2122232425262729, LastStableOffset: 5},
	}
	for _, e := range entries {
		if err := ti.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	want, _ := hex.DecodeString(strings.ReplaceAll(
		"0000 0102030405060708 1112131415161718 2122232425262728 3132333435363738"+
			"0000 ffffffffffffffff 0000000000000000 2122232425262729 0000000000000005", " ", ""))
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("file\n%x\nwant\n%x", got, want)
	}
	if !slices.Equal(ti.Entries(), entries) {
		t.Fatalf("entries %+v", ti.Entries())
	}
	ti.Close()
	// Reopened from the bytes.
	if again := openTxnIndex(t, path); !slices.Equal(again.Entries(), entries) {
		t.Fatalf("reopened %+v", again.Entries())
	}
}

func TestTxnIndexAppendOrder(t *testing.T) {
	ti := openTxnIndex(t, txnIndexPath(t))
	if err := ti.Append(AbortedTxn{ProducerID: 1, FirstOffset: 5, LastOffset: 10, LastStableOffset: 11}); err != nil {
		t.Fatal(err)
	}
	for _, last := range []int64{10, 9} {
		if err := ti.Append(AbortedTxn{ProducerID: 2, FirstOffset: 1, LastOffset: last, LastStableOffset: 11}); err == nil {
			t.Fatalf("append with last offset %d after 10 succeeded", last)
		}
	}
	if err := ti.Append(AbortedTxn{ProducerID: 2, FirstOffset: 1, LastOffset: 11, LastStableOffset: 12}); err != nil {
		t.Fatal(err)
	}
	if n := len(ti.Entries()); n != 2 {
		t.Fatalf("%d entries", n)
	}
}

func TestTxnIndexCorrupt(t *testing.T) {
	path := txnIndexPath(t)
	good := appendTxnEntry(nil, AbortedTxn{1, 2, 3, 4})
	badVersion := slices.Clone(good)
	badVersion[1] = 1
	for name, data := range map[string][]byte{
		"short":   good[:33],
		"extra":   append(slices.Clone(good), 0),
		"version": append(slices.Clone(good), badVersion...),
	} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenTxnIndex(vfs.OS, path); !errors.Is(err, ErrCorruptTxnIndex) {
			t.Errorf("%s: %v, want ErrCorruptTxnIndex", name, err)
		}
	}
	// An empty file is an empty index.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if ti := openTxnIndex(t, path); len(ti.Entries()) != 0 {
		t.Fatal("entries in an empty file")
	}
}

func TestTxnIndexCollect(t *testing.T) {
	ti := openTxnIndex(t, txnIndexPath(t))
	// Four aborted transactions as a log would index them: each LSO is
	// the first offset of the transaction still open at its marker.
	entries := []AbortedTxn{
		{ProducerID: 1, FirstOffset: 0, LastOffset: 10, LastStableOffset: 5},
		{ProducerID: 2, FirstOffset: 5, LastOffset: 20, LastStableOffset: 15},
		{ProducerID: 3, FirstOffset: 15, LastOffset: 30, LastStableOffset: 31},
		{ProducerID: 4, FirstOffset: 31, LastOffset: 40, LastStableOffset: 41},
	}
	for _, e := range entries {
		if err := ti.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		from, upper int64
		want        []int64 // producer ids
		done        bool
	}{
		{0, 0, nil, true},                    // 1 starts at the bound
		{0, 1, []int64{1}, true},             // 1's LSO 5 >= 1: nothing later can overlap
		{0, 6, []int64{1, 2}, true},          // 2 starts at 5 < 6; 2's LSO 15 >= 6
		{11, 15, []int64{2}, true},           // 1 ended before 11; 3 starts at the bound
		{11, 16, []int64{2, 3}, true},        // 3's LSO 31 >= 16
		{21, 30, []int64{3}, true},           // 2 ended at 20
		{30, 31, []int64{3}, true},           // 3 ends at 30; 4 starts at the bound
		{30, 32, []int64{3, 4}, true},        // 4's LSO 41 >= 32
		{41, 100, nil, false},                // all ended before 41; look further
		{0, 100, []int64{1, 2, 3, 4}, false}, // no LSO reaches 100
		{20, 21, []int64{2, 3}, true},
		{10, 10, []int64{1, 2}, true}, // an empty range follows the same rule
	} {
		got, done := ti.Collect(nil, c.from, c.upper)
		var ids []int64
		for _, a := range got {
			ids = append(ids, a.ProducerID)
		}
		if !slices.Equal(ids, c.want) || done != c.done {
			t.Errorf("Collect(%d, %d) = %v %v, want %v %v", c.from, c.upper, ids, done, c.want, c.done)
		}
	}
	// Collect appends to dst.
	dst := []AbortedTxn{{ProducerID: 99}}
	dst, _ = ti.Collect(dst, 30, 32)
	if len(dst) != 3 || dst[0].ProducerID != 99 || dst[2] != entries[3] {
		t.Fatalf("Collect into dst: %+v", dst)
	}
	buf := make([]AbortedTxn, 0, 8)
	if n := testing.AllocsPerRun(100, func() { buf, _ = ti.Collect(buf[:0], 0, 100) }); n != 0 {
		t.Fatalf("%v allocations per Collect", n)
	}
}

func TestTxnIndexTruncate(t *testing.T) {
	path := txnIndexPath(t)
	ti := openTxnIndex(t, path)
	for i := int64(1); i <= 4; i++ {
		if err := ti.Append(AbortedTxn{ProducerID: i, FirstOffset: 10*i - 5, LastOffset: 10 * i, LastStableOffset: 10*i + 1}); err != nil {
			t.Fatal(err)
		}
	}
	size := func() int64 {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return st.Size()
	}
	if err := ti.TruncateTo(41); err != nil || len(ti.Entries()) != 4 || size() != 4*34 {
		t.Fatalf("TruncateTo past the end: %v, %d entries, %d bytes", err, len(ti.Entries()), size())
	}
	// Truncating to 30 drops the transaction aborted at 30.
	if err := ti.TruncateTo(30); err != nil || len(ti.Entries()) != 2 || size() != 2*34 {
		t.Fatalf("TruncateTo(30): %v, %d entries, %d bytes", err, len(ti.Entries()), size())
	}
	// The next append may reuse offsets above the truncation point.
	if err := ti.Append(AbortedTxn{ProducerID: 7, FirstOffset: 25, LastOffset: 29, LastStableOffset: 30}); err != nil {
		t.Fatal(err)
	}
	ti.Close()
	ti = openTxnIndex(t, path)
	if got := ti.Entries(); len(got) != 3 || got[2].ProducerID != 7 {
		t.Fatalf("after truncate, append and reopen: %+v", got)
	}
	// After Close, TruncateTo still cuts the file.
	ti.Close()
	if err := ti.TruncateTo(20); err != nil || size() != 34 {
		t.Fatalf("TruncateTo after Close: %v, %d bytes", err, size())
	}
	if err := ti.Reset(); err != nil || len(ti.Entries()) != 0 || size() != 0 {
		t.Fatalf("Reset: %v, %d entries, %d bytes", err, len(ti.Entries()), size())
	}
	if err := ti.Append(AbortedTxn{ProducerID: 1, FirstOffset: 0, LastOffset: 1, LastStableOffset: 2}); err != nil || size() != 34 {
		t.Fatalf("append after Reset: %v, %d bytes", err, size())
	}
	// An index that never had a file truncates without creating one.
	empty := openTxnIndex(t, filepath.Join(t.TempDir(), "x.txnindex"))
	if err := empty.Reset(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(empty.Path()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Reset created the file: %v", err)
	}
}

func TestTxnIndexRenameDelete(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "00000000000000000000.txnindex")
	ti := openTxnIndex(t, path)
	// Renaming before the file exists only changes the path.
	if err := ti.Rename(path + ".x"); err != nil || ti.Path() != path+".x" {
		t.Fatalf("rename without a file: %v %s", err, ti.Path())
	}
	if err := ti.Rename(path); err != nil {
		t.Fatal(err)
	}
	if err := ti.Append(AbortedTxn{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if err := ti.Sync(); err != nil {
		t.Fatal(err)
	}
	deleted := path + ".deleted"
	if err := ti.Rename(deleted); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("old name still there: %v", err)
	}
	// Appends after a rename go to the new file.
	if err := ti.Append(AbortedTxn{1, 2, 4, 5}); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(deleted); len(data) != 68 {
		t.Fatalf("renamed file has %d bytes", len(data))
	}
	if err := ti.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(deleted); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("file still there after Delete: %v", err)
	}
	// Readers in flight still see the entries.
	if got, _ := ti.Collect(nil, 0, 10); len(got) != 2 {
		t.Fatalf("Collect after Delete: %+v", got)
	}
	if err := ti.Delete(); err != nil {
		t.Fatalf("second Delete: %v", err)
	}
	if err := ti.Sync(); err != nil {
		t.Fatalf("Sync without a file: %v", err)
	}
}

// TestTxnIndexConcurrentCollect runs readers against the writer; -race
// checks the publication, the assertions check every snapshot a reader
// sees is a prefix of what was written.
func TestTxnIndexConcurrentCollect(t *testing.T) {
	ti := openTxnIndex(t, txnIndexPath(t))
	const n = 2000
	entry := func(i int64) AbortedTxn {
		return AbortedTxn{ProducerID: i, FirstOffset: 2 * i, LastOffset: 2*i + 1, LastStableOffset: 2*i + 2}
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan string, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]AbortedTxn, 0, n)
			for {
				select {
				case <-stop:
					return
				default:
				}
				buf, _ = ti.Collect(buf[:0], 0, 1<<62)
				for i, a := range buf {
					// After a truncation the writer restarts from 0, so
					// every snapshot holds entry(0..k) in order.
					if a != entry(int64(i)) {
						select {
						case errs <- "reader saw a torn or reordered entry":
						default:
						}
						return
					}
				}
			}
		}()
	}
	for round := range 3 {
		for i := range int64(n) {
			if err := ti.Append(entry(i)); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if err := ti.Reset(); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	select {
	case e := <-errs:
		t.Fatal(e)
	default:
	}
}

func FuzzOpenTxnIndex(f *testing.F) {
	f.Add([]byte{})
	f.Add(appendTxnEntry(nil, AbortedTxn{1, 2, 3, 4}))
	f.Add(appendTxnEntry(appendTxnEntry(nil, AbortedTxn{1, 0, 10, 5}), AbortedTxn{2, 5, 20, 21}))
	f.Add(make([]byte, 33))
	// OpenTxnIndex reads the file whole and decodes it (tested on files
	// above); the fuzzer drives the decoder in memory for speed, and the
	// index over what it decoded, with no file behind it.
	missing := filepath.Join(f.TempDir(), "none.txnindex")
	f.Fuzz(func(t *testing.T, data []byte) {
		decoded, err := DecodeTxnIndex(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptTxnIndex) {
				t.Fatalf("error does not wrap ErrCorruptTxnIndex: %v", err)
			}
			return
		}
		ti := &TxnIndex{fs: vfs.OS}
		ti.mu.path = missing
		ti.entries.Store(&decoded)
		entries := ti.Entries()
		var enc []byte
		for _, e := range entries {
			enc = appendTxnEntry(enc, e)
		}
		if !bytes.Equal(enc, data) {
			t.Fatalf("re-encoded %x, read %x", enc, data)
		}
		all, _ := ti.Collect(nil, -1<<63, 1<<63-1)
		if len(all) != len(entries) {
			t.Fatalf("Collect over everything found %d of %d", len(all), len(entries))
		}
		if len(entries) > 0 {
			if err := ti.TruncateTo(entries[0].LastOffset); err != nil {
				t.Fatal(err)
			}
			if len(ti.Entries()) != 0 {
				t.Fatalf("%d entries after truncating to the first's last offset", len(ti.Entries()))
			}
		}
	})
}

func BenchmarkTxnIndexCollect(b *testing.B) {
	ti := openTxnIndex(b, txnIndexPath(b))
	for i := range int64(1000) {
		if err := ti.Append(AbortedTxn{ProducerID: i, FirstOffset: 10 * i, LastOffset: 10*i + 5, LastStableOffset: 10*i + 6}); err != nil {
			b.Fatal(err)
		}
	}
	buf := make([]AbortedTxn, 0, 16)
	b.ReportAllocs()
	for b.Loop() {
		// A fetch near the end of a segment with 1000 aborted transactions.
		buf, _ = ti.Collect(buf[:0], 9900, 9950)
	}
}
