package tools

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// ConsumeOptions says what `kzctl consume` reads and when it stops.
type ConsumeOptions struct {
	Topic      string
	Partitions []int32 // empty: every partition
	// Where to start: at most one of FromBeginning, Offset ("earliest",
	// "latest" or an offset) and Timestamp (>= 0: the first record at or
	// after that millisecond). None of them: the end, as Kafka's
	// console consumer.
	FromBeginning bool
	Offset        string
	Timestamp     int64
	// Count stops after that many records; 0 does not.
	Count int
	// ToEnd stops once every partition is read up to its end offset as
	// it was when consuming started (the last stable offset at
	// read_committed).
	ToEnd bool
	// IdleTimeout stops after that long without a record; 0 does not.
	IdleTimeout time.Duration
	Isolation   string // read_uncommitted (default) or read_committed
	// Group consumes as a member of that consumer group, committing
	// offsets; it needs a broker with the group coordinator APIs.
	Group string
	// ValueOnly prints each value and a newline, nothing else (Text only).
	ValueOnly bool
}

// consumedRecord is one record in `consume -o json`.
type consumedRecord struct {
	Topic         string       `json:"topic"`
	Partition     int32        `json:"partition"`
	Offset        int64        `json:"offset"`
	Timestamp     int64        `json:"timestamp"`
	TimestampType string       `json:"timestamp_type"`
	Headers       []jsonHeader `json:"headers"`
	Key           *string      `json:"key"`
	KeyBase64     string       `json:"key_base64,omitempty"`
	Value         *string      `json:"value"`
	ValueBase64   string       `json:"value_base64,omitempty"`
}

type jsonHeader struct {
	Key         string  `json:"key"`
	Value       *string `json:"value"`
	ValueBase64 string  `json:"value_base64,omitempty"`
}

func (o *ConsumeOptions) start() (kgo.Offset, error) {
	set := 0
	start := kgo.NewOffset().AtEnd()
	if o.FromBeginning {
		set++
		start = kgo.NewOffset().AtStart()
	}
	if o.Offset != "" {
		set++
		switch o.Offset {
		case "earliest":
			start = kgo.NewOffset().AtStart()
		case "latest":
			start = kgo.NewOffset().AtEnd()
		default:
			n, err := strconv.ParseInt(o.Offset, 10, 64)
			if err != nil || n < 0 {
				return start, usagef("offset %q: want earliest, latest or an offset >= 0", o.Offset)
			}
			start = kgo.NewOffset().At(n)
		}
	}
	if o.Timestamp >= 0 {
		set++
		start = kgo.NewOffset().AfterMilli(o.Timestamp)
	}
	if set > 1 {
		return start, usagef("give at most one of --from-beginning, --offset and --timestamp")
	}
	return start, nil
}

func (o *ConsumeOptions) readCommitted() (bool, error) {
	switch strings.ToLower(o.Isolation) {
	case "", "read_uncommitted":
		return false, nil
	case "read_committed":
		return true, nil
	}
	return false, usagef("isolation %q: want read_uncommitted or read_committed", o.Isolation)
}

// Consume prints records of opts.Topic until a stop condition in opts is met
// or ctx ends (which is not an error: it is how an interrupt stops it).
func Consume(ctx context.Context, env *Env, opts ConsumeOptions) error {
	err := consume(ctx, env, opts)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ErrUsage) {
		return nil
	}
	return err
}

func consume(ctx context.Context, env *Env, opts ConsumeOptions) error {
	if opts.Topic == "" {
		return usagef("consume: no topic")
	}
	start, err := opts.start()
	if err != nil {
		return err
	}
	committed, err := opts.readCommitted()
	if err != nil {
		return err
	}
	if opts.Group != "" && len(opts.Partitions) > 0 {
		return usagef("consume: --group and --partition do not go together")
	}
	if opts.Count < 0 {
		return usagef("count %d", opts.Count)
	}

	if opts.Group != "" {
		if err := opts.checkGroupCoordinator(ctx, env); err != nil {
			return err
		}
	}
	// The end offsets check that the topic and partitions exist, and tell
	// ToEnd where to stop.
	ends, err := opts.endOffsets(ctx, env, committed)
	if err != nil {
		return err
	}
	remaining := map[int32]int64{} // partition: end offset, for ToEnd
	var bar *progress
	var next map[int32]int64 // ToEnd: each partition's next offset, for the bar
	if opts.ToEnd {
		starts, err := opts.startOffsets(ctx, env, start, ends)
		if err != nil {
			return err
		}
		var total int64
		for p, end := range ends {
			if starts[p] < end {
				remaining[p] = end
				total += end - starts[p]
			}
		}
		if len(remaining) == 0 {
			return nil
		}
		next = maps.Clone(starts) // the bar moves its own copy on
		bar = env.progress("consume "+opts.Topic, total, "records", true)
	} else if opts.Count > 0 {
		bar = env.progress("consume "+opts.Topic, int64(opts.Count), "records", true)
	}
	defer bar.finish()

	copts := []kgo.Opt{kgo.KeepControlRecords()}
	if committed {
		copts = append(copts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	switch {
	case opts.Group != "":
		// Only records handled are committed (marked), not all fetched:
		// --count may stop in the middle of a fetch.
		copts = append(copts, kgo.ConsumerGroup(opts.Group), kgo.ConsumeTopics(opts.Topic), kgo.ConsumeResetOffset(start), kgo.AutoCommitMarks())
	default:
		parts := map[int32]kgo.Offset{}
		for p := range ends {
			parts[p] = start
		}
		copts = append(copts, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{opts.Topic: parts}))
	}
	cl, err := env.client(copts...)
	if err != nil {
		return err
	}
	defer cl.Close()

	out := bufio.NewWriterSize(env.Out, 64<<10)
	defer out.Flush()
	printed := 0
	for {
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if opts.IdleTimeout > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, opts.IdleTimeout)
		}
		fetches := cl.PollFetches(pollCtx)
		cancel()
		if ctx.Err() != nil || (opts.IdleTimeout > 0 && pollCtx.Err() != nil) {
			return opts.finish(ctx, cl, out)
		}
		var errs []error
		fetches.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
				errs = append(errs, fmt.Errorf("consume %s partition %d: %w", t, p, err))
			}
		})
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		stop := false
		fetches.EachRecord(func(r *kgo.Record) {
			if stop {
				return
			}
			if end, ok := remaining[r.Partition]; ok {
				if n := min(r.Offset+1, end); n > next[r.Partition] {
					bar.add(n - next[r.Partition])
					next[r.Partition] = n
				}
				if r.Offset >= end-1 {
					delete(remaining, r.Partition)
				}
			}
			if !r.Attrs.IsControl() {
				if err := printRecord(out, env.Format, opts.ValueOnly, r); err == nil {
					printed++
					if next == nil {
						bar.set(int64(printed))
					}
				}
			}
			if opts.Group != "" {
				cl.MarkCommitRecords(r)
			}
			if opts.Count > 0 && printed >= opts.Count {
				stop = true
			}
		})
		if stop || (opts.ToEnd && len(remaining) == 0) {
			return opts.finish(ctx, cl, out)
		}
		if err := out.Flush(); err != nil {
			return fmt.Errorf("consume: write: %w", err)
		}
	}
}

// finish flushes the output and, for a group, commits what was consumed.
func (o *ConsumeOptions) finish(ctx context.Context, cl *kgo.Client, out *bufio.Writer) error {
	if err := out.Flush(); err != nil {
		return fmt.Errorf("consume: write: %w", err)
	}
	if o.Group == "" {
		return nil
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), DefaultTimeout)
	defer cancel()
	if err := cl.CommitMarkedOffsets(cctx); err != nil {
		return fmt.Errorf("consume: commit offsets of group %s: %w", o.Group, err)
	}
	return nil
}

// checkGroupCoordinator finds the group's coordinator first: a broker
// without the group APIs would otherwise leave a group consumer waiting
// silently. A retriable error is asked again: the first request of a
// fresh cluster starts creating __consumer_offsets and is answered
// COORDINATOR_NOT_AVAILABLE, as Kafka answers it.
func (o *ConsumeOptions) checkGroupCoordinator(ctx context.Context, env *Env) error {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return err
	}
	defer done()
	for {
		r, ok := adm.FindGroupCoordinators(ctx, o.Group)[o.Group]
		if !ok {
			return fmt.Errorf("consume: group %s: no coordinator found", o.Group)
		}
		if r.Err == nil {
			return nil
		}
		if !kerr.IsRetriable(r.Err) || ctx.Err() != nil {
			return fmt.Errorf("consume: group %s: find coordinator: %w", o.Group, kafkaErr(r.Err, r.ErrMessage))
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond): // a client's retry backoff
		}
	}
}

// endOffsets lists the end offset (the last stable offset when committed)
// of each partition consumed.
func (o *ConsumeOptions) endOffsets(ctx context.Context, env *Env, committed bool) (map[int32]int64, error) {
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	list := adm.ListEndOffsets
	if committed {
		list = adm.ListCommittedOffsets
	}
	listed, err := list(ctx, o.Topic)
	if err != nil {
		return nil, deadline(ctx, "consume: list end offsets", err)
	}
	return o.pick(listed, "end offset")
}

// startOffsets resolves start to an offset in each partition of ends.
func (o *ConsumeOptions) startOffsets(ctx context.Context, env *Env, start kgo.Offset, ends map[int32]int64) (map[int32]int64, error) {
	byTime := o.Timestamp >= 0
	if !byTime && !o.FromBeginning && o.Offset != "earliest" {
		at := start.EpochOffset().Offset // an exact offset
		if o.Offset == "" || o.Offset == "latest" {
			return ends, nil // nothing to read
		}
		starts := map[int32]int64{}
		for p := range ends {
			starts[p] = at
		}
		return starts, nil
	}
	adm, ctx, done, err := env.adminSession(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	var listed kadm.ListedOffsets
	if byTime {
		listed, err = adm.ListOffsetsAfterMilli(ctx, o.Timestamp, o.Topic)
	} else {
		listed, err = adm.ListStartOffsets(ctx, o.Topic)
	}
	if err != nil {
		return nil, deadline(ctx, "consume: list start offsets", err)
	}
	starts, err := o.pick(listed, "start offset")
	if err != nil {
		return nil, err
	}
	for p, off := range starts {
		if off < 0 { // no record at or after the timestamp
			starts[p] = ends[p]
		}
	}
	return starts, nil
}

// pick keeps the offsets of the partitions consumed, checking each exists.
func (o *ConsumeOptions) pick(listed kadm.ListedOffsets, what string) (map[int32]int64, error) {
	ps := listed[o.Topic]
	if l, ok := ps[-1]; ok && l.Err != nil {
		return nil, fmt.Errorf("consume %s: %w", o.Topic, l.Err)
	}
	if len(ps) == 0 {
		return nil, fmt.Errorf("consume %s: the topic has no partitions", o.Topic)
	}
	out := map[int32]int64{}
	want := o.Partitions
	if len(want) == 0 {
		for p := range ps {
			want = append(want, p)
		}
	}
	for _, p := range want {
		l, ok := ps[p]
		if !ok {
			return nil, fmt.Errorf("consume %s: partition %d does not exist (the topic has %d)", o.Topic, p, len(ps))
		}
		if l.Err != nil {
			return nil, fmt.Errorf("consume %s partition %d: %s: %w", o.Topic, p, what, l.Err)
		}
		out[p] = l.Offset
	}
	return out, nil
}

func printRecord(w *bufio.Writer, f Format, valueOnly bool, r *kgo.Record) error {
	if f == JSON {
		c := consumedRecord{
			Topic: r.Topic, Partition: r.Partition, Offset: r.Offset,
			Timestamp: r.Timestamp.UnixMilli(), TimestampType: timestampType(r.Attrs.TimestampType() == 1),
			Headers: make([]jsonHeader, 0, len(r.Headers)),
		}
		c.Key, c.KeyBase64 = jsonBytes(r.Key)
		c.Value, c.ValueBase64 = jsonBytes(r.Value)
		for _, h := range r.Headers {
			jh := jsonHeader{Key: h.Key}
			jh.Value, jh.ValueBase64 = jsonBytes(h.Value)
			c.Headers = append(c.Headers, jh)
		}
		return writeJSONLine(w, c)
	}
	if valueOnly {
		w.Write(r.Value)
		return w.WriteByte('\n')
	}
	hs := make([]string, len(r.Headers))
	for i, h := range r.Headers {
		hs[i] = printable([]byte(h.Key)) + "=" + nullable(h.Value)
	}
	_, err := fmt.Fprintf(w, "Partition:%d\tOffset:%d\t%s:%d\tHeaders:%s\tKey:%s\tValue:%s\n",
		r.Partition, r.Offset, timestampType(r.Attrs.TimestampType() == 1), r.Timestamp.UnixMilli(),
		strings.Join(hs, ","), nullable(r.Key), nullable(r.Value))
	return err
}

// nullable renders bytes for text output, null as Kafka's console tools do.
func nullable(b []byte) string {
	if b == nil {
		return "null"
	}
	return printable(b)
}

func timestampType(logAppend bool) string {
	if logAppend {
		return "LogAppendTime"
	}
	return "CreateTime"
}
