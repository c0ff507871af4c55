package api

// OffsetCommit: v0-v10. KIP-896 removed v0/v1 from Kafka 4.0; kzero serves
// them for the clients still using them (sarama before 1.23 commits with
// v1). v0 has no generation or member: a commit outside group management,
// stored in __consumer_offsets like any other (Kafka 3.9 wrote v0 commits
// to ZooKeeper, and refused them in KRaft mode; kzero has no ZooKeeper).
// v1 adds the generation and member, and a commit timestamp per partition
// that, when set, is the offset's commit time (expiry counts from it), as
// Kafka's coordinator keeps it. v2-v4 carry a retention
// time that sets the offsets' expiry (KIP-211 dropped it in v5); v6 adds
// the leader epoch (KIP-320), v7 group.instance.id (KIP-345), v8 is
// flexible. A commit with generation -1 and no member is outside group
// management and allowed only while the group has no members; otherwise
// the generation and member must be the group's (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID, REBALANCE_IN_PROGRESS). From v9 a
// commit with a generation to a group that does not exist gets
// GROUP_ID_NOT_FOUND. A member of a KIP-848 consumer group commits with
// v9+ (UNSUPPORTED_VERSION before) and its member epoch as the
// generation: a newer epoch than the member's gets STALE_MEMBER_EPOCH, an
// older one is accepted for the partitions the member held since then
// (KIP-1251). Partitions of topics that do not exist get
// UNKNOWN_TOPIC_OR_PARTITION; metadata beyond offset.metadata.max.bytes
// OFFSET_METADATA_TOO_LARGE. The offsets are written to __consumer_offsets
// (acks=-1) before the response. v10 (KIP-848, Kafka 4.2) names topics by
// id only, in the request and the response: an id the metadata does not
// know gets UNKNOWN_TOPIC_ID on each of its partitions, as Kafka answers.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/net/server"
)

func init() { register(kmsg.OffsetCommit.Int16(), 0, 10, (*Handler).offsetCommit).since4(2) }

func (h *Handler) offsetCommit(req *server.Request) error {
	r := kmsg.NewPtrOffsetCommitRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	img := h.cluster.Image()
	cr := &group.CommitRequest{Group: r.Group, Generation: r.Generation, MemberID: r.MemberID,
		RetentionMs: -1, UnknownGroupIsNotFound: r.Version >= 9}
	if r.InstanceID != nil {
		cr.InstanceID = *r.InstanceID
	}
	if r.Version <= 4 {
		cr.RetentionMs = r.RetentionTimeMillis
	}
	resp := kmsg.NewPtrOffsetCommitResponse()
	groupDenied := !h.authorized(req, opRead, resGroup, r.Group)
	// where[i] is the response partition of cr.Offsets[i].
	var where []*kmsg.OffsetCommitResponseTopicPartition
	resp.Topics = make([]kmsg.OffsetCommitResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		*rt = kmsg.NewOffsetCommitResponseTopic()
		rt.Topic, rt.TopicID = t.Topic, t.TopicID
		rt.Partitions = make([]kmsg.OffsetCommitResponseTopicPartition, len(t.Partitions))
		topic, missing := img.Topic(t.Topic), kerr.UnknownTopicOrPartition
		if r.Version >= 10 {
			topic, missing = img.TopicByID(t.TopicID), kerr.UnknownTopicID
		}
		for j, p := range t.Partitions {
			rp := &rt.Partitions[j]
			*rp = kmsg.NewOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			if groupDenied {
				rp.ErrorCode = kerr.GroupAuthorizationFailed.Code
				continue
			}
			name := t.Topic
			if topic != nil {
				name = topic.Name
			}
			if name != "" && !h.authorized(req, opRead, resTopic, name) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				continue
			}
			switch {
			case topic == nil:
				rp.ErrorCode = missing.Code
				continue
			case p.Partition < 0 || int(p.Partition) >= len(topic.Partitions):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			o := group.CommitOffset{TopicPartition: group.TopicPartition{Topic: topic.Name, Partition: p.Partition},
				Offset: p.Offset, LeaderEpoch: -1}
			if r.Version >= 6 {
				o.LeaderEpoch = p.LeaderEpoch
			}
			if r.Version == 1 {
				o.CommitTime = p.Timestamp
			}
			if p.Metadata != nil {
				o.Metadata = *p.Metadata
			}
			cr.Offsets = append(cr.Offsets, o)
			where = append(where, rp)
		}
	}
	if len(cr.Offsets) > 0 {
		for i, err := range h.groups.CommitOffsets(cr) {
			where[i].ErrorCode = errCode(err)
		}
	}
	respond(req, resp)
	return nil
}
