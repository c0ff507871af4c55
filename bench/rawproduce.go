package bench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Produce versions the raw producer speaks: flexible (v9, KIP-482), with
// topic names (v13 names topics by id).
const (
	rawProduceMin = 9
	rawProduceMax = 12
)

// rawRequest is a Produce request for one batch of one partition, encoded
// once: a send patches its correlation id and, when they change, the
// batch's sequence, stamps and CRC.
type rawRequest struct {
	frame     []byte   // the whole request, size prefix included
	batch     rawBatch // a window of frame
	partition int32
	seq       int32 // the next base sequence, for an idempotent producer
}

// rawSlot is a request in flight.
type rawSlot struct {
	corr    int32
	records int32
}

// rawProducer sends pre-encoded Produce requests on one connection, up to
// len(slots) in flight, one batch of one partition per request, the
// partitions in turn. send and ack allocate nothing: send writes frames
// encoded before the run, ack parses the response in the connection's
// buffer.
type rawProducer struct {
	conn     *rawConn
	reqs     []rawRequest // one per partition
	next     int          // the request send uses next
	corr     int32
	slots    []rawSlot
	acks     int16
	sequence bool // patch sequences: an idempotent producer
	stamp    bool // stamp the send time into every value

	// What newRequest needs to encode another batch (a shorter last one).
	version    int16
	topic      string
	producerID int64
	epoch      int16
	value      func(i int) []byte
}

// rawProducerConfig is what a raw producer connection sends.
type rawProducerConfig struct {
	version    int16
	topic      string
	partitions []int32
	perBatch   int // records per batch
	acks       int16
	inFlight   int
	producerID int64 // -1 when not idempotent
	epoch      int16
	stamp      bool
	value      func(i int) []byte // the i-th value a producer's batches hold
}

// newRawProducer encodes a request per partition on conn.
func newRawProducer(conn *rawConn, cfg rawProducerConfig) (*rawProducer, error) {
	p := &rawProducer{conn: conn, slots: make([]rawSlot, max(1, cfg.inFlight)), acks: cfg.acks,
		sequence: cfg.producerID >= 0, stamp: cfg.stamp, version: cfg.version, topic: cfg.topic,
		producerID: cfg.producerID, epoch: cfg.epoch, value: cfg.value}
	for i, part := range cfg.partitions {
		req, err := p.newRequest(part, cfg.perBatch, i*cfg.perBatch)
		if err != nil {
			return nil, err
		}
		p.reqs = append(p.reqs, req)
	}
	return p, nil
}

// newRequest encodes a Produce request for count records to partition,
// values from the first'th on, with kmsg for the envelope, and finds the
// batch in it.
func (p *rawProducer) newRequest(partition int32, count, first int) (rawRequest, error) {
	batch, values := appendRawBatch(nil, count, func(i int) []byte { return p.value(first + i) },
		p.producerID, p.epoch, time.Now().UnixMilli())
	req := kmsg.NewPtrProduceRequest()
	req.Version = p.version
	req.Acks = p.acks
	req.TimeoutMillis = 30000
	t := kmsg.NewProduceRequestTopic()
	t.Topic = p.topic
	tp := kmsg.NewProduceRequestTopicPartition()
	tp.Partition = partition
	tp.Records = batch
	t.Partitions = append(t.Partitions, tp)
	req.Topics = append(req.Topics, t)
	frame := kmsg.NewRequestFormatter(kmsg.FormatterClientID(rawClientID)).AppendRequest(nil, req, 0)
	// The batch is the only copy of its random bytes in the frame; its
	// length prefix precedes it.
	at := bytes.LastIndex(frame, batch)
	if at < 0 {
		return rawRequest{}, errors.New("produce request: batch not found in the encoded request")
	}
	return rawRequest{frame: frame, batch: rawBatch{b: frame[at : at+len(batch)], values: values, records: int32(count)},
		partition: partition}, nil
}

// shorten replaces the next request by one of count records, for the last
// send of a producer whose share is not a whole number of batches.
func (p *rawProducer) shorten(count int) error {
	old := &p.reqs[p.next]
	req, err := p.newRequest(old.partition, count, 0)
	if err != nil {
		return err
	}
	req.seq = old.seq
	*old = req
	return nil
}

// batchRecords is how many records the next send carries.
func (p *rawProducer) batchRecords() int32 { return p.reqs[p.next].batch.records }

// send writes the next request, into slot of the window of requests in
// flight (ack reads the answers in the order sent).
func (p *rawProducer) send(slot int, now time.Time) error {
	r := &p.reqs[p.next]
	p.next++
	if p.next == len(p.reqs) {
		p.next = 0
	}
	p.corr++
	binary.BigEndian.PutUint32(r.frame[8:], uint32(p.corr))
	if p.sequence || p.stamp {
		if p.sequence {
			r.batch.setSequence(r.seq)
			// Sequences wrap to 0 after MaxInt32 (KIP-98).
			r.seq = int32((int64(r.seq) + int64(r.batch.records)) % (math.MaxInt32 + 1))
		}
		if p.stamp {
			r.batch.stamp(now.UnixNano())
		}
		sealBatch(r.batch.b)
	}
	p.slots[slot] = rawSlot{corr: p.corr, records: r.batch.records}
	_, err := p.conn.c.Write(r.frame)
	return err
}

// ack reads the response to the request in slot and returns how many
// records it acknowledged.
func (p *rawProducer) ack(slot int) (int32, error) {
	b, err := p.conn.readFrame()
	if err != nil {
		return 0, fmt.Errorf("produce response: %w", err)
	}
	s := p.slots[slot]
	if err := checkProduceResponse(b, s.corr); err != nil {
		return 0, err
	}
	return s.records, nil
}

// checkProduceResponse checks a flexible Produce response (v9+) to a
// request of one partition: the correlation id, and no error.
func checkProduceResponse(b []byte, corr int32) error {
	d := wireDec{b: b}
	if got := d.int32(); d.err == nil && got != corr {
		return fmt.Errorf("produce response: correlation id %d, want %d", got, corr)
	}
	d.tags()
	for topics := d.compactLen(); topics > 0 && d.err == nil; topics-- {
		d.compactBytes() // name
		for parts := d.compactLen(); parts > 0 && d.err == nil; parts-- {
			part := d.int32()
			code := d.int16()
			d.int64() // base offset
			d.int64() // log append time
			d.int64() // log start offset
			for n := d.compactLen(); n > 0 && d.err == nil; n-- {
				d.int32()
				d.compactBytes()
				d.tags()
			}
			msg := d.compactBytes()
			d.tags()
			if d.err == nil && code != 0 {
				return fmt.Errorf("produce to partition %d: %w (%s)", part, kerr.ErrorForCode(code), msg)
			}
		}
		d.tags()
	}
	d.int32() // throttle
	d.tags()
	if d.err != nil {
		return fmt.Errorf("produce response: %w", d.err)
	}
	return nil
}
