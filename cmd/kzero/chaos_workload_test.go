package main

// The chaos run's clients: idempotent acks=all producers whose every answer
// is written down, tailing consumers whose every record is written down,
// and the final read of every partition from its start. chaosLedger holds
// it all in the checker's shape (chaos_checker_test.go).

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// chaosTopics names the run's partitions: partition p of topic t is index
// t*partitions+p.
type chaosTopics struct {
	names      []string
	partitions int
}

func (ts chaosTopics) count() int { return len(ts.names) * ts.partitions }

func (ts chaosTopics) index(topic string, partition int32) (int, bool) {
	t := slices.Index(ts.names, topic)
	if t < 0 || partition < 0 || int(partition) >= ts.partitions {
		return 0, false
	}
	return t*ts.partitions + int(partition), true
}

func (ts chaosTopics) at(i int) (string, int32) {
	return ts.names[i/ts.partitions], int32(i % ts.partitions)
}

// chaosLedger is everything the clients were told. Producers' promises and
// consumers' polls write it concurrently.
type chaosLedger struct {
	topics chaosTopics
	events *chaosEvents // told of each kind of produce error the first time

	acked, failed atomic.Int64
	seen          []atomic.Int64 // per consumer, distinct records

	mu struct {
		sync.Mutex
		parts []chaosPart
		first [][][]chaosValue // per consumer, per partition, by offset: the first value seen there
		errs  map[string]int   // produce errors by name
		last  []time.Time      // per partition, the last acknowledgement
		gaps  []chaosGap       // per partition, the longest time between two acknowledgements
	}
}

// chaosGap is a partition's longest wait between two acknowledgements: a
// stall (no leader, no quorum, a frozen node) shows up as one.
type chaosGap struct {
	d   time.Duration
	end time.Time
}

func newChaosLedger(topics chaosTopics, consumers int, events *chaosEvents) *chaosLedger {
	l := &chaosLedger{topics: topics, events: events, seen: make([]atomic.Int64, consumers)}
	n := topics.count()
	l.mu.parts = make([]chaosPart, n)
	for i := range n {
		t, p := topics.at(i)
		l.mu.parts[i].Name = fmt.Sprintf("%s/%d", t, p)
	}
	l.mu.first = make([][][]chaosValue, consumers)
	for c := range consumers {
		l.mu.first[c] = make([][]chaosValue, n)
	}
	l.mu.errs = map[string]int{}
	l.mu.last = make([]time.Time, n)
	l.mu.gaps = make([]chaosGap, n)
	return l
}

// produced writes down a producer's answer for v.
func (l *chaosLedger) produced(r *kgo.Record, v chaosValue, err error) {
	i, ok := l.topics.index(r.Topic, r.Partition)
	if !ok {
		return // cannot happen: kgo hands back the record as produced
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	p := &l.mu.parts[i]
	if err != nil {
		l.failed.Add(1)
		p.Unacked = append(p.Unacked, v)
		name := errName(err)
		if l.mu.errs[name] == 0 {
			l.events.log("first produce error %q (%s)", name, p.Name)
		}
		l.mu.errs[name]++
		return
	}
	l.acked.Add(1)
	p.Acked = append(p.Acked, chaosObs{r.Offset, v})
	if last := l.mu.last[i]; !last.IsZero() && now.Sub(last) > l.mu.gaps[i].d {
		l.mu.gaps[i] = chaosGap{now.Sub(last), now}
	}
	l.mu.last[i] = now
}

func errName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return err.Error()
}

// consumed writes down a record consumer c was handed: a new offset, or a
// known offset with a value other than the first seen there.
func (l *chaosLedger) consumed(c int, r *kgo.Record) {
	i, ok := l.topics.index(r.Topic, r.Partition)
	if !ok {
		return
	}
	v, _ := parseChaosRecord(r.Value) // 0 if not ours: it never matches the final log
	l.mu.Lock()
	defer l.mu.Unlock()
	first := l.mu.first[c][i]
	if r.Offset < int64(len(first)) && first[r.Offset] == v {
		return
	}
	if r.Offset >= int64(len(first)) {
		first = append(first, make([]chaosValue, r.Offset+1-int64(len(first)))...)
		l.mu.first[c][i] = first
	}
	if first[r.Offset] == 0 {
		first[r.Offset] = v
	}
	l.mu.parts[i].Seen = append(l.mu.parts[i].Seen, chaosObs{r.Offset, v})
	l.seen[c].Add(1)
}

// chaosProducer writes records of producer id at rate per second over every
// partition in turn until ctx ends, then waits for every answer. abort ends
// it at once (a failed run tearing down): an idempotent client never fails
// records it may have sent, so with the cluster gone its Produce would wait
// for buffer space, and its Flush for answers, for ever.
func chaosProducer(ctx, abort context.Context, id int, seeds []string, l *chaosLedger, rate, valueBytes, buffered int, events *chaosEvents) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.RequiredAcks(kgo.AllISRAcks()), // idempotence is on by default
		kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MaxBufferedRecords(buffered), // Produce blocks beyond: bounded in flight
		kgo.RecordDeliveryTimeout(30*time.Second),
		kgo.ProducerOnDataLossDetected(func(topic string, p int32) {
			events.log("producer %d: data loss detected on %s/%d", id, topic, p)
		}),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	n := l.topics.count()
	var seq int64
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	owed := 0.0
produce:
	for {
		select {
		case <-ctx.Done():
			break produce
		case <-tick.C:
		}
		for owed += float64(rate) / 100; owed >= 1; owed-- {
			v := makeChaosValue(id, seq)
			topic, partition := l.topics.at(int((seq + int64(id)) % int64(n)))
			seq++
			rec := &kgo.Record{Topic: topic, Partition: partition, Value: appendChaosRecord(nil, v, valueBytes)}
			// Not ctx: cancelling the context would fail records that
			// are buffered, and the run wants their real outcome.
			cl.Produce(abort, rec, func(r *kgo.Record, err error) { l.produced(r, v, err) })
			if ctx.Err() != nil {
				break produce
			}
		}
	}
	// Every record buffered gets its answer within the delivery timeout.
	fctx, cancel := context.WithTimeout(abort, 2*time.Minute)
	defer cancel()
	if err := cl.Flush(fctx); err != nil {
		return fmt.Errorf("producer %d: flush: %w", id, err)
	}
	return nil
}

// chaosConsumer tails every partition from its start until ctx ends.
func chaosConsumer(ctx context.Context, c int, seeds []string, topics []string, isolation kgo.IsolationLevel, l *chaosLedger, events *chaosEvents) error {
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(seeds...),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(isolation),
	)
	if err != nil {
		return err
	}
	defer cl.Close()
	reported := map[string]bool{}
	for ctx.Err() == nil {
		fs := cl.PollFetches(ctx)
		fs.EachError(func(topic string, p int32, err error) {
			if errors.Is(err, context.Canceled) {
				return
			}
			var loss *kgo.ErrDataLoss
			if errors.As(err, &loss) {
				events.log("consumer %d: %v", c, err)
				return
			}
			if k := errName(err); !reported[k] {
				reported[k] = true
				events.log("consumer %d: first %q fetch error (%s/%d)", c, k, topic, p)
			}
		})
		fs.EachRecord(func(r *kgo.Record) { l.consumed(c, r) })
	}
	return nil
}

// readFinal reads every partition from its start to its high watermark
// into the ledger's Final. Producers must have stopped.
func readFinal(ctx context.Context, seeds []string, l *chaosLedger) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return err
	}
	adm := kadm.NewClient(cl)
	ends, err := adm.ListEndOffsets(ctx, l.topics.names...)
	if err == nil {
		err = ends.Error()
	}
	cl.Close()
	if err != nil {
		return fmt.Errorf("end offsets: %w", err)
	}
	from := map[string]map[int32]kgo.Offset{}
	want := map[int]int64{} // partition index -> end offset still to reach
	ends.Each(func(o kadm.ListedOffset) {
		i, ok := l.topics.index(o.Topic, o.Partition)
		if !ok || o.Offset == 0 {
			return
		}
		if from[o.Topic] == nil {
			from[o.Topic] = map[int32]kgo.Offset{}
		}
		from[o.Topic][o.Partition] = kgo.NewOffset().AtStart()
		want[i] = o.Offset
	})
	if len(want) == 0 {
		return nil
	}
	cl, err = kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(from))
	if err != nil {
		return err
	}
	defer cl.Close()
	final := make([][]chaosObs, l.topics.count())
	for len(want) > 0 {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return fmt.Errorf("final read: %d partitions not read to their end: %w", len(want), ctx.Err())
		}
		fs.EachRecord(func(r *kgo.Record) {
			i, ok := l.topics.index(r.Topic, r.Partition)
			if !ok {
				return
			}
			v, _ := parseChaosRecord(r.Value)
			final[i] = append(final[i], chaosObs{r.Offset, v})
			if end, ok := want[i]; ok && r.Offset+1 >= end {
				delete(want, i)
			}
		})
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range final {
		l.mu.parts[i].Final = final[i]
	}
	return nil
}
