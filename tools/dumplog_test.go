package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dumpEnv is an Env for dump-log, which needs no broker.
func dumpEnv(f Format) (*Env, *bytes.Buffer) {
	out := &bytes.Buffer{}
	return &Env{Out: out, Format: f}, out
}

func TestDumpLogHandBuilt(t *testing.T) {
	dir := t.TempDir()
	f := writeSpecFiles(t, dir)
	files := []string{f.log, f.index, f.timeIndex, f.txnIndex, f.snap}
	paths := strings.NewReplacer(dir+string(filepath.Separator), "")

	for _, c := range []struct {
		golden string
		format Format
		opts   DumpOptions
	}{
		{"dump_spec_shallow.txt", Text, DumpOptions{}},
		{"dump_spec_deep.txt", Text, DumpOptions{DeepIteration: true}},
		{"dump_spec_data.txt", Text, DumpOptions{PrintDataLog: true}},
		{"dump_spec_data.json", JSON, DumpOptions{PrintDataLog: true}},
		{"dump_spec_sanity.txt", Text, DumpOptions{IndexSanityCheck: true}},
	} {
		env, out := dumpEnv(c.format)
		if err := DumpLog(env, files, c.opts); err != nil {
			t.Fatalf("%s: %v", c.golden, err)
		}
		golden(t, c.golden, paths.Replace(out.String()))
	}

	// A folder dumps its files in name order: the same as listing them.
	env, byDir := dumpEnv(Text)
	must(t, DumpLog(env, []string{dir}, DumpOptions{}))
	env, byFile := dumpEnv(Text)
	must(t, DumpLog(env, []string{f.index, f.log, f.timeIndex, f.txnIndex, f.snap}, DumpOptions{}))
	if byDir.String() != byFile.String() {
		t.Fatalf("dump of the folder:\n%s\ndump of its files:\n%s", byDir, byFile)
	}

	// A file the log is deleting is read as what it was.
	deleted := f.log + ".deleted"
	must(t, os.WriteFile(deleted, f.logBytes, 0o644))
	env, out := dumpEnv(Text)
	must(t, DumpLog(env, []string{deleted}, DumpOptions{}))
	if !strings.Contains(out.String(), "Log starting offset: 100\nbaseOffset: 100 lastOffset: 102 count: 3") {
		t.Fatalf("dump of a .log.deleted:\n%s", out)
	}
}

func TestDumpLogSanityCheckFindsBadEntries(t *testing.T) {
	dir := t.TempDir()
	f := writeSpecFiles(t, dir)
	pos := positions(specSegment(t))
	must(t, os.WriteFile(f.index, offsetIndex(
		[2]uint32{3, pos[1]},     // the batch there ends at 104
		[2]uint32{7, pos[3] + 1}, // no batch starts there
		[2]uint32{6, pos[4]},     // offset below the previous entry's
		[2]uint32{20, 1 << 20},   // past the end of the segment
	), 0o644))
	must(t, os.WriteFile(f.timeIndex, timeIndex(
		specTime{T0 + 1000, 4},
		specTime{T0 + 999, 6},  // not increasing, and batch 105-106 has T0+2000
		specTime{T0 + 5000, 9}, // offset 109 is in a batch with T0+2300
		specTime{T0 + 6000, 50},
	), 0o644))
	must(t, os.WriteFile(f.txnIndex, txnIndex(
		[4]int64{43, 108, 108, 108}, // 108 is data, not a marker
		[4]int64{43, 105, 109, 105}, // 109 is a commit
		[4]int64{7, 105, 107, 105},  // the abort at 107 is producer 42's
	), 0o644))

	env, out := dumpEnv(Text)
	err := DumpLog(env, []string{f.index, f.timeIndex, f.txnIndex}, DumpOptions{IndexSanityCheck: true})
	base := func(p string) string { return filepath.Base(p) }
	want := []string{
		base(f.index) + ": entry 0 (offset 103, position " + fmt.Sprint(pos[1]) + "): the batch there holds offsets 103-104, its last offset is not the entry's",
		base(f.index) + ": entry 1 (offset 107, position " + fmt.Sprint(pos[3]+1) + "): no batch starts at that position",
		base(f.index) + ": entry 2 (offset 106, position " + fmt.Sprint(pos[4]) + "): offset not above the previous entry's 107",
		base(f.index) + ": entry 2 (offset 106, position " + fmt.Sprint(pos[4]) + "): the batch there holds offsets 108-108, its last offset is not the entry's",
		base(f.index) + ": entry 3 (offset 120, position 1048576): position past the end of the segment (" + fmt.Sprint(len(f.logBytes)) + " bytes)",
		base(f.timeIndex) + fmt.Sprintf(": entry 1 (timestamp %d, offset 106): timestamp not above the previous entry's %d", T0+999, T0+1000),
		base(f.timeIndex) + fmt.Sprintf(": entry 1 (timestamp %d, offset 106): the batch holding it (offsets 105-106) has max timestamp %d", T0+999, T0+2000),
		base(f.timeIndex) + fmt.Sprintf(": entry 2 (timestamp %d, offset 109): the batch holding it (offsets 109-109) has max timestamp %d", T0+5000, T0+2300),
		base(f.timeIndex) + fmt.Sprintf(": entry 3 (timestamp %d, offset 150): no batch of the segment holds that offset", T0+6000),
		base(f.txnIndex) + ": entry 0 (producer 43, offsets 108-108): the batch holding the last offset is not an abort marker",
		base(f.txnIndex) + ": entry 1 (producer 43, offsets 105-109): the batch holding the last offset is not an abort marker",
		base(f.txnIndex) + ": entry 2 (producer 7, offsets 105-107): last offset not above the previous entry's 109",
		base(f.txnIndex) + ": entry 2 (producer 7, offsets 105-107): the abort marker there is producer 42's",
	}
	var got []string
	for _, l := range ErrorLines(err) {
		got = append(got, strings.TrimPrefix(l, dir+string(filepath.Separator)))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sanity check errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, p := range []string{f.index, f.timeIndex, f.txnIndex} {
		if !strings.Contains(out.String(), p+" failed sanity check") {
			t.Errorf("no verdict for %s in:\n%s", p, out)
		}
	}

	// In JSON the verdict is a line with every problem.
	env, out = dumpEnv(JSON)
	DumpLog(env, []string{f.index}, DumpOptions{IndexSanityCheck: true})
	var verdict sanityLine
	must(t, json.Unmarshal(out.Bytes(), &verdict))
	if verdict.Type != "sanity_check" || verdict.Passed || verdict.Entries != 4 || len(verdict.Problems) != 5 || verdict.Log != f.log {
		t.Fatalf("JSON verdict %+v", verdict)
	}
}

// TestDumpLogBrokerSegments dumps what kzero wrote: rolled segments with
// their trimmed indexes and snapshots, and the active segment's preallocated
// indexes. Every index must pass the sanity check, and the records must be
// the ones produced.
func TestDumpLogBrokerSegments(t *testing.T) {
	ctx := testCtx(t)
	env, _ := testEnv(t, Text)
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{"dumped"}, Partitions: 1, ReplicationFactor: 1}))
	// One record per produce call, so one record per batch and the
	// same batch sizes every run: values of words picked by a seeded
	// generator, which every codec shrinks to about a third, roll the
	// 16 KiB segments the test broker is configured with.
	rnd := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar papa")
	var want []string
	for i := range 30 {
		var v strings.Builder
		fmt.Fprintf(&v, "record-%02d", i)
		for range 400 {
			v.WriteString(" " + words[rnd.IntN(len(words))])
		}
		want = append(want, v.String())
		codec := []string{"none", "gzip", "snappy", "lz4", "zstd"}[i%5]
		must(t, Produce(ctx, env, ProduceOptions{Topic: "dumped", Partition: 0, Compression: codec, Idempotent: true,
			KeySeparator: "=", Input: strings.NewReader(fmt.Sprintf("key-%02d=%s\n", i, v.String()))}))
	}
	dir := filepath.Join(broker.data, "dumped-0")

	denv, out := dumpEnv(Text)
	must(t, DumpLog(denv, []string{dir}, DumpOptions{IndexSanityCheck: true}))
	text := strings.ReplaceAll(out.String(), broker.data, "<data>")
	if n := strings.Count(text, "passed sanity check"); n < 4 {
		t.Fatalf("%d indexes checked, want the offset and time index of at least two segments:\n%s", n, text)
	}
	// Batches in the same millisecond share a time index entry: how many
	// entries the time index has varies. Each produce call was a new
	// idempotent producer, with an id from the broker.
	text = regexp.MustCompile(`(timeindex passed sanity check against \S+) \(\d+ entries\)`).ReplaceAllString(text, "$1 (<n> entries)")
	text = regexp.MustCompile(`(producerId: )\d+`).ReplaceAllString(text, "${1}<pid>")
	text = regexp.MustCompile(`( timestamp: )\d{13}`).ReplaceAllString(text, "${1}<ts>")
	golden(t, "dump_broker_sanity.txt", normalize(text))

	denv, out = dumpEnv(JSON)
	must(t, DumpLog(denv, []string{dir}, DumpOptions{PrintDataLog: true}))
	var got []string
	var next int64
	kinds := map[string]int{}
	for _, l := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
		var line struct {
			item
			recordLine
			Count int32 `json:"count"`
		}
		must(t, json.Unmarshal([]byte(l), &line))
		kinds[line.item.Type]++
		if line.item.Type != "record" {
			continue
		}
		if line.Offset != next || *line.Key != fmt.Sprintf("key-%02d", next) {
			t.Fatalf("record at offset %d (key %v), want offset %d", line.Offset, *line.Key, next)
		}
		next++
		got = append(got, *line.Value)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("dumped values differ from those produced:\n%q", got)
	}
	if kinds["batch"] != 30 || kinds["producer"] == 0 || kinds["index_entry"] == 0 || kinds["time_index_entry"] == 0 {
		t.Fatalf("JSON lines by type: %v", kinds)
	}
}

func TestDumpLogDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	batches := specSegment(t)
	b0, b1 := batches[0], batches[1]
	name := func(suffix string) string { return filepath.Join(dir, "00000000000000000100"+suffix) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	patch := func(b []byte, at int, v ...byte) []byte {
		b = bytes.Clone(b)
		copy(b[at:], v)
		return b
	}
	// A batch whose CRC is right but whose records are not.
	badRecords := specBatch{BaseOffset: 100, LastOffsetDelta: 0, ProducerID: -1, BaseSequence: -1, Count: 1, Records: []byte{0x7f}}.encode()
	badGzip := specBatch{BaseOffset: 100, Attributes: specGzip, ProducerID: -1, BaseSequence: -1, Count: 1, Records: []byte("not gzip")}.encode()
	// A message set v1 entry: offset, size, crc, magic 1, ...
	v1 := cat(be.AppendUint64(nil, 0), be.AppendUint32(nil, 26), make([]byte, 4), []byte{1}, make([]byte, 21))
	goodSnap := snapshot(specProducer{ProducerID: 1, LastOffset: 5, TxnFirstOffset: -1})

	l0 := len(b0)
	for _, c := range []struct {
		name, suffix string
		data         []byte
		opts         DumpOptions
		want         string // in the one error line, after the path
	}{
		{"cut mid-batch", ".log", cat(b0, b1[:30]), DumpOptions{}, fmt.Sprintf("position %d: batch of %d bytes runs past the end of the file, 30 bytes left: truncated", l0, len(b1))},
		{"cut in the prefix", ".log", cat(b0, b1[:5]), DumpOptions{}, fmt.Sprintf("position %d: 5 bytes left, too few for a batch's offset and length: truncated", l0)},
		{"negative length", ".log", cat(b0, patch(b1, 8, 0xff, 0xff, 0xff, 0xff)), DumpOptions{}, fmt.Sprintf("position %d: batch length -1 is below the v2 header's 49: corrupt", l0)},
		{"huge length", ".log", patch(b0, 8, 0x7f, 0xff, 0xff, 0xff), DumpOptions{}, "position 0: batch of 2147483659 bytes runs past the end of the file"},
		{"magic 1", ".log", v1, DumpOptions{}, "position 0: message format v1 (before Kafka 0.11) is not supported"},
		{"magic 7", ".log", cat(b0, patch(b1, 16, 7)), DumpOptions{}, fmt.Sprintf("position %d: magic 7, want 2: corrupt", l0)},
		{"bad crc", ".log", cat(b0, patch(b1, len(b1)-1, b1[len(b1)-1]^1), b0), DumpOptions{PrintDataLog: true}, fmt.Sprintf("position %d: 1 batches fail their CRC check, the first here", l0)},
		{"bad record", ".log", badRecords, DumpOptions{DeepIteration: true}, "position 0: batch at offset 100: record 1 from the end: malformed record length"},
		{"bad gzip", ".log", badGzip, DumpOptions{DeepIteration: true}, "position 0: batch at offset 100: decompressing gzip records"},
		{"index cut", ".index", make([]byte, 7), DumpOptions{}, "position 0: 7 bytes after the last whole 8-byte entry: truncated or corrupt"},
		{"timeindex cut", ".timeindex", make([]byte, 25), DumpOptions{}, "position 24: 1 bytes after the last whole 12-byte entry"},
		{"txnindex cut", ".txnindex", make([]byte, 35), DumpOptions{}, "position 34: 1 bytes after the last whole 34-byte entry"},
		{"txnindex version", ".txnindex", patch(txnIndex([4]int64{1, 2, 3, 4}), 0, 0, 1), DumpOptions{}, "entry at 0 has version 1: corrupt transaction index"},
		{"snapshot short", ".snapshot", goodSnap[:5], DumpOptions{}, "position 5: 5 bytes is shorter than the header"},
		{"snapshot version", ".snapshot", patch(goodSnap, 0, 0, 2), DumpOptions{}, "position 0: unknown version 2"},
		{"snapshot crc", ".snapshot", patch(goodSnap, 20, 9), DumpOptions{}, "position 2: crc "},
		{"snapshot cut", ".snapshot", goodSnap[:len(goodSnap)-1], DumpOptions{}, "position 2: crc "},
		{"sanity without log", ".index", offsetIndex([2]uint32{1, 0}), DumpOptions{IndexSanityCheck: true}, "sanity check needs the segment: open " + name(".log") + ": no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.Remove(name(".log"))
			path := name(c.suffix)
			must(t, os.WriteFile(path, c.data, 0o644))
			defer os.Remove(path)
			for _, f := range []Format{Text, JSON} {
				env, _ := dumpEnv(f)
				err := DumpLog(env, []string{path}, c.opts)
				lines := ErrorLines(err)
				if len(lines) != 1 || !strings.HasPrefix(lines[0], path+": "+c.want) {
					t.Fatalf("%s: error lines %q, want one: %s: %s...", f, lines, path, c.want)
				}
			}
		})
	}

	// A snapshot whose entry count does not fit its size, with a right CRC.
	body := be.AppendUint32(nil, 3) // three entries claimed, none there
	snap := cat(be.AppendUint16(nil, 1), be.AppendUint32(nil, crc32c(body)), body)
	path := name(".snapshot")
	must(t, os.WriteFile(path, snap, 0o644))
	env, _ := dumpEnv(Text)
	if err := DumpLog(env, []string{path}, DumpOptions{}); err == nil || !strings.Contains(err.Error(), "position 6: 3 entries do not fill 10 bytes") {
		t.Fatalf("snapshot count: %v", err)
	}

	// The bad CRC batch is still shown, flagged, and the dump goes on.
	path = name(".log")
	must(t, os.WriteFile(path, cat(b0, patch(b1, len(b1)-1, b1[len(b1)-1]^1), b0), 0o644))
	env, out := dumpEnv(Text)
	DumpLog(env, []string{path}, DumpOptions{PrintDataLog: true})
	if n := strings.Count(out.String(), "isvalid: true"); n != 2 || !strings.Contains(out.String(), "isvalid: false") {
		t.Fatalf("bad CRC dump:\n%s", out)
	}

	// Files dump-log does not read, and files that are not there, fail
	// one by one; the files after them are still dumped.
	other := filepath.Join(dir, "leader-epoch-checkpoint")
	must(t, os.WriteFile(other, []byte("0\n1\n0 0\n"), 0o644))
	must(t, os.WriteFile(path, b0, 0o644))
	env, out = dumpEnv(Text)
	err := DumpLog(env, []string{other, filepath.Join(dir, "nope.log"), path}, DumpOptions{})
	lines := ErrorLines(err)
	if len(lines) != 2 || !strings.HasPrefix(lines[0], other+": not a file dump-log reads") ||
		!regexp.MustCompile(`nope\.log: no such file or directory$`).MatchString(lines[1]) {
		t.Fatalf("errors %q", lines)
	}
	if !strings.Contains(out.String(), "baseOffset: 100 lastOffset: 102") {
		t.Fatalf("the good file after the bad ones was not dumped:\n%s", out)
	}
	if errors.Is(err, ErrUsage) {
		t.Fatal("damaged files are not a usage error")
	}
}

// TestDumpLogPreallocatedIndex: the active segment's indexes are
// preallocated; their zero tail is free space, not entries.
func TestDumpLogPreallocatedIndex(t *testing.T) {
	for _, c := range []struct {
		data []byte
		want int
	}{
		{make([]byte, 8*1024), 0},
		{make([]byte, 8), 1}, // a trimmed index of one entry (0, 0)
		{append(offsetIndex([2]uint32{4, 100}, [2]uint32{9, 200}), make([]byte, 800)...), 2},
		{nil, 0},
	} {
		entries, err := decodeOffsetIndex(c.data, 0)
		if err != nil || len(entries) != c.want {
			t.Errorf("%d bytes: %d entries (%v), want %d", len(c.data), len(entries), err, c.want)
		}
	}
	entries, err := decodeTimeIndex(append(timeIndex(specTime{T0, 3}), make([]byte, 12*50)...), 1000)
	if err != nil || len(entries) != 1 || entries[0] != (timeEntry{T0, 1003}) {
		t.Fatalf("time index entries %v, %v", entries, err)
	}
}
