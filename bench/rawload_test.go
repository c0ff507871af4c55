package bench

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	krecord "kzero/record"
)

// A raw batch is what kzero's own decoder (record) takes for a valid
// RecordBatch v2 from a client, with the values given, and stays valid
// after its sequence and stamps are patched and it is sealed again.
func TestRawBatchDecodes(t *testing.T) {
	payload := newPayload("random", 100)
	value := func(i int) []byte { return payload[i*100 : i*100+100] }
	for _, pid := range []int64{-1, 7} {
		buf, values := appendRawBatch([]byte("prefix"), 25, value, pid, 0, 1234)
		rb := rawBatch{b: buf[len("prefix"):], values: values, records: 25}
		stamped := false
		check := func(what string, wantSeq int32) {
			t.Helper()
			b, rest, err := krecord.ParseBatch(rb.b)
			if err != nil || len(rest) != 0 {
				t.Fatalf("%s: ParseBatch: %v, %d bytes left", what, err, len(rest))
			}
			if err := b.Validate(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if err := b.ValidateProduce(); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if b.NumRecords() != 25 || b.ProducerID() != pid || b.BaseSequence() != wantSeq || b.BaseTimestamp() != 1234 {
				t.Errorf("%s: header %+v", what, b.Header())
			}
			var it krecord.Iter
			if err := it.Reset(b, 0); err != nil {
				t.Fatal(err)
			}
			i := 0
			for it.Next() {
				v, want := it.Record().Value, value(i)
				if !bytes.Equal(v[stampBytes:], want[stampBytes:]) || !stamped && !bytes.Equal(v, want) ||
					it.Record().Key != nil || it.Offset() != int64(i) {
					t.Errorf("%s: record %d at %d: value %x…, want %x…", what, i, it.Offset(), v[:12], want[:12])
				}
				i++
			}
			if it.Err() != nil || i != 25 {
				t.Errorf("%s: %d records, %v", what, i, it.Err())
			}
		}
		want := int32(-1)
		if pid >= 0 {
			want = 0
		}
		check("as encoded", want)
		if pid >= 0 {
			rb.setSequence(1000)
			rb.stamp(time.Now().UnixNano())
			stamped = true
			sealBatch(rb.b)
			check("patched", 1000)
		}
	}
}

// batch_bytes bounds the batch: 1 MiB batches of 1 KiB records pass a
// broker's default max.message.bytes (1 MiB + 12).
func TestRecordsPerBatch(t *testing.T) {
	for _, c := range []struct{ batch, rec int }{{1 << 20, 1024}, {16 << 10, 1024}, {100, 1024}, {1 << 20, 100}, {64 << 10, 8}} {
		n := recordsPerBatch(c.batch, c.rec)
		b, _ := appendRawBatch(nil, n, func(int) []byte { return make([]byte, c.rec) }, -1, -1, 0)
		if n < 1 || n > 1 && len(b) > c.batch {
			t.Errorf("batch %d, records of %d: %d records make %d bytes", c.batch, c.rec, n, len(b))
		}
	}
}

// startRawBroker starts a broker for the raw client's tests: kfake always,
// kzero (built from this module) unless -short.
func startRawBroker(t *testing.T, kind string) string {
	t.Helper()
	if kind == "kzero" && testing.Short() {
		t.Skip("builds kzero")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := startBroker(ctx, kind, "", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.stop() })
	return b.addr
}

// newRawRun creates a topic on the broker at addr and returns a run of w
// against it.
func newRawRun(t *testing.T, addr string, w Workload) *run {
	t.Helper()
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	adm := kadm.NewClient(cl)
	r := &run{w: w, addr: addr, topic: "raw-" + w.Name, payload: newPayload(w.Payload, w.RecordBytes), meter: new(meter), adm: adm}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if ct, err := adm.CreateTopic(ctx, int32(w.Partitions), -1, nil, r.topic); err != nil || ct.Err != nil {
		t.Fatalf("create topic: %v, %v", err, ct.Err)
	}
	return r
}

// The raw producer writes N records (not a whole number of batches) over
// several connections and the raw consumer reads back exactly those: every
// batch CRC-checked and framed, offsets without gap, and for an idempotent
// producer the sequences without gap, on kfake and on kzero.
func TestRawProduceConsume(t *testing.T) {
	for _, kind := range []string{"kfake", "kzero"} {
		t.Run(kind, func(t *testing.T) {
			addr := startRawBroker(t, kind)
			for _, idem := range []bool{false, true} {
				w := Workload{Name: fmt.Sprintf("raw-idem-%v", idem), Kind: KindConsume, Client: ClientRaw, RecordBytes: 100,
					Partitions: 3, Producers: 2, Consumers: 2, InFlight: 3, BatchBytes: 1000, Records: 1001}
				if idem {
					w.Acks, w.Idempotent = "all", true
				}
				r := newRawRun(t, addr, w)
				const n = 1001
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				prod, acked, err := r.rawProduce(ctx, n, 0, 0, false)
				if err != nil || acked != n || prod.Records != n || prod.Bytes != n*100 {
					t.Fatalf("idempotent %v: produce %+v, %d acked, %v", idem, prod, acked, err)
				}
				type state struct {
					offset int64
					seq    int32
					pid    int64
				}
				parts := map[int32]*state{}
				var batches, records int
				var mu sync.Mutex // each connection's fetcher calls it on its own goroutine
				r.rawCRCEvery = 1
				r.onRawBatch = func(p int32, b []byte) {
					mu.Lock()
					defer mu.Unlock()
					batches++
					rb := krecord.Batch(b)
					s := parts[p]
					if s == nil {
						s = &state{pid: rb.ProducerID()}
						parts[p] = s
					}
					if rb.BaseOffset() != s.offset {
						t.Errorf("partition %d: batch at %d, want %d", p, rb.BaseOffset(), s.offset)
					}
					if rb.ProducerID() != s.pid || idem != (s.pid >= 0) {
						t.Errorf("partition %d: producer id %d, first %d", p, rb.ProducerID(), s.pid)
					}
					wantSeq := int32(-1)
					if idem {
						wantSeq = s.seq
					}
					if rb.BaseSequence() != wantSeq {
						t.Errorf("partition %d: sequence %d, want %d", p, rb.BaseSequence(), wantSeq)
					}
					s.offset = rb.NextOffset()
					s.seq += rb.NumRecords()
					records += int(rb.NumRecords())
				}
				cons, _, err := r.rawConsume(ctx, func() (int64, error) { return n, nil })
				if err != nil || cons.Records != n || cons.Bytes != n*100 {
					t.Fatalf("idempotent %v: consume %+v, %v", idem, cons, err)
				}
				if records != n || len(parts) != 3 || batches < n/recordsPerBatch(1000, 100) {
					t.Errorf("idempotent %v: %d records in %d batches over %d partitions", idem, records, batches, len(parts))
				}
			}
		})
	}
}

// A latency run with the raw clients: every record's send time comes back.
func TestRawLatency(t *testing.T) {
	addr := startRawBroker(t, "kfake")
	w := Workload{Name: "raw-latency", Kind: KindLatency, Client: ClientRaw, RecordBytes: 64, Partitions: 2,
		Rate: 20000, Duration: Duration(200 * time.Millisecond), BatchBytes: 1024}
	r := newRawRun(t, addr, w)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var prod *Throughput
	cons, lat, err := r.rawConsume(ctx, func() (int64, error) {
		var err error
		var acked int64
		prod, acked, err = r.rawProduce(ctx, 0, w.Duration.D(), w.Rate, true)
		return acked, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if prod.Acked == 0 || cons.Records != prod.Acked || int64(len(lat)) != cons.Records {
		t.Errorf("%d acked, %d consumed, %d latencies", prod.Acked, cons.Records, len(lat))
	}
	for _, l := range lat {
		if l <= 0 || l > time.Minute {
			t.Fatalf("latency %v", l)
		}
	}
}

// The producer's send loop allocates nothing: a request patched (sequence,
// stamps, CRC), written, and its response read and checked, against a
// kfake process (a broker in this process would count its own
// allocations).
func TestRawProducerAllocs(t *testing.T) {
	addr := startRawBroker(t, "kfake")
	r := newRawRun(t, addr, Workload{Name: "raw-allocs", Kind: KindProduce, Client: ClientRaw, RecordBytes: 100,
		Partitions: 2, Acks: "all", Idempotent: true, Records: 1})
	c, served, err := dialVersioned(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	version, err := pickVersion(served, 0, rawProduceMin, rawProduceMax, "Produce")
	if err != nil {
		t.Fatal(err)
	}
	pid, epoch, err := initProducerID(c, served)
	if err != nil {
		t.Fatal(err)
	}
	p, err := newRawProducer(c, rawProducerConfig{version: version, topic: r.topic, partitions: []int32{0, 1}, perBatch: 10,
		acks: -1, inFlight: 2, producerID: pid, epoch: epoch, stamp: true, value: func(i int) []byte { return r.value(int64(i), false) }})
	if err != nil {
		t.Fatal(err)
	}
	// AllocsPerRun counts every goroutine's allocations: the admin
	// client's background work must not run meanwhile.
	r.adm.Close()
	var failed error
	roundTrip := func() {
		for s := range 2 { // two in flight
			if err := p.send(s, time.Now()); err != nil && failed == nil {
				failed = err
			}
		}
		for s := range 2 {
			if _, err := p.ack(s); err != nil && failed == nil {
				failed = err
			}
		}
	}
	for range 5 {
		roundTrip()
	}
	if allocs := testing.AllocsPerRun(100, roundTrip); allocs != 0 {
		t.Errorf("%v allocations per two requests", allocs)
	}
	if failed != nil {
		t.Fatal(failed)
	}
}

// fetchResponse encodes a Fetch v12 response of the batches given for
// partition 0 of topic, with correlation id corr.
func fetchResponse(corr int32, topic string, batches []byte) []byte {
	resp := kmsg.NewPtrFetchResponse()
	resp.Version = rawFetchVersion
	rt := kmsg.NewFetchResponseTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchResponseTopicPartition()
	rp.Partition = 0
	rp.HighWatermark = 1000
	rp.RecordBatches = batches
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	b := binary.BigEndian.AppendUint32(nil, uint32(corr))
	b = append(b, 0) // header tags
	return resp.AppendTo(b)
}

// testBatches returns n batches of 10 stamped records of 64 bytes at
// offsets 0, 10, 20..., and a torn last batch after them.
func testBatches(n int) []byte {
	var out []byte
	v := make([]byte, 64)
	binary.BigEndian.PutUint64(v, uint64(time.Now().UnixNano()))
	for i := range n {
		start := len(out)
		out, _ = appendRawBatch(out, 10, func(int) []byte { return v }, -1, -1, 0)
		binary.BigEndian.PutUint64(out[start:], uint64(i*10))
	}
	torn, _ := appendRawBatch(nil, 10, func(int) []byte { return v }, -1, -1, 0)
	return append(out, torn[:len(torn)/2]...)
}

// Parsing a fetch response, every batch CRC-checked and every stamp read,
// allocates nothing, and stops at a batch cut short.
func TestRawFetchParse(t *testing.T) {
	f, err := newRawFetcher(nil, "t", []int32{0}, 1<<20, 1<<20, 64)
	if err != nil {
		t.Fatal(err)
	}
	f.sampleEvery = 1
	f.corr = 9
	batches := testBatches(5)
	resp := fetchResponse(9, "t", batches)
	var stamps int
	stamp := func(int64) { stamps++ }
	got, err := f.parse(resp, stamp)
	if err != nil || got.records != 50 || got.bytes != 50*64 || f.offsets[0] != 50 || stamps != 50 {
		t.Fatalf("parse: %+v, offset %d, %d stamps, %v", got, f.offsets[0], stamps, err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		f.offsets[0] = 0
		if _, err := f.parse(resp, stamp); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations per fetch response", allocs)
	}
	// A flipped bit in a value is a CRC error; the wrong correlation id is
	// an error.
	bad := bytes.Clone(resp)
	bad[bytes.Index(resp, batches)+rbHeaderSize+100] ^= 1
	f.offsets[0] = 0
	if _, err := f.parse(bad, nil); err == nil {
		t.Error("corrupt batch taken")
	}
	f.corr = 10
	if _, err := f.parse(resp, nil); err == nil {
		t.Error("wrong correlation id taken")
	}
}

// checkProduceResponse takes a response without errors and reports a
// partition's error.
func TestCheckProduceResponse(t *testing.T) {
	enc := func(code int16) []byte {
		resp := kmsg.NewPtrProduceResponse()
		resp.Version = rawProduceMax
		rt := kmsg.NewProduceResponseTopic()
		rt.Topic = "t"
		rp := kmsg.NewProduceResponseTopicPartition()
		rp.ErrorCode = code
		rt.Partitions = append(rt.Partitions, rp)
		resp.Topics = append(resp.Topics, rt)
		b := binary.BigEndian.AppendUint32(nil, 3)
		return resp.AppendTo(append(b, 0))
	}
	if err := checkProduceResponse(enc(0), 3); err != nil {
		t.Error(err)
	}
	if err := checkProduceResponse(enc(0), 4); err == nil {
		t.Error("wrong correlation id taken")
	}
	if err := checkProduceResponse(enc(10), 3); err == nil {
		t.Error("MESSAGE_TOO_LARGE taken")
	}
	if err := checkProduceResponse(enc(0)[:20], 3); err == nil {
		t.Error("truncated response taken")
	}
}

// The raw client's responses and records come off a socket: no input
// makes their parsers panic or loop.
func FuzzProduceResponse(f *testing.F) {
	resp := kmsg.NewPtrProduceResponse()
	resp.Version = rawProduceMax
	rt := kmsg.NewProduceResponseTopic()
	rt.Partitions = append(rt.Partitions, kmsg.NewProduceResponseTopicPartition())
	resp.Topics = append(resp.Topics, rt)
	f.Add(resp.AppendTo([]byte{0, 0, 0, 1, 0}))
	f.Fuzz(func(t *testing.T, b []byte) { checkProduceResponse(b, 1) })
}

func FuzzFetchResponse(f *testing.F) {
	f.Add(fetchResponse(1, "t", testBatches(2)))
	f.Add(fetchResponse(1, "t", nil))
	fetcher, err := newRawFetcher(nil, "t", []int32{0, 1}, 1<<20, 1<<20, 64)
	if err != nil {
		f.Fatal(err)
	}
	stamp := func(int64) {}
	f.Fuzz(func(t *testing.T, b []byte) {
		fetcher.corr, fetcher.offsets[0], fetcher.offsets[1], fetcher.sampleEvery = 1, 0, 0, 1
		fetcher.parse(b, stamp)
	})
}

func FuzzRecordIter(f *testing.F) {
	f.Add(testBatches(1)[rbHeaderSize:])
	f.Fuzz(func(t *testing.T, b []byte) {
		it := recordIter{b: b}
		for range len(b) + 1 {
			if _, ok := it.next(); !ok {
				break
			}
		}
	})
}

// The CRC a send recomputes for an idempotent or stamped batch: its cost
// per byte is the client's, beside a socket write's.
func BenchmarkRawSeal(b *testing.B) {
	for _, size := range []int{16 << 10, 1 << 20} {
		b.Run(fmt.Sprint(size>>10, "KiB"), func(b *testing.B) {
			n := recordsPerBatch(size, 1024)
			payload := newPayload("random", 1024)
			buf, values := appendRawBatch(nil, n, func(i int) []byte { return payload[i : i+1024] }, 1, 0, 0)
			rb := rawBatch{b: buf, values: values, records: int32(n)}
			b.SetBytes(int64(len(buf)))
			for i := 0; b.Loop(); i++ {
				rb.setSequence(int32(i))
				sealBatch(rb.b)
			}
		})
	}
}

// A raw workload gets its defaults, and what the raw client cannot do is
// refused.
func TestRawWorkloadValidate(t *testing.T) {
	w, err := ParseWorkload([]byte(`{"name":"r","client":"raw","kind":"produce","record_bytes":1024,"records":10}`))
	if err != nil || w.BatchBytes != rawDefaultBatchBytes || w.InFlight != 4 || !w.raw() {
		t.Errorf("defaults: %+v, %v", w, err)
	}
	for _, bad := range []string{
		`{"name":"r","client":"raw","kind":"produce","record_bytes":1024,"records":10,"compression":"lz4"}`,
		`{"name":"r","client":"raw","kind":"produce","record_bytes":1024,"records":10,"linger":"1ms"}`,
		`{"name":"r","client":"raw","kind":"produce","record_bytes":1024,"records":10,"max_buffered":5}`,
		`{"name":"r","client":"raw","kind":"consume","record_bytes":1024,"records":10,"group":true}`,
		`{"name":"r","client":"raw","kind":"produce","record_bytes":1024,"records":10,"partitions":2,"producers":3}`,
		`{"name":"r","client":"raw","kind":"produce","record_bytes":1024,"records":10,"in_flight":65}`,
		`{"name":"r","kind":"produce","record_bytes":1024,"records":10,"in_flight":2}`,
		`{"name":"r","client":"sarama","kind":"produce","record_bytes":1024,"records":10}`,
	} {
		if _, err := ParseWorkload([]byte(bad)); err == nil {
			t.Errorf("took %s", bad)
		}
	}
}
