package api

// OffsetDelete: v0 (KIP-496). Deletes a group's committed offsets for the
// partitions named. A consumer group with members keeps the offsets of
// topics its members subscribe to (GROUP_SUBSCRIBED_TO_TOPIC); a group of
// another protocol type must be empty (NON_EMPTY_GROUP); a group that does
// not exist is GROUP_ID_NOT_FOUND; a topic that does not exist is
// UNKNOWN_TOPIC_OR_PARTITION.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.OffsetDelete.Int16(), 0, 0, (*Handler).offsetDelete) }

func (h *Handler) offsetDelete(req *server.Request) error {
	r := kmsg.NewPtrOffsetDeleteRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	img := h.cluster.Image()
	resp := kmsg.NewPtrOffsetDeleteResponse()
	if !h.authorized(req, opDelete, resGroup, r.Group) {
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	var tps []group.TopicPartition
	var where []*kmsg.OffsetDeleteResponseTopicPartition
	resp.Topics = make([]kmsg.OffsetDeleteResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		*rt = kmsg.NewOffsetDeleteResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.OffsetDeleteResponseTopicPartition, len(t.Partitions))
		known := img.Topic(t.Topic) != nil
		for j, p := range t.Partitions {
			rp := &rt.Partitions[j]
			*rp = kmsg.NewOffsetDeleteResponseTopicPartition()
			rp.Partition = p.Partition
			if !h.authorized(req, opRead, resTopic, t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if !known {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			tps = append(tps, group.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			where = append(where, rp)
		}
	}
	errs, err := h.groups.DeleteOffsets(r.Group, tps)
	if err != nil {
		resp.ErrorCode = errCode(err)
		resp.Topics = nil
		respond(req, resp)
		return nil
	}
	for i, err := range errs {
		where[i].ErrorCode = errCode(err)
	}
	respond(req, resp)
	return nil
}
