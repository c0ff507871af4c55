package api

// OffsetForLeaderEpoch: v0-v4 (v4 flexible). v0-v1 (removed from Kafka 4.0
// by KIP-896) are served as Kafka 3.9 did: v0 answers the end offset only,
// v1 adds the epoch; neither carries a current leader epoch to check, so
// no fencing (v2), and no replica id (v3). KIP-101 (followers truncate
// to the end of their last epoch) and KIP-320 (consumers detect a log
// truncated under them): for each partition, the end offset of the
// requested leader epoch, that is the start of the next epoch, or the log
// end offset when the requested epoch is the current one (for consumers
// too: their positions are below the high watermark, so the log end
// offset never reports a false truncation; Kafka answers the same). The
// partition must be led here, after the CurrentLeaderEpoch check
// (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH). A requested epoch newer
// than the current one, or -1, has no end: epoch and offset -1, no error.
//
// The answer comes from the log's leader epoch cache (KIP-101,
// leader-epoch-checkpoint), kept as batches of new epochs are appended.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
	"kzero/replica"
)

func init() {
	register(kmsg.OffsetForLeaderEpoch.Int16(), 0, 4, (*Handler).offsetForLeaderEpoch).since4(2)
}

func (h *Handler) offsetForLeaderEpoch(req *server.Request) error {
	r := kmsg.NewPtrOffsetForLeaderEpochRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	for _, t := range r.Topics {
		rt := kmsg.NewOffsetForLeaderEpochResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetForLeaderEpochResponseTopicPartition()
			rp.Partition = p.Partition
			op, typ, name, denied := opDescribe, resTopic, t.Topic, kerr.TopicAuthorizationFailed
			if r.ReplicaID >= 0 {
				op, typ, name, denied = opClusterAct, resCluster, clusterName, kerr.ClusterAuthorizationFailed
			}
			if !h.authorized(req, op, typ, name) {
				rp.ErrorCode, rp.EndOffset, rp.LeaderEpoch = denied.Code, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			part, err := h.localPartition(log.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			if err == nil {
				err = part.CheckLeaderEpoch(p.CurrentLeaderEpoch)
			}
			if err == nil && !part.IsLeader() {
				err = kerr.NotLeaderForPartition
			}
			if err != nil {
				rp.ErrorCode = errCode(err)
			} else {
				rp.LeaderEpoch, rp.EndOffset = epochEnd(part, p.LeaderEpoch)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}

// epochEnd is the end of the requested epoch from the log's epoch cache.
func epochEnd(p *replica.Partition, requested int32) (epoch int32, end int64) {
	return p.EndOffsetForEpoch(requested)
}

// localPartition returns the local replica of a partition; a partition
// the image has but this broker does not host is NOT_LEADER_OR_FOLLOWER,
// one the image lacks UNKNOWN_TOPIC_OR_PARTITION.
func (h *Handler) localPartition(tp log.TopicPartition) (*replica.Partition, error) {
	if p, ok := h.replicas.Partition(tp); ok {
		return p, nil
	}
	if t := h.cluster.Image().Topic(tp.Topic); t != nil && tp.Partition >= 0 && int(tp.Partition) < len(t.Partitions) {
		return nil, kerr.NotLeaderForPartition
	}
	return nil, kerr.UnknownTopicOrPartition
}
