package tools

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kzero/log"
	"kzero/record"
)

// DumpOptions says what `kzctl dump-log` prints, as kafka-dump-log.sh's
// flags of the same names.
type DumpOptions struct {
	// PrintDataLog prints each record's key, value and headers (and a
	// control record's marker); it implies DeepIteration.
	PrintDataLog bool
	// DeepIteration decodes the records of every batch, decompressing
	// compressed ones, and prints a line for each.
	DeepIteration bool
	// IndexSanityCheck checks each entry of .index, .timeindex and
	// .txnindex files against the segment's .log instead of printing the
	// entries.
	IndexSanityCheck bool
	// MaxBatchBytes bounds a batch's decompressed records; 0 is 256 MiB.
	MaxBatchBytes int
}

// The index-like files dump-log reads whole, by suffix; .log files are
// streamed (dumpLogFile). A .deleted, .cleaned or .swap suffix after them (a
// file the log is deleting or swapping in) is read as the file it was.
var indexDumpers = map[string]func(d *dumper, path string, data []byte, base int64) error{
	log.IndexSuffix:     (*dumper).offsetIndex,
	log.TimeIndexSuffix: (*dumper).timeIndex,
	log.TxnIndexSuffix:  (*dumper).txnIndex,
	log.SnapshotSuffix:  (*dumper).snapshot,
}

// dumpable reports whether dump-log reads files of this kind (suffix).
func dumpable(kind string) bool {
	_, ok := indexDumpers[kind]
	return ok || kind == log.LogSuffix
}

// DumpLog prints the contents of segment files (and the files of a folder
// given instead of a file) like kafka-dump-log.sh. A file that cannot be read
// or is damaged is an error naming the file and byte position; the other
// files are still dumped, and the errors come back joined. It only reads.
func DumpLog(env *Env, files []string, opts DumpOptions) error {
	if len(files) == 0 {
		return usagef("dump-log: no files")
	}
	w := bufio.NewWriterSize(env.Out, 64<<10)
	d := &dumper{w: w, json: env.Format == JSON, opts: opts}
	defer d.rr.Release()
	var errs []error
	files = expandDirs(files, &errs)
	sizes := make([]int64, len(files)) // for the progress bar, in bytes
	var total int64
	for i, f := range files {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			sizes[i] = st.Size()
			total += sizes[i]
		}
	}
	d.bar = env.progress("dump-log", total, "bytes", true)
	defer d.bar.finish()
	for i, f := range files {
		if err := d.dump(f); err != nil {
			errs = append(errs, err)
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("dump-log: write: %w", err)
		}
		d.barBase += sizes[i]
		d.bar.set(d.barBase)
	}
	return errors.Join(errs...)
}

// expandDirs replaces each folder in paths by the files dump-log reads in
// it, sorted by name (so by base offset, then suffix).
func expandDirs(paths []string, errs *[]error) []string {
	var out []string
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil || !st.IsDir() {
			out = append(out, p) // dump reports the error
			continue
		}
		ents, err := os.ReadDir(p)
		if err != nil {
			*errs = append(*errs, fmt.Errorf("%s: %w", p, err))
			continue
		}
		var names []string
		for _, e := range ents {
			if dumpable(fileKind(e.Name())) && e.Type().IsRegular() {
				names = append(names, e.Name())
			}
		}
		slices.Sort(names)
		for _, n := range names {
			out = append(out, filepath.Join(p, n))
		}
	}
	return out
}

// fileKind is a file's suffix without any .deleted, .cleaned or .swap.
func fileKind(name string) string {
	for _, s := range []string{log.DeletedSuffix, log.CleanedSuffix, log.SwapSuffix} {
		name = strings.TrimSuffix(name, s)
	}
	return filepath.Ext(name)
}

// baseOffset is the base offset in a segment file's name, 0 when the name
// has none.
func baseOffset(path string) int64 {
	base, _, ok := log.ParseFileName(filepath.Base(path))
	if !ok {
		return 0
	}
	return base
}

// dumper writes what it decodes as text lines or JSON lines. One goroutine.
type dumper struct {
	w    *bufio.Writer
	json bool
	opts DumpOptions
	file string // the file being dumped, named in JSON lines
	rr   record.Iter

	bar     *progress // nil: none
	barBase int64     // bytes of the files dumped before this one
}

func (d *dumper) dump(path string) error {
	kind := fileKind(path)
	if !dumpable(kind) {
		return fmt.Errorf("%s: not a file dump-log reads (.log, .index, .timeindex, .txnindex, .snapshot)", path)
	}
	d.file = path
	if !d.json {
		fmt.Fprintf(d.w, "Dumping %s\n", path)
	}
	if kind == log.LogSuffix {
		return d.dumpLogFile(path, baseOffset(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return indexDumpers[kind](d, path, data, baseOffset(path))
}

// item starts every JSON line: which file, what kind of entry.
type item struct {
	File string `json:"file"`
	Type string `json:"type"`
}

func (d *dumper) item(typ string) item { return item{File: d.file, Type: typ} }

func (d *dumper) emit(v any) {
	enc := json.NewEncoder(d.w)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // write errors surface at Flush
}

// dumpLogFile prints a segment's batches.
func (d *dumper) dumpLogFile(path string, base int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := d.dumpLog(f, st.Size(), base); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// dumpLog prints the batches of a segment of size bytes read from r, whose
// file name says it starts at base. Batches that fail their CRC are printed
// (isvalid: false) and counted; the first damaged frame ends the dump.
func (d *dumper) dumpLog(r io.Reader, size, base int64) error {
	if !d.json {
		fmt.Fprintf(d.w, "Log starting offset: %d\n", base)
	}
	deep := d.opts.DeepIteration || d.opts.PrintDataLog
	limit := d.opts.MaxBatchBytes
	if limit <= 0 {
		limit = 256 << 20
	}
	s := newBatchScanner(r, size)
	var bad int
	var firstBad int64
	for {
		b, pos, err := s.next(false)
		if err == errEnd {
			break
		}
		if err != nil {
			return err
		}
		valid := b.ComputeCRC() == b.CRC()
		if !valid {
			if bad == 0 {
				firstBad = pos
			}
			bad++
		}
		d.batch(b, pos, valid)
		d.bar.set(d.barBase + s.pos)
		if deep && valid {
			if err := d.records(b, pos, limit); err != nil {
				return err
			}
		}
	}
	if bad > 0 {
		return fmt.Errorf("position %d: %d batches fail their CRC check, the first here", firstBad, bad)
	}
	return nil
}

type batchLine struct {
	item
	BaseOffset           int64  `json:"base_offset"`
	LastOffset           int64  `json:"last_offset"`
	Count                int32  `json:"count"`
	BaseSequence         int32  `json:"base_sequence"`
	LastSequence         int32  `json:"last_sequence"`
	ProducerID           int64  `json:"producer_id"`
	ProducerEpoch        int16  `json:"producer_epoch"`
	PartitionLeaderEpoch int32  `json:"partition_leader_epoch"`
	IsTransactional      bool   `json:"is_transactional"`
	IsControl            bool   `json:"is_control"`
	DeleteHorizonMs      *int64 `json:"delete_horizon_ms"`
	Position             int64  `json:"position"`
	TimestampType        string `json:"timestamp_type"`
	BaseTimestamp        int64  `json:"base_timestamp"`
	MaxTimestamp         int64  `json:"max_timestamp"`
	Size                 int    `json:"size"`
	Magic                int8   `json:"magic"`
	Compression          string `json:"compression"`
	CRC                  uint32 `json:"crc"`
	CRCValid             bool   `json:"crc_valid"`
}

func (d *dumper) batch(b record.Batch, pos int64, valid bool) {
	l := batchLine{
		item:       d.item("batch"),
		BaseOffset: b.BaseOffset(), LastOffset: b.LastOffset(), Count: b.NumRecords(),
		BaseSequence: b.BaseSequence(), LastSequence: b.LastSequence(),
		ProducerID: b.ProducerID(), ProducerEpoch: b.ProducerEpoch(),
		PartitionLeaderEpoch: b.PartitionLeaderEpoch(),
		IsTransactional:      b.IsTransactional(), IsControl: b.IsControl(),
		Position: pos, TimestampType: timestampType(b.LogAppendTime()),
		BaseTimestamp: b.BaseTimestamp(), MaxTimestamp: b.MaxTimestamp(),
		Size: b.Size(), Magic: b.Magic(), Compression: b.Compression().String(),
		CRC: b.CRC(), CRCValid: valid,
	}
	if b.HasDeleteHorizon() {
		h := b.BaseTimestamp()
		l.DeleteHorizonMs = &h
	}
	if d.json {
		d.emit(l)
		return
	}
	horizon := "none"
	if l.DeleteHorizonMs != nil {
		horizon = fmt.Sprint(*l.DeleteHorizonMs)
	}
	fmt.Fprintf(d.w, "baseOffset: %d lastOffset: %d count: %d baseSequence: %d lastSequence: %d producerId: %d producerEpoch: %d partitionLeaderEpoch: %d isTransactional: %t isControl: %t deleteHorizonMs: %s position: %d %s: %d size: %d magic: %d compresscodec: %s crc: %d isvalid: %t\n",
		l.BaseOffset, l.LastOffset, l.Count, l.BaseSequence, l.LastSequence, l.ProducerID, l.ProducerEpoch,
		l.PartitionLeaderEpoch, l.IsTransactional, l.IsControl, horizon, l.Position, l.TimestampType,
		l.MaxTimestamp, l.Size, l.Magic, l.Compression, l.CRC, l.CRCValid)
}

type recordLine struct {
	item
	Offset        int64        `json:"offset"`
	TimestampType string       `json:"timestamp_type"`
	Timestamp     int64        `json:"timestamp"`
	KeySize       int          `json:"key_size"`
	ValueSize     int          `json:"value_size"`
	Sequence      int32        `json:"sequence"`
	HeaderKeys    []string     `json:"header_keys"`
	Key           *string      `json:"key,omitempty"`
	KeyBase64     string       `json:"key_base64,omitempty"`
	Value         *string      `json:"value,omitempty"`
	ValueBase64   string       `json:"value_base64,omitempty"`
	Headers       []jsonHeader `json:"headers,omitempty"`
	Control       *controlInfo `json:"control,omitempty"`
}

type controlInfo struct {
	Type             string `json:"type"`
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
}

// records prints the records of a batch whose CRC is good.
func (d *dumper) records(b record.Batch, pos int64, limit int) error {
	if err := d.rr.Reset(b, limit); err != nil {
		return fmt.Errorf("position %d: batch at offset %d: %w", pos, b.BaseOffset(), err)
	}
	for d.rr.Next() {
		rec := d.rr.Record()
		l := recordLine{
			item:   d.item("record"),
			Offset: d.rr.Offset(), TimestampType: timestampType(b.LogAppendTime()), Timestamp: d.rr.Timestamp(),
			KeySize: size(rec.Key), ValueSize: size(rec.Value), Sequence: sequence(b, rec.OffsetDelta),
			HeaderKeys: make([]string, len(rec.Headers)),
		}
		for i, h := range rec.Headers {
			l.HeaderKeys[i] = string(h.Key)
		}
		if d.opts.PrintDataLog {
			if b.IsControl() {
				t, epoch, err := record.ParseControl(rec.Key, rec.Value)
				if err != nil {
					return fmt.Errorf("position %d: control record at offset %d: %w", pos, d.rr.Offset(), err)
				}
				l.Control = &controlInfo{Type: controlName(t), CoordinatorEpoch: epoch}
			} else {
				l.Key, l.KeyBase64 = jsonBytes(rec.Key)
				l.Value, l.ValueBase64 = jsonBytes(rec.Value)
				l.Headers = make([]jsonHeader, len(rec.Headers))
				for i, h := range rec.Headers {
					l.Headers[i] = jsonHeader{Key: string(h.Key)}
					l.Headers[i].Value, l.Headers[i].ValueBase64 = jsonBytes(h.Value)
				}
			}
		}
		if d.json {
			d.emit(l)
			continue
		}
		fmt.Fprintf(d.w, "| offset: %d %s: %d keySize: %d valueSize: %d sequence: %d headerKeys: [%s]",
			l.Offset, l.TimestampType, l.Timestamp, l.KeySize, l.ValueSize, l.Sequence, printable([]byte(strings.Join(l.HeaderKeys, ","))))
		switch {
		case l.Control != nil && (l.Control.Type == "ABORT" || l.Control.Type == "COMMIT"):
			fmt.Fprintf(d.w, " endTxnMarker: %s coordinatorEpoch: %d", l.Control.Type, l.Control.CoordinatorEpoch)
		case l.Control != nil:
			fmt.Fprintf(d.w, " controlType: %s", l.Control.Type)
		case d.opts.PrintDataLog:
			if rec.Key != nil {
				fmt.Fprintf(d.w, " key: %s", printable(rec.Key))
			}
			if rec.Value != nil {
				fmt.Fprintf(d.w, " payload: %s", printable(rec.Value))
			}
			if len(rec.Headers) > 0 {
				hs := make([]string, len(rec.Headers))
				for i, h := range rec.Headers {
					hs[i] = printable(h.Key) + "=" + nullable(h.Value)
				}
				fmt.Fprintf(d.w, " headers: [%s]", strings.Join(hs, ","))
			}
		}
		d.w.WriteByte('\n')
	}
	if err := d.rr.Err(); err != nil {
		return fmt.Errorf("position %d: batch at offset %d: %w", pos, b.BaseOffset(), err)
	}
	return nil
}

// size is a key's or value's length, -1 for null.
func size(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

// sequence is a record's sequence number: the batch's base sequence plus
// its offset delta, wrapping at MaxInt32 as Kafka's do; -1 without one.
func sequence(b record.Batch, delta int32) int32 {
	s := b.BaseSequence()
	if s == record.NoSequence {
		return record.NoSequence
	}
	return int32((int64(s) + int64(delta)) % (1 << 31))
}

func controlName(t record.ControlType) string {
	switch t {
	case record.ControlAbort, record.ControlCommit:
		return strings.ToUpper(t.String())
	}
	return fmt.Sprint(int16(t))
}
