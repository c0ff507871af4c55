package log

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Segment file recycling (kzero's kzero.log.recycle.bytes; Kafka has no
// such thing).
//
// Why: on a VM whose balloon reports free pages to the host (virtio
// free page reporting), the page-cache pages a deleted segment file frees
// go back to the host, and a new segment's first write to each page pays a
// host fault again: appends to new files measured ~2 CPU-s/GiB and ~350
// MiB/s against ~0.1 CPU-s/GiB for rewriting a file whose pages are cached.
// So a segment file that retention, DeleteRecords, a truncation, the
// cleaner or a partition's deletion removes is kept, up to a byte bound per
// log dir, in the log dir's .kzero-recycle folder, and a roll takes one
// (renamed to the new segment's name) and overwrites it in place: its pages
// stay allocated and cached.
//
// Safety: a recycled file's old bytes hold valid batches (their CRCs
// check, possibly of another partition, with higher offsets, and possibly
// starting exactly where a crash leaves the new data). Recovery, which
// reads the active segment batch by batch until the first bad one, must
// never take them for data. So before a file is handed out, every byte of
// it is overwritten with zeros and fsynced (in the background, by the
// log dir's recycler goroutine): whatever a crash leaves of a recycled
// file is new data or zeros, as with a new file, and a zero batch length
// ends the recovery scan. Invalidating only the old batch headers would
// not be enough: a record's value may itself hold bytes shaped as a valid
// batch, which a crash could leave at a batch boundary of the new data.
//
// A recycled segment's file is longer than its data until it is sealed:
// reads, sendfile and the indexes never go past the segment's size (what
// was appended), and sealing (a roll, or Close) truncates the file to it,
// as Kafka trims a preallocated segment (file.preallocate). After a crash
// the active segment is recovered (it holds the recovery point or comes
// after it) and cut at the zeros.
//
// The folder's files are removed when the log dir is opened: a file there
// may not be zeroed yet.

// RecycleDirName is the folder in each log dir that holds the segment
// files kept for reuse.
const RecycleDirName = ".kzero-recycle"

// recycleChunk is the size of the zero writes that clear a file.
const recycleChunk = 1 << 20

// Recycler is one log dir's pool of segment files kept for reuse. It is
// safe for concurrent use.
type Recycler struct {
	dir    string // the pool folder
	limit  int64
	fs     FS
	logger *slog.Logger

	mu      sync.Mutex
	bytes   int64            // sizes of the files held: waiting, zeroing or ready
	sizes   map[string]int64 // held file -> its size when held
	ready   []string         // zeroed and fsynced, oldest first
	queue   []string         // to zero once released
	seq     uint64
	closed  bool
	wake    *sync.Cond
	stopped chan struct{}
	// zeroed counts the files cleared (tests).
	zeroed int
}

// NewRecycler makes the pool of the log dir logDir, holding at most limit
// bytes of files; it removes what a previous run left in the pool folder.
// Close stops its goroutine.
func NewRecycler(logDir string, limit int64, fs FS, logger *slog.Logger) (*Recycler, error) {
	if logger == nil {
		logger = slog.Default()
	}
	if fs == nil {
		fs = (&Config{}).fs()
	}
	dir := filepath.Join(logDir, RecycleDirName)
	if err := os.RemoveAll(dir); err != nil {
		return nil, fmt.Errorf("clear segment recycling folder: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create segment recycling folder: %w", err)
	}
	r := &Recycler{dir: dir, limit: limit, fs: fs, logger: logger, sizes: map[string]int64{}, stopped: make(chan struct{})}
	r.wake = sync.NewCond(&r.mu)
	go r.run()
	return r, nil
}

// hold moves the file at path into the pool, where it waits for release
// before it is cleared; ok is false when the pool has no room (or is
// closed) and the file was left where it was. The file must be whole: it
// is a segment file no longer in any log's list.
func (r *Recycler) hold(path string) (string, bool) {
	if r == nil {
		return "", false
	}
	st, err := os.Stat(path)
	if err != nil || st.Size() == 0 {
		return "", false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.bytes+st.Size() > r.limit {
		return "", false
	}
	r.seq++
	p := filepath.Join(r.dir, fmt.Sprintf("%020d%s", r.seq, LogSuffix))
	if err := r.fs.Rename(path, p); err != nil {
		return "", false
	}
	r.bytes += st.Size()
	r.sizes[p] = st.Size()
	return p, true
}

// release queues a held file for clearing: nobody reads it any more.
func (r *Recycler) release(p string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return // removed with the folder at the next start
	}
	r.queue = append(r.queue, p)
	r.wake.Signal()
}

// give moves an unreferenced segment file into the pool: false when it has
// no room and the caller removes the file.
func (r *Recycler) give(path string) bool {
	p, ok := r.hold(path)
	if ok {
		r.release(p)
	}
	return ok
}

// take hands out a cleared file, the oldest, for the caller to rename:
// false when none is ready.
func (r *Recycler) take() (string, bool) {
	if r == nil {
		return "", false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.ready) == 0 {
		return "", false
	}
	p := r.ready[0]
	r.ready = r.ready[1:]
	r.logger.Info("segment recycling: file reused", "file", p, "bytes", r.sizes[p])
	r.bytes -= r.sizes[p]
	delete(r.sizes, p)
	return p, true
}

// drain removes the files ready for reuse: the file system is full, and
// their space is better given back.
func (r *Recycler) drain() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.ready {
		r.fs.Remove(p)
		r.bytes -= r.sizes[p]
		delete(r.sizes, p)
	}
	r.ready = nil
}

// Bytes returns the bytes the pool holds and the files ready for reuse.
func (r *Recycler) Bytes() (held int64, ready int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bytes, len(r.ready)
}

// Close stops the recycler's goroutine, after the file it is clearing;
// the files it holds stay until the next start removes them.
func (r *Recycler) Close() {
	r.mu.Lock()
	r.closed = true
	r.wake.Broadcast()
	r.mu.Unlock()
	<-r.stopped
}

func (r *Recycler) run() {
	defer close(r.stopped)
	zeros := make([]byte, recycleChunk)
	for {
		r.mu.Lock()
		for len(r.queue) == 0 && !r.closed {
			r.wake.Wait()
		}
		if r.closed {
			r.mu.Unlock()
			return
		}
		p := r.queue[0]
		r.queue = r.queue[1:]
		r.mu.Unlock()

		t0 := time.Now()
		err := r.clear(p, zeros)
		r.mu.Lock()
		if err != nil {
			if !r.closed { // else the next start removes it
				r.logger.Warn("segment recycling: removing a file that could not be cleared", "file", p, "err", err)
				r.fs.Remove(p)
			}
			r.bytes -= r.sizes[p]
			delete(r.sizes, p)
		} else {
			r.ready = append(r.ready, p)
			r.zeroed++
			r.logger.Info("segment recycling: file cleared", "file", p, "bytes", r.sizes[p], "took", time.Since(t0), "ready", len(r.ready))
		}
		r.mu.Unlock()
	}
}

// clear overwrites the whole file with zeros and fsyncs it: no byte of
// what it held can be read back after a crash, even one a later write did
// not reach the disk over.
func (r *Recycler) clear(p string, zeros []byte) error {
	f, err := r.fs.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	fd := int(f.Fd())
	for off := int64(0); off < st.Size(); off += recycleChunk {
		r.mu.Lock()
		closed := r.closed
		r.mu.Unlock()
		if closed {
			return errors.New("recycler closed")
		}
		n := min(int64(recycleChunk), st.Size()-off)
		if err := pwriteFull(fd, zeros[:n], off); err != nil {
			return err
		}
	}
	if err := f.Sync(); err != nil {
		return err
	}
	return nil
}

// reuseSegmentFile renames a cleared pool file to the log file of the
// segment at base in dir and opens the segment on it, empty. False when
// the pool had no file (or the rename failed) and the caller creates one.
func reuseSegmentFile(r *Recycler, dir string, base int64, cfg *Config, files *FileCache) (*Segment, bool, error) {
	src, ok := r.take()
	if !ok {
		return nil, false, nil
	}
	for _, sfx := range []string{IndexSuffix, TimeIndexSuffix, TxnIndexSuffix} {
		if err := cfg.fs().Remove(segmentPath(dir, base, sfx)); err != nil && !errors.Is(err, os.ErrNotExist) {
			cfg.fs().Remove(src)
			return nil, false, fmt.Errorf("remove leftover segment file: %w", err)
		}
	}
	if err := cfg.fs().Rename(src, segmentPath(dir, base, LogSuffix)); err != nil {
		cfg.fs().Remove(src)
		return nil, false, nil
	}
	s, err := openSegmentFile(dir, base, cfg, files, false, cfg.SegmentIndexBytes, true)
	if err != nil {
		return nil, false, err
	}
	return s, true, nil
}

// createSegmentRecycled is createSegment on a file from the pool r when
// it has one ready.
func createSegmentRecycled(r *Recycler, dir string, base int64, cfg *Config, files *FileCache) (*Segment, error) {
	s, ok, err := reuseSegmentFile(r, dir, base, cfg, files)
	if err != nil || ok {
		return s, err
	}
	return createSegment(dir, base, cfg, files)
}

// trimRecycled truncates a recycled segment's file to its data: the
// segment is being sealed. Writer only.
func (s *Segment) trimRecycled() error {
	if !s.recycled {
		return nil
	}
	if err := s.f.Truncate(s.size.Load()); err != nil {
		return fmt.Errorf("trim recycled segment: %w", err)
	}
	s.recycled = false
	return nil
}
