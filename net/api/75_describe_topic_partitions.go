package api

// DescribeTopicPartitions: v0 (flexible). KIP-966: topic and partition
// metadata with pagination, for topics with many partitions. Topics by
// name, or every topic when none is named; answered in name order from the
// cursor on (the cursor's topic from the cursor's partition), at most
// ResponsePartitionLimit partitions (clamped to 1..2000, Kafka's
// max.request.partition.size.limit); when more remain, NextCursor names
// the first partition not sent. A named topic that does not exist is
// answered with UNKNOWN_TOPIC_OR_PARTITION (INVALID_TOPIC_EXCEPTION for an
// invalid name); when every topic is asked for, none can be missing. A
// cursor whose topic is not among the named ones, or with a negative
// partition, fails the request with INVALID_REQUEST for every topic.
// A partition without a leader has leader -1 and no error, as in Kafka.
// Each partition lists its eligible leader replicas and last known
// leader (KIP-966, coord/control/change.go). Without an authorizer each topic's authorized operations, missing
// topics' too, are all of TOPIC's.

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/server"
)

func init() {
	register(kmsg.DescribeTopicPartitions.Int16(), 0, 0, (*Handler).describeTopicPartitions)
}

// maxResponsePartitions is Kafka's max.request.partition.size.limit default.
const maxResponsePartitions = 2000

// topicOperations is the bit field of every operation on a TOPIC: READ 3,
// WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10,
// ALTER_CONFIGS 11.
const topicOperations = 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<8 | 1<<10 | 1<<11

func (h *Handler) describeTopicPartitions(req *server.Request) error {
	r := kmsg.NewPtrDescribeTopicPartitionsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDescribeTopicPartitionsResponse()
	img := h.cluster.Image()
	all := len(r.Topics) == 0
	from := ""
	if r.Cursor != nil {
		from = r.Cursor.Topic
	}
	var names []string
	if all {
		for _, t := range img.Topics() {
			if t.Name >= from {
				names = append(names, t.Name)
			}
		}
	} else {
		for _, t := range r.Topics {
			if t.Topic >= from {
				names = append(names, t.Topic)
			}
		}
		slices.Sort(names)
		names = slices.Compact(names)
	}
	if r.Cursor != nil && (r.Cursor.Partition < 0 || !all && !slices.Contains(names, r.Cursor.Topic)) {
		for _, t := range r.Topics {
			rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
			name := t.Topic
			rt.Topic = &name
			rt.ErrorCode = kerr.InvalidRequest.Code
			resp.Topics = append(resp.Topics, rt)
		}
		respond(req, resp)
		return nil
	}

	remaining := int(max(min(r.ResponsePartitionLimit, maxResponsePartitions), 1))
	for _, name := range names {
		if remaining == 0 {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: 0}
			break
		}
		rt := kmsg.NewDescribeTopicPartitionsResponseTopic()
		rt.Topic = &name
		rt.IsInternal = name == "__consumer_offsets" || name == "__transaction_state"
		rt.AuthorizedOperations = h.authorizedOps(req, resTopic, name, topicOperations)
		t := img.Topic(name)
		if !h.authorized(req, opDescribe, resTopic, name) {
			if all {
				continue // hidden, as in Metadata
			}
			rt.ErrorCode, rt.AuthorizedOperations = kerr.TopicAuthorizationFailed.Code, authorizedOperationsOmitted
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		if t == nil {
			if all {
				continue
			}
			rt.ErrorCode = kerr.UnknownTopicOrPartition.Code
			if metadata.ValidateTopicName(name) != nil {
				rt.ErrorCode = kerr.InvalidTopicException.Code
			}
			resp.Topics = append(resp.Topics, rt)
			continue
		}
		rt.TopicID = t.ID
		start := 0
		if r.Cursor != nil && name == r.Cursor.Topic {
			start = int(r.Cursor.Partition)
		}
		end := min(len(t.Partitions), start+remaining)
		rt.Partitions = []kmsg.DescribeTopicPartitionsResponseTopicPartition{}
		for i := start; i < end; i++ {
			rt.Partitions = append(rt.Partitions, describedPartition(&t.Partitions[i]))
		}
		resp.Topics = append(resp.Topics, rt)
		if end < len(t.Partitions) {
			resp.NextCursor = &kmsg.DescribeTopicPartitionsResponseNextCursor{Topic: name, Partition: int32(end)}
			break
		}
		remaining -= len(rt.Partitions)
	}
	respond(req, resp)
	return nil
}

func describedPartition(p *metadata.Partition) kmsg.DescribeTopicPartitionsResponseTopicPartition {
	rp := kmsg.NewDescribeTopicPartitionsResponseTopicPartition()
	rp.Partition, rp.LeaderID, rp.LeaderEpoch = p.Partition, p.Leader, p.LeaderEpoch
	rp.Replicas, rp.ISR = p.Replicas, p.ISR
	rp.EligibleLeaderReplicas, rp.LastKnownELR, rp.OfflineReplicas = replicaList(p.ELR), replicaList(p.LastKnownELR), []int32{}
	rp.ISR = replicaList(p.ISR)
	return rp
}

// replicaList is ids, or an empty list for none.
func replicaList(ids []int32) []int32 {
	if ids == nil {
		return []int32{}
	}
	return ids
}
