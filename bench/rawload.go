package bench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// The raw load generator: the produce and consume phases of a workload
// whose client is "raw", with the same results as the kgo phases in
// runner.go. Producer connection i sends to the partitions p with
// p mod producers = i, consumer connection i reads those with
// p mod consumers = i, each through a connection of its own to the
// partition's leader.

// Fetch sizes of the raw consumer: large, so that a fetch moves many
// batches per round trip.
const (
	rawFetchMaxBytes       = 32 << 20
	rawFetchPartitionBytes = 8 << 20
)

// leaders returns each partition's leader address.
func (r *run) leaders(ctx context.Context) (map[int32]string, error) {
	for attempt := 0; ; attempt++ {
		md, err := r.adm.Metadata(ctx, r.topic)
		if err != nil {
			return nil, fmt.Errorf("metadata: %w", err)
		}
		brokers := map[int32]string{}
		for _, b := range md.Brokers {
			brokers[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
		}
		out := map[int32]string{}
		for p, d := range md.Topics[r.topic].Partitions {
			if a, ok := brokers[d.Leader]; ok && d.Err == nil {
				out[p] = a
			}
		}
		if len(out) == r.w.Partitions {
			return out, nil
		}
		if attempt == 50 || ctx.Err() != nil {
			return nil, fmt.Errorf("metadata: %d of %d partitions have a leader", len(out), r.w.Partitions)
		}
		time.Sleep(100 * time.Millisecond) // a new topic's leaders are being elected
	}
}

// lanes splits the partitions among n clients, and each client's among
// the leaders: one connection per client and leader.
func lanes(n, partitions int, leaders map[int32]string) []struct {
	addr       string
	partitions []int32
} {
	var out []struct {
		addr       string
		partitions []int32
	}
	for i := range n {
		byLeader := map[string][]int32{}
		var order []string
		for p := int32(i); p < int32(partitions); p += int32(n) {
			a := leaders[p]
			if _, ok := byLeader[a]; !ok {
				order = append(order, a)
			}
			byLeader[a] = append(byLeader[a], p)
		}
		for _, a := range order {
			out = append(out, struct {
				addr       string
				partitions []int32
			}{a, byLeader[a]})
		}
	}
	return out
}

// recordsPerBatch is how many records of recordBytes fill a batch of at
// most batchBytes (at least one): batch_bytes is a bound, as kgo's
// ProducerBatchMaxBytes is, so that 1 MiB batches pass a broker's default
// max.message.bytes.
func recordsPerBatch(batchBytes, recordBytes int) int {
	v := func(n int) int { return len(binary.AppendVarint(nil, int64(n))) }
	// attributes, timestamp delta, offset delta (at most 5), key length and
	// header count, the value's length and the record's own.
	per := recordBytes + 1 + 1 + 5 + 1 + 1 + v(recordBytes) + v(recordBytes+16)
	return max(1, (batchBytes-rbHeaderSize)/per)
}

// dialVersioned connects to addr and asks which versions it serves.
func dialVersioned(addr string) (*rawConn, map[int16][2]int16, error) {
	c, err := dialRaw(addr)
	if err != nil {
		return nil, nil, err
	}
	v, err := c.versions()
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, v, nil
}

// initProducerID asks for an idempotent producer id and epoch.
func initProducerID(c *rawConn, served map[int16][2]int16) (int64, int16, error) {
	v, err := pickVersion(served, 22, 0, 4, "InitProducerID")
	if err != nil {
		return 0, 0, err
	}
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = v
	req.TransactionTimeoutMillis = 60000
	resp := kmsg.NewPtrInitProducerIDResponse()
	if err := c.roundTrip(req, resp); err != nil {
		return 0, 0, fmt.Errorf("InitProducerID: %w", err)
	}
	if resp.ErrorCode != 0 {
		return 0, 0, fmt.Errorf("InitProducerID: %w", kerr.ErrorForCode(resp.ErrorCode))
	}
	return resp.ProducerID, resp.ProducerEpoch, nil
}

// rawProduce is produce (runner.go) with the raw load generator: the same
// record counts, window and throughput, each connection sending batches
// of batch_bytes with in_flight requests outstanding. At a rate, each
// connection sends a batch at a fixed interval.
func (r *run) rawProduce(ctx context.Context, total int64, d time.Duration, rate float64, stamp bool) (_ *Throughput, acked int64, _ error) {
	w := r.w
	leaders, err := r.leaders(ctx)
	if err != nil {
		return nil, 0, err
	}
	acks := int16(1)
	switch w.Acks {
	case "all":
		acks = -1
	case "0":
		acks = 0
	}
	perBatch := recordsPerBatch(w.BatchBytes, w.RecordBytes)
	var producers []*rawProducer
	defer func() {
		for _, p := range producers {
			p.conn.Close()
		}
	}()
	producerID, epoch := int64(-1), int16(-1)
	for k, l := range lanes(w.Producers, w.Partitions, leaders) {
		c, served, err := dialVersioned(l.addr)
		if err != nil {
			return nil, 0, fmt.Errorf("raw producer: %w", err)
		}
		version, err := pickVersion(served, 0, rawProduceMin, rawProduceMax, "Produce")
		if err == nil && w.Idempotent && k == 0 {
			producerID, epoch, err = initProducerID(c, served)
		}
		var p *rawProducer
		if err == nil {
			p, err = newRawProducer(c, rawProducerConfig{version: version, topic: r.topic, partitions: l.partitions,
				perBatch: perBatch, acks: acks, inFlight: w.InFlight, producerID: producerID, epoch: epoch, stamp: stamp,
				value: func(i int) []byte { return r.value(int64(k*7+i), false) }})
		}
		if err != nil {
			c.Close()
			return nil, 0, fmt.Errorf("raw producer: %w", err)
		}
		producers = append(producers, p)
	}

	var (
		counts   = newTally(total, d, w.Warmup.D(), r.meter)
		failed   atomic.Pointer[error]
		wg       sync.WaitGroup
		start    = counts.start
		deadline = counts.deadline
	)
	fail := func(err error) {
		if failed.CompareAndSwap(nil, &err) {
			for _, p := range producers {
				p.conn.Close() // unblocks every write and read
			}
		}
	}
	stop := context.AfterFunc(ctx, func() { fail(ctx.Err()) })
	defer stop()
	done := func(n int32) { counts.ack(int64(n), int64(n)*int64(w.RecordBytes)) }
	n := int64(len(producers))
	for i, p := range producers {
		share := total / n
		if int64(i) < total%n {
			share++
		}
		var interval time.Duration
		if rate > 0 {
			interval = time.Duration(float64(n) * float64(perBatch) / rate * float64(time.Second))
		}
		free := make(chan int, len(p.slots)) // slots not in flight
		sent := make(chan int, len(p.slots)) // slots in flight, in the order sent
		for s := range p.slots {
			free <- s
		}
		readerDone := make(chan struct{})
		if acks != 0 {
			wg.Go(func() {
				defer close(readerDone)
				for s := range sent {
					k, err := p.ack(s)
					if err != nil {
						fail(err)
						return
					}
					done(k)
					free <- s
				}
			})
		}
		wg.Go(func() {
			defer close(sent)
			var sentRecords int64
			for j := int64(0); failed.Load() == nil; j++ {
				if total > 0 {
					left := share - sentRecords
					if left <= 0 {
						return
					}
					if left < int64(p.batchRecords()) {
						if err := p.shorten(int(left)); err != nil {
							fail(err)
							return
						}
					}
				} else if !time.Now().Before(deadline) {
					return
				}
				if interval > 0 {
					if wait := time.Until(start.Add(time.Duration(j) * interval)); wait > 0 {
						time.Sleep(wait)
					}
				}
				slot := 0
				if acks != 0 {
					select {
					case slot = <-free:
					case <-readerDone:
						return
					}
				}
				k := p.batchRecords()
				if err := p.send(slot, time.Now()); err != nil {
					fail(fmt.Errorf("produce: %w", err))
					return
				}
				sentRecords += int64(k)
				if acks == 0 {
					done(k)
				} else {
					sent <- slot
				}
			}
		})
	}
	wg.Wait()
	t, acked := counts.end()
	if err := failed.Load(); err != nil {
		return nil, 0, fmt.Errorf("raw produce: %w", *err)
	}
	return t, acked, nil
}

// rawConsume is consume (runner.go) with the raw consumer: it reads the
// topic from earliest while feed runs, until it has the number of records
// feed returns.
func (r *run) rawConsume(ctx context.Context, feed func() (int64, error)) (*Throughput, []time.Duration, error) {
	w := r.w
	leaders, err := r.leaders(ctx)
	if err != nil {
		return nil, nil, err
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var fetchers []*rawFetcher
	defer func() {
		for _, f := range fetchers {
			f.conn.Close()
		}
	}()
	for _, l := range lanes(w.Consumers, w.Partitions, leaders) {
		c, served, err := dialVersioned(l.addr)
		if err != nil {
			return nil, nil, fmt.Errorf("raw consumer: %w", err)
		}
		var f *rawFetcher
		if _, err = pickVersion(served, 1, rawFetchVersion, rawFetchVersion, "Fetch"); err == nil {
			f, err = newRawFetcher(c, r.topic, l.partitions, rawFetchMaxBytes, rawFetchPartitionBytes, w.RecordBytes)
		}
		if err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("raw consumer: %w", err)
		}
		f.onBatch = r.onRawBatch
		if r.rawCRCEvery != 0 {
			f.sampleEvery = r.rawCRCEvery
		}
		fetchers = append(fetchers, f)
	}
	stopClose := context.AfterFunc(cctx, func() {
		for _, f := range fetchers {
			f.conn.Close() // unblocks a fetch waiting for data
		}
	})
	defer stopClose()

	in := newIntake(w.Warmup.D(), r.meter, cancel, w.Kind == KindConsume)
	cutoff := in.cutoff
	lats := make([][]time.Duration, len(fetchers))
	var wg sync.WaitGroup
	for i, f := range fetchers {
		var stamp func(int64)
		if w.measuresLatency() {
			var now int64
			stamp = func(sent int64) {
				if sent >= cutoff {
					lats[i] = append(lats[i], time.Duration(now-sent))
				}
			}
			f.onResponse = func() { now = time.Now().UnixNano() }
		}
		wg.Go(func() {
			for cctx.Err() == nil {
				got, err := f.fetch(stamp)
				if err != nil {
					if cctx.Err() == nil {
						cancel(err)
					}
					return
				}
				if got.records > 0 {
					in.got(got.records, got.bytes, time.Now().UnixNano())
				}
			}
		})
	}
	go in.watch(cctx, stallTimeout)

	in.feed(feed)
	wg.Wait()
	t, all, whole := in.end(0, lats)
	if !whole {
		if err := context.Cause(cctx); err != nil && !errors.Is(err, context.Canceled) {
			return nil, nil, fmt.Errorf("raw consume: %w", err)
		}
		return nil, nil, fmt.Errorf("raw consume: stopped at %d records", in.records.Load())
	}
	return t, all, nil
}
