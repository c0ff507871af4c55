package api

// Produce: v0-v13; v0-v2 (message sets, 00_produce_legacy.go) only with
// legacy.protocol.versions.enable, but listed from v0 either way
// (KAFKA-18659: librdkafka turns compression off when v0 is missing).
// v13 names topics by id (KIP-516).
//
// Record bytes are appended as they came (no decompression, no
// recompression): one copy, request buffer to page cache. acks=all waits,
// off the event loop, until the HW passes the append (the ISR has it):
// NOT_ENOUGH_REPLICAS when the ISR is below min.insync.replicas before the
// append, NOT_ENOUGH_REPLICAS_AFTER_APPEND when it shrank below while
// waiting, REQUEST_TIMED_OUT at the request's timeout. acks=0 gets no
// response; when any partition fails, the connection is closed instead so
// the client refreshes its metadata, as Kafka does. A client over its
// producer_byte_rate gets throttle_time_ms and a muted connection
// (throttle.go); its records are appended all the same, as in Kafka.

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/server"
	"kzero/record"
	"kzero/replica"
)

func init() {
	a := register(kmsg.Produce.Int16(), 0, 13, (*Handler).produce).since4(3)
	a.advertiseMin = 0 // listed from v0 even without legacy versions, as Kafka 4 (KAFKA-18659)
}

func (h *Handler) produce(req *server.Request) error {
	op := produceOps.Get().(*produceOp)
	r := &op.req
	if !readProduceRequest(req.Body, req.Header.APIVersion, r, &op.txnID) {
		if err := decode(req, r); err != nil {
			op.free()
			return err
		}
	}
	op.responseTopics()
	// ACLs: WRITE on the transactional id, then on each topic (appendAll).
	if r.TransactionID != nil && !h.authorized(req, opWrite, resTxnID, *r.TransactionID) {
		op.denied = kerr.TransactionalIDAuthorizationFailed
	}
	return h.appendAll(req, op)
}

// produceOp is one produce request's decoded request and its response,
// pooled with their topic and partition slices (request_decode.go): a
// produce allocates nothing in steady state.
type produceOp struct {
	req     kmsg.ProduceRequest
	txnID   string // what req.TransactionID points at
	resp    kmsg.ProduceResponse
	waits   []commitWait
	pending atomic.Int32
	denied  error // fails every partition: the transactional id is not ours to write

	// The append pass (appendAll): the partition it is at, its topic's
	// name and the error that fails the topic's partitions (once
	// resolved), whether a partition failed, and the compressed batch
	// bytes it has validated. When a partition would hold the event loop
	// up, the pass continues from there on a goroutine (offLoop).
	topic, part int
	resolved    bool
	name        string
	topicErr    error
	failed      bool
	compressed  int
	offLoop     bool
	// Off the loop: the pass's handler and request.
	h    *Handler
	sreq *server.Request
	rest func() // appendRest, bound once for op's life in the pool
}

var produceOps = sync.Pool{New: func() any { return new(produceOp) }}

// free returns op to the pool once its response is encoded (or the
// request failed): the request's slices alias the request buffer, so
// they are dropped rather than kept alive.
func (op *produceOp) free() {
	for i := range op.req.Topics {
		t := &op.req.Topics[i]
		clear(t.Partitions)
		*t = kmsg.ProduceRequestTopic{Partitions: t.Partitions[:0]}
	}
	op.req = kmsg.ProduceRequest{Topics: op.req.Topics[:0]}
	op.txnID = ""
	clear(op.waits)
	op.waits = op.waits[:0]
	op.resolved = false
	op.denied, op.topic, op.part, op.name, op.topicErr, op.failed, op.compressed, op.offLoop = nil, 0, 0, "", nil, false, 0, false
	op.h, op.sreq = nil, nil
	produceOps.Put(op)
}

// responseTopics sizes the response like the request, reusing the pooled
// topic and partition slices.
func (op *produceOp) responseTopics() {
	topics := op.resp.Topics
	op.resp = kmsg.NewProduceResponse()
	topics = slices.Grow(topics[:0], len(op.req.Topics))[:len(op.req.Topics)]
	for i := range topics {
		n := len(op.req.Topics[i].Partitions)
		topics[i] = kmsg.ProduceResponseTopic{Partitions: slices.Grow(topics[i].Partitions[:0], n)[:n]}
	}
	op.resp.Topics = topics
}

// offLoopCompressedBytes is how many bytes of compressed batches a produce
// may carry and still be served on the event loop: validating them means
// decompressing them, which costs by the uncompressed size (not in the
// batch header: 16 KiB of zstd can hold a MiB of text), while the hop to a
// goroutine costs a few microseconds.
const offLoopCompressedBytes = 16 << 10

// errOffLoop is appendPartition's answer for a partition that must not be
// appended on the event loop: appendAll continues on a goroutine.
var errOffLoop = errors.New("append off the event loop")

// appendAll appends the request's partitions, from the one op is at, and
// answers. It is one pass over the request: each partition's batch header
// is parsed once, by appendPartition, which also tells whether the
// partition would hold up the event loop this produce may be served on,
// and its other connections: verifying a transaction's first write to a
// partition with its coordinator (a round trip to another broker, or this
// broker's coordinator writing the partition into the transaction and
// waiting for its followers), or the decompression that validates large
// compressed batches (milliseconds of CPU). Large uncompressed appends
// stay on the loop: off it, a small produce beside 1 MB appends on one
// loop waited p50 0.1 ms and p99 1.4 ms rather than 0.49 and 11 ms
// (BenchmarkLoopStall in node), but the broker spent about 10% more CPU
// per GiB on produce-100-producers, whose requests are a few hundred KiB
// (docs/perf/loopstall.md). From such a partition on, the
// pass continues on a goroutine; the request stays valid until it
// completes, and the connection's next request waits for that.
func (h *Handler) appendAll(req *server.Request, op *produceOp) error {
	r, resp := &op.req, &op.resp
	for ; op.topic < len(r.Topics); op.topic, op.part, op.resolved = op.topic+1, 0, false {
		t := &r.Topics[op.topic]
		rt := &resp.Topics[op.topic]
		if !op.resolved {
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			op.name, op.topicErr = h.produceTopic(req, op, t)
			op.resolved = true
		}
		for ; op.part < len(t.Partitions); op.part++ {
			p := &t.Partitions[op.part]
			rp := &rt.Partitions[op.part]
			*rp = kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			err := op.topicErr
			if err == nil {
				var part *replica.Partition
				var next int64
				part, next, err = h.appendPartition(log.TopicPartition{Topic: op.name, Partition: p.Partition}, p.Records, op, rp)
				if err == errOffLoop {
					op.offLoop, op.h, op.sreq = true, h, req
					go op.restFunc()()
					return nil
				}
				if err == nil && r.Acks == -1 {
					op.waits = append(op.waits, commitWait{part, next, rp})
				}
			}
			if err != nil {
				op.failed = true
				failPartition(r.Version, rp, err)
			}
		}
	}
	return h.answerProduce(req, op)
}

// restFunc is appendRest as a func value, made once per produceOp (as
// fetchOp.answerFunc: the pool's New cannot, appendRest leads back to it).
func (op *produceOp) restFunc() func() {
	if op.rest == nil {
		op.rest = op.appendRest
	}
	return op.rest
}

// appendRest continues appendAll off the event loop.
func (op *produceOp) appendRest() {
	h, req := op.h, op.sreq
	if err := h.appendAll(req, op); err != nil {
		req.Fail(err)
	}
}

// produceTopic resolves a produce topic's name and checks WRITE on it; the
// error fails each of its partitions.
func (h *Handler) produceTopic(req *server.Request, op *produceOp, t *kmsg.ProduceRequestTopic) (string, error) {
	if op.denied != nil {
		return t.Topic, op.denied
	}
	name := t.Topic
	if op.req.Version >= 13 {
		var ok bool
		if name, ok = h.topicName(t.TopicID); !ok {
			return name, kerr.UnknownTopicID
		}
	}
	if !h.authorized(req, opWrite, resTopic, name) {
		return name, kerr.TopicAuthorizationFailed
	}
	return name, nil
}

// answerProduce answers a produce whose partitions are appended: at once,
// or for acks=all once the HW passes every append.
func (h *Handler) answerProduce(req *server.Request, op *produceOp) error {
	r, resp := &op.req, &op.resp
	if r.Acks == 0 {
		failed := op.failed
		op.free()
		if failed {
			return fmt.Errorf("acks=0 produce failed on a partition: closing the connection")
		}
		h.produceThrottle(req) // no response to carry it: the mute alone holds the client
		req.NoResponse()
		return nil
	}
	if len(op.waits) == 0 {
		resp.ThrottleMillis = h.produceThrottle(req)
		respond(req, resp)
		op.free()
		return nil
	}
	// acks=all: the answer waits until the HW of every partition passes
	// what was appended there (the ISR has it), off the event loop.
	op.pending.Store(int32(len(op.waits)) + 1)
	finish := func() {
		if op.pending.Add(-1) == 0 {
			resp.ThrottleMillis = h.produceThrottle(req)
			respond(req, resp)
			op.free()
		}
	}
	timeout := time.Duration(max(r.TimeoutMillis, 0)) * time.Millisecond
	version := r.Version
	// The pending count's extra one keeps op until the loop is done.
	for _, w := range op.waits {
		w.part.Committed(w.offset, timeout, func(err error) {
			if err != nil {
				failPartition(version, w.rp, err)
			}
			finish()
		})
	}
	finish()
	return nil
}

// commitWait is an acks=all partition of a produce: its answer waits until
// the HW reaches offset.
type commitWait struct {
	part   *replica.Partition
	offset int64
	rp     *kmsg.ProduceResponseTopicPartition
}

// failPartition writes err into a produce response partition.
func failPartition(version int16, rp *kmsg.ProduceResponseTopicPartition, err error) {
	rp.ErrorCode = errCode(err)
	rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
	if version >= 8 {
		rp.ErrorMessage = errMessage(err)
		rp.ErrorRecords = recordErrors(err)
	}
}

// appendPartition appends one partition's records and fills in its answer;
// it returns the partition and the HW that commits the append. On the
// event loop (not op.offLoop) it answers errOffLoop, having appended
// nothing, for a partition that would hold the loop up: a transactional
// batch its coordinator must verify, or a compressed batch that takes the
// request's compressed bytes over offLoopCompressedBytes.
func (h *Handler) appendPartition(tp log.TopicPartition, records []byte, op *produceOp, rp *kmsg.ProduceResponseTopicPartition) (*replica.Partition, int64, error) {
	r := &op.req
	acks := r.Acks
	if acks != 0 && acks != 1 && acks != -1 {
		return nil, 0, kerr.InvalidRequiredAcks
	}
	if isInternalTopic(tp.Topic) {
		return nil, 0, fmt.Errorf("cannot append to internal topic %s: %w", tp.Topic, kerr.InvalidTopicException)
	}
	p, err := h.replicas.Get(tp)
	if err != nil {
		return nil, 0, err
	}
	if len(records) == 0 {
		return nil, 0, kerr.CorruptMessage
	}
	// A v0-v2 message set does not parse as a batch: its size never
	// sends it off the loop.
	b, _, berr := record.ParseBatch(records)
	if !op.offLoop && berr == nil && op.decompressesMuch(b) {
		return nil, 0, errOffLoop
	}
	if r.Version < 3 {
		if records, err = upconvert(records); err != nil {
			return nil, 0, err
		}
		b, _, berr = record.ParseBatch(records)
	}
	if berr == nil && b.IsTransactional() && !p.InTransaction(b.ProducerID(), b.ProducerEpoch()) {
		// Verifying asks the transaction's coordinator (txn_verify.go),
		// which may wait for other brokers: a round trip to another
		// broker's coordinator, or this broker's, whose lock a write
		// holds until that write's followers have it (from Produce v12
		// the check itself is such a write, adding the partition). On
		// the event loop the wait would hold up the loop's other
		// connections, and in a cluster those include the followers'
		// fetches the write waits for: it timed out after 5 s, failing
		// the produce, whenever they shared the loop. Only a
		// transaction's first batch in each partition pays the hop.
		if !op.offLoop {
			return nil, 0, errOffLoop
		}
		if err := h.verifyTxnWrite(tp, b, r); err != nil {
			return nil, 0, err
		}
	}
	info, err := p.Append(records, acks)
	if err != nil {
		return nil, 0, err
	}
	rp.BaseOffset = info.FirstOffset
	rp.LogAppendTime = info.LogAppendTime
	rp.LogStartOffset = info.LogStartOffset
	return p, info.LastOffset + 1, nil
}

// decompressesMuch adds a compressed batch to the compressed bytes op has
// validated and reports whether they went over offLoopCompressedBytes.
func (op *produceOp) decompressesMuch(b record.Batch) bool {
	if b.Compression() != record.CodecNone {
		op.compressed += len(b)
	}
	return op.compressed > offLoopCompressedBytes
}

// recordErrors lists the records a rejected batch was rejected for
// (ProduceResponse v8+), when the log named them.
func recordErrors(err error) []kmsg.ProduceResponseTopicPartitionErrorRecord {
	var re *record.Errors
	if !errors.As(err, &re) {
		return nil
	}
	out := make([]kmsg.ProduceResponseTopicPartitionErrorRecord, len(re.Records))
	for i, r := range re.Records {
		msg := r.Message
		out[i] = kmsg.ProduceResponseTopicPartitionErrorRecord{RelativeOffset: r.Index, ErrorMessage: &msg}
	}
	return out
}

// isInternalTopic reports whether clients may not produce to a topic: the
// coordinators' own topics.
func isInternalTopic(topic string) bool {
	return topic == group.TopicName || topic == txn.TopicName
}
