package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// Result is one run of one workload against one target: a JSON line.
type Result struct {
	Workload string       `json:"workload"`
	Kind     Kind         `json:"kind"`
	Target   string       `json:"target"` // the target's label
	Addr     string       `json:"addr"`
	Rep      int          `json:"rep"` // 1-based repetition
	Scale    float64      `json:"scale,omitempty"`
	Start    time.Time    `json:"start"`
	Produce  *Throughput  `json:"produce,omitempty"`
	Consume  *Throughput  `json:"consume,omitempty"`
	Latency  *Percentiles `json:"latency,omitempty"`
	Broker   *Usage       `json:"broker,omitempty"` // for a broker the suite started as a process
	Share    *ShareStats  `json:"share,omitempty"`  // for a share_group workload
	// Client is the CPU of the clients (this process) over the measured
	// phase, per GiB moved as the broker's is: what the load generator
	// costs, which shares the machine with the broker.
	Client *Usage `json:"client,omitempty"`
	// Load is the whole machine's load over the measured phase.
	Load *MachineLoad `json:"load,omitempty"`
	// PageCache is the state of the machine's memory the run began in:
	// "warm" when the suite recycled page-cache pages just before it
	// (Options.Warm), empty when it took the machine as it found it.
	PageCache string   `json:"page_cache,omitempty"`
	Profiles  []string `json:"profiles,omitempty"` // pprof files in the results folder
	Error     string   `json:"error,omitempty"`
}

// Throughput is what one side moved in a measured phase.
type Throughput struct {
	Records       int64   `json:"records"`
	Bytes         int64   `json:"bytes"` // record value bytes
	Seconds       float64 `json:"seconds"`
	MBps          float64 `json:"mb_per_s"` // 10^6 bytes
	MiBps         float64 `json:"mib_per_s"`
	RecordsPerSec float64 `json:"records_per_s"`
	// Acked counts every record the broker acknowledged in the run, those
	// outside a produce window included; Records counts the window's.
	Acked int64 `json:"acked"`
	// FirstRecordSeconds is how long a consume phase waited for its first
	// record: a group's join, a share group's first assignment. Seconds
	// and the rates count from that record on.
	FirstRecordSeconds float64 `json:"first_record_s,omitempty"`
	// Timeline is the throughput over the whole phase, warmup and tail
	// included; absent in results written before it was recorded.
	Timeline *Timeline `json:"timeline,omitempty"`
}

func newThroughput(records, bytes int64, d time.Duration) *Throughput {
	t := &Throughput{Records: records, Bytes: bytes, Seconds: d.Seconds(), Acked: records}
	if s := d.Seconds(); s > 0 {
		t.MBps = float64(bytes) / s / 1e6
		t.MiBps = float64(bytes) / s / (1 << 20)
		t.RecordsPerSec = float64(records) / s
	}
	return t
}

// Usage is the broker process's resource use over the measured phase.
type Usage struct {
	CPUSeconds       float64 `json:"cpu_s"`
	GiBMoved         float64 `json:"gib_moved"` // produced plus consumed value bytes
	CPUSecondsPerGiB float64 `json:"cpu_s_per_gib"`
	PeakRSSBytes     int64   `json:"peak_rss_bytes"`
	PeakRSSMiBPerGiB float64 `json:"peak_rss_mib_per_gib"`
}

// usage is the broker's use between two samples, per GiB moved: every
// record acknowledged (a produce window's figures leave some out) and every
// record consumed, of recordBytes each.
func usage(before, after Sample, prod, cons *Throughput, recordBytes int) *Usage {
	var moved int64
	if prod != nil {
		moved += prod.Acked * int64(recordBytes)
	}
	if cons != nil {
		moved += cons.Records * int64(recordBytes)
	}
	u := &Usage{CPUSeconds: after.CPUSeconds - before.CPUSeconds, PeakRSSBytes: after.PeakRSSBytes,
		GiBMoved: float64(moved) / (1 << 30)}
	if u.GiBMoved > 0 {
		u.CPUSecondsPerGiB = u.CPUSeconds / u.GiBMoved
		u.PeakRSSMiBPerGiB = float64(u.PeakRSSBytes) / (1 << 20) / u.GiBMoved
	}
	return u
}

// WriteJSONLines writes each result as one line of JSON.
func WriteJSONLines(w io.Writer, results []Result) error {
	enc := json.NewEncoder(w)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSONLines reads results written by WriteJSONLines.
func ReadJSONLines(r io.Reader) ([]Result, error) {
	dec := json.NewDecoder(r)
	var out []Result
	for dec.More() {
		var res Result
		if err := dec.Decode(&res); err != nil {
			return out, fmt.Errorf("result %d: %w", len(out)+1, err)
		}
		out = append(out, res)
	}
	return out, nil
}

// WriteTable writes the results as an aligned table, one row per run;
// a dash is a figure the run does not measure.
func WriteTable(w io.Writer, results []Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\ttarget\trep\tprod MiB/s\tprod rec/s\tcons MiB/s\tcons rec/s\tp50 ms\tp99 ms\tp99.9 ms\tmax ms\tCPU s/GiB\tpeak RSS MiB\tclient CPU s/GiB\tsteal %\trun queue\t")
	for _, r := range results {
		if r.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\t%d\terror: %s\t\t\t\t\t\t\t\t\t\t\t\t\t\n", r.Workload, r.Target, r.Rep, r.Error)
			continue
		}
		row := []string{r.Workload, r.Target, strconv.Itoa(r.Rep)}
		if r.Produce != nil {
			row = append(row, num(r.Produce.MiBps, 1), num(r.Produce.RecordsPerSec, 0))
		} else {
			row = append(row, "-", "-")
		}
		if r.Consume != nil {
			row = append(row, num(r.Consume.MiBps, 1), num(r.Consume.RecordsPerSec, 0))
		} else {
			row = append(row, "-", "-")
		}
		if l := r.Latency; l != nil {
			row = append(row, num(l.P50, 2), num(l.P99, 2), num(l.P999, 2), num(l.Max, 2))
		} else {
			row = append(row, "-", "-", "-", "-")
		}
		if b := r.Broker; b != nil {
			row = append(row, num(b.CPUSecondsPerGiB, 2), num(float64(b.PeakRSSBytes)/(1<<20), 0))
		} else {
			row = append(row, "-", "-")
		}
		if c := r.Client; c != nil && c.GiBMoved > 0 {
			row = append(row, num(c.CPUSecondsPerGiB, 2))
		} else {
			row = append(row, "-")
		}
		steal, runq := describeLoad(r.Load)
		row = append(row, steal, runq)
		for _, c := range row {
			fmt.Fprint(tw, c, "\t")
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return writeShareNotes(w, results)
}

// writeShareNotes follows the table with what each share-group run saw of
// at-least-once delivery.
func writeShareNotes(w io.Writer, results []Result) error {
	for _, r := range results {
		s := r.Share
		if s == nil || r.Error != "" {
			continue
		}
		line := fmt.Sprintf("%s on %s, rep %d: share group: %d redelivered (max delivery count %d), %d ack errors",
			r.Workload, r.Target, r.Rep, s.Redelivered, s.MaxDeliveryCount, s.AckErrors)
		if s.FirstAckError != "" {
			line += ", first: " + s.FirstAckError
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

func num(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }
