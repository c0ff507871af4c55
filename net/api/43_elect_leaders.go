package api

// ElectLeaders: v0-v2 (v2+ flexible). KIP-183 (preferred leader election
// through the admin API), KIP-460 (v1: election types, PREFERRED 0 and
// UNCLEAN 1; a top-level error code). A null topic list elects for every
// partition and answers only the partitions that needed an election (but
// every topic), as Kafka's controller does. Per partition:
// ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION; an unknown
// election type is INVALID_REQUEST, at the top and for every partition
// named. Any node serves it: the decision is proposed to the metadata
// quorum, which takes it to its leader (Kafka forwards it to the active
// controller).

import (
	"context"
	"strconv"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/control"
	"kzero/net/server"
)

func init() { register(kmsg.ElectLeaders.Int16(), 0, 2, (*Handler).electLeaders) }

func (h *Handler) electLeaders(req *server.Request) error {
	r := kmsg.NewPtrElectLeadersRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	var partitions []control.TopicPartitions
	if r.Topics != nil {
		partitions = make([]control.TopicPartitions, len(r.Topics))
		for i, t := range r.Topics {
			partitions[i] = control.TopicPartitions{Topic: t.Topic, Partitions: t.Partitions}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(r.TimeoutMillis))
	defer cancel()
	results, err := h.cluster.ElectLeaders(ctx, control.ElectionType(r.ElectionType), partitions)
	resp := kmsg.NewPtrElectLeadersResponse()
	if err != nil {
		resp.ErrorCode = errCode(err)
		msg := "Unknown election type " + strconv.Itoa(int(r.ElectionType))
		for _, t := range r.Topics {
			rt := kmsg.NewElectLeadersResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewElectLeadersResponseTopicPartition()
				rp.Partition, rp.ErrorCode, rp.ErrorMessage = p, errCode(err), &msg
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		respond(req, resp)
		return nil
	}
	for _, t := range results {
		rt := kmsg.NewElectLeadersResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewElectLeadersResponseTopicPartition()
			rp.Partition = p.Partition
			if p.Err != nil {
				rp.ErrorCode = errCode(p.Err)
				msg := p.Message
				if msg == "" {
					msg = kerrOf(p.Err).Description // Kafka's default message for the code
				}
				rp.ErrorMessage = &msg
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}
