package txn

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
	"kzero/record"
	"kzero/replica"
)

// Script tests: the scripts in testdata/ are sequences of transaction
// requests and clock ticks; after each step they list, in the order they
// happened, the records written to __transaction_state (decoded as a load
// decodes them), the COMMIT and ABORT markers written to the data
// partitions d-0 and d-1, and the responses, then every transactional id's
// state. They run the real Coordinator on real partitions in a temporary
// dir inside a testing/synctest bubble: time is fake and moves only with
// "tick", and the coordinator's own timers (the timed-out transaction
// abort every 10s, the transactional id expiration every hour, marker
// retries) fire as they would. Producer ids are handed out from 1000 on.
// transactional.id.expiration.ms is 10m here, checked every minute
// (transaction.remove.expired.transaction.cleanup.interval.ms).
//
//	init id=a [timeout=60s] [pid=1000 epoch=0]   InitProducerId (KIP-360 with pid and epoch)
//	add id=a pid=1000 epoch=0 partitions=(d-0,d-1) [v2]
//	                                              AddPartitionsToTxn (v2: the implicit add of KIP-890)
//	verify id=a pid=1000 epoch=0 partition=d-0    a leader's verification (KIP-890 part 1)
//	commit id=a pid=1000 epoch=0 [v2]             EndTxn (v2: EndTxn v5, transactions version 2)
//	abort id=a pid=1000 epoch=0 [v2]
//	markers fail|ok                               marker writes fail from now on, or succeed again
//	set-epoch id=a epoch=32766                    put the id's epoch near exhaustion
//	tick 10s                                      let time pass; timers fire
//	restart                                       a new coordinator loads the partition
//
// Responses are written "init a: NONE pid=1000 epoch=0", with the Kafka
// error name. Run with -rewrite to regenerate the expected output after a
// deliberate change, and read the diff. A failing script logs datadriven's
// "still running after 10s" for long ticks, in fake time; ignore it.
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		synctest.Test(t, func(t *testing.T) {
			s := newScript(t)
			datadriven.RunTest(t, path, s.run)
		})
	})
}

// script is one script's broker.
type script struct {
	t        *testing.T
	logs     *log.Manager
	replicas *replica.Manager
	state    *replica.Partition
	c        *Coordinator
	start    int64 // ms, the bubble's start
	nextPID  atomic.Int64
	fail     atomic.Bool

	mu   sync.Mutex
	next int64           // the next offset of __transaction_state to print
	out  strings.Builder // the step's output so far
}

func newScript(t *testing.T) *script {
	cfg := log.DefaultManagerConfig(t.TempDir())
	cfg.Defaults.SegmentIndexBytes = 1 << 16
	cfg.Logger = discard()
	// The log's own background work is not what the scripts test.
	cfg.RetentionCheckInterval, cfg.FlushCheckInterval, cfg.CheckpointInterval = 0, 0, 0
	logs, err := log.OpenManager(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { logs.Close() })
	s := &script{t: t, logs: logs, replicas: replica.NewManager(1, logs), start: time.Now().UnixMilli()}
	s.nextPID.Store(999)
	for _, tp := range []log.TopicPartition{d0, d1, {Topic: TopicName}} {
		lcfg := log.DefaultConfig()
		lcfg.SegmentIndexBytes = 1 << 16
		p, err := s.replicas.MakeLeader(replica.LeaderSpec{TP: tp, ISR: []int32{1}, MinInsyncReplicas: 1, Config: lcfg})
		if err != nil {
			t.Fatal(err)
		}
		if tp.Topic == TopicName {
			s.state = p
		}
	}
	s.open()
	return s
}

// open starts a coordinator of __transaction_state and waits for its load.
func (s *script) open() {
	s.c = New(Config{
		NumPartitions:       1,
		IDExpiration:        10 * time.Minute,
		ExpireCheckInterval: time.Minute,
		AllocateProducerID:  func(context.Context) (int64, error) { return s.nextPID.Add(1), nil },
		Markers:             scriptMarkers{s},
		Logger:              discard(),
	})
	s.t.Cleanup(s.c.Close)
	<-s.c.Lead(s.state)
}

// scriptMarkers writes markers locally and prints them, unless told to
// fail.
type scriptMarkers struct{ s *script }

func (w scriptMarkers) WriteMarker(tp log.TopicPartition, pid int64, epoch int16, coordinatorEpoch int32, commit bool, v int16) error {
	if w.s.fail.Load() {
		return errors.New("injected marker failure")
	}
	err := LocalMarkers{Replicas: w.s.replicas}.WriteMarker(tp, pid, epoch, coordinatorEpoch, commit, v)
	typ := "ABORT"
	if commit {
		typ = "COMMIT"
	}
	line := fmt.Sprintf("marker %s-%d: %s pid=%d epoch=%d", tp.Topic, tp.Partition, typ, pid, epoch)
	if coordinatorEpoch != 0 {
		line += fmt.Sprintf(" coordinator-epoch=%d", coordinatorEpoch)
	}
	if err != nil {
		line += " error=" + err.Error()
	}
	w.s.print(line)
	return err
}

// print writes a line of the step's output, after the records written
// before it.
func (s *script) print(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.printRecordsLocked()
	s.out.WriteString(line + "\n")
}

func (s *script) run(t *testing.T, d *datadriven.TestData) string {
	id := argString(d, "id", "a")
	switch d.Cmd {
	case "init":
		pid, epoch, err := s.c.InitProducerID(context.Background(), id, argMs(t, d, "timeout", time.Minute),
			argInt(t, d, "pid", -1), int16(argInt(t, d, "epoch", -1)))
		s.respond("init "+id, err, pid, epoch)
	case "add":
		var tps []log.TopicPartition
		for _, p := range argList(d, "partitions") {
			tps = append(tps, parseTP(t, p))
		}
		err := s.c.AddPartitions(id, argInt(t, d, "pid", -1), int16(argInt(t, d, "epoch", -1)), tps, hasArg(d, "v2"))
		s.respond("add "+id, err, -1, -1)
	case "verify":
		err := s.c.Verify(id, argInt(t, d, "pid", -1), int16(argInt(t, d, "epoch", -1)), parseTP(t, argString(d, "partition", "")))
		s.respond("verify "+id, err, -1, -1)
	case "commit", "abort":
		res, err := s.c.EndTxn(context.Background(), id, argInt(t, d, "pid", -1), int16(argInt(t, d, "epoch", -1)),
			d.Cmd == "commit", hasArg(d, "v2"))
		s.respond(d.Cmd+" "+id, err, res.ProducerID, res.Epoch)
	case "markers":
		s.fail.Store(len(d.CmdArgs) == 1 && d.CmdArgs[0].Key == "fail")
	case "set-epoch":
		sh, err := s.c.shardFor(id)
		if err != nil {
			t.Fatalf("set-epoch: %v", err)
		}
		sh.mu.txns[id].epoch = int16(argInt(t, d, "epoch", 0))
		sh.Unlock()
	case "tick":
		if len(d.CmdArgs) != 1 {
			t.Fatalf("tick: want a duration")
		}
		dur, err := time.ParseDuration(d.CmdArgs[0].Key)
		if err != nil {
			t.Fatalf("tick: %v", err)
		}
		time.Sleep(dur)
	case "restart":
		s.c.Close()
		s.open()
	case "resign":
		s.c.Resign(0)
	case "lead":
		// This broker leads __transaction_state-0 (again) at an epoch.
		lcfg := log.DefaultConfig()
		lcfg.SegmentIndexBytes = 1 << 16
		p, err := s.replicas.MakeLeader(replica.LeaderSpec{TP: s.state.TP, LeaderEpoch: int32(argInt(t, d, "epoch", 0)),
			ISR: []int32{1}, MinInsyncReplicas: 1, Config: lcfg})
		if err != nil {
			t.Fatalf("lead: %v", err)
		}
		s.state = p
		<-s.c.Lead(p)
	default:
		t.Fatalf("unknown command %q", d.Cmd)
	}
	synctest.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.printRecordsLocked()
	s.printState()
	out := s.out.String()
	s.out.Reset()
	return out
}

// respond prints a response: its error, and the producer id and epoch
// when it has them.
func (s *script) respond(what string, err error, pid int64, epoch int16) {
	if err != nil {
		s.print(what + ": " + errName(err))
		return
	}
	line := what + ": NONE"
	if pid >= 0 {
		line += fmt.Sprintf(" pid=%d epoch=%d", pid, epoch)
	}
	s.print(line)
}

// printRecordsLocked writes the records appended to __transaction_state
// since the last call.
func (s *script) printRecordsLocked() {
	l := s.state.Log()
	end := l.LogEndOffset()
	var rr record.Iter
	defer rr.Release()
	err := l.Scan(s.next, end, func(b record.Batch) error {
		if err := rr.Reset(b, 0); err != nil {
			return err
		}
		for rr.Next() {
			if rr.Offset() < s.next {
				continue
			}
			rec := rr.Record()
			id, m, err := decodeRecord(rec.Key, rec.Value)
			if err != nil {
				return err
			}
			if m == nil {
				fmt.Fprintf(&s.out, "write %s: tombstone\n", id)
				continue
			}
			fmt.Fprintf(&s.out, "write %s: %s\n", id, s.format(m))
		}
		return rr.Err()
	})
	if err != nil {
		fmt.Fprintf(&s.out, "cannot read %s: %v\n", TopicName, err)
	}
	s.next = end
}

// format writes a transactional id's state as its record holds it; times
// are since the script's start.
func (s *script) format(m *txnMeta) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s pid=%d epoch=%d", m.state, m.producerID, m.epoch)
	if m.prevProducerID >= 0 {
		fmt.Fprintf(&b, " prev-pid=%d", m.prevProducerID)
	}
	if m.nextProducerID >= 0 {
		fmt.Fprintf(&b, " next-pid=%d", m.nextProducerID)
	}
	tps := make([]string, 0, len(m.partitions))
	for _, tp := range m.sortedPartitions() {
		tps = append(tps, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
	}
	fmt.Fprintf(&b, " partitions=[%s] timeout=%s", strings.Join(tps, " "), time.Duration(m.timeoutMs)*time.Millisecond)
	if m.startMs >= 0 {
		fmt.Fprintf(&b, " started=%s", s.since(m.startMs))
	}
	fmt.Fprintf(&b, " updated=%s", s.since(m.updateMs))
	if m.clientVersion >= 2 {
		b.WriteString(" v2")
	}
	return b.String()
}

func (s *script) since(ms int64) time.Duration { return time.Duration(ms-s.start) * time.Millisecond }

// printState writes every transactional id's state, as the coordinator
// holds it.
func (s *script) printState() {
	sh, err := s.c.shardFor("a")
	if err != nil {
		fmt.Fprintf(&s.out, "state: %s\n", errName(err))
		return
	}
	defer sh.Unlock()
	if len(sh.mu.txns) == 0 {
		s.out.WriteString("state: none\n")
	}
	for _, id := range slices.Sorted(maps.Keys(sh.mu.txns)) {
		m := sh.mu.txns[id]
		fmt.Fprintf(&s.out, "state %s: %s pid=%d epoch=%d\n", id, m.state, m.producerID, m.epoch)
	}
}

// Arguments.

func hasArg(d *datadriven.TestData, key string) bool {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return true
		}
	}
	return false
}

func argString(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) == 1 {
			return a.Vals[0]
		}
	}
	return def
}

func argList(d *datadriven.TestData, key string) []string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			var out []string
			for _, v := range a.Vals {
				if v = strings.TrimSpace(v); v != "" {
					out = append(out, v)
				}
			}
			return out
		}
	}
	return nil
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	v := argString(d, key, "")
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return n
}

func argMs(t *testing.T, d *datadriven.TestData, key string, def time.Duration) int32 {
	v := argString(d, key, "")
	if v == "" {
		return int32(def.Milliseconds())
	}
	dur, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("%s: %v", key, err)
	}
	return int32(dur.Milliseconds())
}

// parseTP reads "topic-partition".
func parseTP(t *testing.T, s string) log.TopicPartition {
	i := strings.LastIndexByte(s, '-')
	if i < 0 {
		t.Fatalf("partition %q: want topic-partition", s)
	}
	p, err := strconv.Atoi(s[i+1:])
	if err != nil {
		t.Fatalf("partition %q: want topic-partition", s)
	}
	return log.TopicPartition{Topic: s[:i], Partition: int32(p)}
}

// errName is the name of the Kafka error err wraps.
func errName(err error) string {
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return "not a Kafka error: " + err.Error()
	}
	return ke.Message
}
