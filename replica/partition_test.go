package replica

import (
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"golang.org/x/sys/unix"

	"kzero/log"
	"kzero/record"
)

func batch(t testing.TB, n int) []byte {
	t.Helper()
	var b record.Builder
	b.Reset(record.BatchHeader{LastOffsetDelta: -1, ProducerID: -1, ProducerEpoch: -1, BaseSequence: -1, BaseTimestamp: time.Now().UnixMilli()})
	for i := 0; i < n; i++ {
		b.Add(&record.Record{OffsetDelta: int32(i), Key: []byte("k"), Value: []byte("value")})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func newManager(t testing.TB) *Manager {
	t.Helper()
	cfg := log.DefaultManagerConfig(t.TempDir())
	cfg.Defaults.SegmentIndexBytes = 1 << 16
	logs, err := log.OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	return NewManager(1, logs)
}

func lead(t testing.TB, m *Manager, name string, minISR int) *Partition {
	t.Helper()
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	p, err := m.MakeLeader(LeaderSpec{TP: log.TopicPartition{Topic: name}, ISR: []int32{1}, MinInsyncReplicas: minISR, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAppendAdvancesHighWatermarkAndReads(t *testing.T) {
	m := newManager(t)
	p := lead(t, m, "t", 1)
	for i := 0; i < 3; i++ {
		info, err := p.Append(batch(t, 4), -1)
		if err != nil {
			t.Fatal(err)
		}
		if info.FirstOffset != int64(i*4) {
			t.Fatalf("first offset %d", info.FirstOffset)
		}
	}
	if p.HighWatermark() != 12 || p.LastStableOffset() != 12 {
		t.Fatalf("hw %d lso %d", p.HighWatermark(), p.LastStableOffset())
	}
	res, err := p.Read(4, 1<<20, false, true, -1, false, nil)
	if err != nil || res.Range.Empty() || res.HighWatermark != 12 || res.LogStartOffset != 0 {
		t.Fatalf("read: %+v %v", res, err)
	}
	res.Range.Release()
	if _, err := p.Read(13, 1<<20, false, true, -1, false, nil); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("read past end: %v", err)
	}
	// KIP-320 epoch checks.
	if _, err := p.Read(0, 100, false, true, 1, false, nil); !errors.Is(err, kerr.UnknownLeaderEpoch) {
		t.Fatalf("newer epoch: %v", err)
	}
	if low, err := p.DeleteRecordsBefore(-1); err != nil || low != 12 {
		t.Fatalf("delete records to hw: %d %v", low, err)
	}
	if _, err := p.DeleteRecordsBefore(13); !errors.Is(err, kerr.OffsetOutOfRange) {
		t.Fatalf("delete records past hw: %v", err)
	}
}

func TestMinInsyncAndLeadership(t *testing.T) {
	m := newManager(t)
	p := lead(t, m, "t", 2) // one replica in the ISR, two required
	if _, err := p.Append(batch(t, 1), -1); !errors.Is(err, kerr.NotEnoughReplicas) {
		t.Fatalf("acks=all below min.insync.replicas: %v", err)
	}
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatalf("acks=1 is not bound by min.insync.replicas: %v", err)
	}
	if err := m.Remove(p.TP, false); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(batch(t, 1), 1); !errors.Is(err, kerr.NotLeaderForPartition) {
		t.Fatalf("append after removal: %v", err)
	}
	if _, err := m.Get(p.TP); !errors.Is(err, kerr.UnknownTopicOrPartition) {
		t.Fatalf("get removed: %v", err)
	}
}

// In a synctest bubble the timeouts run on a fake clock: "never fires"
// is checked past the waiter's timeout without waiting for it.
func TestWaiterFiresOnAppendOrTimeout(t *testing.T) {
	synctest.Test(t, testWaiterFiresOnAppendOrTimeout)
}

func testWaiterFiresOnAppendOrTimeout(t *testing.T) {
	m := newManager(t)
	a, b := lead(t, m, "a", 1), lead(t, m, "b", 1)
	fired := make(chan string, 4)
	Wait([]*Partition{a, b}, 1, time.Hour, func() { fired <- "data" })
	if _, err := b.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	if got := <-fired; got != "data" {
		t.Fatal(got)
	}
	// A waiter wanting more bytes than arrive fires at its timeout.
	Wait([]*Partition{a}, 1<<30, 50*time.Millisecond, func() { fired <- "timeout" })
	a.Append(batch(t, 1), 1)
	if got := <-fired; got != "timeout" {
		t.Fatal(got)
	}
	// A cancelled waiter never fires; the partitions forget it.
	var n atomic.Int32
	w := Wait([]*Partition{a, b}, 1, 20*time.Millisecond, func() { n.Add(1) })
	w.Cancel()
	a.Append(batch(t, 1), 1)
	time.Sleep(50 * time.Millisecond) // past its timeout, in fake time
	synctest.Wait()
	if n.Load() != 0 {
		t.Fatal("cancelled waiter fired")
	}
	a.mu.Lock()
	left := len(a.mu.watchers)
	a.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d watchers left", left)
	}
}

// A fetch parked with Inline is answered by the client produce that
// satisfies it, on the produce's goroutine, before Append returns (as
// Kafka's produce path completes delayed fetches); one without Inline, or
// woken by a coordinator's append, is answered on its own goroutine.
func TestInlineWaiterFiresOnTheAppender(t *testing.T) {
	m := newManager(t)
	p := lead(t, m, "a", 1)
	type firing struct {
		name string
		gid  uint64
	}
	fired := make(chan firing, 4)
	park := func(name string, inline bool) {
		Park(Parked{Parts: []*Partition{p}, Seen: []int64{p.HighWatermark()}, Inline: inline}, 1, time.Hour,
			func() { fired <- firing{name, goid()} })
	}
	me := goid()

	park("inline", true)
	park("handed off", false)
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	select {
	case f := <-fired:
		if f.name != "inline" || f.gid != me {
			t.Fatalf("first firing before Append returned: %s on goroutine %d, want inline on %d", f.name, f.gid, me)
		}
	default:
		t.Fatal("the inline waiter had not fired when Append returned")
	}
	if f := <-fired; f.name != "handed off" || f.gid == me {
		t.Fatalf("%s on goroutine %d (appender %d)", f.name, f.gid, me)
	}

	park("coordinator", true)
	if _, err := p.AppendCoordinator(batch(t, 1)); err != nil {
		t.Fatal(err)
	}
	if f := <-fired; f.gid == me {
		t.Fatal("a coordinator's append answered a fetch on its own goroutine")
	}
}

// goid is the running goroutine's id, from its stack header.
func goid() uint64 {
	var b [64]byte
	s := strings.TrimPrefix(string(b[:runtime.Stack(b[:], false)]), "goroutine ")
	id, _ := strconv.ParseUint(s[:strings.IndexByte(s, ' ')], 10, 64)
	return id
}

// A log whose partition.metadata names another topic id is a leftover of
// an earlier topic of the same name: it is replaced by an empty one.
func TestStaleLogReplaced(t *testing.T) {
	m := newManager(t)
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	tp := log.TopicPartition{Topic: "t"}
	p, err := m.MakeLeader(LeaderSpec{TP: tp, TopicID: [16]byte{1}, ISR: []int32{1}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(batch(t, 3), 1); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(tp, false); err != nil { // forgotten, log kept on disk
		t.Fatal(err)
	}
	p, err = m.MakeLeader(LeaderSpec{TP: tp, TopicID: [16]byte{2}, ISR: []int32{1}, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if p.Log().LogEndOffset() != 0 {
		t.Fatalf("stale log kept: LEO %d", p.Log().LogEndOffset())
	}
	if id, ok, _ := log.ReadTopicID(p.Log().Dir()); !ok || id != [16]byte{2} {
		t.Fatalf("topic id %x", id)
	}
}

// A follower that says which HW it knows (Fetch v18, KIP-1166) is woken
// when the HW passes it, with no new data to fetch; one that says nothing
// waits for data or its timeout, as before.
func TestFollowerWaiterWokenByHighWatermark(t *testing.T) {
	synctest.Test(t, testFollowerWaiterWokenByHighWatermark)
}

func testFollowerWaiterWokenByHighWatermark(t *testing.T) {
	m := newManager(t)
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	p, err := m.MakeLeader(LeaderSpec{TP: log.TopicPartition{Topic: "t"}, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, MinInsyncReplicas: 1, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(batch(t, 4), 1); err != nil {
		t.Fatal(err)
	}
	follow := func(replica int32, offset int64) {
		t.Helper()
		res, err := p.ReadForFollower(replica, offset, 1<<20, true, -1)
		if err != nil {
			t.Fatal(err)
		}
		res.Range.Release()
	}
	// Follower 2 catches up; the HW waits for follower 3.
	follow(2, 4)
	if hw := p.HighWatermark(); hw != 0 {
		t.Fatalf("hw %d before follower 3 fetched", hw)
	}
	fired := make(chan string, 2)
	end := p.LogEndOffset()
	Park(Parked{Parts: []*Partition{p}, Seen: []int64{end}, KnownHW: []int64{0}, Follower: true}, 1, time.Hour, func() { fired <- "knows hw 0" })
	silent := Park(Parked{Parts: []*Partition{p}, Seen: []int64{end}, KnownHW: []int64{math.MaxInt64}, Follower: true}, 1, time.Hour, func() { fired <- "said nothing" })
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatalf("fired before the HW moved: %s", <-fired)
	}
	start := time.Now() // fake time: it moves only when every goroutine waits
	follow(3, 4)        // the HW moves to 4
	if hw := p.HighWatermark(); hw != 4 {
		t.Fatalf("hw %d", hw)
	}
	if got := <-fired; got != "knows hw 0" || time.Since(start) >= time.Hour {
		t.Fatalf("%s after %v: woken by its timeout, not by the HW", got, time.Since(start))
	}
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatalf("a follower that said nothing was woken by the HW: %s", <-fired)
	}
	silent.Cancel()
}

// waitMove waits for the partition's move to end.
func waitMove(p *Partition) {
	if mv := p.move.Load(); mv != nil {
		<-mv.done
	}
}

// TestMoveCopiesBeforeHoldingWrites: a log of many small segments moves to
// the other log dir with everything copied before the writes are held
// (a chunk that ends at a segment's end is not taken for the log's end),
// and the moved log reads as the old one did.
func TestMoveCopiesBeforeHoldingWrites(t *testing.T) {
	lcfg := log.DefaultManagerConfig(t.TempDir(), t.TempDir())
	lcfg.Defaults.SegmentIndexBytes = 1 << 16
	logs, err := log.OpenManager(lcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	m := NewManager(1, logs)
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	cfg.SegmentBytes = 2 << 10
	tp := log.TopicPartition{Topic: "t"}
	p, err := m.MakeLeader(LeaderSpec{TP: tp, ISR: []int32{1}, MinInsyncReplicas: 1, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for range 300 {
		if _, err := p.Append(batch(t, 10), 1); err != nil {
			t.Fatal(err)
		}
	}
	old := p.Log()
	if len(old.Segments()) < 20 {
		t.Fatalf("%d segments", len(old.Segments()))
	}
	res, err := p.Read(0, 1<<20, false, true, -1, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	held := res.Range
	from, _ := logs.DirOf(tp)
	to := logs.Dirs()[0]
	if to == from {
		to = logs.Dirs()[1]
	}
	if err := m.AlterLogDir(tp, "/elsewhere"); !errors.Is(err, kerr.LogDirNotFound) {
		t.Fatalf("unknown dir: %v", err)
	}
	if err := m.AlterLogDir(tp, to); err != nil {
		t.Fatal(err)
	}
	waitMove(p)
	if d, _ := logs.DirOf(tp); d != to || p.Log() == old {
		t.Fatalf("after the move the log is in %s", d)
	}
	st := m.Stats()
	if st.MovedBytes != old.Size() || st.MoveHeldBytes != 0 {
		t.Fatalf("moved %d bytes of %d, %d with the writes held", st.MovedBytes, old.Size(), st.MoveHeldBytes)
	}
	if p.LogEndOffset() != 3000 || p.HighWatermark() != 3000 {
		t.Fatalf("moved log ends at %d, hw %d", p.LogEndOffset(), p.HighWatermark())
	}
	// The read made before the move still holds its bytes; one now reads
	// the same bytes from the moved log.
	res, err = p.Read(0, 1<<20, false, true, -1, false, nil)
	again := res.Range
	if err != nil || again.Len != held.Len {
		t.Fatalf("read after the move: %+v %v", again, err)
	}
	a, b := make([]byte, held.Len), make([]byte, again.Len)
	if _, err := unix.Pread(held.Segment.Fd(), a, held.Pos); err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Pread(again.Segment.Fd(), b, again.Pos); err != nil {
		t.Fatal(err)
	}
	held.Release()
	again.Release()
	if string(a) != string(b) {
		t.Fatal("the moved log reads otherwise")
	}
	if info, err := p.Append(batch(t, 1), 1); err != nil || info.FirstOffset != 3000 {
		t.Fatalf("append after the move: %+v %v", info, err)
	}
}

// logBytes reads a log whole.
func logBytes(t *testing.T, l *log.Log) []byte {
	t.Helper()
	var out []byte
	if err := l.Scan(l.LogStartOffset(), l.LogEndOffset(), func(b record.Batch) error {
		out = append(out, b...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMoveFollowsTruncation: the future log of a move follows what happens
// to the log under it: a truncation (a follower cutting a diverged tail),
// a raised log start, a log started over. Driven step by step, without
// the copier goroutine.
func TestMoveFollowsTruncation(t *testing.T) {
	lcfg := log.DefaultManagerConfig(t.TempDir(), t.TempDir())
	lcfg.Defaults.SegmentIndexBytes = 1 << 16
	logs, err := log.OpenManager(lcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	m := NewManager(1, logs)
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	cfg.SegmentBytes = 1 << 10
	tp := log.TopicPartition{Topic: "t"}
	p, err := m.MakeLeader(LeaderSpec{TP: tp, ISR: []int32{1}, MinInsyncReplicas: 1, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for range 40 {
		if _, err := p.Append(batch(t, 5), 1); err != nil {
			t.Fatal(err)
		}
	}
	from, _ := logs.DirOf(tp)
	to := logs.Dirs()[0]
	if to == from {
		to = logs.Dirs()[1]
	}
	fut, err := logs.CreateFuture(tp, to, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mv := &move{p: p, dir: to, fut: fut, stop: make(chan struct{}), done: make(chan struct{})}
	p.move.Store(mv)
	copyAll := func() {
		t.Helper()
		mv.mu.Lock()
		defer mv.mu.Unlock()
		for {
			n, caughtUp, err := mv.copyLocked()
			if err != nil {
				t.Fatal(err)
			}
			if caughtUp || n == 0 {
				break
			}
		}
		if got, want := logBytes(t, fut), logBytes(t, p.Log()); string(got) != string(want) ||
			fut.LogStartOffset() != p.Log().LogStartOffset() || fut.LogEndOffset() != p.LogEndOffset() {
			t.Fatalf("future log [%d, %d) %d bytes, log [%d, %d) %d bytes", fut.LogStartOffset(), fut.LogEndOffset(), len(got),
				p.Log().LogStartOffset(), p.LogEndOffset(), len(want))
		}
	}
	copyAll()

	// A truncation, then other batches at the same offsets.
	if err := p.truncate(150, false); err != nil {
		t.Fatal(err)
	}
	if fut.LogEndOffset() != 150 {
		t.Fatalf("future log ends at %d after the truncation", fut.LogEndOffset())
	}
	for range 5 {
		if _, err := p.Append(batch(t, 3), 1); err != nil {
			t.Fatal(err)
		}
	}
	copyAll()

	// A raised log start.
	if _, err := p.DeleteRecordsBefore(100); err != nil {
		t.Fatal(err)
	}
	copyAll()

	// The log starts over further on.
	if err := p.truncate(1000, true); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Append(batch(t, 2), 1); err != nil {
		t.Fatal(err)
	}
	copyAll()
	close(mv.done)
}

// TestMoveRunsHeldWritesOnTheNewLog: a write that waits for a move's last
// step (the log's writes held) finds the old log closed once the future
// log is swapped in, and is written to the new log instead.
func TestMoveRunsHeldWritesOnTheNewLog(t *testing.T) {
	lcfg := log.DefaultManagerConfig(t.TempDir(), t.TempDir())
	lcfg.Defaults.SegmentIndexBytes = 1 << 16
	logs, err := log.OpenManager(lcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	m := NewManager(1, logs)
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	tp := log.TopicPartition{Topic: "t"}
	p, err := m.MakeLeader(LeaderSpec{TP: tp, ISR: []int32{1}, MinInsyncReplicas: 1, Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if _, err := p.Append(batch(t, 5), 1); err != nil {
			t.Fatal(err)
		}
	}
	from, _ := logs.DirOf(tp)
	to := logs.Dirs()[0]
	if to == from {
		to = logs.Dirs()[1]
	}
	fut, err := logs.CreateFuture(tp, to, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mv := &move{p: p, dir: to, fut: fut, stop: make(chan struct{}), done: make(chan struct{})}
	p.move.Store(mv)
	defer close(mv.done)
	old := p.Log()
	// Held as the last step holds them, a little early: the append below
	// waits in the old log.
	old.HoldWrites()
	type result struct {
		info log.AppendInfo
		err  error
	}
	appended := make(chan result, 1)
	go func() {
		info, err := p.Append(batch(t, 3), 1)
		appended <- result{info, err}
	}()
	for old.HeldWrites() == 0 {
		select {
		case r := <-appended:
			t.Fatalf("append went on while held: %+v", r)
		default:
			runtime.Gosched()
		}
	}
	if done, err := mv.finish(); err != nil || !done {
		t.Fatalf("finish: %v %v", done, err)
	}
	r := <-appended
	if r.err != nil || r.info.FirstOffset != 50 {
		t.Fatalf("held append: %+v", r)
	}
	if p.Log() == old || p.LogEndOffset() != 53 {
		t.Fatalf("after the move: log replaced %v, ends at %d", p.Log() != old, p.LogEndOffset())
	}
	if d, _ := logs.DirOf(tp); d != to {
		t.Fatalf("the log is in %s", d)
	}
}

// A waiter fires only once registered on every partition: an append while
// it registers is held until then (Park's look again reads what the
// registration covers, and the fetch's read may reuse it after firing).
// Park fires at once for a partition readable past what the fetch saw.
func TestWaiterArmsAfterRegistering(t *testing.T) {
	synctest.Test(t, testWaiterArmsAfterRegistering)
}

func testWaiterArmsAfterRegistering(t *testing.T) {
	m := newManager(t)
	p := lead(t, m, "a", 1)
	fired := make(chan string, 2)
	w := new(Waiter)
	gen := w.register([]*Partition{p}, nil, 1, time.Hour, func() { fired <- "registering" }, false, false)
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatal("fired while registering")
	}
	w.arm(gen, false)
	if got := <-fired; got != "registering" {
		t.Fatal(got)
	}

	seen := p.HighWatermark()
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	start := time.Now() // fake time: it moves only when every goroutine waits
	Park(Parked{Parts: []*Partition{p}, Seen: []int64{seen}}, 1, time.Hour, func() { fired <- "moved" })
	if got := <-fired; got != "moved" || time.Since(start) >= time.Hour {
		t.Fatalf("%s after %v", got, time.Since(start))
	}
	Park(Parked{Parts: []*Partition{p}, Seen: []int64{p.HighWatermark()}}, 1, time.Hour, func() { fired <- "timeout" })
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatal("a waiter with nothing new fired")
	}
	if got := <-fired; got != "timeout" || time.Since(start) < time.Hour {
		t.Fatalf("%s after %v", got, time.Since(start))
	}
}

// A Waiter the caller reuses wait after wait (Parked.Waiter) fires each
// wait once, and a firing meant for an earlier wait fires no later one:
// not an append's or HW move's that comes late (a stale generation), not
// the timer of a wait that timed out, and not a timer that could not be
// stopped.
func TestReusedWaiterFiresEachWaitOnce(t *testing.T) {
	synctest.Test(t, testReusedWaiterFiresEachWaitOnce)
}

func testReusedWaiterFiresEachWaitOnce(t *testing.T) {
	m := newManager(t)
	p := lead(t, m, "a", 1)
	var w Waiter
	fired := make(chan string, 4)
	park := func(name string, maxWait time.Duration) uint64 {
		Park(Parked{Parts: []*Partition{p}, Seen: []int64{p.HighWatermark()}, Waiter: &w}, 1, maxWait, func() { fired <- name })
		return w.state.Load() >> 2
	}
	expect := func(want string) {
		t.Helper()
		synctest.Wait()
		select {
		case got := <-fired:
			if got != want {
				t.Fatalf("%s fired, want %s", got, want)
			}
		default:
			t.Fatalf("nothing fired, want %s", want)
		}
		synctest.Wait()
		if len(fired) != 0 {
			t.Fatalf("%s fired as well", <-fired)
		}
	}

	// Woken by data; then a late firing of that wait reaches the next.
	first := park("data", time.Hour)
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	expect("data")
	second := park("next", time.Hour)
	if second != first+1 {
		t.Fatalf("generation %d after %d", second, first)
	}
	w.trigger(first, false)
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatalf("a stale firing fired %s", <-fired)
	}
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	expect("next")

	// Timed out; the reset timer times the next wait from its start.
	park("timeout", time.Minute)
	time.Sleep(time.Minute - time.Millisecond) // fake time
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatalf("%s fired before its minute", <-fired)
	}
	time.Sleep(time.Millisecond)
	expect("timeout")
	park("after timeout", time.Hour)
	time.Sleep(time.Minute) // the first timer's span, again
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatalf("%s fired after a minute of an hour's wait", <-fired)
	}
	time.Sleep(time.Hour - time.Minute)
	expect("after timeout")

	// A timer that could not be stopped (it fired as the data came) is
	// left to fire into its own generation; the next wait gets another.
	stale := park("raced", time.Hour)
	old := w.timer
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	expect("raced")
	w.timer = nil // as unregister leaves it when Stop fails
	old.gen.Store(stale)
	park("last", time.Hour)
	old.fire() // the late firing
	synctest.Wait()
	if len(fired) != 0 {
		t.Fatalf("the unstoppable timer fired %s", <-fired)
	}
	if w.timer == old {
		t.Fatal("the next wait kept the old timer")
	}
	if _, err := p.Append(batch(t, 1), 1); err != nil {
		t.Fatal(err)
	}
	expect("last")
}
