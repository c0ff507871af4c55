package api

// CreateTopics: v0-v7 (v0-v1 removed from Kafka 4.0 by KIP-896, served as
// Kafka 3.9 did: v0 has no validate-only flag, v0 answers no error
// message, v0-v1 no throttle time; the broker treats -1 partitions or
// replication factor the same in every version, as Kafka's controller
// did, only Kafka's client refused to send them below v4). NumPartitions / ReplicationFactor -1 take the
// broker defaults (KIP-464); explicit replica assignments; configs checked
// against Kafka's topic config definitions; validate only. From v5 the
// response carries the created topic's partitions, replication factor and
// every config with its value and source (KIP-525); v7 the topic id. A
// topic named twice in one request fails with INVALID_REQUEST. Partitions
// count against the client's controller_mutation_rate (KIP-599; strict,
// THROTTLING_QUOTA_EXCEEDED, from v6: throttle.go).

import (
	"context"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.CreateTopics.Int16(), 0, 7, (*Handler).createTopics).since4(2) }

func (h *Handler) createTopics(req *server.Request) error {
	r := kmsg.NewPtrCreateTopicsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	count := map[string]int{}
	for _, t := range r.Topics {
		count[t.Topic]++
	}
	var specs []coord.TopicSpec
	var index []int // request topic -> spec, -1 for a duplicate, -2 denied, -3 throttled
	mq := h.mutationQuota(req, 6)
	for _, t := range r.Topics {
		if count[t.Topic] > 1 {
			index = append(index, -1)
			continue
		}
		if !h.authorized(req, opCreate, resCluster, clusterName) && !h.authorized(req, opCreate, resTopic, t.Topic) {
			index = append(index, -2)
			continue
		}
		if n := createdPartitions(t, h.cfg.NumPartitions); !r.ValidateOnly && !mq.take(n) {
			index = append(index, -3)
			continue
		}
		s := coord.TopicSpec{Name: t.Topic, NumPartitions: t.NumPartitions, ReplicationFactor: t.ReplicationFactor}
		if len(t.ReplicaAssignment) > 0 {
			s.Assignments = map[int32][]int32{}
			for _, a := range t.ReplicaAssignment {
				s.Assignments[a.Partition] = a.Replicas
			}
		}
		if len(t.Configs) > 0 {
			s.Configs = map[string]string{}
			for _, c := range t.Configs {
				if c.Value != nil {
					s.Configs[c.Name] = *c.Value
				}
			}
		}
		index = append(index, len(specs))
		specs = append(specs, s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout(r.TimeoutMillis))
	defer cancel()
	results := h.cluster.CreateTopics(ctx, specs, r.ValidateOnly)
	resp := kmsg.NewPtrCreateTopicsResponse()
	broker := h.cluster.BrokerConfigs()
	for i, t := range r.Topics {
		rt := kmsg.NewCreateTopicsResponseTopic()
		rt.Topic = t.Topic
		if index[i] == -3 {
			rt.ErrorCode, rt.ErrorMessage = kerr.ThrottlingQuotaExceeded.Code, strPtr(throttlingMessage)
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if index[i] == -2 {
			rt.ErrorCode, rt.ErrorMessage = kerr.TopicAuthorizationFailed.Code, strPtr("Authorization failed.")
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if index[i] < 0 {
			rt.ErrorCode = kerr.InvalidRequest.Code
			msg := "Create topics request from client contains duplicate topic " + t.Topic
			rt.ErrorMessage = &msg
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		res := results[index[i]]
		rt.TopicID = res.ID
		if res.Err == nil && !r.ValidateOnly {
			if err := h.offlineCreated(t.Topic); err != nil {
				res.Err, res.Message = metadata.Split(err)
			}
		}
		if res.Err != nil {
			rt.ErrorCode = errCode(res.Err)
			if res.Message != "" {
				msg := res.Message
				rt.ErrorMessage = &msg
			}
		} else {
			rt.NumPartitions, rt.ReplicationFactor = res.NumPartitions, res.ReplicationFactor
			for _, e := range topicconfig.Describe(specs[index[i]].Configs, broker) {
				c := kmsg.NewCreateTopicsResponseTopicConfig()
				c.Name, c.ReadOnly, c.Source, c.IsSensitive = e.Name, e.ReadOnly, int8(e.Source), e.Sensitive
				if !e.Sensitive {
					v := e.Value
					c.Value = &v
				}
				rt.Configs = append(rt.Configs, c)
			}
		}
		resp.Topics = append(resp.Topics, rt)
	}
	resp.ThrottleMillis = mq.finish()
	respond(req, resp)
	return nil
}

// createdPartitions is the partitions a topic of CreateTopics asks for
// (its assignment's, or its count, -1 meaning num.partitions), what the
// controller mutation quota counts.
func createdPartitions(t kmsg.CreateTopicsRequestTopic, numPartitions int32) int {
	switch {
	case len(t.ReplicaAssignment) > 0:
		return len(t.ReplicaAssignment)
	case t.NumPartitions == -1:
		return int(numPartitions)
	}
	return int(t.NumPartitions)
}

// offlineCreated reports KAFKA_STORAGE_ERROR for a topic just created with
// partitions led here whose logs failed to open (CreateTopics returns once
// this broker applied the topic), so a creation is never a silent success.
func (h *Handler) offlineCreated(name string) error {
	if h.replicas == nil || h.replicas.OfflineCount() == 0 {
		return nil
	}
	t := h.cluster.Image().Topic(name)
	if t == nil {
		return nil
	}
	var offline []int32
	var cause error
	for _, p := range t.Partitions {
		if p.Leader != h.cfg.NodeID {
			continue
		}
		if err := h.replicas.Offline(log.TopicPartition{Topic: name, Partition: p.Partition}); err != nil {
			offline = append(offline, p.Partition)
			cause = err
		}
	}
	if len(offline) == 0 {
		return nil
	}
	return metadata.Reject(kerr.KafkaStorageError, "topic %s was created, but %d of its partitions (%v) failed to open on broker %d: %v",
		name, len(offline), offline[:min(len(offline), 20)], h.cfg.NodeID, cause)
}

// timeout turns a request's timeout into a duration, with a floor so a
// zero timeout still lets a local quorum commit.
func timeout(ms int32) time.Duration {
	return max(time.Duration(ms)*time.Millisecond, 5*time.Second)
}
