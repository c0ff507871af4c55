package log

import (
	"errors"
	"os"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// FileCache bounds the descriptors that sealed segments keep open. A broker
// with 10,000 partitions cannot keep every segment file open under a
// descriptor limit of 20,000 (Kafka needs its ulimit raised far beyond),
// yet fetches of old data must find their file open. So each log keeps its
// active segment's file open for the writer, and the files of sealed
// segments are opened when a read (or the cleaner, a flush, a truncation)
// needs them and closed again when more than Max of them are open and idle.
//
// Eviction is CLOCK (second chance), the usual approximation of LRU that
// needs no lock on a hit: a read sets its segment's recent bit; the sweep,
// under the cache lock, clears the bits it passes and closes the first
// idle file whose bit is clear. A file some read still holds (a range in
// flight to sendfile) is never closed: the bound is soft while reads pin
// more than Max files, and evictions catch up when they are released.
//
// One FileCache is shared by every log of a Manager; it is safe for
// concurrent use.
type FileCache struct {
	max int

	mu struct {
		sync.Mutex
		ring []*Segment // open, unpinned segments; Segment.slot is the index
		hand int
	}
	ringLen atomic.Int64 // len(mu.ring), read by Release without the lock
	opened  atomic.Int64
	evicted atomic.Int64
}

// DefaultMaxSegmentFiles is the cache size when none is given: a quarter
// of the descriptor limit (Go raises the soft limit to the hard one at
// start), at least 64.
func DefaultMaxSegmentFiles() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<24 {
		return 1024
	}
	return max(int(rl.Cur/4), 64)
}

// NewFileCache returns a cache that keeps at most max sealed segment files
// open while idle; max <= 0 takes DefaultMaxSegmentFiles.
func NewFileCache(max int) *FileCache {
	if max <= 0 {
		max = DefaultMaxSegmentFiles()
	}
	return &FileCache{max: max}
}

var defaultFiles = sync.OnceValue(func() *FileCache { return NewFileCache(0) })

// FileCacheStats counts what the cache did.
type FileCacheStats struct {
	Open    int   // sealed segment files open now (idle or in use)
	Opened  int64 // files reopened for a read since start
	Evicted int64 // files closed to stay within the bound
}

// Stats returns the cache's counters.
func (c *FileCache) Stats() FileCacheStats {
	c.mu.Lock()
	n := len(c.mu.ring)
	c.mu.Unlock()
	return FileCacheStats{Open: n, Opened: c.opened.Load(), Evicted: c.evicted.Load()}
}

// Max is the bound on idle open files.
func (c *FileCache) Max() int { return c.max }

// add puts an open, unpinned segment in the ring and evicts down to the
// bound. A segment that is pinned, dead or already in the ring is left.
func (c *FileCache) add(s *Segment) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := s.state.Load()
	if s.pinned || s.slot >= 0 || st&refMask == 0 || st&fdOpen == 0 {
		return
	}
	s.slot = len(c.mu.ring)
	c.mu.ring = append(c.mu.ring, s)
	c.ringLen.Store(int64(len(c.mu.ring)))
	c.evictLocked(c.max)
}

// remove takes s out of the ring.
func (c *FileCache) remove(s *Segment) {
	c.mu.Lock()
	c.removeLocked(s)
	c.mu.Unlock()
}

func (c *FileCache) removeLocked(s *Segment) {
	i := s.slot
	if i < 0 {
		return
	}
	last := len(c.mu.ring) - 1
	c.mu.ring[i] = c.mu.ring[last]
	c.mu.ring[i].slot = i
	c.mu.ring[last] = nil
	c.mu.ring = c.mu.ring[:last]
	c.ringLen.Store(int64(last))
	s.slot = -1
}

// pin keeps s's file open until unpin: the writer's active segment.
func (c *FileCache) pin(s *Segment) {
	c.mu.Lock()
	s.pinned = true
	c.removeLocked(s)
	c.mu.Unlock()
}

// unpin lets the cache close s's file once idle.
func (c *FileCache) unpin(s *Segment) {
	c.mu.Lock()
	s.pinned = false
	c.mu.Unlock()
	c.add(s)
}

// evictLocked closes idle files until at most keep remain in the ring or
// every one left is in use. Two sweeps of the ring give every recent bit a
// second chance.
func (c *FileCache) evictLocked(keep int) {
	for steps := 2 * len(c.mu.ring); len(c.mu.ring) > keep && steps > 0; steps-- {
		if c.mu.hand >= len(c.mu.ring) {
			c.mu.hand = 0
		}
		s := c.mu.ring[c.mu.hand]
		if s.recent.Load() {
			s.recent.Store(false)
			c.mu.hand++
			continue
		}
		gone, closed := s.closeIdle()
		if !gone {
			c.mu.hand++
			continue
		}
		c.removeLocked(s) // moves the last entry to hand: look at it next
		if closed {
			c.evicted.Add(1)
		}
	}
}

// over reports whether more files are in the ring than the bound: reads
// or flushes held them when they were added, and the next release of one
// lets evict catch up.
func (c *FileCache) over() bool { return c.ringLen.Load() > int64(c.max) }

// evict closes idle files down to the bound.
func (c *FileCache) evict() {
	c.mu.Lock()
	c.evictLocked(c.max)
	c.mu.Unlock()
}

// shed closes every idle file: an open failed for want of descriptors.
func (c *FileCache) shed() {
	c.mu.Lock()
	for _, s := range c.mu.ring {
		s.recent.Store(false)
	}
	c.evictLocked(0)
	c.mu.Unlock()
}

// open opens a segment file in fs (flags besides O_RDWR: os.O_CREATE to
// create it), shedding idle files and trying again when the process is out
// of descriptors. A nil cache only opens.
func (c *FileCache) open(fs FS, path string, flags int) (File, error) {
	flags |= os.O_RDWR
	f, err := fs.OpenFile(path, flags, 0o644)
	if c != nil && (errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)) {
		c.shed()
		f, err = fs.OpenFile(path, flags, 0o644)
	}
	if err != nil {
		return nil, err
	}
	return f, nil
}
