package api

// CreatePartitions: v0-v3 (v2+ flexible). Grows topics to Count
// partitions; the new ones are placed like a new topic's, or as the
// Assignment says (one replica list per new partition; a null assignment
// means place them). Validate only. Every distinct topic of the request is
// echoed in the response, in request order: a topic named more than once
// is answered once, with INVALID_REQUEST, as Kafka's controller does.
// Errors: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (no increase),
// INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR. New partitions
// count against the client's controller_mutation_rate (KIP-599; strict
// from v3: throttle.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/net/server"
)

func init() { register(kmsg.CreatePartitions.Int16(), 0, 3, (*Handler).createPartitions) }

func (h *Handler) createPartitions(req *server.Request) error {
	r := kmsg.NewPtrCreatePartitionsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Topic]++
	}
	var specs []coord.PartitionSpec
	denied := map[string]bool{}
	throttled := map[string]bool{}
	mq := h.mutationQuota(req, 3)
	img := h.cluster.Image()
	for _, t := range r.Topics {
		if count[t.Topic] > 1 {
			continue
		}
		if !h.authorized(req, opAlter, resTopic, t.Topic) {
			denied[t.Topic] = true
			continue
		}
		if top := img.Topic(t.Topic); top != nil && !r.ValidateOnly && !mq.take(int(t.Count)-len(top.Partitions)) {
			throttled[t.Topic] = true
			continue
		}
		s := coord.PartitionSpec{Topic: t.Topic, Count: t.Count}
		if t.Assignment != nil {
			s.Assignments = make([][]int32, len(t.Assignment))
			for i, a := range t.Assignment {
				s.Assignments[i] = a.Replicas
			}
		}
		specs = append(specs, s)
	}
	var results []coord.Result
	if len(specs) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), timeout(r.TimeoutMillis))
		defer cancel()
		results = h.cluster.CreatePartitions(ctx, specs, r.ValidateOnly)
	}
	resp := kmsg.NewPtrCreatePartitionsResponse()
	answered := map[string]bool{}
	next := 0 // the next result, in spec order
	for _, t := range r.Topics {
		if answered[t.Topic] {
			continue
		}
		answered[t.Topic] = true
		rt := kmsg.NewCreatePartitionsResponseTopic()
		rt.Topic = t.Topic
		if count[t.Topic] > 1 {
			rt.ErrorCode = kerr.InvalidRequest.Code
			msg := "Duplicate topic name."
			rt.ErrorMessage = &msg
		} else if throttled[t.Topic] {
			rt.ErrorCode, rt.ErrorMessage = kerr.ThrottlingQuotaExceeded.Code, strPtr(throttlingMessage)
		} else if denied[t.Topic] {
			rt.ErrorCode, rt.ErrorMessage = kerr.TopicAuthorizationFailed.Code, strPtr(kerr.TopicAuthorizationFailed.Description)
		} else {
			res := results[next]
			next++
			if res.Err != nil {
				rt.ErrorCode = errCode(res.Err)
				if res.Message != "" {
					msg := res.Message
					rt.ErrorMessage = &msg
				}
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	resp.ThrottleMillis = mq.finish()
	respond(req, resp)
	return nil
}
