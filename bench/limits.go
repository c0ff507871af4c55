package bench

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"golang.org/x/sys/unix"
)

// The physical limits the suite measures: what the machine itself can do
// on the paths a broker's bytes take, in the same folder and at the same
// time as the workloads, so a throughput can be read as a share of it.
const (
	// LimitLoopback: one loopback TCP connection, 1 MiB writes, read in
	// 1 MiB reads. Every produced and consumed byte crosses it once.
	LimitLoopback = "loopback-tcp"
	// LimitSendfile: sendfile(2) of a file in the page cache to a
	// loopback socket, 256 KiB per call: the zero-copy fetch path.
	LimitSendfile = "sendfile"
	// LimitAppend: write(2) of 1 MiB chunks appended to a file, no
	// fsync, into a warm page cache: the append a produce ends in.
	LimitAppend = "file-append"
	// LimitAppendCold: the same into memory the page cache had not used
	// just before; on a virtual machine the host may fault each page in.
	// Measured on the way to LimitAppend, shown for what it explains.
	LimitAppendCold = "file-append-cold"
)

// limitChunks is the size of one write, sendfile or read of each limit.
var limitChunks = map[string]int{LimitLoopback: 1 << 20, LimitSendfile: 256 << 10, LimitAppend: 1 << 20, LimitAppendCold: 1 << 20}

// measuredLimits is the order limits are measured in; the append gives
// the cold figure too.
var measuredLimits = []string{LimitLoopback, LimitSendfile, LimitAppend}

// limitNames is the order limits are shown in.
var limitNames = []string{LimitLoopback, LimitSendfile, LimitAppend, LimitAppendCold}

// measure is what one measurement moved and the time it took.
type measure struct {
	n int64
	d time.Duration
}

// Limit is one measurement of one physical limit: a JSON line of
// limits.jsonl.
type Limit struct {
	Limit      string    `json:"limit"`
	Rep        int       `json:"rep"`
	ChunkBytes int       `json:"chunk_bytes"`
	Bytes      int64     `json:"bytes"`
	Seconds    float64   `json:"seconds"`
	MiBps      float64   `json:"mib_per_s"`
	Start      time.Time `json:"start"`
	Error      string    `json:"error,omitempty"`
}

// LimitOptions say how MeasureLimits measures.
type LimitOptions struct {
	// Dir holds the scratch files; empty is the system's temporary folder,
	// where the brokers the suite starts keep their logs.
	Dir      string
	Duration time.Duration // of each measurement; 0 is 2s
	Reps     int           // of each limit, taken in turn; 0 is 3
	OutDir   string        // limits.jsonl and limits.json go here, when set
	// AppendCap bounds the file an append measurement writes; 0 is 2 GiB.
	AppendCap int64
	Progress  io.Writer // a line per measurement; nil for none
}

// MeasureLimits measures each limit Reps times, in turn, and returns the
// measurements; one that fails is recorded with its error and the errors
// are returned joined.
func MeasureLimits(ctx context.Context, opts LimitOptions) ([]Limit, error) {
	if opts.Duration <= 0 {
		opts.Duration = 2 * time.Second
	}
	if opts.Reps <= 0 {
		opts.Reps = 3
	}
	if opts.AppendCap <= 0 {
		opts.AppendCap = 2 << 30
	}
	step := newStep("limits")
	var jsonl io.Writer = io.Discard
	if opts.OutDir != "" {
		if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(opts.OutDir, "limits.jsonl"))
		if err != nil {
			return nil, err
		}
		defer f.Close()
		jsonl = f
	}
	scratch, err := os.MkdirTemp(opts.Dir, "kzctl-limits-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)

	var out []Limit
	var errs []error
	enc := json.NewEncoder(jsonl)
	for rep := 1; rep <= opts.Reps; rep++ {
		for _, name := range measuredLimits {
			if err := ctx.Err(); err != nil {
				return out, errors.Join(append(errs, err)...)
			}
			chunk := limitChunks[name]
			began := time.Now().UTC()
			var ms []measure
			var err error
			switch name {
			case LimitLoopback:
				var m measure
				m.n, m.d, err = loopback(ctx, chunk, opts.Duration)
				ms = []measure{m}
			case LimitSendfile:
				var m measure
				m.n, m.d, err = sendfileLimit(ctx, scratch, chunk, opts.Duration)
				ms = []measure{m}
			case LimitAppend:
				var cold, warm measure
				cold, warm, err = appendLimit(ctx, scratch, chunk, opts.Duration, opts.AppendCap)
				ms = []measure{warm, cold}
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s, rep %d: %w", name, rep, err))
			}
			for i, m := range ms {
				l := Limit{Limit: name, Rep: rep, ChunkBytes: chunk, Start: began, Bytes: m.n, Seconds: m.d.Seconds()}
				if i == 1 {
					l.Limit = LimitAppendCold
				}
				if m.d > 0 {
					l.MiBps = float64(m.n) / m.d.Seconds() / (1 << 20)
				}
				if err != nil {
					l.Error = err.Error()
				}
				out = append(out, l)
				if err := enc.Encode(l); err != nil {
					return out, fmt.Errorf("limits: %w", err)
				}
				if opts.Progress != nil {
					status := fmt.Sprintf("%.0f MiB/s", l.MiBps)
					if l.Error != "" {
						status = "error: " + l.Error
					}
					fmt.Fprintf(opts.Progress, "%s, rep %d/%d: %s\n", l.Limit, rep, opts.Reps, status)
				}
			}
		}
	}
	if opts.OutDir != "" {
		if err := step.save(opts.OutDir); err != nil {
			return out, err
		}
	}
	return out, errors.Join(errs...)
}

// ReadLimits reads limits.jsonl as MeasureLimits wrote it.
func ReadLimits(r io.Reader) ([]Limit, error) {
	dec := json.NewDecoder(r)
	var out []Limit
	for dec.More() {
		var l Limit
		if err := dec.Decode(&l); err != nil {
			return out, fmt.Errorf("limit %d: %w", len(out)+1, err)
		}
		out = append(out, l)
	}
	return out, nil
}

// WriteLimits writes the limits' medians and ranges as an aligned table.
func WriteLimits(w io.Writer, limits []Limit) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "limit\tchunk KiB\tmedian MiB/s\tmin\tmax\treps\t")
	for _, s := range summarizeLimits(limits) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%d\t\n", s.Limit, s.ChunkBytes>>10, num(s.MiBps.Median, 0),
			num(s.MiBps.Min, 0), num(s.MiBps.Max, 0), s.MiBps.N)
	}
	return tw.Flush()
}

// limitSummary is one limit's measurements summed up.
type limitSummary struct {
	Limit      string
	ChunkBytes int
	MiBps      Spread
}

// summarizeLimits sums up each limit's measurements that succeeded, in
// the order limits are measured (unknown names last, in order of first
// appearance).
func summarizeLimits(limits []Limit) []limitSummary {
	order := append([]string(nil), limitNames...)
	vals := map[string][]float64{}
	chunks := map[string]int{}
	for _, l := range limits {
		if l.Error != "" || l.MiBps <= 0 {
			continue
		}
		if _, ok := chunks[l.Limit]; !ok {
			chunks[l.Limit] = l.ChunkBytes
			if _, known := limitChunks[l.Limit]; !known {
				order = append(order, l.Limit)
			}
		}
		vals[l.Limit] = append(vals[l.Limit], l.MiBps)
	}
	var out []limitSummary
	for _, name := range order {
		if len(vals[name]) > 0 {
			out = append(out, limitSummary{Limit: name, ChunkBytes: chunks[name], MiBps: spreadOf(vals[name])})
		}
	}
	return out
}

// loopback measures one TCP connection over loopback: a writer sends
// chunk-sized writes for d while a reader reads and drops them; the
// figure is what the reader received over the time it took.
func loopback(ctx context.Context, chunk int, d time.Duration) (int64, time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer ln.Close()
	buf := make([]byte, chunk)
	rand.Read(buf)
	return overLoopback(ctx, ln, d, func(conn *net.TCPConn, deadline time.Time) error {
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if _, err := conn.Write(buf); err != nil {
				return err
			}
		}
		return nil
	}, chunk)
}

// sendfileLimit measures sendfile(2) from a file in the page cache to a
// loopback socket, chunk bytes per call, going round the file for d. The
// file is 256 MiB, written and read once first so that it is cached.
func sendfileLimit(ctx context.Context, dir string, chunk int, d time.Duration) (int64, time.Duration, error) {
	const size = 256 << 20
	f, err := os.Create(filepath.Join(dir, "sendfile.data"))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	rand.Read(buf)
	for written := 0; written < size; written += len(buf) {
		if _, err := f.Write(buf); err != nil {
			return 0, 0, fmt.Errorf("sendfile: fill: %w", err)
		}
	}
	if _, err := io.CopyBuffer(io.Discard, io.NewSectionReader(f, 0, size), buf); err != nil {
		return 0, 0, fmt.Errorf("sendfile: warm the cache: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, 0, err
	}
	defer ln.Close()
	return overLoopback(ctx, ln, d, func(conn *net.TCPConn, deadline time.Time) error {
		rc, err := conn.SyscallConn()
		if err != nil {
			return err
		}
		src := int(f.Fd())
		var off int64
		var serr error
		for time.Now().Before(deadline) && ctx.Err() == nil {
			if off >= size {
				off = 0
			}
			// RawConn.Write waits for the socket to be writable whenever
			// the function returns false.
			err := rc.Write(func(fd uintptr) bool {
				_, serr = unix.Sendfile(int(fd), src, &off, int(min(int64(chunk), size-off)))
				return !errors.Is(serr, syscall.EAGAIN)
			})
			if err == nil {
				err = serr
			}
			if err != nil {
				return fmt.Errorf("sendfile: %w", err)
			}
		}
		return nil
	}, chunk)
}

// overLoopback runs send on the client side of a loopback connection to
// ln until the deadline d from now, while the server side reads, in reads
// of chunk bytes; it returns the bytes read and the time from the start to
// the last read.
func overLoopback(ctx context.Context, ln net.Listener, d time.Duration, send func(*net.TCPConn, time.Time) error, chunk int) (int64, time.Duration, error) {
	type got struct {
		n   int64
		at  time.Time
		err error
	}
	received := make(chan got, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			received <- got{err: err}
			return
		}
		defer c.Close()
		buf := make([]byte, chunk)
		var n int64
		var at time.Time
		for {
			k, err := c.Read(buf)
			if k > 0 {
				n += int64(k)
				at = time.Now()
			}
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				received <- got{n, at, err}
				return
			}
		}
	}()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		return 0, 0, err
	}
	start := time.Now()
	serr := send(conn.(*net.TCPConn), start.Add(d))
	conn.Close()
	var r got
	select {
	case r = <-received:
	case <-ctx.Done():
		ln.Close()
		r = <-received
	}
	if err := errors.Join(serr, r.err, ctx.Err()); err != nil {
		return 0, 0, err
	}
	if r.n == 0 {
		return 0, 0, errors.New("nothing received")
	}
	return r.n, r.at.Sub(start), nil
}

// appendLimit measures write(2) of chunk-sized buffers appended to a new
// file, without fsync, for d or until the file reaches limit bytes: cold,
// then warm.
//
// The cold pass appends into whatever memory the page cache gets, and its
// file is deleted at once; the warm pass then appends as much as the cold
// one did, into the pages just freed. On a virtual machine, memory the
// guest touches for the first time (or handed back to the host) costs a
// fault on the host, so the cold figure depends on what ran before; the
// warm one is what the machine does in a steady state, where a broker's
// retention frees as much as it appends.
func appendLimit(ctx context.Context, dir string, chunk int, d time.Duration, limit int64) (cold, warm measure, err error) {
	buf := make([]byte, chunk)
	rand.Read(buf)
	cold.n, cold.d, err = appendFile(ctx, filepath.Join(dir, "append-cold.data"), buf, d, limit)
	if err != nil {
		return cold, warm, err
	}
	warm.n, warm.d, err = appendFile(ctx, filepath.Join(dir, "append.data"), buf, d, cold.n)
	return cold, warm, err
}

// appendFile appends buf to a new file name for d or until it holds limit
// bytes, and removes it; it returns the bytes written and the time taken.
func appendFile(ctx context.Context, name string, buf []byte, d time.Duration, limit int64) (int64, time.Duration, error) {
	f, err := os.Create(name)
	if err != nil {
		return 0, 0, err
	}
	defer os.Remove(name)
	defer f.Close()
	var n int64
	start := time.Now()
	deadline := start.Add(d)
	for n < limit && time.Now().Before(deadline) && ctx.Err() == nil {
		k, err := f.Write(buf)
		n += int64(k)
		if err != nil {
			return 0, 0, fmt.Errorf("append: %w", err)
		}
	}
	return n, time.Since(start), ctx.Err()
}
