package record

import (
	"bytes"
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestAppendControlBatch(t *testing.T) {
	for _, typ := range []ControlType{ControlAbort, ControlCommit} {
		out := AppendControlBatch([]byte("xy"), 4242, 7, 19, typ, 1_700_000_000_123)
		if string(out[:2]) != "xy" {
			t.Fatal("AppendControlBatch overwrote dst")
		}
		b, rest, err := ParseBatch(out[2:])
		if err != nil || len(rest) != 0 {
			t.Fatalf("ParseBatch: %v, %d left", err, len(rest))
		}
		if err := b.Validate(); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(b.ValidateProduce(), kerr.InvalidRecord) {
			t.Fatal("a client may not produce a control batch")
		}
		if !b.IsControl() || !b.IsTransactional() || b.Compression() != CodecNone || b.LogAppendTime() ||
			b.ProducerID() != 4242 || b.ProducerEpoch() != 7 || b.BaseSequence() != NoSequence ||
			b.NumRecords() != 1 || b.LastOffsetDelta() != 0 || b.BaseOffset() != 0 || b.PartitionLeaderEpoch() != -1 ||
			b.BaseTimestamp() != 1_700_000_000_123 || b.MaxTimestamp() != 1_700_000_000_123 {
			t.Fatalf("control batch header %+v", b.Header())
		}
		got, err := b.ControlType()
		if err != nil || got != typ {
			t.Fatalf("ControlType = %v, %v; want %v", got, err, typ)
		}

		// franz-go decodes the record as a control record key and an
		// end transaction marker.
		_, recs := kmsgDecode(t, b)
		if len(recs) != 1 || recs[0].OffsetDelta != 0 || recs[0].TimestampDelta64 != 0 || len(recs[0].Headers) != 0 {
			t.Fatalf("records %+v", recs)
		}
		var key kmsg.ControlRecordKey
		var marker kmsg.EndTxnMarker
		if err := key.ReadFrom(recs[0].Key); err != nil || key.Version != 0 || int16(key.Type) != int16(typ) {
			t.Fatalf("key %+v, %v", key, err)
		}
		if err := marker.ReadFrom(recs[0].Value); err != nil || marker.Version != 0 || marker.CoordinatorEpoch != 19 {
			t.Fatalf("marker %+v, %v", marker, err)
		}
		if len(recs[0].Key) != 4 || len(recs[0].Value) != 6 {
			t.Fatalf("key %d bytes, value %d: want 4 and 6", len(recs[0].Key), len(recs[0].Value))
		}
	}
}

func TestParseControl(t *testing.T) {
	key := func(version int16, typ kmsg.ControlRecordKeyType) []byte {
		k := kmsg.ControlRecordKey{Version: version, Type: typ}
		return k.AppendTo(nil)
	}
	value := func(version int16, epoch int32) []byte {
		m := kmsg.EndTxnMarker{Version: version, CoordinatorEpoch: epoch}
		return m.AppendTo(nil)
	}
	good := []struct {
		name       string
		key, value []byte
		typ        ControlType
		epoch      int32
	}{
		{"abort", key(0, kmsg.ControlRecordKeyTypeAbort), value(0, 5), ControlAbort, 5},
		{"commit", key(0, kmsg.ControlRecordKeyTypeCommit), value(0, -1), ControlCommit, -1},
		{"newer versions", append(key(3, kmsg.ControlRecordKeyTypeCommit), 9), append(value(2, 8), 1, 2), ControlCommit, 8},
		{"kraft type", key(0, kmsg.ControlRecordKeyTypeSnapshotHeader), []byte("whatever"), ControlType(3), 0},
		{"unknown type", key(0, 77), nil, ControlType(77), 0},
	}
	for _, c := range good {
		typ, epoch, err := ParseControl(c.key, c.value)
		if err != nil || typ != c.typ || epoch != c.epoch {
			t.Errorf("%s: %v %d %v, want %v %d", c.name, typ, epoch, err, c.typ, c.epoch)
		}
	}
	bad := map[string][2][]byte{
		"null key":           {nil, value(0, 1)},
		"short key":          {key(0, 1)[:3], value(0, 1)},
		"negative key ver":   {key(-1, 1), value(0, 1)},
		"null value":         {key(0, 1), nil},
		"short value":        {key(0, 0), value(0, 1)[:5]},
		"negative value ver": {key(0, 0), value(-2, 1)},
	}
	for name, c := range bad {
		if _, _, err := ParseControl(c[0], c[1]); !errors.Is(err, kerr.CorruptMessage) {
			t.Errorf("%s: %v, want CorruptMessage", name, err)
		}
	}
	if s := ControlCommit.String() + ControlAbort.String() + ControlType(9).String(); s != "commitabortcontrol(9)" {
		t.Errorf("String: %q", s)
	}
}

func TestBatchControlTypeErrors(t *testing.T) {
	hdr := idempotentHeader(CodecNone)
	hdr.LastOffsetDelta = 0
	data := Batch(kmsgBatch(t, hdr, sampleRecords(1, 30)))
	if _, err := data.ControlType(); !errors.Is(err, kerr.InvalidRecord) {
		t.Fatalf("data batch: %v", err)
	}
	hdr.Attributes |= attrControl | attrTransactional
	// A control batch whose record is not a control record.
	if _, err := Batch(kmsgBatch(t, hdr, sampleRecords(1, 31))).ControlType(); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("control batch with a data record: %v", err)
	}
	if _, err := Batch(kmsgBatch(t, hdr, nil)).ControlType(); !errors.Is(err, kerr.CorruptMessage) {
		t.Fatalf("control batch without records: %v", err)
	}
	// Compressed, which Kafka never writes, still decodes.
	hdr.Attributes |= int16(CodecGzip)
	k := kmsg.ControlRecordKey{Type: kmsg.ControlRecordKeyTypeCommit}
	m := kmsg.EndTxnMarker{CoordinatorEpoch: 3}
	rec := kmsg.Record{Key: k.AppendTo(nil), Value: m.AppendTo(nil)}
	if typ, err := Batch(kmsgBatch(t, hdr, []kmsg.Record{rec})).ControlType(); err != nil || typ != ControlCommit {
		t.Fatalf("compressed control batch: %v %v", typ, err)
	}
}

func TestAppendControlBatchAllocs(t *testing.T) {
	dst := make([]byte, 0, 256)
	if n := testing.AllocsPerRun(100, func() {
		dst = AppendControlBatch(dst[:0], 1, 2, 3, ControlCommit, 4)
	}); n != 0 {
		t.Fatalf("AppendControlBatch allocates %v times", n)
	}
	b := Batch(dst)
	if n := testing.AllocsPerRun(100, func() {
		if typ, err := b.ControlType(); err != nil || typ != ControlCommit {
			t.Fatal(typ, err)
		}
	}); n != 0 {
		t.Fatalf("ControlType allocates %v times", n)
	}
}

// FuzzControlRecord: ParseControl never panics, errors wrap
// CorruptMessage, and what parses agrees with kmsg's decoders; a marker
// batch built from the parsed fields reads back the same.
func FuzzControlRecord(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 5})
	f.Add([]byte{0, 0, 0, 0}, []byte{0, 1, 0xff, 0xff, 0xff, 0xff, 9})
	f.Add([]byte{0, 0, 0, 3}, []byte{})
	f.Add([]byte{0xff, 0xff, 0, 0}, []byte{0, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		typ, epoch, err := ParseControl(key, value)
		if err != nil {
			if !errors.Is(err, kerr.CorruptMessage) {
				t.Fatalf("error %v does not wrap CorruptMessage", err)
			}
			return
		}
		var k kmsg.ControlRecordKey
		if err := k.ReadFrom(key); err != nil || int16(k.Type) != int16(typ) {
			t.Fatalf("kmsg reads key as %+v, %v; we read %v", k, err, typ)
		}
		if typ != ControlAbort && typ != ControlCommit {
			return
		}
		var m kmsg.EndTxnMarker
		if err := m.ReadFrom(value); err != nil || m.CoordinatorEpoch != epoch {
			t.Fatalf("kmsg reads marker as %+v, %v; we read %d", m, err, epoch)
		}
		b := Batch(AppendControlBatch(nil, 1, 1, epoch, typ, 0))
		if got, err := b.ControlType(); err != nil || got != typ {
			t.Fatalf("rebuilt marker reads %v %v", got, err)
		}
		if !bytes.Equal(b[len(b)-12:len(b)-8], []byte{0, 0, 0, byte(typ)}) {
			t.Fatalf("record key bytes %x", b[len(b)-12:])
		}
	})
}
