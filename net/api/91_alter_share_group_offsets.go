package api

// AlterShareGroupOffsets: v0 (KIP-932). Sets the share-partition start
// offset of a share group's partitions: their saved state becomes that
// offset with nothing in flight. The group must be empty
// (NON_EMPTY_GROUP); one that does not exist is created, empty, as Kafka
// does; one of another type gets GROUP_ID_NOT_FOUND. READ on the group
// and READ on each topic.

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.AlterShareGroupOffsets.Int16(), 0, 0, (*Handler).alterShareGroupOffsets)
}

func (h *Handler) alterShareGroupOffsets(req *server.Request) error {
	r := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrAlterShareGroupOffsetsResponse()
	fail := func(code int16) error {
		resp.ErrorCode = code
		respond(req, resp)
		return nil
	}
	if !h.authorized(req, opRead, resGroup, r.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code)
	}
	empty, err := h.groups.ShareGroupStatus(r.GroupID, true)
	if err != nil {
		return fail(errCode(err))
	}
	if !empty {
		return fail(kerr.NonEmptyGroup.Code)
	}
	st := h.shares.Store()
	if st != nil {
		h.internalTopic(share.StateTopic, st.TopicSpec)
	}
	for _, t := range r.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		tm := h.cluster.Image().Topic(t.Topic)
		if tm != nil {
			rt.TopicID = tm.ID
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case tm == nil || p.Partition < 0 || int(p.Partition) >= len(tm.Partitions):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case !h.authorized(req, opRead, resTopic, t.Topic):
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case st == nil:
				rp.ErrorCode = kerr.CoordinatorNotAvailable.Code
			case p.StartOffset < 0:
				rp.ErrorCode = kerr.InvalidRequest.Code
			default:
				rp.ErrorCode = h.setShareStart(st, share.Key{Group: r.GroupID, Topic: tm.ID, Partition: p.Partition}, p.StartOffset)
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}

// setShareStart saves a share partition's new start offset, with nothing
// in flight, and drops the live share partition so it is read again.
func (h *Handler) setShareStart(st *share.Store, k share.Key, start int64) int16 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Await(ctx, k); err != nil {
		return storeUnavailable(err)
	}
	if err := st.Write(k, share.Snapshot{StateEpoch: 1, LeaderEpoch: -1, StartOffset: start}); err != nil {
		return storeUnavailable(err)
	}
	h.shares.Forget(k)
	return 0
}
