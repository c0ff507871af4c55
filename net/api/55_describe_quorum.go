package api

// DescribeQuorum: v0-v2 (flexible). KIP-595/KIP-836/KIP-853: the metadata
// quorum's leader, epoch (the raft term), high watermark (the committed
// index), and each voter's log end offset and last fetch and caught-up
// times (v1), and the same for the observers: broker-only nodes, which
// follow the log as raft learners. Only the quorum leader knows the
// replicas' progress; it relays its view to every node twice a second
// (coord.Quorum), and a node holding a recent one from the leader it
// follows answers with it, as a Kafka broker forwards DescribeQuorum to the
// active controller (clients send it to the controller Metadata names,
// which is a broker when the leader is controller-only). A node without a
// recent view answers NOT_LEADER_OR_FOLLOWER with the leader it knows, as
// a Kafka controller that is not the leader does. v2 adds directory ids
// (kzero's have none: zero) and the voters' controller listeners.

import (
	"net"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/net/server"
)

func init() { register(kmsg.DescribeQuorum.Int16(), 0, 2, (*Handler).describeQuorum) }

// metadataTopic is the metadata log's topic-partition, as Kafka names it.
const metadataTopic = "__cluster_metadata"

// controllerListener names the voters' listener in DescribeQuorum v2.
const controllerListener = "CONTROLLER"

func (h *Handler) describeQuorum(req *server.Request) error {
	r := kmsg.NewPtrDescribeQuorumRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeQuorumResponse()
	if !h.authorized(req, opDescribe, resCluster, clusterName) {
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	if len(r.Topics) != 1 || len(r.Topics[0].Partitions) != 1 {
		resp.ErrorCode = kerr.InvalidRequest.Code
		respond(req, resp)
		return nil
	}
	rt := kmsg.NewDescribeQuorumResponseTopic()
	rt.Topic = r.Topics[0].Topic
	rp := kmsg.NewDescribeQuorumResponseTopicPartition()
	rp.Partition = r.Topics[0].Partitions[0].Partition
	q := h.cluster.Quorum()
	rp.LeaderID, rp.LeaderEpoch = q.Leader, int32(q.Epoch)
	switch {
	case rt.Topic != metadataTopic || rp.Partition != 0:
		rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
	case !q.IsLeader && !q.FromLeader:
		rp.ErrorCode = kerr.NotLeaderForPartition.Code
	default:
		rp.HighWatermark = q.HighWatermark
		for _, v := range q.Voters {
			rp.CurrentVoters = append(rp.CurrentVoters, replicaState(v))
		}
		for _, v := range q.Observers {
			rp.Observers = append(rp.Observers, replicaState(v))
		}
		for _, v := range q.Voters {
			host, port, err := net.SplitHostPort(v.Addr)
			p, perr := strconv.ParseUint(port, 10, 16)
			if err != nil || perr != nil {
				continue
			}
			rn := kmsg.NewDescribeQuorumResponseNode()
			rl := kmsg.NewDescribeQuorumResponseNodeListener()
			rl.Name, rl.Host, rl.Port = controllerListener, host, uint16(p)
			rn.NodeID, rn.Listeners = v.ID, append(rn.Listeners, rl)
			resp.Nodes = append(resp.Nodes, rn)
		}
	}
	if rp.ErrorCode != 0 && req.Header.APIVersion >= 2 {
		msg := kerr.ErrorForCode(rp.ErrorCode).Error()
		rp.ErrorMessage = &msg
	}
	rt.Partitions = append(rt.Partitions, rp)
	resp.Topics = append(resp.Topics, rt)
	respond(req, resp)
	return nil
}

// replicaState is one voter's or observer's progress in the response.
func replicaState(v coord.QuorumVoter) kmsg.DescribeQuorumResponseTopicPartitionReplicaState {
	rv := kmsg.NewDescribeQuorumResponseTopicPartitionReplicaState()
	rv.ReplicaID, rv.LogEndOffset = v.ID, v.LogEndOffset
	rv.LastFetchTimestamp, rv.LastCaughtUpTimestamp = -1, -1
	if !v.LastFetch.IsZero() {
		rv.LastFetchTimestamp = v.LastFetch.UnixMilli()
	}
	if !v.LastCaughtUp.IsZero() {
		rv.LastCaughtUpTimestamp = v.LastCaughtUp.UnixMilli()
	}
	return rv
}
