package log

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"kzero/record"
	"kzero/vfs"
)

// A cleaned segment replaces older segments in three steps, so that a crash
// at any point leaves a readable log:
//
//  1. the cleaner writes B.log.cleaned and its indexes (B.index.cleaned,
//     B.timeindex.cleaned, B.txnindex.cleaned) and fsyncs them;
//  2. it renames the indexes to .swap, then B.log.cleaned to B.log.swap
//     last, and fsyncs the folder: B.log.swap existing is the commit point;
//  3. the replaced segments are renamed to .deleted, then every B.*.swap
//     to B.*.
//
// Open runs completeSwaps before anything else: a crash before step 2 ends
// leaves .cleaned files (removed) and maybe index .swap files without their
// log (removed); a crash after it is completed here.

// completeSwaps finishes the replacements a crash interrupted.
func completeSwaps(dir string, cfg *Config) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil
		}
		return fmt.Errorf("read log dir: %w", err)
	}
	swaps := map[int64]bool{}
	for _, e := range ents {
		if base, sfx, ok := ParseFileName(e.Name()); ok && sfx == LogSuffix+SwapSuffix {
			swaps[base] = true
		}
	}
	for _, e := range ents {
		base, sfx, ok := ParseFileName(e.Name())
		if ok && strings.HasSuffix(sfx, SwapSuffix) && !swaps[base] {
			if err := cfg.fs().Remove(filepath.Join(dir, e.Name())); err != nil {
				return fmt.Errorf("remove incomplete swap file: %w", err)
			}
		}
	}
	for base := range swaps {
		next, err := swapNextOffset(cfg.fs(), filepath.Join(dir, FileName(base, LogSuffix+SwapSuffix)))
		if err != nil {
			return err
		}
		// The segments the swap replaces start inside its offset range.
		for _, e := range ents {
			b, sfx, ok := ParseFileName(e.Name())
			if ok && b >= base && b < next && !strings.HasSuffix(sfx, SwapSuffix) {
				if err := cfg.fs().Remove(filepath.Join(dir, e.Name())); err != nil && !os.IsNotExist(err) {
					return fmt.Errorf("remove replaced segment file: %w", err)
				}
			}
		}
		if err := renameSwapped(cfg.fs(), dir, base); err != nil {
			return err
		}
	}
	if len(swaps) > 0 {
		return vfs.Fsync(cfg.fs(), dir)
	}
	return nil
}

// renameSwapped renames B.*.swap to B.*, the log file last.
func renameSwapped(fs FS, dir string, base int64) error {
	for _, sfx := range []string{IndexSuffix, TimeIndexSuffix, TxnIndexSuffix, LogSuffix} {
		from := filepath.Join(dir, FileName(base, sfx+SwapSuffix))
		if err := fs.Rename(from, filepath.Join(dir, FileName(base, sfx))); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("complete segment swap: %w", err)
		}
	}
	return nil
}

// swapNextOffset scans the batch headers of a swap log file for the offset
// after its last batch.
func swapNextOffset(fs FS, path string) (int64, error) {
	f, err := fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("open swap segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	base, _, _ := ParseFileName(filepath.Base(path))
	next := base
	var h [record.BatchHeaderSize]byte
	for pos := int64(0); pos+record.BatchHeaderSize <= st.Size(); {
		if err := preadFull(int(f.Fd()), h[:], pos); err != nil {
			return 0, fmt.Errorf("read swap segment: %w", err)
		}
		b := record.Batch(h[:])
		n := record.LogOverhead + int64(b.Length())
		if n < record.BatchHeaderSize || pos+n > st.Size() {
			break
		}
		next = b.NextOffset()
		pos += n
	}
	return next, nil
}
