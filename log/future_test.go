package log

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/record"
	"kzero/vfs"
)

// moveTestManager opens a Manager on two fresh log dirs with small
// segments, and a partition in the first one holding plain, idempotent
// and transactional batches over several segments and leader epochs.
func moveTestManager(t *testing.T) (ManagerConfig, *Manager, TopicPartition) {
	t.Helper()
	dirs := []string{t.TempDir(), t.TempDir()}
	cfg := DefaultManagerConfig(dirs...)
	cfg.Defaults = testConfig()
	cfg.Defaults.SegmentBytes = 1 << 10
	cfg.CleanerEnable = false
	m, err := OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	tp := TopicPartition{Topic: "moving", Partition: 3}
	l, err := m.GetOrCreate(tp, cfg.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := m.DirOf(tp); d != m.Dirs()[0] {
		t.Fatalf("created in %s", d)
	}
	if err := l.SetTopicID([16]byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		epoch := int32(i / 10)
		var b []byte
		switch i % 3 {
		case 0:
			b = makeBatch(t, 5, 100, record.CodecNone)
		case 1:
			b = idempotentBatch(t, 7, 0, int32(i/3*3), 3)
		default:
			b = txnBatch(t, 9, int32(i/3*2), 2)
		}
		if _, err := l.Append(b, OriginClient, epoch); err != nil {
			t.Fatal(err)
		}
	}
	return cfg, m, tp
}

// copyAll copies src into fut in small steps.
func copyAll(t *testing.T, fut, src *Log) {
	t.Helper()
	var buf []byte
	for fut.LogEndOffset() < src.LogEndOffset() {
		n, b, err := fut.CopyFrom(src, src.LogEndOffset(), 1000, buf)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("copy stuck at %d of %d", fut.LogEndOffset(), src.LogEndOffset())
		}
		buf = b
	}
}

func TestMoveToFutureLog(t *testing.T) {
	cfg, m, tp := moveTestManager(t)
	cur, _ := m.Get(tp)
	want := logBytes(t, cur)
	if len(cur.Segments()) < 3 {
		t.Fatalf("only %d segments", len(cur.Segments()))
	}
	if _, err := m.CreateFuture(tp, m.Dirs()[0], cfg.Defaults); err == nil {
		t.Fatal("a future log in the current log's dir")
	}
	fut, err := m.CreateFuture(tp, m.Dirs()[1], cfg.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(fut.Dir(), futureSuffix) || filepath.Dir(fut.Dir()) != m.Dirs()[1] {
		t.Fatalf("future log in %s", fut.Dir())
	}
	if id, ok, _ := ReadTopicID(fut.Dir()); !ok || id != [16]byte{1, 2, 3} {
		t.Fatalf("future log's topic id %x %v", id, ok)
	}
	copyAll(t, fut, cur)
	// The copy is the log: batches byte for byte, leader epochs, producers.
	if got := logBytes(t, fut); !bytes.Equal(got, want) {
		t.Fatalf("future log differs: %d bytes, want %d", len(got), len(want))
	}
	if !reflect.DeepEqual(fut.LeaderEpochs(), cur.LeaderEpochs()) {
		t.Fatalf("epochs %v, want %v", fut.LeaderEpochs(), cur.LeaderEpochs())
	}
	if !reflect.DeepEqual(fut.Producers(), cur.Producers()) {
		t.Fatalf("producers %v, want %v", fut.Producers(), cur.Producers())
	}
	fo, fok := fut.FirstUnstableOffset()
	co, cok := cur.FirstUnstableOffset()
	if fo != co || fok != cok {
		t.Fatalf("first unstable %d %v, want %d %v", fo, fok, co, cok)
	}
	cur.OnHighWatermark(cur.LogEndOffset() - 3)

	// A read holding a range of the old log keeps it through the swap.
	held, err := cur.Read(0, 1<<20, cur.LogEndOffset(), true)
	if err != nil {
		t.Fatal(err)
	}
	heldBytes := readRange(t, held)
	nl, err := m.ReplaceWithFuture(tp)
	if err != nil {
		t.Fatal(err)
	}
	if got := readRange(t, held); !bytes.Equal(got, heldBytes) {
		t.Fatal("a held range changed under the swap")
	}
	held.Release()
	if _, err := cur.Read(0, 1<<20, cur.LogEndOffset(), true); !errors.Is(err, kerr.KafkaStorageError) {
		t.Fatalf("read of the old log after the swap: %v", err)
	}
	if l, _ := m.Get(tp); l != nl {
		t.Fatal("the manager holds another log")
	}
	if nl.Dir() != filepath.Join(m.Dirs()[1], tp.String()) {
		t.Fatalf("moved log in %s", nl.Dir())
	}
	if d, _ := m.DirOf(tp); d != m.Dirs()[1] {
		t.Fatalf("dir of the moved log %s", d)
	}
	if nl.HighWatermark() != cur.HighWatermark() || nl.LogEndOffset() != cur.LogEndOffset() {
		t.Fatalf("moved log hw %d leo %d, want %d %d", nl.HighWatermark(), nl.LogEndOffset(), cur.HighWatermark(), cur.LogEndOffset())
	}
	if _, _, ok := m.Future(tp); ok {
		t.Fatal("future log left")
	}
	ents, _ := os.ReadDir(m.Dirs()[0])
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tp.String()) {
			t.Fatalf("left in the old dir: %s", e.Name())
		}
	}
	// The old dir's checkpoints forgot the partition.
	for _, name := range []string{RecoveryPointCheckpoint, LogStartOffsetCheckpoint, ReplicationCheckpoint} {
		offs, err := ReadCheckpoint(vfs.OS, filepath.Join(m.Dirs()[0], name))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := offs[tp]; ok {
			t.Fatalf("%s of the old dir still names %s", name, tp)
		}
	}
	// The moved log takes appends and survives a restart.
	mustAppend(t, nl, makeBatch(t, 4, 10, record.CodecNone))
	want = logBytes(t, nl)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, err = OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	l, ok := m.Get(tp)
	if !ok || filepath.Dir(l.Dir()) != m.Dirs()[1] {
		t.Fatalf("after restart: %v %v", ok, l)
	}
	if got := logBytes(t, l); !bytes.Equal(got, want) {
		t.Fatal("moved log differs after restart")
	}
}

// TestFutureLogLeftAtStart: a crash during a move leaves a future log next
// to the current one (the move resumes) or, between the swap's renames, a
// -delete folder and a future log alone (promoted).
func TestFutureLogLeftAtStart(t *testing.T) {
	t.Run("resumed", func(t *testing.T) {
		cfg, m, tp := moveTestManager(t)
		cur, _ := m.Get(tp)
		fut, err := m.CreateFuture(tp, m.Dirs()[1], cfg.Defaults)
		if err != nil {
			t.Fatal(err)
		}
		n, _, err := fut.CopyFrom(cur, cur.LogEndOffset(), 2000, nil)
		if err != nil || n == 0 {
			t.Fatal(n, err)
		}
		end := fut.LogEndOffset()
		if err := m.Checkpoint(); err != nil {
			t.Fatal(err)
		}
		m.unlock() // the process dies
		m, err = OpenManager(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		fut, dir, ok := m.Future(tp)
		if !ok || dir != m.Dirs()[1] || fut.LogEndOffset() != end {
			t.Fatalf("future log after restart: %v %s", ok, dir)
		}
		if l, ok := m.Get(tp); !ok || filepath.Dir(l.Dir()) != m.Dirs()[0] || l.LogEndOffset() != cur.LogEndOffset() {
			t.Fatal("current log after restart")
		}
	})
	t.Run("promoted", func(t *testing.T) {
		cfg, m, tp := moveTestManager(t)
		cur, _ := m.Get(tp)
		want := logBytes(t, cur)
		fut, err := m.CreateFuture(tp, m.Dirs()[1], cfg.Defaults)
		if err != nil {
			t.Fatal(err)
		}
		copyAll(t, fut, cur)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		// The crash came after the current log's rename, before the
		// future log's.
		from := filepath.Join(m.Dirs()[0], tp.String())
		if err := os.Rename(from, from+".12345-delete"); err != nil {
			t.Fatal(err)
		}
		m, err = OpenManager(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer m.Close()
		if _, _, ok := m.Future(tp); ok {
			t.Fatal("future log left")
		}
		l, ok := m.Get(tp)
		if !ok || l.Dir() != filepath.Join(m.Dirs()[1], tp.String()) {
			t.Fatalf("promoted log: %v %v", ok, l)
		}
		if got := logBytes(t, l); !bytes.Equal(got, want) {
			t.Fatal("promoted log differs")
		}
		for _, d := range m.Dirs() {
			ents, _ := os.ReadDir(d)
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), "-delete") || strings.HasSuffix(e.Name(), futureSuffix) {
					t.Fatalf("left at start: %s", e.Name())
				}
			}
		}
	})
}

func TestDeleteFutureLog(t *testing.T) {
	cfg, m, tp := moveTestManager(t)
	defer m.Close()
	fut, err := m.CreateFuture(tp, m.Dirs()[1], cfg.Defaults)
	if err != nil {
		t.Fatal(err)
	}
	dir := fut.Dir()
	if err := m.Delete(tp); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("future log left after the partition's deletion: %v", err)
	}
	if _, _, ok := m.Future(tp); ok {
		t.Fatal("manager holds the future log")
	}
}

func TestPreferredLogDir(t *testing.T) {
	cfg, m, _ := moveTestManager(t)
	defer m.Close()
	tp := TopicPartition{Topic: "later", Partition: 0}
	// The second dir holds nothing, so without a preference it would be
	// there; the preference names the first.
	m.PreferDir(tp, m.Dirs()[0])
	if _, err := m.GetOrCreate(tp, cfg.Defaults); err != nil {
		t.Fatal(err)
	}
	if d, _ := m.DirOf(tp); d != m.Dirs()[0] {
		t.Fatalf("created in %s", d)
	}
	if _, ok := m.LogDir(m.Dirs()[1] + "/"); !ok {
		t.Fatal("a log dir with a trailing slash not found")
	}
	if _, ok := m.LogDir("/nonexistent"); ok {
		t.Fatal("an unknown log dir found")
	}
}

// FuzzParseFutureName: any folder name parses or not without panicking,
// and what parses names its partition and ends as a future log's folder.
func FuzzParseFutureName(f *testing.F) {
	f.Add("orders-3.0123456789abcdef0123456789abcdef-future")
	f.Add("a.b-c-0.x-future")
	f.Add("-future")
	f.Add("orders-3-future")
	f.Fuzz(func(t *testing.T, name string) {
		tp, ok := parseFutureName(name)
		if !ok {
			return
		}
		if !strings.HasPrefix(name, tp.String()+".") || !strings.HasSuffix(name, futureSuffix) {
			t.Fatalf("%q parsed as %s", name, tp)
		}
	})
}
