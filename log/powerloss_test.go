package log

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"kzero/record"
)

// crashFS is the operating system's file system plus a record of what a
// power loss would keep: the contents of each file as of its last fsync.
// Writes go to the real files (the log writes with pwritev on the
// descriptor, which no wrapper sees), and Sync copies the file's contents
// as durable. crash then rewrites every file to what survives: its durable
// contents plus a random part of what was written after them, with a
// random block of that part zeroed (a page that never reached the disk).
type crashFS struct {
	mu      sync.Mutex
	durable map[string][]byte // by path; nil: never synced
}

func newCrashFS() *crashFS { return &crashFS{durable: map[string][]byte{}} }

func (c *crashFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() || strings.Contains(name, IndexSuffix) || strings.Contains(name, TimeIndexSuffix) {
		// A folder's fsync (its names are not modelled), or an index:
		// written through its mapping and msync'd, which no wrapper sees.
		// Recovery checks the indexes it finds either way.
		return f, nil
	}
	c.mu.Lock()
	if _, ok := c.durable[name]; !ok {
		c.durable[name] = nil
	}
	c.mu.Unlock()
	return &crashFile{File: f, fs: c}, nil
}

// Rename carries what is durable of a file to its new name (the log
// fsyncs the folder where a rename must survive a crash).
func (c *crashFS) Rename(oldpath, newpath string) error {
	if err := os.Rename(oldpath, newpath); err != nil {
		return err
	}
	c.mu.Lock()
	if d, ok := c.durable[oldpath]; ok {
		c.durable[newpath] = d
		delete(c.durable, oldpath)
	}
	c.mu.Unlock()
	return nil
}

// Remove forgets what was durable of the file.
func (c *crashFS) Remove(name string) error {
	if err := os.Remove(name); err != nil {
		return err
	}
	c.mu.Lock()
	delete(c.durable, name)
	c.mu.Unlock()
	return nil
}

type crashFile struct {
	*os.File
	fs *crashFS
}

func (f *crashFile) Sync() error {
	if err := f.File.Sync(); err != nil {
		return err
	}
	data, err := os.ReadFile(f.Name()) // f may be open write-only
	if err != nil {
		return err
	}
	f.fs.mu.Lock()
	f.fs.durable[f.Name()] = data
	f.fs.mu.Unlock()
	return nil
}

// capture decides what each file would keep if the power went now; the
// log may still be writing. restore writes it once the log is gone.
func (c *crashFS) capture(rng *rand.Rand) (map[string][]byte, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string][]byte{}
	for _, name := range slices.Sorted(maps.Keys(c.durable)) {
		cur, err := os.ReadFile(name)
		if errors.Is(err, os.ErrNotExist) {
			continue // removed (a deleted segment): it stays removed
		}
		if err != nil {
			return nil, err
		}
		kept := c.durable[name]
		if len(cur) >= len(kept) && bytes.Equal(cur[:len(kept)], kept) {
			// Some of the unsynced tail made it, maybe with a hole.
			tail := bytes.Clone(cur[len(kept) : len(kept)+rng.IntN(len(cur)-len(kept)+1)])
			if len(tail) > 0 && rng.IntN(2) == 0 {
				at := rng.IntN(len(tail))
				clear(tail[at:min(len(tail), at+512)])
			}
			kept = append(bytes.Clone(kept), tail...)
		}
		out[name] = kept
	}
	return out, nil
}

// restore puts the files as capture found them; a segment file created
// after it is removed.
func (c *crashFS) restore(t *testing.T, files map[string][]byte) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.durable {
		data, ok := files[name]
		var err error
		if ok {
			err = os.WriteFile(name, data, 0o644)
		} else {
			if err = os.Remove(name); errors.Is(err, os.ErrNotExist) {
				err = nil
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// recordingHandler keeps the log records a log writes during recovery.
type recordingHandler struct {
	mu   sync.Mutex
	msgs []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.msgs = append(h.msgs, r.Clone())
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

// droppedBytes is the dropped_bytes of the "recovered log" record.
func (h *recordingHandler) droppedBytes(t *testing.T) int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, r := range h.msgs {
		if r.Message != "recovered log" {
			continue
		}
		var n int64 = -1
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "dropped_bytes" {
				n = a.Value.Int64()
			}
			return true
		})
		return n
	}
	t.Fatal("recovery logged no \"recovered log\" record")
	return 0
}

// A power loss at a random point: with flush.messages=1 nothing
// acknowledged is lost; with the defaults the log comes back as a prefix of
// what was appended, every batch whole and in order, at least up to the
// recovery point it had, and it says how many bytes it dropped.
func TestPowerLoss(t *testing.T) {
	for _, flushEach := range []bool{true, false} {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("flush.messages=1:%v/seed=%d", flushEach, seed), func(t *testing.T) {
				powerLoss(t, flushEach, seed)
			})
		}
	}
}

func powerLoss(t *testing.T, flushEach bool, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 12))
	dir := t.TempDir()
	fs := newCrashFS()
	cfg := testConfig()
	cfg.SegmentBytes = 16 << 10 // rolls, and background flushes of sealed segments
	cfg.IndexIntervalBytes = 512
	cfg.FS = fs
	if flushEach {
		cfg.FlushMessages = 1
	}
	quiet := slog.New(slog.DiscardHandler)
	// A cache of one idle file: sealed segments' files close, and their
	// background flushes reopen them through the FS.
	l, err := Open(dir, cfg, OpenOptions{Logger: quiet, Files: NewFileCache(1)})
	if err != nil {
		t.Fatal(err)
	}
	// Appends of random sizes from a few producers at once (group
	// commit), each acknowledged batch remembered by its first offset.
	// The power goes when the k-th acknowledgement arrives, while the
	// other producers are still writing.
	const producers = 3
	batches := make([][][]byte, producers)
	for p := range batches {
		batches[p] = make([][]byte, 20+rng.IntN(70))
		for i := range batches[p] {
			batches[p][i] = uniqueBatch(t, fmt.Sprintf("p%d-%d", p, i), 1+rng.IntN(4), 1+rng.IntN(2000))
		}
	}
	k := 1 + rng.IntN(len(batches[0])*producers/2)
	crashRng := rand.New(rand.NewPCG(seed, 34))
	var (
		mu            sync.Mutex
		acked         = map[int64][]byte{} // first offset -> records of the batch
		ackedEnd      int64                // the end of the acknowledged batches
		ackedAtCrash  int64                // ackedEnd when the power went
		recoveryPoint int64                // what a checkpoint could hold at the crash
		survived      map[string][]byte
		crashErr      error
	)
	var (
		wg      sync.WaitGroup
		appends atomic.Int64
	)
	for p := range producers {
		wg.Go(func() {
			for i, b := range batches[p] {
				// A new leader epoch every 16 appends: the epoch cache
				// must come back as the surviving batches say.
				info, err := l.Append(b, OriginClient, int32(appends.Add(1)/16))
				if err != nil {
					t.Errorf("producer %d append %d: %v", p, i, err)
					return
				}
				if p == 0 && i%25 == 24 {
					// Now and then a flush (flush.ms): a synced
					// checkpoint that later epochs outgrow.
					if err := l.Flush(); err != nil {
						t.Errorf("flush: %v", err)
						return
					}
				}
				mu.Lock()
				acked[info.FirstOffset] = record.Batch(b).RecordsBytes()
				ackedEnd = max(ackedEnd, info.LastOffset+1)
				if len(acked) == k {
					ackedAtCrash = ackedEnd
					recoveryPoint = l.RecoveryPoint()
					survived, crashErr = fs.capture(crashRng)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if crashErr != nil || survived == nil {
		t.Fatalf("no crash captured: %v", crashErr)
	}

	// Drop the log without closing it (its descriptors and mappings stay
	// open, as a dead process leaves them to the kernel: closing would
	// trim its index files), and put the files as the power loss left them.
	l.bg.Wait()
	fs.restore(t, survived)

	rec := &recordingHandler{}
	before := dirLogBytes(t, dir)
	l, err = Open(dir, testConfig(), OpenOptions{RecoveryPoint: recoveryPoint, Logger: slog.New(rec)})
	if err != nil {
		t.Fatalf("open after the power loss: %v", err)
	}
	defer l.Close()
	end := l.LogEndOffset()
	dropped := rec.droppedBytes(t)
	if dropped != before-l.Size() {
		t.Fatalf("recovery says it dropped %d bytes; the segments lost %d", dropped, before-l.Size())
	}
	t.Logf("acknowledged up to %d at the power loss (%d in all), recovery point %d, recovered up to %d, dropping %d bytes of torn tail",
		ackedAtCrash, ackedEnd, recoveryPoint, end, dropped)
	if flushEach && end < ackedAtCrash {
		t.Fatalf("with flush.messages=1 the log recovered up to %d, acknowledged up to %d before the power loss", end, ackedAtCrash)
	}
	if end < recoveryPoint || end > ackedEnd {
		t.Fatalf("recovered up to %d: below the recovery point %d or past the appends %d", end, recoveryPoint, ackedEnd)
	}
	// Every batch present is the one appended at its offset, whole, and
	// the leader epochs are where the batches start them.
	next := int64(0)
	var epochs []EpochEntry
	for next < end {
		r, err := l.Read(next, math.MaxInt32, end, true)
		if err != nil {
			t.Fatalf("read at %d: %v", next, err)
		}
		data := readRange(t, r)
		r.Segment.Release()
		for len(data) > 0 {
			b, rest, err := record.ParseBatch(data)
			if err != nil {
				t.Fatalf("batch at %d: %v", next, err)
			}
			if err := b.Validate(); err != nil {
				t.Fatalf("batch at %d: %v", next, err)
			}
			if b.BaseOffset() != next || !bytes.Equal(b.RecordsBytes(), acked[next]) {
				t.Fatalf("batch at %d (base %d) is not the one appended there", next, b.BaseOffset())
			}
			if e := b.PartitionLeaderEpoch(); len(epochs) == 0 || e > epochs[len(epochs)-1].Epoch {
				epochs = append(epochs, EpochEntry{e, next})
			}
			next, data = b.NextOffset(), rest
		}
	}
	if got := l.LeaderEpochs(); !slices.Equal(got, epochs) {
		t.Fatalf("leader epochs %v after recovery; the batches start them at %v", got, epochs)
	}
	// And the log takes appends again where it ended.
	if info := mustAppend(t, l, makeBatch(t, 1, 10, record.CodecNone)); info.FirstOffset != end {
		t.Fatalf("append after recovery at %d, want %d", info.FirstOffset, end)
	}
}

// uniqueBatch is a batch of n records whose keys name it.
func uniqueBatch(t testing.TB, name string, n, valueSize int) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1,
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence})
	val := bytes.Repeat([]byte{'v'}, valueSize)
	for i := range n {
		b.Add(&record.Record{OffsetDelta: int32(i), Key: fmt.Appendf(nil, "%s-%d", name, i), Value: val})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// dirLogBytes is the size of the .log files in dir.
func dirLogBytes(t *testing.T, dir string) int64 {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		if _, sfx, ok := ParseFileName(e.Name()); ok && sfx == LogSuffix {
			fi, err := e.Info()
			if err != nil {
				t.Fatal(err)
			}
			n += fi.Size()
		}
	}
	return n
}
