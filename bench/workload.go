package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Kind is what a workload measures.
type Kind string

const (
	// KindProduce: producers send as fast as allowed; produce throughput.
	KindProduce Kind = "produce"
	// KindConsume: the topic is filled first (not measured), then read from
	// earliest; consume throughput.
	KindConsume Kind = "consume"
	// KindLatency: producers send at a fixed rate while consumers read;
	// end-to-end latency percentiles.
	KindLatency Kind = "e2e-latency"
	// KindMixed: producers and consumers at once, at a rate or flat out;
	// both throughputs and the end-to-end latency.
	KindMixed Kind = "mixed"
)

// Workload is one benchmark, as read from a JSON file. Zero values take the
// defaults that Validate fills in.
type Workload struct {
	Name        string    `json:"name"`
	Description string    `json:"description,omitempty"`
	Kind        Kind      `json:"kind"`
	RecordBytes int       `json:"record_bytes"`           // value size; ≥ 8 where latency is measured
	Payload     string    `json:"payload,omitempty"`      // "random" (default, incompressible) or "text"
	Partitions  int       `json:"partitions"`             // default 8
	Replication int       `json:"replication,omitempty"`  // replication factor; 0 is the broker's default
	Producers   int       `json:"producers"`              // producer clients; default 1
	Consumers   int       `json:"consumers"`              // consumer clients; default 1 (not for produce)
	Group       bool      `json:"group,omitempty"`        // consumers join a group instead of assigning partitions
	ShareGroup  bool      `json:"share_group,omitempty"`  // consumers join a share group (KIP-932) reading from earliest and accept every record (share.go)
	Acks        string    `json:"acks"`                   // "all", "1" or "0"; default "1"
	Linger      *Duration `json:"linger,omitempty"`       // kgo ProducerLinger; absent is the client default (10ms)
	BatchBytes  int       `json:"batch_bytes,omitempty"`  // kgo ProducerBatchMaxBytes; 0 is the client default
	MaxBuffered int       `json:"max_buffered,omitempty"` // kgo MaxBufferedRecords per producer; 0 is the client default (50,000)
	Compression string    `json:"compression,omitempty"`  // none (default), gzip, snappy, lz4, zstd
	Idempotent  bool      `json:"idempotent,omitempty"`   // needs acks "all"
	Rate        float64   `json:"rate,omitempty"`         // records/s over all producers; 0 is flat out
	Duration    Duration  `json:"duration,omitempty"`     // how long to produce; or
	Records     int64     `json:"records,omitempty"`      // how many records to produce
	Warmup      Duration  `json:"warmup,omitempty"`       // not measured: sends (latency) and acknowledgements (throughput) before it
	// Client is what drives the broker: "kgo" (or absent), franz-go's
	// client, what users see; or "raw", the suite's own load generator
	// (rawload.go), whose cost per byte is close to a socket write's, for
	// the broker's capacity. For raw, producers and consumers count
	// connections, batch_bytes sizes every batch, and in_flight bounds the
	// Produce requests each connection has in flight.
	Client   string `json:"client,omitempty"`
	InFlight int    `json:"in_flight,omitempty"`
}

// Clients a workload can be driven by.
const (
	ClientKgo = "kgo"
	ClientRaw = "raw"
)

// raw says whether the raw load generator drives the workload.
func (w *Workload) raw() bool { return w.Client == ClientRaw }

// rawDefaultBatchBytes is the raw client's batch size when a workload
// gives none.
const rawDefaultBatchBytes = 64 << 10

// Duration is a time.Duration written in JSON as a Go duration string
// ("30s", "5ms").
type Duration time.Duration

func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"30s\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// ParseWorkload decodes one workload, refusing unknown fields (a typo must
// not silently run a different benchmark), and validates it.
func ParseWorkload(data []byte) (Workload, error) {
	w, err := decodeWorkload(data)
	if err != nil {
		return Workload{}, err
	}
	if err := w.Validate(); err != nil {
		return Workload{}, err
	}
	return w, nil
}

// LoadWorkload reads and validates a workload file. A file without a name
// is named after the file.
func LoadWorkload(path string) (Workload, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Workload{}, err
	}
	w, err := decodeWorkload(data)
	if err == nil {
		if w.Name == "" {
			w.Name = strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		}
		err = w.Validate()
	}
	if err != nil {
		return Workload{}, fmt.Errorf("workload %s: %w", path, err)
	}
	return w, nil
}

func decodeWorkload(data []byte) (Workload, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w Workload
	if err := dec.Decode(&w); err != nil {
		return Workload{}, err
	}
	if dec.More() {
		return Workload{}, errors.New("more than one JSON value")
	}
	return w, nil
}

// Validate fills in defaults and checks that the workload can run.
func (w *Workload) Validate() error {
	if w.Name == "" {
		return errors.New("no name")
	}
	if strings.ContainsAny(w.Name, " /\\\t\n") {
		return fmt.Errorf("name %q: no spaces or slashes (it names topics and files)", w.Name)
	}
	switch w.Kind {
	case KindProduce, KindConsume, KindLatency, KindMixed:
	case "":
		return errors.New("no kind (produce, consume, e2e-latency or mixed)")
	default:
		return fmt.Errorf("kind %q: want produce, consume, e2e-latency or mixed", w.Kind)
	}
	if w.Partitions == 0 {
		w.Partitions = 8
	}
	if w.Producers == 0 {
		w.Producers = 1
	}
	if w.Consumers == 0 && w.Kind != KindProduce {
		w.Consumers = 1
	}
	if w.Acks == "" {
		w.Acks = "1"
	}
	if w.Acks == "-1" {
		w.Acks = "all"
	}
	if w.Compression == "" {
		w.Compression = "none"
	}
	if w.Payload == "" {
		w.Payload = "random"
	}
	if w.Client == ClientRaw {
		if w.BatchBytes == 0 {
			w.BatchBytes = rawDefaultBatchBytes
		}
		if w.InFlight == 0 {
			w.InFlight = 4
		}
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if w.RecordBytes <= 0 {
		bad("record_bytes %d: want > 0", w.RecordBytes)
	}
	if w.measuresLatency() && w.RecordBytes < stampBytes {
		bad("record_bytes %d: a latency workload needs ≥ %d for the send time", w.RecordBytes, stampBytes)
	}
	if w.Partitions < 0 || w.Partitions > 100000 {
		bad("partitions %d: want 1..100000", w.Partitions)
	}
	if w.Replication < 0 || w.Replication > 32767 {
		bad("replication %d: want 0..32767", w.Replication)
	}
	if w.Producers < 0 || w.Producers > 10000 {
		bad("producers %d: want 1..10000", w.Producers)
	}
	if w.Consumers < 0 || w.Consumers > 10000 {
		bad("consumers %d: want 0..10000", w.Consumers)
	}
	if !w.Group && !w.ShareGroup && w.Kind != KindProduce && w.Consumers > w.Partitions {
		bad("consumers %d > partitions %d: a direct consumer needs a partition of its own", w.Consumers, w.Partitions)
	}
	if w.Kind != KindProduce && w.Consumers == 0 {
		bad("consumers 0: a %s workload reads", w.Kind)
	}
	if w.ShareGroup && w.Group {
		bad("group and share_group: consumers join one kind of group")
	}
	if w.ShareGroup && w.Kind == KindProduce {
		bad("share_group: a produce workload has no consumers")
	}
	switch w.Acks {
	case "all", "1", "0":
	default:
		bad("acks %q: want all, 1 or 0", w.Acks)
	}
	if w.Idempotent && w.Acks != "all" {
		bad("idempotent needs acks all, not %s", w.Acks)
	}
	if w.Acks == "0" && w.Kind != KindProduce {
		bad("acks 0 gives no count of records written; use it only for produce")
	}
	switch w.Compression {
	case "none", "gzip", "snappy", "lz4", "zstd":
	default:
		bad("compression %q: want none, gzip, snappy, lz4 or zstd", w.Compression)
	}
	switch w.Payload {
	case "random", "text":
	default:
		bad("payload %q: want random or text", w.Payload)
	}
	switch w.Client {
	case "", ClientKgo:
		if w.InFlight != 0 {
			bad("in_flight is for the raw client")
		}
	case ClientRaw:
		if w.Compression != "none" || w.Linger != nil || w.MaxBuffered != 0 || w.Group || w.ShareGroup {
			bad("the raw client sends uncompressed batches of batch_bytes to partitions it assigns: no compression, linger, max_buffered, group or share_group")
		}
		if w.Producers > w.Partitions {
			bad("producers %d > partitions %d: a raw producer connection needs a partition of its own", w.Producers, w.Partitions)
		}
		if w.InFlight < 1 || w.InFlight > 64 {
			bad("in_flight %d: want 1..64", w.InFlight)
		}
		if w.BatchBytes > 64<<20 {
			bad("batch_bytes %d: want ≤ 64 MiB", w.BatchBytes)
		}
	default:
		bad("client %q: want kgo or raw", w.Client)
	}
	if w.Linger != nil && *w.Linger < 0 {
		bad("linger cannot be negative")
	}
	if w.Duration < 0 || w.Warmup < 0 || w.BatchBytes < 0 || w.MaxBuffered < 0 || w.Records < 0 {
		bad("duration, warmup, batch_bytes, max_buffered and records cannot be negative")
	}
	if math.IsNaN(w.Rate) || math.IsInf(w.Rate, 0) || w.Rate < 0 {
		bad("rate %v: want ≥ 0 records/s", w.Rate)
	}
	if w.Kind == KindLatency && w.Rate == 0 {
		bad("an e2e-latency workload needs a fixed rate")
	}
	switch {
	case w.Duration == 0 && w.Records == 0:
		bad("give duration or records")
	case w.Duration != 0 && w.Records != 0:
		bad("give duration or records, not both")
	case w.Kind == KindConsume && w.Records == 0 && w.Rate == 0:
		bad("a consume workload fills the topic first: give records, or a rate with the duration")
	}
	if w.Warmup != 0 && (w.Kind == KindConsume || w.Kind == KindProduce && w.Duration == 0) {
		bad("warmup: only a run with a duration or a latency measurement has one")
	}
	if w.Warmup != 0 && w.Duration != 0 && w.Warmup >= w.Duration {
		bad("warmup %v is not shorter than duration %v", w.Warmup.D(), w.Duration.D())
	}
	return errors.Join(errs...)
}

// measuresLatency says whether records carry their send time.
func (w *Workload) measuresLatency() bool { return w.Kind == KindLatency || w.Kind == KindMixed }

// Scaled returns w with its record count, duration and warmup multiplied by
// f (0 < f ≤ 1 for smoke runs), keeping at least one record per producer
// and a millisecond of duration. Sizes, rates and the shape (partitions,
// clients) are kept, so a smoke run exercises the same paths.
func (w Workload) Scaled(f float64) Workload {
	if f <= 0 || f == 1 {
		return w
	}
	if w.Records > 0 {
		w.Records = max(int64(w.Producers), int64(math.Round(float64(w.Records)*f)))
	}
	if w.Duration > 0 {
		w.Duration = Duration(max(time.Millisecond, time.Duration(float64(w.Duration)*f)))
	}
	w.Warmup = Duration(time.Duration(float64(w.Warmup) * f))
	return w
}

// total is how many records the run produces, if that is fixed: the
// record count, or rate × duration for a consume workload's fill.
func (w *Workload) total() int64 {
	if w.Records > 0 {
		return w.Records
	}
	if w.Kind == KindConsume {
		return max(1, int64(w.Rate*w.Duration.D().Seconds()))
	}
	return 0
}
