package log

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/record"
	"kzero/vfs"
)

// makeBatch builds a batch of n records of valueSize bytes, keys "k<i>".
func makeBatch(t testing.TB, n, valueSize int, codec record.Codec) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{Codec: codec, BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1,
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence})
	val := bytes.Repeat([]byte{'v'}, valueSize)
	for i := 0; i < n; i++ {
		b.Add(&record.Record{OffsetDelta: int32(i), Key: []byte(fmt.Sprintf("k%d", i)), Value: val})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func testConfig() Config {
	c := DefaultConfig()
	c.SegmentIndexBytes = 64 << 10
	c.FileDeleteDelayMs = 0
	return c
}

func openTestLog(t testing.TB, dir string, cfg Config) *Log {
	t.Helper()
	l, err := Open(dir, cfg, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustAppend(t testing.TB, l *Log, records []byte) AppendInfo {
	t.Helper()
	info, err := l.Append(records, OriginClient, 0)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// readRange reads the bytes of a range from its segment file.
func readRange(t testing.TB, r FileRange) []byte {
	t.Helper()
	buf := make([]byte, r.Len)
	if err := preadFull(r.Segment.Fd(), buf, r.Pos); err != nil {
		t.Fatal(err)
	}
	return buf
}

// batchesIn returns the base and last offsets of the whole batches in buf.
func batchesIn(buf []byte) (offs [][2]int64) {
	for len(buf) > 0 {
		b, rest, err := record.ParseBatch(buf)
		if err != nil {
			break
		}
		offs = append(offs, [2]int64{b.BaseOffset(), b.LastOffset()})
		buf = rest
	}
	return offs
}

func TestAppendAssignsOffsetsAndReads(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	for i := 0; i < 100; i++ {
		info := mustAppend(t, l, makeBatch(t, 10, 100, record.CodecNone))
		if info.FirstOffset != int64(i*10) || info.LastOffset != int64(i*10+9) || info.Records != 10 {
			t.Fatalf("append %d: %+v", i, info)
		}
	}
	if l.LogEndOffset() != 1000 {
		t.Fatalf("LEO %d", l.LogEndOffset())
	}
	for off := int64(0); off < 1000; off += 7 {
		r, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil {
			t.Fatal(err)
		}
		got := batchesIn(readRange(t, r))
		r.Release()
		if len(got) == 0 || got[0][0] != off/10*10 || got[len(got)-1][1] != 999 {
			t.Fatalf("read %d: batches %v", off, got)
		}
		for i := 1; i < len(got); i++ {
			if got[i][0] != got[i-1][1]+1 {
				t.Fatalf("read %d: gap %v", off, got)
			}
		}
	}
}

func TestReadBounds(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	batch := makeBatch(t, 10, 100, record.CodecNone)
	size := int64(len(batch))
	for i := 0; i < 10; i++ {
		mustAppend(t, l, append([]byte(nil), batch...))
	}
	// maxOffset (the high watermark) cuts at a batch boundary.
	r, err := l.Read(0, 1<<20, 35, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := batchesIn(readRange(t, r)); len(got) != 3 || got[2][1] != 29 {
		t.Fatalf("below HW 35: %v", got)
	}
	r.Release()
	// maxBytes cuts anywhere; minOneBatch returns the first batch whole.
	r, _ = l.Read(20, 10, 100, true)
	if r.Len != size {
		t.Fatalf("minOneBatch: len %d, want %d", r.Len, size)
	}
	r.Release()
	r, _ = l.Read(20, int(size)+5, 100, false)
	if r.Len != size+5 {
		t.Fatalf("maxBytes: len %d", r.Len)
	}
	r.Release()
	// At the end or past the HW: empty. Past the end: out of range.
	for _, c := range []struct{ off, hw int64 }{{100, 100}, {50, 50}, {60, 50}} {
		if r, err := l.Read(c.off, 100, c.hw, true); err != nil || !r.Empty() {
			t.Fatalf("read %d hw %d: %v %v", c.off, c.hw, r, err)
		}
	}
	if _, err := l.Read(101, 100, 200, true); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("past end: %v", err)
	}
	if _, err := l.DeleteRecordsBefore(30); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Read(29, 100, 100, true); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("below start: %v", err)
	}
}

func TestRollAndSegmentFiles(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.SegmentBytes = 8 << 10
	l := openTestLog(t, dir, cfg)
	for i := 0; i < 50; i++ {
		mustAppend(t, l, makeBatch(t, 4, 500, record.CodecNone))
	}
	segs := l.Segments()
	if len(segs) < 5 {
		t.Fatalf("%d segments", len(segs))
	}
	for i, s := range segs {
		if s.Size() > cfg.SegmentBytes {
			t.Fatalf("segment %d has %d bytes", i, s.Size())
		}
		if i > 0 && s.BaseOffset() != segs[i-1].NextOffset() {
			t.Fatalf("segment %d base %d after next %d", i, s.BaseOffset(), segs[i-1].NextOffset())
		}
		for _, sfx := range []string{LogSuffix, IndexSuffix, TimeIndexSuffix} {
			if _, err := os.Stat(filepath.Join(dir, FileName(s.BaseOffset(), sfx))); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Reads cross segments one at a time.
	for off := int64(0); off < l.LogEndOffset(); off++ {
		r, err := l.Read(off, 1<<20, l.LogEndOffset(), true)
		if err != nil || r.Empty() {
			t.Fatalf("read %d: %v", off, err)
		}
		got := batchesIn(readRange(t, r))
		if got[0][0] > off || got[0][1] < off {
			t.Fatalf("read %d got %v", off, got)
		}
		r.Release()
	}
	end := l.LogEndOffset()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	// Sealed indexes are trimmed to their entries.
	st, _ := os.Stat(filepath.Join(dir, FileName(segs[0].BaseOffset(), IndexSuffix)))
	if st.Size()%8 != 0 || st.Size() >= int64(cfg.SegmentIndexBytes) {
		t.Fatalf("index size %d", st.Size())
	}
	l = openTestLog(t, dir, cfg)
	defer l.Close()
	if l.LogEndOffset() != end || len(l.Segments()) != len(segs) {
		t.Fatalf("reopened: LEO %d segments %d", l.LogEndOffset(), len(l.Segments()))
	}
}

func TestRollBySegmentMs(t *testing.T) {
	cfg := testConfig()
	now := time.Now()
	cfg.Now = func() time.Time { return now }
	cfg.SegmentMs = 1000
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	mustAppend(t, l, makeBatch(t, 1, 10, record.CodecNone))
	now = now.Add(2 * time.Second)
	// The roll goes by record timestamps, so the batch must be newer too.
	var b record.Builder
	b.Reset(record.BatchHeader{BaseTimestamp: now.UnixMilli(), LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
	b.Add(&record.Record{Key: []byte("k"), Value: []byte("v")})
	rec, _ := b.AppendTo(nil)
	mustAppend(t, l, rec)
	if n := len(l.Segments()); n != 2 {
		t.Fatalf("%d segments after segment.ms", n)
	}
}

func TestAppendRejectsBadBatches(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	good := makeBatch(t, 3, 10, record.CodecNone)
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)-1] ^= 1
	v1 := append([]byte(nil), good...)
	v1[16] = 1 // the magic byte: a v1 message set
	two := append(append([]byte(nil), good...), good...)
	big := makeBatch(t, 2, 2<<20, record.CodecNone)
	for _, c := range []struct {
		name string
		recs []byte
		want error
	}{
		{"crc", corrupt, kerr.CorruptMessage},
		{"magic1", v1, kerr.UnsupportedVersion},
		{"short", good[:len(good)-3], kerr.CorruptMessage},
		{"empty", nil, kerr.CorruptMessage},
		{"two batches", two, kerr.InvalidRecord},
		{"too large", big, kerr.MessageTooLarge},
	} {
		if _, err := l.Append(c.recs, OriginClient, 0); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	if l.LogEndOffset() != 0 {
		t.Fatalf("bad batches appended: LEO %d", l.LogEndOffset())
	}
	mustAppend(t, l, good)
	// Replication keeps offsets and requires them to follow.
	rep := makeBatch(t, 2, 10, record.CodecNone)
	record.Batch(rep).SetBaseOffset(1)
	if _, err := l.Append(rep, OriginReplication, 0); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("replicated overlap: %v", err)
	}
	record.Batch(rep).SetBaseOffset(10)
	if info, err := l.Append(rep, OriginReplication, 0); err != nil || info.FirstOffset != 10 || l.LogEndOffset() != 12 {
		t.Fatalf("replicated: %+v %v", info, err)
	}
}

func TestCompactedTopicRequiresKeys(t *testing.T) {
	cfg := testConfig()
	cfg.Compact = true
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	var b record.Builder
	b.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, Codec: record.CodecLZ4})
	b.Add(&record.Record{Key: []byte("a"), Value: []byte("1")})
	b.Add(&record.Record{OffsetDelta: 1, Value: []byte("no key")})
	rec, _ := b.AppendTo(nil)
	_, err := l.Append(rec, OriginClient, 0)
	var re *record.Errors
	if !errors.Is(err, kerr.InvalidRecord) || !errors.As(err, &re) || len(re.Records) != 1 || re.Records[0].Index != 1 {
		t.Fatalf("keyless record on compacted log: %v", err)
	}
	mustAppend(t, l, makeBatch(t, 3, 10, record.CodecZstd))
}

func idempotentBatch(t testing.TB, pid int64, epoch int16, seq int32, n int) []byte {
	var b record.Builder
	b.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: pid, ProducerEpoch: epoch, BaseSequence: seq, BaseTimestamp: time.Now().UnixMilli()})
	for i := 0; i < n; i++ {
		b.Add(&record.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: []byte("v")})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestIdempotentDuplicateAndGap(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig())
	mustAppend(t, l, idempotentBatch(t, 7, 0, 0, 5))
	second := mustAppend(t, l, idempotentBatch(t, 7, 0, 5, 5))
	dup := mustAppend(t, l, idempotentBatch(t, 7, 0, 5, 5))
	if !dup.Duplicate || dup.FirstOffset != second.FirstOffset || dup.LastOffset != second.LastOffset {
		t.Fatalf("duplicate: %+v, original %+v", dup, second)
	}
	if l.LogEndOffset() != 10 {
		t.Fatalf("duplicate written: LEO %d", l.LogEndOffset())
	}
	if _, err := l.Append(idempotentBatch(t, 7, 0, 20, 1), OriginClient, 0); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap: %v", err)
	}
	// Producer state survives a restart (snapshot at close).
	l.Close()
	l = openTestLog(t, dir, testConfig())
	defer l.Close()
	if d := mustAppend(t, l, idempotentBatch(t, 7, 0, 5, 5)); !d.Duplicate {
		t.Fatalf("duplicate after restart not detected: %+v", d)
	}
	mustAppend(t, l, idempotentBatch(t, 7, 0, 10, 1))
}

func TestRecoveryTruncatesTornTail(t *testing.T) {
	for _, damage := range []string{"torn", "crc", "garbage"} {
		t.Run(damage, func(t *testing.T) {
			dir := t.TempDir()
			cfg := testConfig()
			cfg.IndexIntervalBytes = 100
			l := openTestLog(t, dir, cfg)
			var sizes []int64
			for i := 0; i < 20; i++ {
				mustAppend(t, l, makeBatch(t, 5, 50, record.CodecNone))
				sizes = append(sizes, l.active().Size())
			}
			segPath := filepath.Join(dir, FileName(0, LogSuffix))
			l.Close()
			// Damage batch 15: nothing before it may be lost, nothing from it served.
			f, err := os.OpenFile(segPath, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			switch damage {
			case "torn":
				f.Truncate(sizes[14] + 30)
			case "crc":
				f.WriteAt([]byte{0xff}, sizes[14]+100)
			case "garbage":
				f.WriteAt(bytes.Repeat([]byte{0xee}, 20), sizes[14])
			}
			f.Close()
			l, err = Open(dir, cfg, OpenOptions{RecoveryPoint: 0})
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			if l.LogEndOffset() != 75 {
				t.Fatalf("LEO after recovery %d, want 75", l.LogEndOffset())
			}
			if st, _ := os.Stat(segPath); st.Size() != sizes[14] {
				t.Fatalf("file size %d, want %d", st.Size(), sizes[14])
			}
			r, err := l.Read(0, 1<<20, l.LogEndOffset(), true)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Release()
			buf := readRange(t, r)
			got := batchesIn(buf)
			if len(got) != 15 || got[14][1] != 74 {
				t.Fatalf("batches after recovery: %v", got)
			}
			for rest := buf; len(rest) > 0; {
				b, r, err := record.ParseBatch(rest)
				if err != nil || b.Validate() != nil {
					t.Fatalf("bad batch served after recovery: %v", err)
				}
				rest = r
			}
			// New appends continue from the truncation point.
			if info := mustAppend(t, l, makeBatch(t, 1, 1, record.CodecNone)); info.FirstOffset != 75 {
				t.Fatalf("append after recovery at %d", info.FirstOffset)
			}
		})
	}
}

func TestRecoveryDropsSegmentsAfterDamage(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.SegmentBytes = 4 << 10
	l := openTestLog(t, dir, cfg)
	for i := 0; i < 40; i++ {
		mustAppend(t, l, makeBatch(t, 2, 400, record.CodecNone))
	}
	segs := l.Segments()
	if len(segs) < 4 {
		t.Fatalf("%d segments", len(segs))
	}
	damaged := segs[1]
	l.Close()
	f, _ := os.OpenFile(filepath.Join(dir, FileName(damaged.BaseOffset(), LogSuffix)), os.O_RDWR, 0)
	f.WriteAt([]byte{0, 0, 0, 1}, 8) // a batch length too short to be a batch
	f.Close()
	l, err := Open(dir, cfg, OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.LogEndOffset() != damaged.BaseOffset() || len(l.Segments()) != 2 {
		t.Fatalf("LEO %d (want %d), %d segments", l.LogEndOffset(), damaged.BaseOffset(), len(l.Segments()))
	}
}

func TestMissingOrCorruptIndexRebuilt(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.IndexIntervalBytes = 200
	l := openTestLog(t, dir, cfg)
	for i := 0; i < 30; i++ {
		mustAppend(t, l, makeBatch(t, 3, 100, record.CodecNone))
	}
	entries := l.active().offsets().Len()
	l.Close()
	os.Remove(filepath.Join(dir, FileName(0, IndexSuffix)))
	os.WriteFile(filepath.Join(dir, FileName(0, TimeIndexSuffix)), []byte{1, 2, 3}, 0o644)
	l, err := Open(dir, cfg, OpenOptions{CleanShutdown: true})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if got := l.active().offsets().Len(); got != entries || entries == 0 {
		t.Fatalf("rebuilt index has %d entries, want %d", got, entries)
	}
	if l.active().tindex.Len() == 0 {
		t.Fatal("time index not rebuilt")
	}
}

func TestGroupCommitConcurrentAppends(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	defer l.Close()
	const writers, each = 8, 200
	var wg sync.WaitGroup
	seen := make([][]AppendInfo, writers)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				info, err := l.Append(makeBatch(t, 2, 20, record.CodecNone), OriginClient, 0)
				if err != nil {
					t.Error(err)
					return
				}
				seen[w] = append(seen[w], info)
			}
		}(w)
	}
	wg.Wait()
	used := map[int64]bool{}
	for _, infos := range seen {
		for _, in := range infos {
			for o := in.FirstOffset; o <= in.LastOffset; o++ {
				if used[o] {
					t.Fatalf("offset %d assigned twice", o)
				}
				used[o] = true
			}
		}
	}
	if l.LogEndOffset() != writers*each*2 || len(used) != writers*each*2 {
		t.Fatalf("LEO %d, %d offsets", l.LogEndOffset(), len(used))
	}
	r, _ := l.Read(0, 1<<30, l.LogEndOffset(), true)
	defer r.Release()
	got := batchesIn(readRange(t, r))
	if len(got) != writers*each {
		t.Fatalf("%d batches on disk", len(got))
	}
}

func TestConcurrentReadsDuringAppendRollAndDelete(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 16 << 10
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r := 0; r < 4; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf [record.BatchHeaderSize]byte
			for {
				select {
				case <-stop:
					return
				default:
				}
				start, end := l.LogStartOffset(), l.LogEndOffset()
				if end == start {
					continue
				}
				off := start + (end-start)/2
				rng, err := l.Read(off, 4096, end, true)
				if err != nil {
					if errors.Is(err, kerr.OffsetOutOfRange) {
						continue // retention moved the start meanwhile
					}
					t.Error(err)
					return
				}
				if rng.Empty() {
					continue
				}
				if _, err := unix.Pread(rng.Segment.Fd(), buf[:], rng.Pos); err != nil {
					t.Error(err)
				}
				if b := record.Batch(buf[:]); b.BaseOffset() > off || b.LastOffset() < off {
					t.Errorf("read %d got batch %d-%d", off, b.BaseOffset(), b.LastOffset())
				}
				rng.Release()
			}
		}()
	}
	for i := 0; i < 2000; i++ {
		mustAppend(t, l, makeBatch(t, 2, 100, record.CodecNone))
		if i%300 == 299 {
			if _, err := l.DeleteRecordsBefore(l.LogEndOffset() - 500); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
}

func TestTruncateTo(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	cfg.SegmentBytes = 4 << 10
	l := openTestLog(t, dir, cfg)
	defer l.Close()
	for i := 0; i < 40; i++ {
		mustAppend(t, l, makeBatch(t, 2, 300, record.CodecNone))
	}
	if err := l.TruncateTo(31); err != nil { // inside batch [30,31]
		t.Fatal(err)
	}
	if l.LogEndOffset() != 30 {
		t.Fatalf("LEO after truncate %d", l.LogEndOffset())
	}
	if info := mustAppend(t, l, makeBatch(t, 2, 300, record.CodecNone)); info.FirstOffset != 30 {
		t.Fatalf("append after truncate at %d", info.FirstOffset)
	}
	r, err := l.Read(30, 1<<20, l.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	if got := batchesIn(readRange(t, r)); len(got) == 0 || got[len(got)-1] != [2]int64{30, 31} {
		t.Fatalf("after truncate: %v", got)
	}
	r.Release()
	if err := l.TruncateFullyAndStartAt(500); err != nil {
		t.Fatal(err)
	}
	if l.LogStartOffset() != 500 || l.LogEndOffset() != 500 || len(l.Segments()) != 1 {
		t.Fatalf("after full truncate: start %d end %d", l.LogStartOffset(), l.LogEndOffset())
	}
}

func TestCheckpointRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), RecoveryPointCheckpoint)
	in := map[TopicPartition]int64{{"orders", 0}: 12, {"my-topic", 11}: 0, {"a.b_c", 3}: 1 << 40}
	if err := WriteCheckpoint(vfs.OS, path, in); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "0\n3\na.b_c 3 1099511627776\nmy-topic 11 0\norders 0 12\n"
	if string(data) != want {
		t.Fatalf("checkpoint file:\n%s\nwant:\n%s", data, want)
	}
	out, err := ReadCheckpoint(vfs.OS, path)
	if err != nil || len(out) != 3 || out[TopicPartition{"my-topic", 11}] != 0 || out[TopicPartition{"a.b_c", 3}] != 1<<40 {
		t.Fatalf("read back %v %v", out, err)
	}
	for _, bad := range []string{"", "1\n0\n", "0\n2\nt 0 1\n", "0\n1\nt x 1\n", "0\n1\nt 0 1\nextra\n"} {
		if _, err := ParseCheckpoint([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
	if tp, ok := ParseTopicPartition("my-topic-11"); !ok || tp != (TopicPartition{"my-topic", 11}) {
		t.Fatalf("parse: %v", tp)
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte("0\n1\nt 0 5\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseCheckpoint(data)
		if err == nil && m == nil {
			t.Fatal("nil map without error")
		}
	})
}

func TestOffsetForTimestamp(t *testing.T) {
	cfg := testConfig()
	cfg.SegmentBytes = 2 << 10
	cfg.IndexIntervalBytes = 1
	l := openTestLog(t, t.TempDir(), cfg)
	defer l.Close()
	// Batch i holds records at timestamps 1000+10i, 1000+10i+1, ..., with
	// a compressed batch every third one.
	for i := 0; i < 30; i++ {
		var b record.Builder
		codec := record.CodecNone
		if i%3 == 0 {
			codec = record.CodecSnappy
		}
		b.Reset(record.BatchHeader{Codec: codec, BaseTimestamp: 1000 + 10*int64(i), LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1})
		for j := 0; j < 5; j++ {
			b.Add(&record.Record{OffsetDelta: int32(j), TimestampDelta: int64(j), Key: []byte("k"), Value: make([]byte, 100)})
		}
		rec, _ := b.AppendTo(nil)
		if _, err := l.Append(rec, OriginClient, 3); err != nil {
			t.Fatal(err)
		}
	}
	if len(l.Segments()) < 3 {
		t.Fatalf("%d segments", len(l.Segments()))
	}
	for _, c := range []struct {
		ts, off, at int64
		found       bool
	}{
		{0, 0, 1000, true},
		{1000, 0, 1000, true},
		{1003, 3, 1003, true},
		{1005, 5, 1010, true}, // between batches: the next record
		{1152, 77, 1152, true},
		{1294, 149, 1294, true},
		{1295, 0, 0, false},
	} {
		p, found, err := l.OffsetForTimestamp(c.ts)
		if err != nil || found != c.found || (found && (p.Offset != c.off || p.Timestamp != c.at || p.LeaderEpoch != 3)) {
			t.Errorf("ts %d: %+v %v %v, want offset %d at %d", c.ts, p, found, err, c.off, c.at)
		}
	}
	if p, ok, err := l.MaxTimestamp(); err != nil || !ok || p.Offset != 149 || p.Timestamp != 1294 {
		t.Errorf("max timestamp: %+v %v %v", p, ok, err)
	}
}

func txnBatch(t testing.TB, pid int64, seq int32, n int) []byte {
	var b record.Builder
	b.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: pid, ProducerEpoch: 0, BaseSequence: seq, Transactional: true, BaseTimestamp: time.Now().UnixMilli()})
	for i := 0; i < n; i++ {
		b.Add(&record.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: []byte("v")})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAbortedTransactionsIndexedAndRecovered(t *testing.T) {
	dir := t.TempDir()
	cfg := testConfig()
	l := openTestLog(t, dir, cfg)
	mustAppend(t, l, txnBatch(t, 1, 0, 3))   // 0-2, producer 1
	mustAppend(t, l, txnBatch(t, 2, 0, 2))   // 3-4, producer 2
	mustAppend(t, l, makeBatch(t, 1, 10, 0)) // 5
	abort := record.AppendControlBatch(nil, 1, 0, 0, record.ControlAbort, time.Now().UnixMilli())
	if _, err := l.Append(abort, OriginCoordinator, 0); err != nil { // 6
		t.Fatal(err)
	}
	commit := record.AppendControlBatch(nil, 2, 0, 0, record.ControlCommit, time.Now().UnixMilli())
	if _, err := l.Append(commit, OriginCoordinator, 0); err != nil { // 7
		t.Fatal(err)
	}
	want := []AbortedTxn{{ProducerID: 1, FirstOffset: 0, LastOffset: 6, LastStableOffset: 3}}
	check := func(l *Log) {
		t.Helper()
		got, err := l.AbortedTxns(nil, 0, l.LogEndOffset())
		if err != nil || len(got) != 1 || got[0] != want[0] {
			t.Fatalf("aborted txns %+v %v, want %+v", got, err, want)
		}
		if got, _ := l.AbortedTxns(nil, 7, l.LogEndOffset()); len(got) != 0 {
			t.Fatalf("aborted txns from 7: %+v", got)
		}
	}
	check(l)
	if o, ok := l.FirstUnstableOffset(); !ok || o != 0 {
		t.Fatalf("first unstable before HW moves: %d %v", o, ok)
	}
	l.OnHighWatermark(l.LogEndOffset())
	if o, ok := l.FirstUnstableOffset(); ok {
		t.Fatalf("first unstable after HW passed the markers: %d", o)
	}
	mustAppend(t, l, txnBatch(t, 1, 3, 1)) // 8: a new transaction
	if o, ok := l.FirstUnstableOffset(); !ok || o != 8 {
		t.Fatalf("first unstable with an open txn: %d %v", o, ok)
	}
	// A client cannot write markers.
	if _, err := l.Append(record.AppendControlBatch(nil, 1, 0, 0, record.ControlCommit, 0), OriginClient, 0); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("client marker: %v", err)
	}
	l.Close()
	// Lose the txn index and the snapshots, crash-style: recovery rebuilds both.
	os.Remove(filepath.Join(dir, FileName(0, TxnIndexSuffix)))
	snaps, _ := ListSnapshots(dir)
	for _, s := range snaps {
		os.Remove(SnapshotPath(dir, s))
	}
	l, err := Open(dir, cfg, OpenOptions{RecoveryPoint: 0})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	check(l)
}

func TestPartitionMetadata(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig())
	defer l.Close()
	if _, ok, err := ReadTopicID(dir); ok || err != nil {
		t.Fatalf("no file yet: %v %v", ok, err)
	}
	id := [16]byte{0: 1, 15: 2}
	if err := l.SetTopicID(id); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(filepath.Join(dir, PartitionMetadataFile))
	if string(data) != "version: 0\ntopic_id: AQAAAAAAAAAAAAAAAAAAAg\n" {
		t.Fatalf("partition.metadata %q", data)
	}
	if got, ok, err := ReadTopicID(dir); !ok || err != nil || got != id {
		t.Fatalf("read back %x %v %v", got, ok, err)
	}
	for _, bad := range []string{"", "version: 1\ntopic_id: AQAAAAAAAAAAAAAAAAAAAg\n", "version: 0\ntopic_id: short\n"} {
		if _, err := parsePartitionMetadata([]byte(bad)); err == nil {
			t.Errorf("accepted %q", bad)
		}
	}
}

func FuzzParsePartitionMetadata(f *testing.F) {
	f.Add([]byte("version: 0\ntopic_id: AQAAAAAAAAAAAAAAAAAAAg\n"))
	f.Fuzz(func(t *testing.T, data []byte) { parsePartitionMetadata(data) })
}

// A read that comes after the log closed (a partition removed while a
// fetch was on its way) gets an error: the segments are released and no
// new list comes, which a reader must not take for a deletion to retry.
func TestReadAfterClose(t *testing.T) {
	l := openTestLog(t, t.TempDir(), testConfig())
	mustAppend(t, l, makeBatch(t, 10, 100, record.CodecNone))
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := l.Read(0, 1<<20, 10, true); !errors.Is(err, kerr.KafkaStorageError) {
		r.Release()
		t.Fatalf("read after close: %+v, %v; want an error", r, err)
	}
	if _, err := l.AbortedTxns(nil, 0, 10); err != nil {
		t.Fatalf("aborted transactions after close: %v", err)
	}
}

// TestTornRollSnapshotFallsBack: a roll writes its producer snapshot
// without an fsync (the background flush syncs it), so a crash may leave
// it torn. Recovery then drops it, loads the older one and replays: the
// producer's sequence is still known, and a retry of its last batch is
// still a duplicate.
func TestTornRollSnapshotFallsBack(t *testing.T) {
	dir := t.TempDir()
	l := openTestLog(t, dir, testConfig())
	mustAppend(t, l, idempotentBatch(t, 7, 0, 0, 5))
	if err := l.Roll(); err != nil { // snapshot at 5
		t.Fatal(err)
	}
	mustAppend(t, l, idempotentBatch(t, 7, 0, 5, 5))
	if err := l.Roll(); err != nil { // snapshot at 10
		t.Fatal(err)
	}
	mustAppend(t, l, idempotentBatch(t, 7, 0, 10, 5))
	l.Close()
	// The crash: the snapshot at 10 is torn and the log not cleanly shut.
	if err := os.Truncate(SnapshotPath(dir, 10), 9); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(SnapshotPath(dir, 15)); err != nil {
		t.Fatal(err)
	}
	l, err := Open(dir, testConfig(), OpenOptions{RecoveryPoint: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if d := mustAppend(t, l, idempotentBatch(t, 7, 0, 10, 5)); !d.Duplicate || d.FirstOffset != 10 {
		t.Fatalf("retry of the last batch after recovery: %+v", d)
	}
	if _, err := l.Append(idempotentBatch(t, 7, 0, 20, 1), OriginClient, 0); !errors.Is(err, kerr.OutOfOrderSequenceNumber) {
		t.Fatalf("gap after recovery: %v", err)
	}
	mustAppend(t, l, idempotentBatch(t, 7, 0, 15, 1))
}
