package api

// Produce: v3-v13, advertised from v0 (KAFKA-18659: librdkafka turns
// compression off when v0 is missing) but v0-v2 are rejected, as Kafka 4.x
// does. v13 names topics by id (KIP-516).
//
// Record bytes are appended as they came (no decompression, no
// recompression): one copy, request buffer to page cache. acks=0 gets no
// response; when any partition fails, the connection is closed instead so
// the client refreshes its metadata, as Kafka does.

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/server"
)

func init() {
	a := register(kmsg.Produce.Int16(), 3, 13, (*Handler).produce)
	a.advertiseMin = 0
}

func (h *Handler) produce(req *server.Request) error {
	r := kmsg.NewPtrProduceRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrProduceResponse()
	resp.Topics = make([]kmsg.ProduceResponseTopic, len(r.Topics))
	failed := false
	// ACLs: WRITE on the transactional id, then on each topic.
	var denied error
	if r.TransactionID != nil && !h.authorized(req, opWrite, resTxnID, *r.TransactionID) {
		denied = kerr.TransactionalIDAuthorizationFailed
	}
	for i := range r.Topics {
		t := &r.Topics[i]
		rt := &resp.Topics[i]
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		name, unknown := t.Topic, denied
		if r.Version >= 13 && unknown == nil {
			var ok bool
			if name, ok = h.topicName(t.TopicID); !ok {
				unknown = kerr.UnknownTopicID
			}
		}
		if unknown == nil && !h.authorized(req, opWrite, resTopic, name) {
			unknown = kerr.TopicAuthorizationFailed
		}
		rt.Partitions = make([]kmsg.ProduceResponseTopicPartition, len(t.Partitions))
		for j := range t.Partitions {
			p := &t.Partitions[j]
			rp := &rt.Partitions[j]
			*rp = kmsg.NewProduceResponseTopicPartition()
			rp.Partition = p.Partition
			err := unknown
			if err == nil {
				err = h.appendPartition(log.TopicPartition{Topic: name, Partition: p.Partition}, p.Records, r, rp)
			}
			if err != nil {
				failed = true
				rp.ErrorCode = errCode(err)
				rp.BaseOffset, rp.LogAppendTime, rp.LogStartOffset = -1, -1, -1
				if r.Version >= 8 {
					rp.ErrorMessage = errMessage(err)
					rp.ErrorRecords = recordErrors(err)
				}
			}
		}
	}
	if r.Acks == 0 {
		if failed {
			return fmt.Errorf("acks=0 produce failed on a partition: closing the connection")
		}
		req.NoResponse()
		return nil
	}
	respond(req, resp)
	return nil
}

func (h *Handler) appendPartition(tp log.TopicPartition, records []byte, r *kmsg.ProduceRequest, rp *kmsg.ProduceResponseTopicPartition) error {
	acks := r.Acks
	if acks != 0 && acks != 1 && acks != -1 {
		return kerr.InvalidRequiredAcks
	}
	if isInternalTopic(tp.Topic) {
		return fmt.Errorf("cannot append to internal topic %s: %w", tp.Topic, kerr.InvalidTopicException)
	}
	p, err := h.replicas.Get(tp)
	if err != nil {
		return err
	}
	if len(records) == 0 {
		return kerr.CorruptMessage
	}
	if b, _, err := log.ParseBatch(records); err == nil && b.IsTransactional() {
		if err := h.verifyTxnWrite(p.Log(), tp, b, r); err != nil {
			return err
		}
	}
	info, err := p.Append(records, acks)
	if err != nil {
		return err
	}
	rp.BaseOffset = info.FirstOffset
	rp.LogAppendTime = info.LogAppendTime
	rp.LogStartOffset = info.LogStartOffset
	return nil
}

// recordErrors lists the records a rejected batch was rejected for
// (ProduceResponse v8+), when the log named them.
func recordErrors(err error) []kmsg.ProduceResponseTopicPartitionErrorRecord {
	var re *log.RecordErrors
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
