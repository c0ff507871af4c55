package api

// OffsetFetch: v0-v10. KIP-896 removed v0 from Kafka 4.0; kzero serves it,
// the same as v1 (Kafka 3.9 read v0 from ZooKeeper, the store of v0
// commits; kzero keeps those in __consumer_offsets). v0/v1 name partitions;
// from v2 a null topic list asks for every committed offset of the group
// and errors about the group are top-level; v5 returns leader epochs
// (KIP-320); v6 is flexible; v7 adds require_stable (KIP-447: a partition
// with offsets of a transaction still open gets UNSTABLE_OFFSET_COMMIT in
// its error code, instead of its offset, in v7 and in the batched v8+
// form alike, as Kafka answers); v8 batches groups (KIP-709);
// v9 names the member and its epoch, checked for KIP-848 consumer groups
// (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH) and ignored by classic ones. A
// partition without a committed offset, or of a group that does not
// exist, gets offset -1. v10 (KIP-848, Kafka 4.2) names topics by id only:
// an id the metadata does not know gets UNKNOWN_TOPIC_ID on each of its
// partitions, and a request for every offset leaves out the topics that
// no longer exist (a v10 client could not name them).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.OffsetFetch.Int16(), 0, 10, (*Handler).offsetFetch).since4(1) }

func (h *Handler) offsetFetch(req *server.Request) error {
	r := kmsg.NewPtrOffsetFetchRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrOffsetFetchResponse()
	if r.Version >= 8 {
		img := h.cluster.Image()
		byID := r.Version >= 10
		for _, g := range r.Groups {
			var topics []group.FetchTopic
			var unknown []kmsg.OffsetFetchResponseGroupTopic // ids the metadata does not know (v10)
			if g.Topics != nil {
				topics = make([]group.FetchTopic, 0, len(g.Topics))
				for _, t := range g.Topics {
					name := t.Topic
					if byID {
						mt := img.TopicByID(t.TopicID)
						if mt == nil {
							unknown = append(unknown, unknownTopicID(t.TopicID, t.Partitions))
							continue
						}
						name = mt.Name
					}
					topics = append(topics, group.FetchTopic{Topic: name, Partitions: t.Partitions})
				}
			}
			fr := &group.FetchRequest{Group: g.Group, Topics: topics, RequireStable: r.RequireStable, MemberEpoch: g.MemberEpoch}
			if g.MemberID != nil {
				fr.MemberID = *g.MemberID
			}
			var fetched []group.FetchedTopic
			var err error = kerr.GroupAuthorizationFailed
			if h.authorized(req, opDescribe, resGroup, g.Group) {
				fetched, err = h.groups.FetchOffsetsFor(fr)
				fetched = h.authorizedOffsets(req, fetched, g.Topics != nil)
			}
			rg := kmsg.NewOffsetFetchResponseGroup()
			rg.Group, rg.ErrorCode = g.Group, errCode(err)
			for _, t := range fetched {
				rt := kmsg.NewOffsetFetchResponseGroupTopic()
				rt.Topic = t.Topic
				if byID {
					mt := img.Topic(t.Topic)
					if mt == nil {
						continue // deleted: a v10 client cannot name it
					}
					rt.TopicID = mt.ID
				}
				for _, p := range t.Partitions {
					rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
					rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, errCode(p.Err)
					rp.Metadata = &p.Metadata
					rt.Partitions = append(rt.Partitions, rp)
				}
				rg.Topics = append(rg.Topics, rt)
			}
			if err == nil {
				rg.Topics = append(rg.Topics, unknown...)
			}
			resp.Groups = append(resp.Groups, rg)
		}
		respond(req, resp)
		return nil
	}
	var topics []group.FetchTopic
	if r.Topics != nil || r.Version < 2 {
		topics = make([]group.FetchTopic, len(r.Topics))
		for i, t := range r.Topics {
			topics[i] = group.FetchTopic{Topic: t.Topic, Partitions: t.Partitions}
		}
	}
	var fetched []group.FetchedTopic
	var err error = kerr.GroupAuthorizationFailed
	if h.authorized(req, opDescribe, resGroup, r.Group) {
		fetched, err = h.groups.FetchOffsetsFor(&group.FetchRequest{Group: r.Group, Topics: topics, RequireStable: r.RequireStable, MemberEpoch: -1})
		fetched = h.authorizedOffsets(req, fetched, topics != nil)
	}
	if err != nil {
		if r.Version >= 2 {
			resp.ErrorCode = errCode(err)
			respond(req, resp)
			return nil
		}
		// v1 has no top-level error: every partition carries it.
		fetched = make([]group.FetchedTopic, len(topics))
		for i, t := range topics {
			fetched[i].Topic = t.Topic
			for _, p := range t.Partitions {
				fetched[i].Partitions = append(fetched[i].Partitions, group.FetchedPartition{Partition: p, Offset: -1, LeaderEpoch: -1, Err: err})
			}
		}
	}
	for _, t := range fetched {
		rt := kmsg.NewOffsetFetchResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewOffsetFetchResponseTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p.Partition, p.Offset, p.LeaderEpoch, errCode(p.Err)
			rp.Metadata = &p.Metadata
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}

// unknownTopicID answers a v10 topic whose id the metadata does not know:
// UNKNOWN_TOPIC_ID and offset -1 on each partition, as Kafka does.
func unknownTopicID(id [16]byte, partitions []int32) kmsg.OffsetFetchResponseGroupTopic {
	rt := kmsg.NewOffsetFetchResponseGroupTopic()
	rt.TopicID = id
	for _, p := range partitions {
		rp := kmsg.NewOffsetFetchResponseGroupTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch, rp.ErrorCode = p, -1, -1, kerr.UnknownTopicID.Code
		rt.Partitions = append(rt.Partitions, rp)
	}
	return rt
}

// authorizedOffsets keeps the topics the principal may DESCRIBE: the
// others are left out of an all-topics fetch and answered
// TOPIC_AUTHORIZATION_FAILED when named, as Kafka does.
func (h *Handler) authorizedOffsets(req *server.Request, fetched []group.FetchedTopic, named bool) []group.FetchedTopic {
	if h.authz == nil {
		return fetched
	}
	out := fetched[:0]
	for _, t := range fetched {
		if !h.authorized(req, opDescribe, resTopic, t.Topic) {
			if !named {
				continue
			}
			parts := make([]group.FetchedPartition, len(t.Partitions))
			for i, p := range t.Partitions {
				parts[i] = group.FetchedPartition{Partition: p.Partition, Offset: -1, LeaderEpoch: -1, Err: kerr.TopicAuthorizationFailed}
			}
			t.Partitions = parts
		}
		out = append(out, t)
	}
	return out
}
