package api

// DeleteShareGroupOffsets: v0 (KIP-932). Deletes the saved state of a
// share group's partitions of the topics named: the next fetch starts
// them again where share.auto.offset.reset says. The group must be empty
// (NON_EMPTY_GROUP) and a share group (GROUP_ID_NOT_FOUND otherwise).
// DELETE on the group and READ on each topic.

import (
	"bytes"
	"cmp"
	"slices"

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
	empty, _, err := h.groups.ShareGroupStatus(r.GroupID, false)
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
			// As Kafka's group coordinator: the topic is recorded as
			// being deleted (no longer initialized), then deleted.
			topics := map[[16]byte]string{tm.ID: t.Topic}
			if err := h.groups.ShareTopicsDeleting(r.GroupID, topics, false); err != nil {
				rt.ErrorCode = errCode(err)
			} else if rt.ErrorCode = h.deleteShareState(keys); rt.ErrorCode == 0 {
				if err := h.groups.ShareTopicsDeleting(r.GroupID, topics, true); err != nil {
					rt.ErrorCode = errCode(err)
				}
			}
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

// deleteShareGroupState deletes the saved state of a deleted share
// group's share partitions wherever it is kept: in the store here, and on
// the share coordinators of other brokers (DeleteShareGroupState), and
// drops the live ones here. Kafka's group coordinator names the
// partitions its ShareGroupStatePartitionMetadata record holds; kzero
// names every partition of every topic (the group's record is gone by
// now, and state saved before the record existed is deleted too): each
// share coordinator gets one request, and a share partition without
// saved state costs it a map look-up.
func (h *Handler) deleteShareGroupState(group string) {
	keys := h.shares.GroupPartitions(group)
	if st := h.shares.Store(); st != nil {
		for k := range st.GroupStates(group) {
			keys = append(keys, k)
		}
		for _, t := range h.cluster.Image().Topics() {
			for p := range t.Partitions {
				keys = append(keys, share.Key{Group: group, Topic: t.ID, Partition: int32(p)})
			}
		}
	}
	if len(keys) > 0 {
		if code := h.deleteShareState(slices.Compact(slices.SortedFunc(slices.Values(keys), compareShareKeys))); code != 0 {
			h.logger.Warn("cannot delete the share state of a deleted share group", "group", group, "err", kerr.ErrorForCode(code))
		}
	}
	h.shares.DeleteGroup(group)
}

// compareShareKeys orders share partitions by topic id, then partition.
func compareShareKeys(a, b share.Key) int {
	if c := bytes.Compare(a.Topic[:], b.Topic[:]); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}
