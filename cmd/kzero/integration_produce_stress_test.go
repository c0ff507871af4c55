package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/kzerotest"
)

// ackedRecord is a record a producer was told it wrote at an offset.
type ackedRecord struct {
	partition int32
	offset    int64
	value     string
	exact     bool // idempotent producer: the log holds it exactly once
}

// ackLedger gathers acknowledgements from concurrent producers.
type ackLedger struct {
	mu    sync.Mutex
	acked []ackedRecord
	errs  []string
}

func (l *ackLedger) ack(r ackedRecord) {
	l.mu.Lock()
	l.acked = append(l.acked, r)
	l.mu.Unlock()
}

func (l *ackLedger) fail(format string, args ...any) {
	l.mu.Lock()
	l.errs = append(l.errs, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

// Many producers in every codec write to the same partitions at once, with
// several produce requests in flight per connection, so the broker's
// pipelines and group commit interleave their appends; then every record
// is read back. A correct broker shows each acknowledged record at exactly
// the offset it was acknowledged at, a dense log, and nothing it was not
// sent. Non-idempotent producers may leave an unacknowledged copy of a
// record they resent after losing a response (at-least-once); idempotent
// ones may not. A wrong base offset in a produce response, responses
// swapped between requests, or an acknowledged record lost all fail it.
func TestProducePipelinedAckedOffsets(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const topic, partitions, perProducer = "stress", 3, 300
	kzerotest.CreateTopic(t, ctx, newClient(t, b), topic, partitions, nil)
	addr := b.Addr().String()

	saramaCodecs := []sarama.CompressionCodec{sarama.CompressionNone, sarama.CompressionGZIP,
		sarama.CompressionSnappy, sarama.CompressionLZ4, sarama.CompressionZSTD}
	kgoCodecs := []kgo.CompressionCodec{kgo.NoCompression(), kgo.GzipCompression(),
		kgo.SnappyCompression(), kgo.Lz4Compression(), kgo.ZstdCompression()}

	var ledger ackLedger
	var wg sync.WaitGroup
	for i, codec := range saramaCodecs {
		for _, idempotent := range []bool{false, true} {
			name := fmt.Sprintf("sarama-%s-idem=%v", codec, idempotent)
			wg.Go(func() { saramaStress(addr, topic, name, codec, idempotent, perProducer, &ledger) })
		}
		for _, idempotent := range []bool{false, true} {
			name := fmt.Sprintf("kgo-%d-idem=%v", i, idempotent)
			wg.Go(func() { kgoStress(ctx, addr, topic, name, kgoCodecs[i], idempotent, perProducer, &ledger) })
		}
	}
	wg.Wait()
	if len(ledger.errs) > 0 {
		t.Fatalf("%d produce errors, first: %s", len(ledger.errs), ledger.errs[0])
	}

	// Every acknowledgement, by partition and offset; each value once.
	byOffset := make([]map[int64]ackedRecord, partitions)
	for p := range byOffset {
		byOffset[p] = map[int64]ackedRecord{}
	}
	sentValues := map[string]ackedRecord{}
	for _, a := range ledger.acked {
		if prev, dup := byOffset[a.partition][a.offset]; dup {
			t.Fatalf("partition %d offset %d acknowledged for %q and %q", a.partition, a.offset, prev.value, a.value)
		}
		if _, dup := sentValues[a.value]; dup {
			t.Fatalf("%q acknowledged twice", a.value)
		}
		byOffset[a.partition][a.offset] = a
		sentValues[a.value] = a
	}
	if want := 4 * len(saramaCodecs) * perProducer; len(ledger.acked) != want {
		t.Fatalf("%d records acknowledged, want %d", len(ledger.acked), want)
	}

	cl := newClient(t, b, kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	next := make([]int64, partitions)
	seen := 0
	copies := 0
	for seen < len(ledger.acked) {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("read %d of %d acknowledged records before %v", seen, len(ledger.acked), ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", topic, p, err) })
		for _, r := range fs.Records() {
			p := r.Partition
			if r.Offset != next[p] {
				t.Fatalf("partition %d: offset %d follows %d", p, r.Offset, next[p]-1)
			}
			next[p]++
			v := string(r.Value)
			if a, ok := byOffset[p][r.Offset]; ok {
				if a.value != v {
					t.Fatalf("partition %d offset %d holds %q, acknowledged for %q", p, r.Offset, v, a.value)
				}
				seen++
				continue
			}
			// Not acknowledged here: only a copy a non-idempotent
			// producer resent after losing the response may be.
			a, sent := sentValues[v]
			switch {
			case !sent:
				t.Fatalf("partition %d offset %d holds %q, which no producer sent", p, r.Offset, v)
			case a.exact:
				t.Fatalf("partition %d offset %d holds a second copy of idempotently produced %q (acknowledged at %d/%d)", p, r.Offset, v, a.partition, a.offset)
			case a.partition != p:
				t.Fatalf("partition %d offset %d holds %q, sent to partition %d", p, r.Offset, v, a.partition)
			}
			copies++
		}
	}
	if copies > 0 {
		t.Logf("%d unacknowledged copies from non-idempotent resends", copies)
	}
}

// saramaStress produces n records through a sarama async producer with
// five requests in flight (one when idempotent, sarama's rule), flushing
// every few records so requests are small and many.
func saramaStress(addr, topic, name string, codec sarama.CompressionCodec, idempotent bool, n int, ledger *ackLedger) {
	cfg := sarama.NewConfig()
	cfg.Version = sarama.MaxVersion
	cfg.ClientID = name
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Return.Successes = true
	cfg.Producer.Compression = codec
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	cfg.Producer.Flush.MaxMessages = 7
	cfg.Producer.Retry.Backoff = 10 * time.Millisecond
	cfg.Net.MaxOpenRequests = 5
	if idempotent {
		cfg.Producer.Idempotent = true
		cfg.Net.MaxOpenRequests = 1
	}
	p, err := sarama.NewAsyncProducer([]string{addr}, cfg)
	if err != nil {
		ledger.fail("%s: %v", name, err)
		return
	}
	go func() {
		for i := range n {
			p.Input() <- &sarama.ProducerMessage{Topic: topic, Value: sarama.StringEncoder(fmt.Sprintf("%s/%d %s", name, i, strings.Repeat("x", i%50)))}
		}
		p.AsyncClose()
	}()
	successes, errs := p.Successes(), p.Errors()
	for successes != nil || errs != nil {
		select {
		case m, ok := <-successes:
			if !ok {
				successes = nil
				continue
			}
			v, _ := m.Value.Encode()
			ledger.ack(ackedRecord{m.Partition, m.Offset, string(v), idempotent})
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			ledger.fail("%s: %v", name, err)
		}
	}
}

// kgoStress produces n records through franz-go with five requests in
// flight (idempotent or not) and no linger, so batches are small.
func kgoStress(ctx context.Context, addr, topic, name string, codec kgo.CompressionCodec, idempotent bool, n int, ledger *ackLedger) {
	opts := []kgo.Opt{kgo.SeedBrokers(addr), kgo.ClientID(name), kgo.DefaultProduceTopic(topic),
		kgo.ProducerBatchCompression(codec), kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.RoundRobinPartitioner())}
	if !idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite(), kgo.MaxProduceRequestsInflightPerBroker(5))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		ledger.fail("%s: %v", name, err)
		return
	}
	defer cl.Close()
	for i := range n {
		r := &kgo.Record{Value: fmt.Appendf(nil, "%s/%d %s", name, i, strings.Repeat("y", i%50))}
		cl.Produce(ctx, r, func(r *kgo.Record, err error) {
			if err != nil {
				ledger.fail("%s: %v", name, err)
				return
			}
			ledger.ack(ackedRecord{r.Partition, r.Offset, string(r.Value), idempotent})
		})
	}
	if err := cl.Flush(ctx); err != nil {
		ledger.fail("%s: flush: %v", name, err)
	}
}
