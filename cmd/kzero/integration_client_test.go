package main

// Helpers the integration tests share: a raw Kafka connection that sends
// kmsg requests over a plain socket (for malformed frames, exact
// connection counts and single long-poll fetches), a record batch encoder,
// and kgo helpers for topics and bounded consumption.

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawConn is one Kafka connection driven request by request.
type rawConn struct {
	c      net.Conn
	f      *kmsg.RequestFormatter
	corrID int32
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("kzero-test"))}
}

// request sends req at its set version and reads the response, within 30s.
func (r *rawConn) request(req kmsg.Request) (kmsg.Response, error) {
	r.corrID++
	if err := r.c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := r.c.Write(r.f.AppendRequest(nil, req, r.corrID)); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	body, err := readFrame(r.c)
	if err != nil {
		return nil, err
	}
	if len(body) < 4 {
		return nil, fmt.Errorf("response of %d bytes", len(body))
	}
	if id := int32(binary.BigEndian.Uint32(body)); id != r.corrID {
		return nil, fmt.Errorf("correlation id %d, want %d", id, r.corrID)
	}
	body = body[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	// Flexible responses carry a tag buffer in the header, except
	// ApiVersions, whose response header is always v0.
	if resp.IsFlexible() && req.Key() != kmsg.ApiVersions.Int16() {
		if len(body) == 0 || body[0] != 0 {
			return nil, fmt.Errorf("unexpected response header tags")
		}
		body = body[1:]
	}
	if err := resp.ReadFrom(body); err != nil {
		return nil, fmt.Errorf("decode %s: %w", kmsg.NameForKey(req.Key()), err)
	}
	return resp, nil
}

// write sends raw bytes, ignoring the response.
func (r *rawConn) write(b []byte) error {
	if err := r.c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return err
	}
	_, err := r.c.Write(b)
	return err
}

// waitClosed reads until the broker closes the connection; it fails the
// test if the broker sends anything or keeps it open past 30s.
func (r *rawConn) waitClosed(t *testing.T) {
	t.Helper()
	r.c.SetReadDeadline(time.Now().Add(30 * time.Second))
	var buf [64]byte
	n, err := r.c.Read(buf[:])
	if n > 0 {
		t.Fatalf("broker answered %d bytes (%x) instead of closing", n, buf[:n])
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("broker kept the connection open")
	}
	if err == nil {
		t.Fatal("read returned nothing and no error")
	}
}

func readFrame(c io.Reader) ([]byte, error) {
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return nil, fmt.Errorf("read size: %w", err)
	}
	n := int32(binary.BigEndian.Uint32(size[:]))
	if n < 0 || n > 256<<20 {
		return nil, fmt.Errorf("response size %d", n)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(c, body); err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	return body, nil
}

// encodeBatch encodes an uncompressed RecordBatch v2 holding one record per
// value, all stamped ts, with offsets from 0 and a valid CRC32C.
func encodeBatch(ts int64, values ...[]byte) []byte {
	tss := make([]int64, len(values))
	for i := range tss {
		tss[i] = ts
	}
	return encodeTimedBatch(tss, values)
}

// encodeTimedBatch is encodeBatch with a timestamp per record.
func encodeTimedBatch(tss []int64, values [][]byte) []byte {
	var recs []byte
	maxTs := tss[0]
	for i, v := range values {
		recs = appendRecord(recs, kmsg.Record{OffsetDelta: int32(i), TimestampDelta64: tss[i] - tss[0], Value: v})
		maxTs = max(maxTs, tss[i])
	}
	b := kmsg.RecordBatch{
		PartitionLeaderEpoch: -1,
		Magic:                2,
		LastOffsetDelta:      int32(len(values) - 1),
		FirstTimestamp:       tss[0],
		MaxTimestamp:         maxTs,
		ProducerID:           -1,
		ProducerEpoch:        -1,
		FirstSequence:        -1,
		NumRecords:           int32(len(values)),
		Records:              recs,
	}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

// appendRecord appends r with its Length set to its encoded body size.
func appendRecord(dst []byte, r kmsg.Record) []byte {
	// Record.AppendTo writes Length as given; encode once with a
	// placeholder to learn the body size, then again with the real one.
	r.Length = 0
	body := len(r.AppendTo(nil)) - 1 // a zero length is one varint byte
	r.Length = int32(body)
	return r.AppendTo(dst)
}

// createTopic creates a topic through kadm and fails the test on error.
func createTopic(t testing.TB, ctx context.Context, cl *kgo.Client, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

// consumeN polls cl until n records arrived or ctx ends; any fetch error
// fails the test.
func consumeN(t testing.TB, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before %v", len(out), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s[%d]: %v", topic, p, err)
		})
		out = append(out, fs.Records()...)
	}
	if len(out) > n {
		t.Fatalf("consumed %d records, want %d", len(out), n)
	}
	return out
}

// consumeThrough polls cl until a record at offset last arrived (cl
// consumes one partition) or ctx ends, and returns every record polled.
func consumeThrough(t testing.TB, ctx context.Context, cl *kgo.Client, last int64) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	for len(out) == 0 || out[len(out)-1].Offset < last {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records, not through offset %d, before %v", len(out), last, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s[%d]: %v", topic, p, err)
		})
		out = append(out, fs.Records()...)
	}
	return out
}

// fetchOnce sends one Fetch (v12, topic names) for a partition from offset
// and returns the partition's response and its records.
func fetchOnce(t testing.TB, conn *rawConn, topic string, partition int32, offset int64, maxWait time.Duration) (kmsg.FetchResponseTopicPartition, []*kgo.Record) {
	t.Helper()
	p, recs, err := conn.fetch(topic, partition, offset, maxWait)
	if err != nil {
		t.Fatal(err)
	}
	return p, recs
}

// fetch is fetchOnce for any goroutine: it returns what fails.
func (r *rawConn) fetch(topic string, partition int32, offset int64, maxWait time.Duration) (kmsg.FetchResponseTopicPartition, []*kgo.Record, error) {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12)
	req.ReplicaID = -1
	req.MaxWaitMillis = int32(maxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = 50 << 20
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.Partition = partition
	rp.FetchOffset = offset
	rp.PartitionMaxBytes = 10 << 20
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := r.request(req)
	if err != nil {
		return kmsg.FetchResponseTopicPartition{}, nil, err
	}
	fr := resp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(fr.ErrorCode); err != nil {
		return kmsg.FetchResponseTopicPartition{}, nil, fmt.Errorf("fetch: %w", err)
	}
	if len(fr.Topics) != 1 || len(fr.Topics[0].Partitions) != 1 {
		return kmsg.FetchResponseTopicPartition{}, nil, fmt.Errorf("fetch response has %d topics", len(fr.Topics))
	}
	p := fr.Topics[0].Partitions[0]
	fp, _ := kgo.ProcessFetchPartition(kgo.ProcessFetchPartitionOpts{Offset: offset, Topic: topic, Partition: partition}, &p, kgo.DefaultDecompressor(), nil)
	if fp.Err != nil && !errors.Is(fp.Err, kerr.ErrorForCode(p.ErrorCode)) {
		return p, nil, fmt.Errorf("decode fetched records: %w", fp.Err)
	}
	return p, fp.Records, nil
}

// produceRaw produces one batch with acks=1 over conn and returns the
// partition's response.
func produceRaw(t testing.TB, conn *rawConn, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	p, err := conn.produce(topic, partition, batch)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// produce is produceRaw for any goroutine: it returns what fails.
func (r *rawConn) produce(topic string, partition int32, batch []byte) (kmsg.ProduceResponseTopicPartition, error) {
	req := kmsg.NewPtrProduceRequest()
	req.SetVersion(9)
	req.Acks = 1
	req.TimeoutMillis = 30000
	rt := kmsg.NewProduceRequestTopic()
	rt.Topic = topic
	rp := kmsg.NewProduceRequestTopicPartition()
	rp.Partition = partition
	rp.Records = batch
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := r.request(req)
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, err
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return kmsg.ProduceResponseTopicPartition{}, fmt.Errorf("produce response has %d topics", len(pr.Topics))
	}
	return pr.Topics[0].Partitions[0], nil
}
