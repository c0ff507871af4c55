package api

// ListOffsets: v0-v11. v0 (removed from Kafka 4.0 by KIP-896, served for
// the clients still using it, Burrow 1.2 among them) answers as Kafka 3.9
// did: see legacy_offsets.go. From v1, special timestamps: -1 latest (the
// high watermark, or the last stable offset for read_committed), -2
// earliest (the log start offset), -3 the record with the largest
// timestamp (v7+, KIP-734), -4 earliest local (v8+, KIP-405; the log start,
// nothing is tiered), -5 latest tiered (v9+, KIP-1005) and -6 earliest
// pending upload (v11+, KIP-1023): nothing is tiered, so offset and epoch
// -1 and no error, as Kafka answers for a topic without remote storage.
// v10 adds a timeout for remote lookups (KIP-1075), which kzero never
// makes. Any other timestamp finds the first record at or after it through
// the time index, below the bound a fetch would have.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.ListOffsets.Int16(), 0, 11, (*Handler).listOffsets).since4(1) }

func (h *Handler) listOffsets(req *server.Request) error {
	r := kmsg.NewPtrListOffsetsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrListOffsetsResponse()
	for i := range r.Topics {
		t := &r.Topics[i]
		rt := kmsg.NewListOffsetsResponseTopic()
		rt.Topic = t.Topic
		for j := range t.Partitions {
			p := &t.Partitions[j]
			rp := kmsg.NewListOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			rp.Timestamp, rp.Offset, rp.LeaderEpoch = -1, -1, -1
			if h.authz != nil && !h.authorized(req, opDescribe, resTopic, t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if r.Version == 0 {
				var err error
				tp := log.TopicPartition{Topic: t.Topic, Partition: p.Partition}
				if rp.OldStyleOffsets, err = h.legacyOffsets(tp, p.Timestamp, p.MaxNumOffsets, r.ReplicaID); err != nil {
					rp.ErrorCode = errCode(err)
				}
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			if err := h.listOffset(log.TopicPartition{Topic: t.Topic, Partition: p.Partition}, p, r.IsolationLevel == 1, &rp); err != nil {
				rp.ErrorCode = errCode(err)
				rp.Timestamp, rp.Offset, rp.LeaderEpoch = -1, -1, -1
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}

func (h *Handler) listOffset(tp log.TopicPartition, p *kmsg.ListOffsetsRequestTopicPartition, committed bool, rp *kmsg.ListOffsetsResponseTopicPartition) error {
	part, err := h.replicas.Get(tp)
	if err != nil {
		return err
	}
	if !part.IsLeader() {
		return kerr.NotLeaderForPartition
	}
	if err := part.CheckLeaderEpoch(p.CurrentLeaderEpoch); err != nil {
		return err
	}
	bound := part.HighWatermark()
	if committed {
		bound = part.LastStableOffset()
	}
	epoch := part.LeaderEpoch()
	switch p.Timestamp {
	case -1: // latest
		rp.Offset, rp.LeaderEpoch = bound, epoch
	case -2, -4: // earliest, earliest local
		rp.Offset, rp.LeaderEpoch = part.LogStartOffset(), epoch
	case -5, -6: // latest tiered, earliest pending upload: nothing is tiered
	case -3: // max timestamp
		pos, ok, err := part.MaxTimestamp()
		if err != nil {
			return err
		}
		if ok && pos.Offset < bound {
			rp.Offset, rp.Timestamp, rp.LeaderEpoch = pos.Offset, pos.Timestamp, pos.LeaderEpoch
		}
	default:
		if p.Timestamp < 0 {
			return kerr.InvalidRequest
		}
		pos, ok, err := part.OffsetForTimestamp(p.Timestamp)
		if err != nil {
			return err
		}
		if ok && pos.Offset < bound {
			rp.Offset, rp.Timestamp, rp.LeaderEpoch = pos.Offset, pos.Timestamp, pos.LeaderEpoch
		}
	}
	return nil
}
