package shards

import (
	"errors"
	"io"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
	"kzero/record"
	"kzero/replica"
)

// Tests of the runtime on real partitions in a temporary log dir: a
// coordinator of records ("kv") whose loads a test holds with a gate.

// kvShard is a test coordinator's shard: the keys of its partition.
type kvShard struct {
	*Shard
	gate     chan struct{} // Load waits for it to close
	read     chan struct{} // closed when Load has read
	keys     map[string]bool
	unloaded bool
	after    chan struct{} // closed by what Install returns
}

func (s *kvShard) Load() Install {
	<-s.gate
	var keys []string
	err := s.Replica().ScanAll(func(b record.Batch) error {
		var rr record.Iter
		defer rr.Release()
		if err := rr.Reset(b, 0); err != nil {
			return err
		}
		for rr.Next() {
			keys = append(keys, string(rr.Record().Key))
		}
		return rr.Err()
	})
	close(s.read)
	return func() func() {
		if err != nil {
			panic(err)
		}
		for _, k := range keys {
			s.keys[k] = true
		}
		return func() { close(s.after) }
	}
}

func (s *kvShard) Unload() func() {
	s.keys, s.unloaded = nil, true
	return nil
}

// put writes a key through the runtime's write path, as a coordinator
// does with its shard locked.
func (s *kvShard) put(key string) (int64, error) {
	b := s.BatchLocked(record.NoProducerID, record.NoProducerEpoch)
	b.Add(&record.Record{Key: []byte(key), Value: []byte("v")})
	off, err := s.WriteLocked()
	if err == nil {
		s.keys[key] = true
	}
	return off, err
}

type fixture struct {
	t        *testing.T
	replicas *replica.Manager
	table    *Table[*kvShard]
	open     bool // new shards load at once
	made     []*kvShard
}

func newFixture(t *testing.T, cfg Config) *fixture {
	cfg.Topic = "__test"
	lcfg := log.DefaultManagerConfig(t.TempDir())
	lcfg.Defaults.SegmentIndexBytes = 1 << 16
	lcfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	logs, err := log.OpenManager(lcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	f := &fixture{t: t, replicas: replica.NewManager(1, logs), open: true}
	f.table = NewTable(cfg, func(rt *Shard) *kvShard {
		s := &kvShard{Shard: rt, gate: make(chan struct{}), read: make(chan struct{}), after: make(chan struct{}), keys: map[string]bool{}}
		if f.open {
			close(s.gate)
		}
		f.made = append(f.made, s)
		return s
	})
	t.Cleanup(f.table.Close)
	return f
}

// lead makes this broker the leader of partition 0 at epoch, with the ISR
// given (a follower in it that never fetches holds the HW back).
func (f *fixture) lead(epoch int32, isr ...int32) *replica.Partition {
	f.t.Helper()
	cfg := log.DefaultConfig()
	cfg.SegmentIndexBytes = 1 << 16
	p, err := f.replicas.MakeLeader(replica.LeaderSpec{TP: log.TopicPartition{Topic: "__test", Partition: 0},
		LeaderEpoch: epoch, ISR: isr, MinInsyncReplicas: 1, Config: cfg})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func wantIs(t *testing.T, what string, err error, want *kerr.Error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: got %v, want %v", what, err, want)
	}
}

func TestLeadLoadsThenServes(t *testing.T) {
	f := newFixture(t, Config{})
	p := f.lead(1, 1)
	<-f.table.Lead(p)
	s, err := f.table.Lock(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.put("a"); err != nil {
		t.Fatal(err)
	}
	s.Unlock()
	<-s.after
	// A second lead of the same leadership changes nothing.
	if <-f.table.Lead(p); len(f.made) != 1 {
		t.Fatalf("a lead of the partition served made %d shards", len(f.made))
	}
	if got := f.table.Leading(); len(got) != 1 || got[0] != 0 {
		t.Fatalf("leading %v", got)
	}
	// Led again after a resign, the shard reads what was written.
	f.table.Resign(0)
	if !s.unloaded {
		t.Fatal("resigned shard not unloaded")
	}
	_, err = f.table.Lock(0)
	wantIs(t, "lock after resign", err, kerr.NotCoordinator)
	<-f.table.Lead(p)
	s, err = f.table.Lock(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unlock()
	if !s.keys["a"] {
		t.Fatalf("reloaded keys %v", s.keys)
	}
}

func TestLoadInProgress(t *testing.T) {
	f := newFixture(t, Config{})
	_, err := f.table.Lock(0)
	wantIs(t, "lock of a partition not led", err, kerr.NotCoordinator)
	f.open = false
	loaded := f.table.Lead(f.lead(1, 1))
	_, err = f.table.Lock(0)
	wantIs(t, "lock while loading", err, kerr.CoordinatorLoadInProgress)
	close(f.made[0].gate)
	<-loaded
	s, err := f.table.Lock(0)
	if err != nil {
		t.Fatalf("lock after the load: %v", err)
	}
	s.Unlock()
}

func TestResignDuringLoadNeverInstalls(t *testing.T) {
	f := newFixture(t, Config{})
	f.open = false
	loaded := f.table.Lead(f.lead(1, 1))
	s := f.made[0]
	f.table.Resign(0)
	close(s.gate)
	<-loaded
	s.Lock()
	defer s.Unlock()
	if s.StateLocked() != Closed || s.keys != nil {
		t.Fatalf("a load that ended after the resign installed: state %v keys %v", s.StateLocked(), s.keys)
	}
	select {
	case <-s.after:
		t.Fatal("install's after ran for a resigned shard")
	default:
	}
}

func TestLateLoadOfAnOlderEpochNeverInstalls(t *testing.T) {
	f := newFixture(t, Config{ReloadOnNewEpoch: true})
	f.open = false
	p := f.lead(1, 1)
	old := f.table.Lead(p)
	// Led again at a newer epoch: a new shard, loading; the old one's
	// load has not read yet.
	p = f.lead(2, 1)
	f.open = true
	<-f.table.Lead(p)
	if len(f.made) != 2 || f.made[1].Epoch() != 2 {
		t.Fatalf("shards %d", len(f.made))
	}
	cur, err := f.table.Lock(0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cur.put("new"); err != nil {
		t.Fatal(err)
	}
	cur.Unlock()
	close(f.made[0].gate)
	<-old
	first := f.made[0]
	first.Lock()
	if first.StateLocked() != Closed || len(first.keys) != 0 {
		t.Fatalf("old epoch's load installed: %v %v", first.StateLocked(), first.keys)
	}
	first.Unlock()
	// A late lead of the older epoch is ignored.
	<-f.table.Lead(f.lead(1, 1))
	if len(f.made) != 2 {
		t.Fatal("a lead of an older epoch replaced the shard")
	}
	if s, _ := f.table.Get(0); s != f.made[1] {
		t.Fatal("the table's shard is not the newest epoch's")
	}
}

func TestNewEpochKeptWithoutReload(t *testing.T) {
	f := newFixture(t, Config{})
	<-f.table.Lead(f.lead(1, 1))
	<-f.table.Lead(f.lead(3, 1))
	if len(f.made) != 1 || f.made[0].Epoch() != 3 {
		t.Fatalf("shards %d, epoch %d", len(f.made), f.made[0].Epoch())
	}
}

// A write waits for the high watermark: with a follower in the ISR that
// never fetches, until its timeout.
func TestWriteTimesOutWaitingForTheHighWatermark(t *testing.T) {
	f := newFixture(t, Config{CommitTimeout: time.Millisecond})
	<-f.table.Lead(f.lead(1, 1, 2))
	s, err := f.table.Lock(0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Unlock()
	_, err = s.put("a")
	wantIs(t, "write past the timeout", err, kerr.RequestTimedOut)
	wantIs(t, "group caller told", GroupError(err), kerr.CoordinatorNotAvailable)
	wantIs(t, "txn caller told", TxnError(err), kerr.CoordinatorNotAvailable)
}

// A write waiting for the high watermark when its shard is resigned stops
// waiting: its caller is told NOT_COORDINATOR, not after the timeout.
func TestResignDuringWriteAnswersNotCoordinator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture(t, Config{CommitTimeout: time.Hour})
		<-f.table.Lead(f.lead(1, 1, 2))
		s, err := f.table.Lock(0)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := s.put("a")
			s.Unlock()
			done <- err
		}()
		synctest.Wait() // the write is appended and waits for the HW
		if s.Replica().LogEndOffset() != 1 {
			t.Fatalf("log end %d", s.Replica().LogEndOffset())
		}
		f.table.Resign(0)
		err = <-done
		wantIs(t, "write resigned while waiting", err, kerr.NotLeaderForPartition)
		wantIs(t, "group caller told", GroupError(err), kerr.NotCoordinator)
		wantIs(t, "txn caller told", TxnError(err), kerr.NotCoordinator)
		if !s.unloaded {
			t.Fatal("shard not unloaded")
		}
	})
}

func TestErrorTables(t *testing.T) {
	wrap := func(e *kerr.Error) error { return errors.Join(errors.New("append to __test-0"), e) }
	for _, c := range []struct {
		in         error
		group, txn *kerr.Error
	}{
		{kerr.UnknownTopicOrPartition, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{kerr.NotEnoughReplicas, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{kerr.NotEnoughReplicasAfterAppend, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{kerr.RequestTimedOut, kerr.CoordinatorNotAvailable, kerr.CoordinatorNotAvailable},
		{kerr.NotLeaderForPartition, kerr.NotCoordinator, kerr.NotCoordinator},
		{kerr.KafkaStorageError, kerr.NotCoordinator, kerr.NotCoordinator},
		{kerr.MessageTooLarge, kerr.UnknownServerError, kerr.UnknownServerError},
		{kerr.RecordListTooLarge, kerr.UnknownServerError, kerr.UnknownServerError},
		{kerr.InvalidFetchSize, kerr.UnknownServerError, kerr.InvalidFetchSize},
		{kerr.InvalidProducerEpoch, kerr.InvalidProducerEpoch, kerr.InvalidProducerEpoch},
		{errors.New("write: input/output error"), kerr.NotCoordinator, kerr.NotCoordinator},
	} {
		in := c.in
		if ke := (*kerr.Error)(nil); errors.As(in, &ke) {
			in = wrap(ke)
		}
		if got := GroupError(in); !errors.Is(got, c.group) || Code(got) != c.group.Code {
			t.Errorf("GroupError(%v) = %v, want %v", in, got, c.group)
		}
		if got := TxnError(in); !errors.Is(got, c.txn) || Code(got) != c.txn.Code {
			t.Errorf("TxnError(%v) = %v, want %v", in, got, c.txn)
		}
	}
	if GroupError(nil) != nil || TxnError(nil) != nil || Code(nil) != 0 {
		t.Error("nil is not nil")
	}
	if Code(errors.New("x")) != kerr.UnknownServerError.Code {
		t.Error("a plain error's code")
	}
}
