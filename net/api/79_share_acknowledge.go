package api

// ShareAcknowledge: v1-v2 (KIP-932; v2 adds RENEW, KIP-1222, and the
// acquisition lock timeout in the response). A member acknowledges records
// it holds through its share session (epoch 0 is INVALID_SHARE_SESSION_EPOCH:
// a session is opened by a ShareFetch; -1 closes it once the
// acknowledgements are applied, giving back what the member still holds).
// Each partition's acknowledgement batches apply in order: ACCEPT, RELEASE,
// REJECT, RENEW or GAP, one type for a batch or one per record; records
// the member does not hold fail the batch with INVALID_RECORD_STATE.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() { register(kmsg.ShareAcknowledge.Int16(), 1, 2, (*Handler).shareAcknowledgeReq) }

func (h *Handler) shareAcknowledgeReq(req *server.Request) error {
	r := kmsg.NewPtrShareAcknowledgeRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrShareAcknowledgeResponse()
	var cfg map[string]string
	if r.GroupID != nil {
		cfg = h.cluster.Image().GroupConfigs(*r.GroupID)
		resp.AcquisitionLockTimeoutMillis = int32(shareLimits(h.shares.Limits(), cfg).LockDuration)
	}
	fail := func(code int16) error {
		resp.ErrorCode = code
		respond(req, resp)
		return nil
	}
	if r.GroupID == nil || *r.GroupID == "" || r.MemberID == nil || *r.MemberID == "" {
		return fail(kerr.InvalidRequest.Code)
	}
	if !h.authorized(req, opRead, resGroup, *r.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code)
	}
	group, member := *r.GroupID, *r.MemberID
	switch r.ShareSessionEpoch {
	case 0:
		return fail(kerr.InvalidShareSessionEpoch.Code)
	case -1:
		if !h.shares.HasSession(group, member) {
			return fail(kerr.ShareSessionNotFound.Code)
		}
	default:
		if _, err := h.shares.UpdateSession(group, member, r.ShareSessionEpoch, nil, nil); err != nil {
			return fail(errCode(err))
		}
	}
	for _, t := range r.Topics {
		rt := kmsg.NewShareAcknowledgeResponseTopic()
		rt.TopicID = t.TopicID
		for _, p := range t.Partitions {
			batches := make([]ackBatch, len(p.AcknowledgementBatches))
			for i, b := range p.AcknowledgementBatches {
				batches[i] = ackBatch{b.FirstOffset, b.LastOffset, b.AcknowledgeTypes}
			}
			rp := kmsg.NewShareAcknowledgeResponseTopicPartition()
			rp.Partition = p.Partition
			rp.CurrentLeader.LeaderID, rp.CurrentLeader.LeaderEpoch = -1, -1
			rp.ErrorCode = h.shareAcknowledge(req, group, member, share.TP{Topic: t.TopicID, Partition: p.Partition}, batches, renewEnabled(cfg))
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if r.ShareSessionEpoch == -1 {
		_ = h.shares.CloseSession(group, member)
	}
	respond(req, resp)
	return nil
}
