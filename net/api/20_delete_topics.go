package api

// DeleteTopics: v0-v6 (v0, removed from Kafka 4.0 by KIP-896, is v1
// without the throttle time; served as Kafka 3.9 did). By name, and from v6 by name or topic id
// (KIP-516). The partitions' logs are removed when the broker applies the
// new metadata image.

import (
	"context"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.DeleteTopics.Int16(), 0, 6, (*Handler).deleteTopics).since4(1) }

func (h *Handler) deleteTopics(req *server.Request) error {
	r := kmsg.NewPtrDeleteTopicsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	names := r.TopicNames
	var ids [][16]byte
	var byID []int // request topic (v6) -> position in results
	if r.Version >= 6 {
		names = nil
		for _, t := range r.Topics {
			if t.Topic != nil {
				byID = append(byID, len(names))
				names = append(names, *t.Topic)
			} else {
				byID = append(byID, -1-len(ids))
				ids = append(ids, t.TopicID)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(r.TimeoutMillis))
	defer cancel()
	results := h.cluster.DeleteTopics(ctx, names, ids)
	resp := kmsg.NewPtrDeleteTopicsResponse()
	add := func(i int) {
		res := results[i]
		rt := kmsg.NewDeleteTopicsResponseTopic()
		if res.Name != "" {
			name := res.Name
			rt.Topic = &name
		}
		rt.TopicID = res.ID
		if res.Err != nil {
			rt.ErrorCode = res.Err.Code
			if res.Message != "" {
				msg := res.Message
				rt.ErrorMessage = &msg
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if r.Version < 6 {
		for i := range names {
			add(i)
		}
	} else {
		for _, k := range byID {
			if k >= 0 {
				add(k)
			} else {
				add(len(names) + (-1 - k))
			}
		}
	}
	respond(req, resp)
	return nil
}
