package bench

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// stampBytes is the send time, Unix nanoseconds big-endian, at the start of
// each value of a latency workload.
const stampBytes = 8

// stallTimeout ends a consume phase that has received nothing for this
// long: the broker lost records or stopped answering.
const stallTimeout = 30 * time.Second

// RunWorkload runs w once against the broker at addr and returns what it
// measured. proc, when not nil, is the broker's process, sampled around the
// measured phase.
func RunWorkload(ctx context.Context, w Workload, addr string, proc *Process) (Result, error) {
	return runWorkload(ctx, w, addr, proc, new(meter), nil)
}

// meter is what a run has moved so far, updated as records are
// acknowledged and received and read by the progress bar meanwhile.
type meter struct {
	produced, producedBytes atomic.Int64 // acknowledged, the fill included
	consumed, consumedBytes atomic.Int64 // received
	measuredFrom            atomic.Int64 // UnixNano the measured phase began; 0 before
}

// runWorkload is RunWorkload with the run's progress counted into m, and
// measuring, when not nil, called as the measured phase begins with how
// long that phase is expected to take (0 when unknown). The function it
// returns, if not nil, is called when the run is over but before its topic
// is deleted: a profile of the phase waits there, so that it does not
// record the deletion.
func runWorkload(ctx context.Context, w Workload, addr string, proc *Process, m *meter, measuring func(expect time.Duration) func()) (Result, error) {
	res := Result{Workload: w.Name, Kind: w.Kind, Addr: addr, Start: time.Now().UTC()}
	r := &run{w: w, addr: addr, payload: newPayload(w.Payload, w.RecordBytes), meter: m}
	var suffix [4]byte
	rand.Read(suffix[:])
	r.topic = "bench-" + w.Name + "-" + hex.EncodeToString(suffix[:])

	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds(addr)...), kgo.ClientID("kzctl-bench"))
	if err != nil {
		return res, fmt.Errorf("client: %w", err)
	}
	defer admCl.Close()
	adm := kadm.NewClient(admCl)
	r.adm = adm
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	if w.ShareGroup {
		if err := checkShareGroups(cctx, admCl); err != nil {
			cancel()
			return res, err
		}
		r.share = newShareReceipt(w.Partitions)
	}
	rf := int16(-1) // the broker's default.replication.factor
	if w.Replication > 0 {
		rf = int16(w.Replication)
	}
	ct, err := adm.CreateTopic(cctx, int32(w.Partitions), rf, nil, r.topic)
	cancel()
	if err == nil {
		err = ct.Err
	}
	if err != nil {
		return res, fmt.Errorf("create topic %s: %w", r.topic, err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		adm.DeleteTopics(dctx, r.topic) // best effort: a broker that cannot delete keeps the topic
	}()
	if w.ShareGroup {
		// The share group is named after the topic, and goes before it.
		defer func() {
			dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
			defer cancel()
			adm.DeleteGroup(dctx, r.topic) // best effort, as the topic's deletion
		}()
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := setShareEarliest(sctx, admCl, r.topic)
		cancel()
		if err != nil {
			return res, err
		}
	}
	var measured func()
	defer func() {
		if measured != nil {
			measured()
		}
	}()

	produce, consume := r.produce, r.consume
	if w.raw() {
		produce, consume = r.rawProduce, r.rawConsume
	}
	var before, selfBefore Sample
	self := NewProcess(os.Getpid()) // the clients: this process
	var load *loadSampler
	defer func() { load.end() }() // a phase that failed: stop sampling
	// sample begins the measured phase, expected to last expect.
	sample := func(expect time.Duration) error {
		m.measuredFrom.Store(time.Now().UnixNano())
		load = startLoad("/proc/stat")
		if measuring != nil {
			measured = measuring(expect)
		}
		if selfBefore, err = self.Sample(); err != nil {
			return err
		}
		if proc == nil {
			return nil
		}
		proc.ResetPeak()
		before, err = proc.Sample()
		return err
	}
	switch w.Kind {
	case KindProduce:
		if err := sample(w.Duration.D()); err != nil {
			return res, err
		}
		res.Produce, _, err = produce(ctx, w.total(), w.Duration.D(), w.Rate, false)
	case KindConsume:
		// The fill is not measured: flat out, then read from earliest.
		// Reading back is expected to take at most half as long as the
		// writing did.
		began := time.Now()
		if _, _, err := produce(ctx, w.total(), 0, 0, false); err != nil {
			return res, fmt.Errorf("fill: %w", err)
		}
		if err := sample(time.Since(began) / 2); err != nil {
			return res, err
		}
		res.Consume, _, err = consume(ctx, func() (int64, error) { return w.total(), nil })
	case KindLatency, KindMixed:
		if err := sample(w.Duration.D()); err != nil {
			return res, err
		}
		var lat []time.Duration
		res.Consume, lat, err = consume(ctx, func() (int64, error) {
			var err error
			var acked int64
			res.Produce, acked, err = produce(ctx, w.total(), w.Duration.D(), w.Rate, true)
			return acked, err
		})
		if err == nil {
			p := Summarize(lat)
			res.Latency = &p
		}
	}
	res.Load, load = load.end(), nil
	if err != nil {
		return res, err
	}
	if r.share != nil {
		res.Share = r.share.stats()
	}
	if selfAfter, err := self.Sample(); err == nil {
		res.Client = usage(selfBefore, selfAfter, res.Produce, res.Consume, w.RecordBytes)
		res.Client.PeakRSSBytes, res.Client.PeakRSSMiBPerGiB = 0, 0 // this process's lifetime peak: not the phase's
	}
	if proc != nil {
		after, err := proc.Sample()
		if err != nil {
			return res, err
		}
		res.Broker = usage(before, after, res.Produce, res.Consume, w.RecordBytes)
	}
	if r.share != nil {
		// Every record, once: the count that ended the phase could
		// include offsets the topic does not hold.
		lctx, cancel := context.WithTimeout(ctx, time.Minute)
		ends, err := adm.ListEndOffsets(lctx, r.topic)
		cancel()
		if err == nil {
			err = r.share.verify(ends, r.topic)
		}
		if err != nil {
			return res, err
		}
	}
	return res, nil
}

// closeAll closes the clients (nil ones skipped) at once: a client's
// Close waits for its goroutines, and a hundred of them one after the other
// would add seconds to a run.
func closeAll(clients []*kgo.Client) {
	var wg sync.WaitGroup
	for _, c := range clients {
		if c != nil {
			wg.Go(c.Close)
		}
	}
	wg.Wait()
}

// seeds splits a comma-separated address list.
func seeds(addr string) []string {
	var out []string
	for _, a := range strings.Split(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// run is one workload's execution against one broker.
type run struct {
	w       Workload
	addr    string
	topic   string
	payload []byte // record values are windows onto it
	meter   *meter
	adm     *kadm.Client
	share   *shareReceipt // for a share_group workload: what was delivered

	// Tests of the raw consumer: every batch it receives (called by each
	// connection's fetcher on its own goroutine), and how often it checks
	// a CRC (0: rawCRCSample).
	onRawBatch  func(partition int32, b []byte)
	rawCRCEvery int
}

// newPayload returns the source of record values: 1 MiB (at least two
// records) of random bytes, or of English-like text that compresses about
// as well as log lines do. Values are taken at rotating offsets, so no two
// neighbours are equal and compression cannot cheat.
func newPayload(kind string, recordBytes int) []byte {
	b := make([]byte, max(1<<20, 2*recordBytes))
	if kind != "text" {
		rand.Read(b)
		return b
	}
	words := []string{"the", "broker", "appends", "a", "record", "batch", "to", "segment",
		"of", "partition", "leader", "offset", "fetch", "consumer", "group", "commit",
		"and", "replica", "index", "timestamp", "produce", "request", "ok", "latency"}
	var rnd [4]byte
	for i := 0; i < len(b); {
		rand.Read(rnd[:])
		w := words[int(binary.BigEndian.Uint32(rnd[:]))%len(words)]
		i += copy(b[i:], w)
		if i < len(b) {
			b[i] = ' '
			i++
		}
	}
	return b
}

// value returns the i-th record value: a window onto the payload, or with
// stamp a fresh copy carrying the send time.
func (r *run) value(i int64, stamp bool) []byte {
	n := r.w.RecordBytes
	off := int(i*7919) % (len(r.payload) - n + 1)
	v := r.payload[off : off+n]
	if stamp {
		v = append([]byte(nil), v...)
		binary.BigEndian.PutUint64(v, uint64(time.Now().UnixNano()))
	}
	return v
}

func (r *run) producerOpts() []kgo.Opt {
	w := r.w
	opts := []kgo.Opt{
		kgo.SeedBrokers(seeds(r.addr)...),
		kgo.ClientID("kzctl-bench"),
		kgo.DefaultProduceTopic(r.topic),
	}
	switch w.Acks {
	case "all":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1":
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()))
	case "0":
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()))
	}
	if !w.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	if w.Linger != nil {
		opts = append(opts, kgo.ProducerLinger(w.Linger.D()))
	}
	if w.MaxBuffered > 0 {
		opts = append(opts, kgo.MaxBufferedRecords(w.MaxBuffered))
	}
	if w.BatchBytes > 0 {
		opts = append(opts, kgo.ProducerBatchMaxBytes(int32(w.BatchBytes)))
	}
	var c kgo.CompressionCodec
	switch w.Compression {
	case "none":
		c = kgo.NoCompression()
	case "gzip":
		c = kgo.GzipCompression()
	case "snappy":
		c = kgo.SnappyCompression()
	case "lz4":
		c = kgo.Lz4Compression()
	case "zstd":
		c = kgo.ZstdCompression()
	}
	return append(opts, kgo.ProducerBatchCompression(c))
}

// produce runs the workload's producers until total records are sent (total
// > 0) or for d, at rate records/s over all of them (0: flat out).
//
// With a record count, every record is acknowledged and the time runs from
// the first send to the last acknowledgement. With a duration the
// throughput is what was acknowledged after the warmup and before the
// deadline, over that window: a flat-out client
// holds many megabytes of records in its buffer at the deadline, and
// waiting for them would stretch the run by their flush. Those records are
// then flushed too when the run measures latency (the consumers count on
// every record), and aborted otherwise.
func (r *run) produce(ctx context.Context, total int64, d time.Duration, rate float64, stamp bool) (_ *Throughput, acked int64, _ error) {
	n := r.w.Producers
	clients := make([]*kgo.Client, n)
	for i := range clients {
		cl, err := kgo.NewClient(r.producerOpts()...)
		if err != nil {
			closeAll(clients[:i])
			return nil, 0, fmt.Errorf("producer: %w", err)
		}
		clients[i] = cl
	}
	defer closeAll(clients)
	var (
		counts    = newTally(total, d, r.w.Warmup.D(), r.meter)
		aborting  atomic.Bool
		failed    atomic.Pointer[error]
		wg        sync.WaitGroup
		start     = counts.start
		deadline  = counts.deadline
		abortLate = total == 0 && !stamp
	)
	done := func(rec *kgo.Record, err error) {
		if err != nil {
			if !aborting.Load() {
				failed.CompareAndSwap(nil, &err)
			}
			return
		}
		counts.ack(1, int64(len(rec.Value)))
	}
	for i, cl := range clients {
		share := int64(0)
		if total > 0 {
			share = total / int64(n)
			if int64(i) < total%int64(n) {
				share++
			}
		}
		var interval time.Duration
		if rate > 0 {
			interval = time.Duration(float64(n) / rate * float64(time.Second))
		}
		wg.Go(func() {
			for j := int64(0); ; j++ {
				if total > 0 && j >= share || total == 0 && !time.Now().Before(deadline) {
					break
				}
				if ctx.Err() != nil || failed.Load() != nil {
					return
				}
				if interval > 0 {
					if wait := time.Until(start.Add(time.Duration(j) * interval)); wait > 0 {
						time.Sleep(wait)
					}
				}
				cl.Produce(ctx, &kgo.Record{Value: r.value(j*int64(n)+int64(i), stamp)}, done)
			}
			var err error
			if abortLate {
				aborting.Store(true)
				err = cl.AbortBufferedRecords(ctx)
			} else {
				err = cl.Flush(ctx)
			}
			if err != nil {
				failed.CompareAndSwap(nil, &err)
			}
		})
	}
	wg.Wait()
	t, acked := counts.end()
	if err := failed.Load(); err != nil {
		return nil, 0, fmt.Errorf("produce: %w", *err)
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, fmt.Errorf("produce: %w", err)
	}
	return t, acked, nil
}

// consume reads the topic from earliest with the workload's consumers while
// feed runs, until they have received the number of records feed returns,
// and returns the throughput from the start to the last record and, for a
// latency workload, the latency of each record sent after the warmup.
func (r *run) consume(ctx context.Context, feed func() (int64, error)) (*Throughput, []time.Duration, error) {
	w := r.w
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	clients := make([]*kgo.Client, w.Consumers)
	defer closeAll(clients)
	for i := range clients {
		opts := []kgo.Opt{kgo.SeedBrokers(seeds(r.addr)...), kgo.ClientID("kzctl-bench"), kgo.FetchMaxWait(500 * time.Millisecond)}
		switch {
		case w.ShareGroup:
			// The group reads from earliest (setShareEarliest); the
			// share consumer's other settings are kgo's defaults.
			opts = append(opts, kgo.ShareGroup(r.topic), kgo.ConsumeTopics(r.topic), kgo.ShareAckCallback(r.share.acked))
		case w.Group:
			opts = append(opts, kgo.ConsumerGroup(r.topic), kgo.ConsumeTopics(r.topic),
				kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		default:
			parts := map[int32]kgo.Offset{}
			for p := i; p < w.Partitions; p += w.Consumers {
				parts[int32(p)] = kgo.NewOffset().AtStart()
			}
			opts = append(opts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{r.topic: parts}))
		}
		cl, err := kgo.NewClient(opts...)
		if err != nil {
			return nil, nil, fmt.Errorf("consumer: %w", err)
		}
		clients[i] = cl
	}

	var flushErr atomic.Pointer[error]
	in := newIntake(w.Warmup.D(), r.meter, cancel, w.Kind == KindConsume)
	stamp, cutoff := w.measuresLatency(), in.cutoff
	lats := make([][]time.Duration, len(clients))
	var wg sync.WaitGroup
	for i, cl := range clients {
		wg.Go(func() {
			for cctx.Err() == nil {
				fs := cl.PollFetches(cctx)
				now := time.Now().UnixNano()
				var n, b int64
				got := func(rec *kgo.Record) {
					n++
					b += int64(len(rec.Value))
					if stamp && len(rec.Value) >= stampBytes {
						if sent := int64(binary.BigEndian.Uint64(rec.Value)); sent >= cutoff {
							lats[i] = append(lats[i], time.Duration(now-sent))
						}
					}
				}
				if r.share == nil {
					fs.EachRecord(got)
				} else {
					// Each record counts once, by its offset; every
					// delivery is accepted.
					fs.EachPartition(func(p kgo.FetchTopicPartition) {
						if err := r.share.receive(p.Partition, p.Records, got); err != nil {
							cancel(err)
						}
					})
					cl.MarkAcks(kgo.AckAccept)
				}
				if n > 0 {
					in.got(n, b, now)
				}
				fs.EachError(func(_ string, _ int32, err error) {
					if !errors.Is(err, context.Canceled) && cctx.Err() == nil {
						cancel(fmt.Errorf("consume: %w", err))
					}
				})
			}
			if r.share != nil {
				// A share consumer has consumed a record once the
				// broker has its acknowledgement: the phase ends
				// when every member has flushed its acks.
				fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
				if err := cl.FlushAcks(fctx); err != nil {
					err = fmt.Errorf("consume: flush share acknowledgements: %w", err)
					flushErr.CompareAndSwap(nil, &err)
				}
				fcancel()
			}
		})
	}

	// The watchdog ends a consume phase that stopped making progress.
	stall := stallTimeout
	if r.share != nil {
		stall = shareStallTimeout
	}
	go in.watch(cctx, stall)

	in.feed(feed)
	wg.Wait()
	last := int64(0) // the last record received
	if r.share != nil {
		last = time.Now().UnixNano() // the acknowledgements flushed
	}
	t, all, whole := in.end(last, lats)
	if !whole {
		if err := context.Cause(cctx); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("consume: stopped at %d records", in.records.Load())
	}
	if err := flushErr.Load(); err != nil {
		return nil, nil, *err
	}
	return t, all, nil
}
