package msgset

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/valyala/bytebufferpool"

	"kzero/record"
)

// testMsg is a message as a test states it.
type testMsg struct {
	ts         int64
	key, value []byte
}

var testMsgs = []testMsg{
	{1700000000001, []byte("k1"), []byte("v1")},
	{1700000000003, nil, []byte("value without key")},
	{1700000000002, []byte("k3"), nil},
	{1700000000004, []byte{}, []byte{}},
}

// kmsgEntry encodes one entry with franz-go's MessageV0/V1, an encoder
// independent of this package's, filling in the size and CRC.
func kmsgEntry(dst []byte, magic, attrs int8, offset, ts int64, key, value []byte) []byte {
	start := len(dst)
	if magic == 0 {
		m := kmsg.MessageV0{Offset: offset, Magic: 0, Attributes: attrs, Key: key, Value: value}
		dst = m.AppendTo(dst)
	} else {
		m := kmsg.MessageV1{Offset: offset, Magic: 1, Attributes: attrs, Timestamp: ts, Key: key, Value: value}
		dst = m.AppendTo(dst)
	}
	e := dst[start:]
	binary.BigEndian.PutUint32(e[8:], uint32(len(e)-12))
	binary.BigEndian.PutUint32(e[12:], crc32.ChecksumIEEE(e[16:]))
	return dst
}

// kmsgSet encodes msgs as a message set of magic, wrapped with codec
// unless it is none.
func kmsgSet(t testing.TB, magic int8, codec record.Codec, msgs []testMsg) []byte {
	var inner []byte
	for i, m := range msgs {
		inner = kmsgEntry(inner, magic, 0, int64(i), m.ts, m.key, m.value)
	}
	if codec == record.CodecNone {
		return inner
	}
	value, err := record.Compress(codec, nil, inner)
	if err != nil {
		t.Fatal(err)
	}
	return kmsgEntry(nil, magic, int8(codec), int64(len(msgs)-1), msgs[len(msgs)-1].ts, nil, value)
}

// batchRecords reads a v2 batch's records back.
func batchRecords(t testing.TB, b []byte) (record.Batch, []testMsg) {
	t.Helper()
	batch, rest, err := record.ParseBatch(b)
	if err != nil || len(rest) != 0 {
		t.Fatalf("parse: %v, %d bytes left", err, len(rest))
	}
	if err := batch.Validate(); err != nil {
		t.Fatalf("validate: %v", err)
	}
	var r record.Iter
	if err := r.Reset(batch, 0); err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	var out []testMsg
	for r.Next() {
		rec := r.Record()
		out = append(out, testMsg{r.Timestamp(), bytes.Clone(rec.Key), bytes.Clone(rec.Value)})
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	return batch, out
}

func sameMsgs(t testing.TB, got, want []testMsg, magic int8) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d messages, want %d", len(got), len(want))
	}
	for i := range got {
		ts := want[i].ts
		if magic == 0 {
			ts = -1
		}
		g, w := got[i], want[i]
		if g.ts != ts || !bytes.Equal(g.key, w.key) || !bytes.Equal(g.value, w.value) || (g.key == nil) != (w.key == nil) || (g.value == nil) != (w.value == nil) {
			t.Fatalf("message %d: got %+v, want %+v (timestamp %d)", i, g, w, ts)
		}
	}
}

var legacyCodecs = []record.Codec{record.CodecNone, record.CodecGzip, record.CodecSnappy, record.CodecLZ4}

func TestUpconvert(t *testing.T) {
	var c Converter
	for _, magic := range []int8{0, 1} {
		for _, codec := range legacyCodecs {
			t.Run(fmt.Sprintf("v%d/%s", magic, codec), func(t *testing.T) {
				set := kmsgSet(t, magic, codec, testMsgs)
				out, err := c.Upconvert([]byte("prefix"), set, 0)
				if err != nil {
					t.Fatal(err)
				}
				if string(out[:6]) != "prefix" {
					t.Fatal("dst prefix lost")
				}
				b, got := batchRecords(t, out[6:])
				if b.Compression() != codec || b.ProducerID() != record.NoProducerID || b.NumRecords() != int32(len(testMsgs)) {
					t.Fatalf("batch header: codec %s producer %d records %d", b.Compression(), b.ProducerID(), b.NumRecords())
				}
				sameMsgs(t, got, testMsgs, magic)
			})
		}
	}
}

// A message set cut inside its last entry is taken without it, as Kafka
// takes it.
func TestUpconvertIgnoresTrailingPartial(t *testing.T) {
	set := kmsgSet(t, 1, record.CodecNone, testMsgs)
	var c Converter
	out, err := c.Upconvert(nil, set[:len(set)-3], 0)
	if err != nil {
		t.Fatal(err)
	}
	_, got := batchRecords(t, out)
	sameMsgs(t, got, testMsgs[:3], 1)
}

func TestUpconvertRefuses(t *testing.T) {
	good := kmsgSet(t, 1, record.CodecNone, testMsgs[:1])
	flipped := bytes.Clone(good)
	flipped[len(flipped)-1] ^= 1
	gz := kmsgSet(t, 1, record.CodecGzip, testMsgs)
	zstdValue, _ := record.Compress(record.CodecZstd, nil, kmsgSet(t, 1, record.CodecNone, testMsgs))
	innerCompressed, _ := record.Compress(record.CodecGzip, nil, kmsgEntry(nil, 1, 1, 0, 5, nil, []byte("x")))
	innerV0, _ := record.Compress(record.CodecGzip, nil, kmsgSet(t, 0, record.CodecNone, testMsgs))
	for _, tc := range []struct {
		name string
		set  []byte
		want error
	}{
		{"crc", flipped, kerr.CorruptMessage},
		{"empty", nil, kerr.CorruptMessage},
		{"short size", binary.BigEndian.AppendUint32(make([]byte, 8, 30), 3), kerr.CorruptMessage},
		{"magic 2", kmsgEntry(nil, 1, 0, 0, 0, nil, nil)[:16:16], kerr.CorruptMessage},
		{"mixed magic", append(kmsgSet(t, 0, record.CodecNone, testMsgs[:1]), good...), kerr.InvalidRecord},
		{"two wrappers", append(bytes.Clone(gz), gz...), kerr.InvalidRecord},
		{"wrapper after plain", append(bytes.Clone(good), gz...), kerr.InvalidRecord},
		{"zstd", kmsgEntry(nil, 1, 4, 3, 0, nil, zstdValue), kerr.InvalidRecord},
		{"null wrapper", kmsgEntry(nil, 1, 1, 0, 0, nil, nil), kerr.InvalidRecord},
		{"inner compressed", kmsgEntry(nil, 1, 1, 0, 0, nil, innerCompressed), kerr.InvalidRecord},
		{"inner magic", kmsgEntry(nil, 1, 1, 3, 0, nil, innerV0), kerr.InvalidRecord},
		{"wrapper offset below inner", binary.BigEndian.AppendUint64(nil, 1), kerr.InvalidRecord},
		{"log append time without timestamp", kmsgEntry(nil, 1, attrLogAppendTime, 0, -1, nil, []byte("x")), kerr.InvalidTimestamp},
		{"garbage wrapper", kmsgEntry(nil, 1, 2, 0, 0, nil, []byte("not snappy")), kerr.CorruptMessage},
	} {
		if tc.name == "wrapper offset below inner" {
			tc.set = append(tc.set, gz[8:]...) // the offset is outside the CRC
		}
		var c Converter
		_, err := c.Upconvert(nil, tc.set, 0)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	// A magic 1 wrapper at offset 0 (librdkafka) is fine.
	var c Converter
	w := kmsgSet(t, 1, record.CodecGzip, testMsgs)
	binary.BigEndian.PutUint64(w, 0)
	if _, err := c.Upconvert(nil, w, 0); err != nil {
		t.Fatalf("wrapper offset 0: %v", err)
	}
}

// A magic 1 wrapper with LogAppendTime lends its timestamp to its inner
// messages.
func TestUpconvertWrapperLogAppendTime(t *testing.T) {
	set := kmsgSet(t, 1, record.CodecGzip, testMsgs)
	set[17] |= attrLogAppendTime
	binary.BigEndian.PutUint64(set[18:], 42)
	binary.BigEndian.PutUint32(set[12:], crc32.ChecksumIEEE(set[16:]))
	var c Converter
	out, err := c.Upconvert(nil, set, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, got := batchRecords(t, out)
	for _, m := range got {
		if m.ts != 42 {
			t.Fatalf("timestamp %d, want the wrapper's 42", m.ts)
		}
	}
}

// v2Batch builds a batch at base offset 100 holding msgs.
func v2Batch(t testing.TB, codec record.Codec, lat bool, msgs []testMsg) record.Batch {
	var b record.Builder
	b.Reset(record.BatchHeader{BaseOffset: 100, Codec: codec, LogAppendTime: lat, BaseTimestamp: msgs[0].ts, LastOffsetDelta: -1,
		ProducerID: record.NoProducerID, ProducerEpoch: record.NoProducerEpoch, BaseSequence: record.NoSequence})
	for i, m := range msgs {
		b.Add(&record.Record{OffsetDelta: int32(i), TimestampDelta: m.ts - msgs[0].ts, Key: m.key, Value: m.value,
			Headers: []record.Header{{Key: []byte("h"), Value: []byte("dropped")}}})
	}
	out, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	return record.Batch(out)
}

// readSet decodes a message set with kmsg, unwrapping compressed messages
// (fixing magic 0's LZ4 checksum): the offsets and messages a client sees.
func readSet(t testing.TB, magic int8, set []byte) (offsets []int64, msgs []testMsg, wrappers int) {
	t.Helper()
	for len(set) > 0 {
		size := int(binary.BigEndian.Uint32(set[8:]))
		e := set[:12+size]
		set = set[12+size:]
		if crc32.ChecksumIEEE(e[16:]) != binary.BigEndian.Uint32(e[12:]) {
			t.Fatal("bad crc")
		}
		var (
			off        int64
			attrs      int8
			ts         int64 = -1
			key, value []byte
		)
		if magic == 0 {
			var m kmsg.MessageV0
			if err := m.ReadFrom(e); err != nil || m.Magic != 0 {
				t.Fatalf("read v0: %v", err)
			}
			off, attrs, key, value = m.Offset, m.Attributes, m.Key, m.Value
		} else {
			var m kmsg.MessageV1
			if err := m.ReadFrom(e); err != nil || m.Magic != 1 {
				t.Fatalf("read v1: %v", err)
			}
			off, attrs, ts, key, value = m.Offset, m.Attributes, m.Timestamp, m.Key, m.Value
		}
		if codec := record.Codec(attrs & 7); codec != record.CodecNone {
			wrappers++
			if magic == 0 && codec == record.CodecLZ4 {
				value = bytes.Clone(value)
				if _, ok := lz4FixChecksum(value); !ok {
					t.Fatal("no lz4 frame")
				}
			}
			buf := new(bytebufferpool.ByteBuffer)
			if err := record.Decompress(codec, buf, value, 0); err != nil {
				t.Fatal(err)
			}
			innerOffs, inner, _ := readSet(t, magic, buf.B)
			for i := range innerOffs {
				if magic == 1 {
					innerOffs[i] += off - innerOffs[len(innerOffs)-1]
				}
			}
			offsets = append(offsets, innerOffs...)
			msgs = append(msgs, inner...)
			continue
		}
		offsets = append(offsets, off)
		msgs = append(msgs, testMsg{ts, key, value})
	}
	return offsets, msgs, wrappers
}

func TestDownconvert(t *testing.T) {
	var c Converter
	for _, magic := range []int8{0, 1} {
		for _, codec := range legacyCodecs {
			t.Run(fmt.Sprintf("v%d/%s", magic, codec), func(t *testing.T) {
				out, err := c.Downconvert(nil, v2Batch(t, codec, false, testMsgs), magic, 101)
				if err != nil {
					t.Fatal(err)
				}
				offs, got, wrappers := readSet(t, magic, out)
				want, first := testMsgs, int64(100)
				if codec == record.CodecNone {
					want, first = testMsgs[1:], 101 // below the fetch offset
				} else if wrappers != 1 {
					t.Fatalf("%d wrappers", wrappers)
				}
				sameMsgs(t, got, want, magic)
				for i, o := range offs {
					if o != first+int64(i) {
						t.Fatalf("offsets %v", offs)
					}
				}
				// And back up: the same records.
				up, err := c.Upconvert(nil, out, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, back := batchRecords(t, up)
				sameMsgs(t, back, want, magic)
			})
		}
	}
}

func TestDownconvertLogAppendTime(t *testing.T) {
	var c Converter
	for _, codec := range []record.Codec{record.CodecNone, record.CodecGzip} {
		b := v2Batch(t, codec, true, testMsgs)
		b.SetLogAppendTime(77)
		out, err := c.Downconvert(nil, b, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, got, _ := readSet(t, 1, out)
		for _, m := range got {
			if m.ts != 77 {
				t.Fatalf("%s: timestamp %d, want the append time", codec, m.ts)
			}
		}
		if out[17]&attrLogAppendTime == 0 {
			t.Fatalf("%s: timestamp type not LogAppendTime", codec)
		}
	}
}

func TestDownconvertDropsControlAndRefusesZstd(t *testing.T) {
	var c Converter
	var b record.Builder
	b.Reset(record.BatchHeader{BaseOffset: 5, Control: true, Transactional: true, LastOffsetDelta: -1, ProducerID: 1, BaseSequence: -1})
	b.Add(&record.Record{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}})
	ctrl, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := c.Downconvert([]byte("x"), ctrl, 1, 0); err != nil || string(out) != "x" {
		t.Fatalf("control batch: %q %v", out, err)
	}
	if _, err := c.Downconvert(nil, v2Batch(t, record.CodecZstd, false, testMsgs), 1, 0); !errors.Is(err, kerr.UnsupportedCompressionType) {
		t.Fatalf("zstd: %v", err)
	}
}

// record's header checksum agrees with the LZ4 encoder's, and a magic 0
// frame is written with Kafka's checksum and read either way.
func TestLZ4Checksums(t *testing.T) {
	frame, err := record.Compress(record.CodecLZ4, nil, []byte("some data to compress, some data to compress"))
	if err != nil {
		t.Fatal(err)
	}
	hc := record.LZ4HeaderChecksumAt(frame)
	if hc < 0 || frame[hc] != record.LZ4HeaderChecksum(frame[4:hc]) {
		t.Fatalf("header checksum %x, LZ4HeaderChecksum gives %x", frame[hc], record.LZ4HeaderChecksum(frame[4:hc]))
	}

	var c Converter
	down, err := c.Downconvert(nil, v2Batch(t, record.CodecLZ4, false, testMsgs), 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	value := down[12+14:]
	hc = record.LZ4HeaderChecksumAt(value)
	if value[hc] != record.LZ4HeaderChecksum(value[:hc]) {
		t.Fatal("magic 0 frame without Kafka's header checksum")
	}
	before := bytes.Clone(down)
	up, err := c.Upconvert(nil, down, 0)
	if err != nil {
		t.Fatalf("magic 0 lz4 with Kafka's checksum: %v", err)
	}
	if !bytes.Equal(before, down) {
		t.Fatal("Upconvert left its input changed")
	}
	_, got := batchRecords(t, up)
	sameMsgs(t, got, testMsgs, 0)
	// Magic 1 must have the right checksum.
	set := kmsgSet(t, 1, record.CodecLZ4, testMsgs)
	lz4BreakChecksum(set[12+22:])
	binary.BigEndian.PutUint32(set[12:], crc32.ChecksumIEEE(set[16:]))
	if _, err := c.Upconvert(nil, set, 0); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("magic 1 with a wrong lz4 checksum: %v", err)
	}
}
