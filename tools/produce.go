package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ProduceOptions says what `kzctl produce` sends and how.
type ProduceOptions struct {
	Topic string
	// Input holds one record per line (the newline is not part of it; an
	// empty line is an empty value, as with kafka-console-producer).
	Input io.Reader
	// KeySeparator, when set, splits each line at its first occurrence into
	// key and value; a line without it is an error, as in Kafka's
	// console producer with parse.key=true.
	KeySeparator string
	Headers      []kgo.RecordHeader // added to every record
	// Partition -1 lets the partitioner pick: murmur2 of the key, as
	// Kafka's default partitioner, and sticky batches for null keys.
	Partition   int32
	Compression string // none, gzip, snappy, lz4, zstd
	Acks        string // all (-1), 1, 0
	// Idempotent asks the broker for a producer id (acks all only); a
	// broker without InitProducerId gets records without one.
	Idempotent bool
	// TransactionalID, when set, sends every record in one transaction,
	// committed at the end of the input.
	TransactionalID string
	// MaxLineBytes bounds a line; 0 is 16 MiB.
	MaxLineBytes int
}

// ParseHeader reads a --header flag value, key=value.
func ParseHeader(s string) (kgo.RecordHeader, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return kgo.RecordHeader{}, usagef("header %q is not key=value", s)
	}
	return kgo.RecordHeader{Key: k, Value: []byte(v)}, nil
}

// produceSummary is the JSON output of produce.
type produceSummary struct {
	Topic      string             `json:"topic"`
	Records    int64              `json:"records"`
	Partitions []producedPartiton `json:"partitions"`
}

type producedPartiton struct {
	Partition   int32 `json:"partition"`
	Records     int64 `json:"records"`
	FirstOffset int64 `json:"first_offset"`
	LastOffset  int64 `json:"last_offset"`
}

func (o *ProduceOptions) clientOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	switch strings.ToLower(o.Compression) {
	case "", "none":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.NoCompression()))
	case "gzip":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.GzipCompression()))
	case "snappy":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.SnappyCompression()))
	case "lz4":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.Lz4Compression()))
	case "zstd":
		opts = append(opts, kgo.ProducerBatchCompression(kgo.ZstdCompression()))
	default:
		return nil, usagef("compression %q: want none, gzip, snappy, lz4 or zstd", o.Compression)
	}
	idempotent := o.Idempotent || o.TransactionalID != ""
	switch o.Acks {
	case "", "all", "-1":
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case "1", "0":
		if idempotent {
			return nil, usagef("acks %s: idempotent and transactional producing need acks all", o.Acks)
		}
		acks := kgo.LeaderAck()
		if o.Acks == "0" {
			acks = kgo.NoAck()
		}
		opts = append(opts, kgo.RequiredAcks(acks))
	default:
		return nil, usagef("acks %q: want all, -1, 1 or 0", o.Acks)
	}
	if !idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	if o.TransactionalID != "" {
		opts = append(opts, kgo.TransactionalID(o.TransactionalID))
	}
	// Like kafka-console-producer: a missing topic is created when the
	// broker allows it (auto.create.topics.enable).
	opts = append(opts, kgo.AllowAutoTopicCreation())
	if o.Partition >= 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	} else if o.Partition != -1 {
		return nil, usagef("partition %d", o.Partition)
	}
	return opts, nil
}

// Produce sends each line of opts.Input as a record and prints how many
// went to which partition and offsets.
func Produce(ctx context.Context, env *Env, opts ProduceOptions) error {
	if opts.Topic == "" {
		return usagef("produce: no topic")
	}
	copts, err := opts.clientOpts()
	if err != nil {
		return err
	}
	copts = append(copts, kgo.DefaultProduceTopic(opts.Topic), kgo.RecordDeliveryTimeout(env.timeout()))
	cl, err := env.client(copts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	if opts.TransactionalID != "" {
		if err := cl.BeginTransaction(); err != nil {
			return fmt.Errorf("produce: begin transaction: %w", err)
		}
	}

	p := &producer{parts: map[int32]*producedPartiton{}}
	maxLine := opts.MaxLineBytes
	if maxLine <= 0 {
		maxLine = 16 << 20
	}
	sc := bufio.NewScanner(opts.Input)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine)), maxLine)
	var line int64
	for sc.Scan() && p.failed() == nil {
		line++
		r := &kgo.Record{Topic: opts.Topic, Partition: opts.Partition, Headers: opts.Headers}
		text := sc.Bytes()
		if opts.KeySeparator != "" {
			k, v, ok := strings.Cut(string(text), opts.KeySeparator)
			if !ok {
				p.fail(fmt.Errorf("produce: line %d has no key separator %q", line, opts.KeySeparator))
				break
			}
			r.Key, r.Value = []byte(k), []byte(v)
		} else {
			r.Value = append([]byte{}, text...)
		}
		cl.Produce(ctx, r, p.done)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line %d is longer than %d bytes", line+1, maxLine)
		}
		p.fail(fmt.Errorf("produce: read input: %w", err))
	}
	if err := cl.Flush(ctx); err != nil {
		p.fail(fmt.Errorf("produce: %w", err))
	}
	if opts.TransactionalID != "" {
		commit := kgo.TryCommit
		if p.failed() != nil {
			commit = kgo.TryAbort
		}
		if err := cl.EndTransaction(ctx, commit); err != nil {
			p.fail(fmt.Errorf("produce: end transaction: %w", err))
		}
	}
	if err := p.report(env, opts.Topic); err != nil {
		return err
	}
	return p.failed()
}

// producer gathers the outcome of asynchronous produces: kgo calls done from
// its own goroutines.
type producer struct {
	mu    sync.Mutex
	parts map[int32]*producedPartiton
	total int64
	err   error // the first failure
}

func (p *producer) done(r *kgo.Record, err error) {
	if err != nil {
		p.fail(fmt.Errorf("produce to %s: %w", r.Topic, err))
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.parts[r.Partition]
	if s == nil {
		s = &producedPartiton{Partition: r.Partition, FirstOffset: r.Offset, LastOffset: r.Offset}
		p.parts[r.Partition] = s
	}
	s.Records++
	s.FirstOffset = min(s.FirstOffset, r.Offset)
	s.LastOffset = max(s.LastOffset, r.Offset)
	p.total++
}

func (p *producer) fail(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

func (p *producer) failed() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

func (p *producer) report(env *Env, topic string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	sum := produceSummary{Topic: topic, Records: p.total, Partitions: []producedPartiton{}}
	for _, s := range p.parts {
		sum.Partitions = append(sum.Partitions, *s)
	}
	slices.SortFunc(sum.Partitions, func(a, b producedPartiton) int { return int(a.Partition - b.Partition) })
	if env.Format == JSON {
		return writeJSON(env.Out, sum)
	}
	fmt.Fprintf(env.Out, "Produced %d records to %s.\n", sum.Records, topic)
	if len(sum.Partitions) == 0 {
		return nil
	}
	t := newTable(env.Out, "PARTITION", "RECORDS", "OFFSETS")
	for _, s := range sum.Partitions {
		t.row(s.Partition, s.Records, fmt.Sprintf("%d-%d", s.FirstOffset, s.LastOffset))
	}
	return t.flush()
}
