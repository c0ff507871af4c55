package api

// DescribeProducers: v0 (flexible). KIP-664: the active idempotent and
// transactional producers of each partition, from the log's producer
// state: producer id and epoch, last sequence and timestamp, coordinator
// epoch, and the first offset of an open transaction (-1 none). Any local
// replica answers (Kafka's admin client may ask a follower). An invalid
// topic name is INVALID_TOPIC_EXCEPTION, a missing topic or partition
// UNKNOWN_TOPIC_OR_PARTITION, a partition not hosted here
// NOT_LEADER_OR_FOLLOWER.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.DescribeProducers.Int16(), 0, 0, (*Handler).describeProducers) }

func (h *Handler) describeProducers(req *server.Request) error {
	r := kmsg.NewPtrDescribeProducersRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	img := h.cluster.Image()
	resp := kmsg.NewPtrDescribeProducersResponse()
	for _, t := range r.Topics {
		rt := kmsg.NewDescribeProducersResponseTopic()
		rt.Topic = t.Topic
		var topicErr *kerr.Error
		var topicMsg *string
		if !h.authorized(req, opRead, resTopic, t.Topic) {
			topicErr = kerr.TopicAuthorizationFailed
		} else if err := metadata.ValidateTopicName(t.Topic); err != nil {
			topicErr, topicMsg = kerr.InvalidTopicException, errMessage(err)
		} else if img.Topic(t.Topic) == nil {
			topicErr = kerr.UnknownTopicOrPartition
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewDescribeProducersResponseTopicPartition()
			rp.Partition = p
			if topicErr != nil {
				rp.ErrorCode, rp.ErrorMessage = topicErr.Code, topicMsg
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			part, err := h.localPartition(log.TopicPartition{Topic: t.Topic, Partition: p})
			if err != nil {
				rp.ErrorCode = errCode(err)
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			for _, e := range part.Producers() { // by producer id
				ap := kmsg.NewDescribeProducersResponseTopicPartitionActiveProducer()
				ap.ProducerID, ap.ProducerEpoch = e.ProducerID, int32(e.Epoch)
				ap.LastSequence, ap.LastTimestamp = e.LastSequence, e.Timestamp
				ap.CoordinatorEpoch, ap.CurrentTxnStartOffset = e.CoordinatorEpoch, e.TxnFirstOffset
				rp.ActiveProducers = append(rp.ActiveProducers, ap)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}
