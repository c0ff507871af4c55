package api

// DescribeShareGroupOffsets: v0-v1 (KIP-932; v1 adds the lag). Each share
// group's share partitions: the share-partition start offset (-1 for a
// partition with no state) and leader epoch, and from v1 the lag (records
// from the start offset to the high watermark not yet acknowledged or
// archived; -1 when this broker does not lead the partition). Null topics:
// every share partition the group records as initialized (Kafka's answer),
// and those whose state this broker keeps or serves.
// A group that does not exist or is of another type: GROUP_ID_NOT_FOUND.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.DescribeShareGroupOffsets.Int16(), 0, 1, (*Handler).describeShareGroupOffsets)
}

func (h *Handler) describeShareGroupOffsets(req *server.Request) error {
	r := kmsg.NewPtrDescribeShareGroupOffsetsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeShareGroupOffsetsResponse()
	for _, g := range r.Groups {
		rg := kmsg.NewDescribeShareGroupOffsetsResponseGroup()
		rg.GroupID = g.GroupID
		if !h.authorized(req, opDescribe, resGroup, g.GroupID) {
			rg.ErrorCode = kerr.GroupAuthorizationFailed.Code
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		if _, _, err := h.groups.ShareGroupStatus(g.GroupID, false); err != nil {
			rg.ErrorCode = errCode(err)
			resp.Groups = append(resp.Groups, rg)
			continue
		}
		topics := g.Topics
		if topics == nil {
			topics = h.shareStateTopics(g.GroupID)
		}
		for _, t := range topics {
			rt := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopic()
			rt.Topic = t.Topic
			tm := h.cluster.Image().Topic(t.Topic)
			if tm != nil {
				rt.TopicID = tm.ID
			}
			for _, p := range t.Partitions {
				rp := kmsg.NewDescribeShareGroupOffsetsResponseGroupTopicPartition()
				rp.Partition, rp.StartOffset, rp.LeaderEpoch, rp.Lag = p, -1, -1, -1
				switch {
				case tm == nil || p < 0 || int(p) >= len(tm.Partitions):
					rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				case !h.authorized(req, opDescribe, resTopic, t.Topic):
					rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				default:
					rp.StartOffset, rp.LeaderEpoch, rp.Lag, rp.ErrorCode = h.shareOffset(share.Key{Group: g.GroupID, Topic: tm.ID, Partition: p}, t.Topic)
				}
				rt.Partitions = append(rt.Partitions, rp)
			}
			rg.Topics = append(rg.Topics, rt)
		}
		resp.Groups = append(resp.Groups, rg)
	}
	respond(req, resp)
	return nil
}

// shareStateTopics lists the topic partitions of group's share partitions:
// those the group coordinator (this broker, which the request is routed
// to) records as initialized, and those this broker knows, saved here or
// live here. In a cluster a partition's state is kept by the share
// coordinator of its own key, often another broker.
func (h *Handler) shareStateTopics(group string) []kmsg.DescribeShareGroupOffsetsRequestGroupTopic {
	byID := map[[16]byte][]int32{}
	if initialized, err := h.groups.ShareInitialized(group); err == nil {
		for _, t := range initialized {
			byID[t.TopicID] = append(byID[t.TopicID], t.Partitions...)
		}
	}
	if st := h.shares.Store(); st != nil {
		for k := range st.GroupStates(group) {
			byID[k.Topic] = append(byID[k.Topic], k.Partition)
		}
	}
	for _, k := range h.shares.GroupPartitions(group) {
		byID[k.Topic] = append(byID[k.Topic], k.Partition)
	}
	var out []kmsg.DescribeShareGroupOffsetsRequestGroupTopic
	for id, ps := range byID {
		name, ok := h.topicName(id)
		if !ok {
			continue
		}
		t := kmsg.NewDescribeShareGroupOffsetsRequestGroupTopic()
		t.Topic, t.Partitions = name, slices.Compact(slices.Sorted(slices.Values(ps)))
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b kmsg.DescribeShareGroupOffsetsRequestGroupTopic) int {
		switch {
		case a.Topic < b.Topic:
			return -1
		case a.Topic > b.Topic:
			return 1
		}
		return 0
	})
	return out
}
