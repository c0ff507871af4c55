package api_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node/nodetest"
)

// Keys, headers, null values (tombstones), empty values and explicit
// timestamps come back exactly as produced; a null value stays null and an
// empty one stays empty.
func TestRecordShapesRoundTrip(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.DefaultProduceTopic("shapes"), kgo.ConsumeTopics("shapes"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.ProducerLinger(0))
	kzerotest.CreateTopic(t, ctx, cl, "shapes", 1, nil)

	ts := time.UnixMilli(1_700_000_000_123)
	want := []*kgo.Record{
		{Key: []byte("k1"), Value: []byte("v1")},
		{Key: []byte("tombstone"), Value: nil},
		{Key: []byte("empty"), Value: []byte{}},
		{Key: nil, Value: []byte("no key")},
		{Key: []byte{}, Value: []byte("empty key")},
		{Key: []byte("headers"), Value: []byte("h"), Headers: []kgo.RecordHeader{
			{Key: "a", Value: []byte("1")}, {Key: "a", Value: []byte("2")},
			{Key: "empty", Value: []byte{}}, {Key: "null", Value: nil}, {Key: "", Value: []byte("no key")},
		}},
		{Key: bytes.Repeat([]byte("K"), 64<<10), Value: bytes.Repeat([]byte("V"), 200<<10)},
		{Key: []byte("old"), Value: []byte("explicit timestamp"), Timestamp: ts},
	}
	for _, r := range want {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatalf("produce %q: %v", r.Key, err)
		}
	}
	got := kzerotest.ConsumeN(t, ctx, cl, len(want))
	for i, w := range want {
		g := got[i]
		if g.Offset != int64(i) {
			t.Errorf("record %d has offset %d", i, g.Offset)
		}
		if !sameBytes(g.Key, w.Key) || !sameBytes(g.Value, w.Value) {
			t.Errorf("record %d: key %s value %s, want key %s value %s", i, show(g.Key), show(g.Value), show(w.Key), show(w.Value))
		}
		if len(g.Headers) != len(w.Headers) {
			t.Fatalf("record %d: %d headers, want %d", i, len(g.Headers), len(w.Headers))
		}
		for j := range w.Headers {
			if g.Headers[j].Key != w.Headers[j].Key || !sameBytes(g.Headers[j].Value, w.Headers[j].Value) {
				t.Errorf("record %d header %d: %q=%s, want %q=%s", i, j, g.Headers[j].Key, show(g.Headers[j].Value), w.Headers[j].Key, show(w.Headers[j].Value))
			}
		}
	}
	if !got[len(got)-1].Timestamp.Equal(ts) {
		t.Errorf("explicit timestamp came back as %v, want %v", got[len(got)-1].Timestamp, ts)
	}
}

// sameBytes is bytes.Equal that also tells nil from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func show(b []byte) string {
	switch {
	case b == nil:
		return "null"
	case len(b) > 32:
		return fmt.Sprintf("%d bytes", len(b))
	}
	return fmt.Sprintf("%q", b)
}

// max.message.bytes (default 1048588) bounds a record batch's size, its
// 12-byte log overhead included: a batch of exactly the limit is stored, one
// byte more is refused with MESSAGE_TOO_LARGE. A topic whose limit is raised
// takes 1 MiB values, and they come back intact.
func TestMessageMaxBytes(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The client's own batch limit is raised so the broker is what says no.
	cl := nodetest.Client(t, b, kgo.ProducerBatchCompression(kgo.NoCompression()), kgo.ProducerBatchMaxBytes(4<<20),
		kgo.ProducerLinger(0), kgo.FetchMaxPartitionBytes(1<<20), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	kzerotest.CreateTopic(t, ctx, cl, "limit", 1, nil)
	big := "8388608"
	kzerotest.CreateTopic(t, ctx, cl, "big", 1, map[string]*string{"max.message.bytes": &big})

	rng := rand.New(rand.NewPCG(3, 4))
	value := func(n int) []byte {
		v := make([]byte, n)
		for i := range v {
			v[i] = byte(rng.Uint32())
		}
		return v
	}
	const limit = 1048588
	under, over := value(valueForBatchSize(t, limit)), value(valueForBatchSize(t, limit+1))
	ts := time.Now()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "limit", Value: under, Timestamp: ts}).FirstErr(); err != nil {
		t.Fatalf("a batch of exactly %d bytes: %v", limit, err)
	}
	err := cl.ProduceSync(ctx, &kgo.Record{Topic: "limit", Value: over, Timestamp: ts}).FirstErr()
	if !errors.Is(err, kerr.MessageTooLarge) {
		t.Fatalf("a batch of %d bytes: %v, want MESSAGE_TOO_LARGE", limit+1, err)
	}

	var mib [][]byte
	for i := 0; i < 4; i++ {
		mib = append(mib, value(1<<20))
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "big", Value: mib[i]}).FirstErr(); err != nil {
			t.Fatalf("1 MiB value %d: %v", i, err)
		}
	}

	cl.AddConsumeTopics("limit", "big")
	got := kzerotest.ConsumeN(t, ctx, cl, 1+len(mib))
	var bigIdx int
	for _, r := range got {
		switch r.Topic {
		case "limit":
			if !bytes.Equal(r.Value, under) || r.Offset != 0 {
				t.Fatalf("limit: offset %d, %d bytes differ from the %d produced", r.Offset, len(r.Value), len(under))
			}
		case "big":
			if !bytes.Equal(r.Value, mib[bigIdx]) || r.Offset != int64(bigIdx) {
				t.Fatalf("big: record at offset %d (%d bytes) is not value %d", r.Offset, len(r.Value), bigIdx)
			}
			bigIdx++
		}
	}
}

// valueForBatchSize is the value length that makes a one-record batch
// (no key, no headers, uncompressed, as kgo encodes it) exactly size bytes.
func valueForBatchSize(t *testing.T, size int) int {
	t.Helper()
	for n := size - 100; n < size; n++ {
		if len(kzerotest.EncodeBatch(0, make([]byte, n))) == size {
			return n
		}
	}
	t.Fatalf("no value length gives a %d-byte batch", size)
	return 0
}

// acks 0, 1 and -1 all store every record; acks=0 gets no response.
func TestAcksLevels(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := nodetest.Client(t, b)
	kzerotest.CreateTopic(t, ctx, admin, "acks", 3, nil)

	const perLevel = 100
	want := map[string]bool{}
	for _, level := range []struct {
		name string
		acks kgo.Acks
	}{{"0", kgo.NoAck()}, {"1", kgo.LeaderAck()}, {"-1", kgo.AllISRAcks()}} {
		opts := []kgo.Opt{kgo.DefaultProduceTopic("acks"), kgo.RequiredAcks(level.acks)}
		if level.name != "-1" {
			opts = append(opts, kgo.DisableIdempotentWrite())
		}
		cl := nodetest.Client(t, b, opts...)
		var rs []*kgo.Record
		for i := 0; i < perLevel; i++ {
			v := fmt.Sprintf("acks=%s #%d", level.name, i)
			want[v] = true
			rs = append(rs, &kgo.Record{Key: []byte(v), Value: []byte(v)})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatalf("acks=%s: %v", level.name, err)
		}
	}
	cl := nodetest.Client(t, b, kgo.ConsumeTopics("acks"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for _, r := range kzerotest.ConsumeN(t, ctx, cl, len(want)) {
		if !want[string(r.Value)] {
			t.Fatalf("unexpected or repeated record %q", r.Value)
		}
		delete(want, string(r.Value))
	}
}

// Produce errors are per partition, as Kafka reports them; with acks=0 a
// failed partition closes the connection instead (the client has no other
// way to learn it must refresh its metadata), and a good acks=0 produce
// gets no response at all.
func TestProduceErrors(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kzerotest.CreateTopic(t, ctx, nodetest.Client(t, b), "errs", 1, nil)
	conn := kzerotest.Dial(t, b.Addr().String())
	good := kzerotest.EncodeBatch(time.Now().UnixMilli(), []byte("ok"))
	corrupt := append([]byte(nil), good...)
	corrupt[len(corrupt)-1] ^= 0xff // the CRC covers the records

	for _, c := range []struct {
		name      string
		topic     string
		partition int32
		batch     []byte
		want      error
	}{
		{"stored", "errs", 0, good, nil},
		{"unknown partition", "errs", 5, good, kerr.UnknownTopicOrPartition},
		{"unknown topic", "no-such-topic", 0, good, kerr.UnknownTopicOrPartition},
		{"bad crc", "errs", 0, corrupt, kerr.CorruptMessage},
	} {
		p := kzerotest.ProduceOnce(t, conn, c.topic, c.partition, c.batch)
		if err := kerr.ErrorForCode(p.ErrorCode); !errors.Is(err, c.want) && err != c.want {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
		if c.want == nil && (p.BaseOffset != 0 || p.LogAppendTime != -1 || p.LogStartOffset != 0) {
			t.Errorf("%s: base offset %d, log append time %d, log start %d; want 0, -1 (CreateTime), 0",
				c.name, p.BaseOffset, p.LogAppendTime, p.LogStartOffset)
		}
	}

	// acks=0: no response; the next request's answer is the next frame.
	zero := func(topic string) kmsg.Request {
		req := kzerotest.ProduceRequest(topic, 0, good)
		req.Acks = 0
		return req
	}
	if err := conn.Send(zero("errs")); err != nil {
		t.Fatal(err)
	}
	if p := kzerotest.ProduceOnce(t, conn, "errs", 0, good); p.ErrorCode != 0 || p.BaseOffset != 2 {
		t.Fatalf("after an acks=0 produce: base offset %d, %v; want 2", p.BaseOffset, kerr.ErrorForCode(p.ErrorCode))
	}
	if err := conn.Send(zero("no-such-topic")); err != nil {
		t.Fatal(err)
	}
	conn.WaitClosed(t)
}
