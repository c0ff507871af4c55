package api

// DeleteTopics: v0-v6 (v0, removed from Kafka 4.0 by KIP-896, is v1
// without the throttle time; served as Kafka 3.9 did). By name, and from v6 by name or topic id
// (KIP-516). The partitions' logs are removed when the broker applies the
// new metadata image. Deleted partitions count against the client's
// controller_mutation_rate (KIP-599; strict from v5: throttle.go).

import (
	"context"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/metadata"
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
	mq := h.mutationQuota(req, 5)
	var results []coord.DeleteResult
	if h.cfg.TopicDeletionDisabled {
		results = deletionDisabled(r.Version, names, ids)
	} else {
		results = h.deleteAuthorized(ctx, req, names, ids, mq)
	}
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
			rt.ErrorCode = errCode(res.Err)
			if res.Message != "" {
				msg := res.Message
				rt.ErrorMessage = &msg
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	resp.ThrottleMillis = mq.finish()
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

// deleteAuthorized deletes the topics the principal may DELETE and answers
// TOPIC_AUTHORIZATION_FAILED for the others, and THROTTLING_QUOTA_EXCEEDED
// for those the controller mutation quota refuses; results are in the
// order of names, then ids, as Cluster.DeleteTopics returns them.
func (h *Handler) deleteAuthorized(ctx context.Context, req *server.Request, names []string, ids [][16]byte, mq *mutationQuota) []coord.DeleteResult {
	if h.authz == nil && !mq.enabled {
		return h.cluster.DeleteTopics(ctx, names, ids)
	}
	img := h.cluster.Image()
	out := make([]coord.DeleteResult, len(names)+len(ids))
	var okNames []string
	var okIDs [][16]byte
	var at []int // position in out of each name, then id, asked for
	denied := coord.DeleteResult{Err: kerr.TopicAuthorizationFailed, Message: "Authorization failed."}
	throttled := coord.DeleteResult{Err: kerr.ThrottlingQuotaExceeded, Message: throttlingMessage}
	partitions := func(t *metadata.Topic) int {
		if t == nil {
			return 0
		}
		return len(t.Partitions)
	}
	for i, n := range names {
		if !h.authorized(req, opDelete, resTopic, n) {
			out[i] = denied
			out[i].Name = n
			continue
		}
		if !mq.take(partitions(img.Topic(n))) {
			out[i] = throttled
			out[i].Name = n
			continue
		}
		okNames = append(okNames, n)
		at = append(at, i)
	}
	for i, id := range ids {
		t := img.TopicByID(id)
		if t != nil && !h.authorized(req, opDelete, resTopic, t.Name) {
			out[len(names)+i] = denied
			out[len(names)+i].ID = id
			continue
		}
		if !mq.take(partitions(t)) {
			out[len(names)+i] = throttled
			out[len(names)+i].ID = id
			continue
		}
		okIDs = append(okIDs, id)
		at = append(at, len(names)+i)
	}
	for k, res := range h.cluster.DeleteTopics(ctx, okNames, okIDs) {
		out[at[k]] = res
	}
	return out
}

// deletionDisabled answers every topic of a DeleteTopics request when
// delete.topic.enable is false, as Kafka's controller does: before v3 the
// error code TOPIC_DELETION_DISABLED did not exist, so those versions get
// INVALID_REQUEST.
func deletionDisabled(version int16, names []string, ids [][16]byte) []coord.DeleteResult {
	res := coord.DeleteResult{Err: kerr.TopicDeletionDisabled, Message: "Topic deletion is disabled."}
	if version < 3 {
		res.Err = kerr.InvalidRequest
	}
	out := make([]coord.DeleteResult, 0, len(names)+len(ids))
	for _, n := range names {
		r := res
		r.Name = n
		out = append(out, r)
	}
	for _, id := range ids {
		r := res
		r.ID = id
		out = append(out, r)
	}
	return out
}
