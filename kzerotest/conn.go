package kzerotest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Conn is one Kafka connection driven request by request, for what a
// client library hides: malformed frames, exact connection counts, a
// request at a chosen version, a single long-poll fetch.
type Conn struct {
	c      net.Conn
	f      *kmsg.RequestFormatter
	corrID int32
}

// Dial connects to a broker at addr; the connection is closed when the
// test ends.
func Dial(t testing.TB, addr string) *Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &Conn{c: c, f: kmsg.NewRequestFormatter(kmsg.FormatterClientID("kzero-test"))}
}

// NetConn is the connection's socket, for reads, writes and closes the
// test makes itself.
func (r *Conn) NetConn() net.Conn { return r.c }

// Request sends req at its set version and reads the response, within 30s.
func (r *Conn) Request(req kmsg.Request) (kmsg.Response, error) {
	r.corrID++
	if err := r.c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return nil, err
	}
	if _, err := r.c.Write(r.f.AppendRequest(nil, req, r.corrID)); err != nil {
		return nil, fmt.Errorf("write: %w", err)
	}
	body, err := ReadFrame(r.c)
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

// Do sends req at version and returns its response as R; any failure
// fails the test.
func Do[R kmsg.Response](t testing.TB, conn *Conn, version int16, req kmsg.Request) R {
	t.Helper()
	req.SetVersion(version)
	resp, err := conn.Request(req)
	if err != nil {
		t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), version, err)
	}
	return resp.(R)
}

// Send sends req at its set version, with the next correlation id, and
// reads nothing: for a request that gets no response (Produce acks=0).
func (r *Conn) Send(req kmsg.Request) error {
	r.corrID++
	return r.Write(r.f.AppendRequest(nil, req, r.corrID))
}

// Write sends raw bytes, ignoring the response.
func (r *Conn) Write(b []byte) error {
	if err := r.c.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return err
	}
	_, err := r.c.Write(b)
	return err
}

// WaitClosed reads until the broker closes the connection; it fails the
// test if the broker sends anything or keeps it open past 30s.
func (r *Conn) WaitClosed(t testing.TB) {
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

// ReadFrame reads one size-prefixed Kafka frame and returns its body.
func ReadFrame(c io.Reader) ([]byte, error) {
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

// FetchOnce sends one Fetch (v12, topic names) for a partition from offset
// and returns the partition's response and its records.
func FetchOnce(t testing.TB, conn *Conn, topic string, partition int32, offset int64, maxWait time.Duration) (kmsg.FetchResponseTopicPartition, []*kgo.Record) {
	t.Helper()
	p, recs, err := conn.Fetch(topic, partition, offset, maxWait)
	if err != nil {
		t.Fatal(err)
	}
	return p, recs
}

// Fetch is FetchOnce for any goroutine: it returns what fails.
func (r *Conn) Fetch(topic string, partition int32, offset int64, maxWait time.Duration) (kmsg.FetchResponseTopicPartition, []*kgo.Record, error) {
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
	resp, err := r.Request(req)
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

// ProduceOnce produces one batch with acks=1 over conn and returns the
// partition's response.
func ProduceOnce(t testing.TB, conn *Conn, topic string, partition int32, batch []byte) kmsg.ProduceResponseTopicPartition {
	t.Helper()
	p, err := conn.Produce(topic, partition, batch)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// ProduceRequest is a Produce v9 of one batch to one partition, acks=1 and
// a 30s timeout, for a test to change before sending it.
func ProduceRequest(topic string, partition int32, batch []byte) *kmsg.ProduceRequest {
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
	return req
}

// Produce is ProduceOnce for any goroutine: it returns what fails.
func (r *Conn) Produce(topic string, partition int32, batch []byte) (kmsg.ProduceResponseTopicPartition, error) {
	resp, err := r.Request(ProduceRequest(topic, partition, batch))
	if err != nil {
		return kmsg.ProduceResponseTopicPartition{}, err
	}
	pr := resp.(*kmsg.ProduceResponse)
	if len(pr.Topics) != 1 || len(pr.Topics[0].Partitions) != 1 {
		return kmsg.ProduceResponseTopicPartition{}, fmt.Errorf("produce response has %d topics", len(pr.Topics))
	}
	return pr.Topics[0].Partitions[0], nil
}
