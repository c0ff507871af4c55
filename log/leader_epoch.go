package log

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"kzero/vfs"
)

// LeaderEpochCheckpoint is the file, in each partition folder, that maps
// leader epochs to the first offset written in them, as Kafka names it:
//
//	0            version
//	2            number of entries
//	0 0          epoch, start offset
//	3 1200
const LeaderEpochCheckpoint = "leader-epoch-checkpoint"

// EpochEntry is a leader epoch and the first offset written in it.
type EpochEntry struct {
	Epoch       int32
	StartOffset int64
}

// epochCache is the leader epoch cache (KIP-101): epochs ascending, start
// offsets ascending. The writer updates it under Log.mu; OffsetForLeaderEpoch
// readers take the read lock.
type epochCache struct {
	mu      sync.RWMutex
	path    string
	fs      FS
	entries []EpochEntry
}

// loadEpochCache reads the partition's checkpoint; a missing or unreadable
// file gives an empty cache, which the log rebuilds from its batches.
func loadEpochCache(fs FS, dir string) (*epochCache, bool) {
	c := &epochCache{path: dir + string(os.PathSeparator) + LeaderEpochCheckpoint, fs: fs}
	data, err := vfs.ReadFile(fs, c.path)
	if err != nil {
		return c, false
	}
	entries, err := parseEpochCheckpoint(data)
	if err != nil {
		return c, false
	}
	c.entries = entries
	return c, true
}

// parseEpochCheckpoint decodes a leader-epoch-checkpoint file.
func parseEpochCheckpoint(data []byte) ([]EpochEntry, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("leader epoch checkpoint: bad version")
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n < 0 || n != len(lines)-2 {
		return nil, fmt.Errorf("leader epoch checkpoint: bad entry count")
	}
	out := make([]EpochEntry, 0, n)
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 2 {
			return nil, fmt.Errorf("leader epoch checkpoint: bad entry %q", l)
		}
		e, err1 := strconv.ParseInt(f[0], 10, 32)
		o, err2 := strconv.ParseInt(f[1], 10, 64)
		if err1 != nil || err2 != nil || e < 0 || o < 0 {
			return nil, fmt.Errorf("leader epoch checkpoint: bad entry %q", l)
		}
		if k := len(out); k > 0 && (int32(e) <= out[k-1].Epoch || o < out[k-1].StartOffset) {
			return nil, fmt.Errorf("leader epoch checkpoint: entries out of order")
		}
		out = append(out, EpochEntry{int32(e), o})
	}
	return out, nil
}

func (c *epochCache) write(sync bool) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(c.entries))
	for _, e := range c.entries {
		fmt.Fprintf(&b, "%d %d\n", e.Epoch, e.StartOffset)
	}
	tmp := c.path + ".tmp"
	if err := vfs.WriteFile(c.fs, tmp, b.Bytes(), sync); err != nil {
		return err
	}
	if err := c.fs.Rename(tmp, c.path); err != nil {
		return fmt.Errorf("replace leader epoch checkpoint: %w", err)
	}
	if sync {
		// The rename too: the recovery point passes only epochs on disk.
		return vfs.Fsync(c.fs, filepath.Dir(c.path))
	}
	return nil
}

// assign records that epoch starts at offset, when epoch is newer than the
// latest; it reports whether the cache changed. Entries that start at or
// after offset go first, as in Kafka: the batches say where epoch starts
// (recovery can find a checkpoint newer than what survived of the log).
// Writer only.
func (c *epochCache) assign(epoch int32, offset int64) bool {
	if epoch < 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := len(c.entries); k > 0 && epoch <= c.entries[k-1].Epoch {
		return false
	}
	for k := len(c.entries); k > 0 && c.entries[k-1].StartOffset >= offset; k-- {
		c.entries = c.entries[:k-1]
	}
	c.entries = append(c.entries, EpochEntry{epoch, offset})
	return true
}

// truncateFromEnd drops the epochs starting at or after offset (the log was
// truncated there). Writer only.
func (c *epochCache) truncateFromEnd(offset int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.entries)
	for n > 0 && c.entries[n-1].StartOffset >= offset {
		n--
	}
	changed := n != len(c.entries)
	c.entries = c.entries[:n]
	return changed
}

// truncateFromStart moves the epochs that started below the new log start
// offset: the last of them now starts at it, the others go. Writer only.
func (c *epochCache) truncateFromStart(offset int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	i := 0
	for i < len(c.entries) && c.entries[i].StartOffset < offset {
		i++
	}
	if i == 0 {
		return false
	}
	keep := c.entries[i-1]
	keep.StartOffset = offset
	c.entries = append([]EpochEntry{keep}, c.entries[i:]...)
	return true
}

// endOffsetFor is Kafka's LeaderEpochFileCache.endOffsetFor: the largest
// epoch at or below requested and the offset where it ended (the start of
// the next epoch, or logEnd for the latest); (-1, -1) for an undefined or
// too new epoch.
func (c *epochCache) endOffsetFor(requested int32, logEnd int64) (int32, int64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	n := len(c.entries)
	if requested < 0 || n == 0 {
		return -1, -1
	}
	if requested == c.entries[n-1].Epoch {
		return requested, logEnd
	}
	// The first entry with an epoch above requested.
	hi, _ := slices.BinarySearchFunc(c.entries, requested+1, func(e EpochEntry, t int32) int { return int(e.Epoch) - int(t) })
	if hi == n {
		return -1, -1
	}
	if hi == 0 {
		return requested, c.entries[0].StartOffset
	}
	return c.entries[hi-1].Epoch, c.entries[hi].StartOffset
}

func (c *epochCache) snapshot() []EpochEntry {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return slices.Clone(c.entries)
}
