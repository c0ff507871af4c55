package api

// AddPartitionsToTxn: v0-v5. v0-v3 (clients): one transaction's
// partitions are added to it, starting it if none is open. v4+ (KIP-890
// part 1, sent by partition leaders): several transactions at once, each
// either added or, with VerifyOnly, checked to be in the transaction.
// A partition of an unknown topic fails with UNKNOWN_TOPIC_OR_PARTITION and
// the others of its transaction get OPERATION_NOT_ATTEMPTED; a coordinator
// error applies to every partition. PRODUCER_FENCED is INVALID_PRODUCER_EPOCH
// before v2 (KIP-588).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.AddPartitionsToTxn.Int16(), 0, 5, (*Handler).addPartitionsToTxn) }

// txnTopics is the partitions of one transaction in a request.
type txnTopics struct {
	id         string
	producerID int64
	epoch      int16
	verifyOnly bool
	topics     map[string][]int32
	order      []string
}

func (h *Handler) addPartitionsToTxn(req *server.Request) error {
	r := kmsg.NewPtrAddPartitionsToTxnRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	if r.Version < 4 && !h.authorized(req, opWrite, resTxnID, r.TransactionalID) {
		for _, tp := range r.Topics {
			rt := kmsg.NewAddPartitionsToTxnResponseTopic()
			rt.Topic = tp.Topic
			for _, p := range tp.Partitions {
				rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p, kerr.TransactionalIDAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		respond(req, resp)
		return nil
	}
	if r.Version < 4 {
		t := txnTopics{id: r.TransactionalID, producerID: r.ProducerID, epoch: r.ProducerEpoch, topics: map[string][]int32{}}
		for _, tp := range r.Topics {
			t.add(tp.Topic, tp.Partitions)
		}
		resp.Topics = h.addTxnPartitions(&t, r.Version)
		respond(req, resp)
		return nil
	}
	for _, tx := range r.Transactions {
		t := txnTopics{id: tx.TransactionalID, producerID: tx.ProducerID, epoch: tx.ProducerEpoch, verifyOnly: tx.VerifyOnly, topics: map[string][]int32{}}
		for _, tp := range tx.Topics {
			t.add(tp.Topic, tp.Partitions)
		}
		res := kmsg.NewAddPartitionsToTxnResponseTransaction()
		res.TransactionalID = tx.TransactionalID
		if !h.authorized(req, opWrite, resTxnID, tx.TransactionalID) {
			for _, tp := range tx.Topics {
				rt := kmsg.NewAddPartitionsToTxnResponseTransactionTopic()
				rt.Topic = tp.Topic
				for _, p := range tp.Partitions {
					rp := kmsg.NewAddPartitionsToTxnResponseTransactionTopicPartition()
					rp.Partition, rp.ErrorCode = p, kerr.TransactionalIDAuthorizationFailed.Code
					rt.Partitions = append(rt.Partitions, rp)
				}
				res.Topics = append(res.Topics, rt)
			}
			resp.Transactions = append(resp.Transactions, res)
			continue
		}
		for _, rt := range h.addTxnPartitions(&t, r.Version) {
			res.Topics = append(res.Topics, kmsg.AddPartitionsToTxnResponseTransactionTopic{Topic: rt.Topic, Partitions: asTxnPartitions(rt.Partitions)})
		}
		resp.Transactions = append(resp.Transactions, res)
	}
	respond(req, resp)
	return nil
}

func (t *txnTopics) add(topic string, partitions []int32) {
	if _, ok := t.topics[topic]; !ok {
		t.order = append(t.order, topic)
	}
	t.topics[topic] = append(t.topics[topic], partitions...)
}

// addTxnPartitions adds (or verifies) one transaction's partitions and
// returns the per-partition results.
func (h *Handler) addTxnPartitions(t *txnTopics, version int16) []kmsg.AddPartitionsToTxnResponseTopic {
	img := h.cluster.Image()
	var tps []log.TopicPartition
	unknown := map[log.TopicPartition]bool{}
	for _, topic := range t.order {
		mt := img.Topic(topic)
		for _, p := range t.topics[topic] {
			tp := log.TopicPartition{Topic: topic, Partition: p}
			if mt == nil || p < 0 || int(p) >= len(mt.Partitions) {
				unknown[tp] = true
				continue
			}
			tps = append(tps, tp)
		}
	}
	codes := map[log.TopicPartition]int16{}
	switch {
	case len(unknown) > 0:
		for _, tp := range tps {
			codes[tp] = kerr.OperationNotAttempted.Code
		}
		for tp := range unknown {
			codes[tp] = kerr.UnknownTopicOrPartition.Code
		}
	case t.verifyOnly:
		for _, tp := range tps {
			codes[tp] = fencedCode(h.txns.Verify(t.id, t.producerID, t.epoch, tp), version, 2)
		}
	default:
		// v4+ adds come from partition leaders for transactions v2.
		code := fencedCode(h.txns.AddPartitions(t.id, t.producerID, t.epoch, tps, version >= 4), version, 2)
		for _, tp := range tps {
			codes[tp] = code
		}
	}
	out := make([]kmsg.AddPartitionsToTxnResponseTopic, 0, len(t.order))
	for _, topic := range t.order {
		rt := kmsg.NewAddPartitionsToTxnResponseTopic()
		rt.Topic = topic
		for _, p := range t.topics[topic] {
			rp := kmsg.NewAddPartitionsToTxnResponseTopicPartition()
			rp.Partition, rp.ErrorCode = p, codes[log.TopicPartition{Topic: topic, Partition: p}]
			rt.Partitions = append(rt.Partitions, rp)
		}
		out = append(out, rt)
	}
	return out
}

func asTxnPartitions(ps []kmsg.AddPartitionsToTxnResponseTopicPartition) []kmsg.AddPartitionsToTxnResponseTransactionTopicPartition {
	out := make([]kmsg.AddPartitionsToTxnResponseTransactionTopicPartition, len(ps))
	for i, p := range ps {
		out[i] = kmsg.AddPartitionsToTxnResponseTransactionTopicPartition{Partition: p.Partition, ErrorCode: p.ErrorCode}
	}
	return out
}
