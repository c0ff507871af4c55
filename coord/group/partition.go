package group

import "kzero/coord/shards"

// TopicName is Kafka's internal topic of group metadata and offsets.
const TopicName = "__consumer_offsets"

// PartitionFor is the __consumer_offsets partition of a group, as Kafka
// computes it: Utils.abs(groupId.hashCode()) % partitions.
func PartitionFor(group string, partitions int32) int32 {
	return shards.PartitionFor(group, partitions)
}
