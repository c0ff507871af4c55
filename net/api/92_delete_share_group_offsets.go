package api

// DeleteShareGroupOffsets: v0 (KIP-932). Deletes the saved state of a
// share group's partitions of the topics named: the next fetch starts
// them again where share.auto.offset.reset says. The group must be empty
// (NON_EMPTY_GROUP) and a share group (GROUP_ID_NOT_FOUND otherwise).
// DELETE on the group and READ on each topic.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.DeleteShareGroupOffsets.Int16(), 0, 0, (*Handler).deleteShareGroupOffsets)
}

func (h *Handler) deleteShareGroupOffsets(req *server.Request) error {
	r := kmsg.NewPtrDeleteShareGroupOffsetsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDeleteShareGroupOffsetsResponse()
	fail := func(code int16) error {
		resp.ErrorCode = code
		respond(req, resp)
		return nil
	}
	if !h.authorized(req, opDelete, resGroup, r.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code)
	}
	empty, err := h.groups.ShareGroupStatus(r.GroupID, false)
	if err != nil {
		return fail(errCode(err))
	}
	if !empty {
		return fail(kerr.NonEmptyGroup.Code)
	}
	for _, t := range r.Topics {
		rt := kmsg.NewDeleteShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		tm := h.cluster.Image().Topic(t.Topic)
		switch {
		case tm == nil:
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		case !h.authorized(req, opRead, resTopic, t.Topic):
			rt.ErrorCode = kerr.TopicAuthorizationFailed.Code
		default:
			rt.TopicID = tm.ID
			keys := make([]share.Key, len(tm.Partitions))
			for i := range keys {
				keys[i] = share.Key{Group: r.GroupID, Topic: tm.ID, Partition: int32(i)}
			}
			rt.ErrorCode = h.deleteShareState(keys)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}

// deleteShareState deletes share partitions' saved state and drops the
// live ones.
func (h *Handler) deleteShareState(keys []share.Key) int16 {
	for _, k := range keys {
		h.shares.Forget(k)
	}
	if err := h.shares.DeleteState(keys); err != nil {
		return storeUnavailable(err)
	}
	return 0
}

// deleteShareGroupState deletes the state of a deleted group's share
// partitions this broker keeps (none for other group types).
func (h *Handler) deleteShareGroupState(group string) {
	keys := h.shares.GroupPartitions(group)
	if st := h.shares.Store(); st != nil {
		for k := range st.GroupStates(group) {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		h.deleteShareState(keys)
	}
	h.shares.DeleteGroup(group)
}
