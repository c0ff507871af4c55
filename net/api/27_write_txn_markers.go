package api

// WriteTxnMarkers: v0-v2 (v0, removed from Kafka 4.0 by KIP-896, is v1
// without flexible encoding; v2 carries the transaction version, KIP-1228). A transaction
// coordinator asks this broker, the leader of the partitions, to write
// COMMIT or ABORT control batches for a producer. Each partition's marker
// is checked against the producer's epoch and the coordinator epoch
// (INVALID_PRODUCER_EPOCH, TRANSACTION_COORDINATOR_FENCED); on
// __consumer_offsets partitions the group coordinator commits or drops the
// transaction's offsets. A partition this broker does not lead gets
// NOT_LEADER_OR_FOLLOWER, one of no topic UNKNOWN_TOPIC_OR_PARTITION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.WriteTxnMarkers.Int16(), 0, 2, (*Handler).writeTxnMarkers).since4(1) }

func (h *Handler) writeTxnMarkers(req *server.Request) error {
	r := kmsg.NewPtrWriteTxnMarkersRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrWriteTxnMarkersResponse()
	img := h.cluster.Image()
	denied := !h.authorized(req, opClusterAct, resCluster, clusterName)
	for _, m := range r.Markers {
		rm := kmsg.NewWriteTxnMarkersResponseMarker()
		rm.ProducerID = m.ProducerID
		txnVersion := int16(m.TransactionVersion)
		for _, t := range m.Topics {
			rt := kmsg.NewWriteTxnMarkersResponseMarkerTopic()
			rt.Topic = t.Topic
			mt := img.Topic(t.Topic)
			for _, p := range t.Partitions {
				rp := kmsg.NewWriteTxnMarkersResponseMarkerTopicPartition()
				rp.Partition = p
				switch {
				case denied:
					rp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
				case mt == nil || p < 0 || int(p) >= len(mt.Partitions):
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				default:
					rp.ErrorCode = errCode(h.markers.WriteMarker(log.TopicPartition{Topic: t.Topic, Partition: p}, m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed, txnVersion))
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rm.Topics = append(rm.Topics, rt)
		}
		resp.Markers = append(resp.Markers, rm)
	}
	respond(req, resp)
	return nil
}
