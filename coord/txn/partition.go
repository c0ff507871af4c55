package txn

import "kzero/coord/shards"

// TopicName is Kafka's internal topic of transaction state.
const TopicName = "__transaction_state"

// PartitionFor is the __transaction_state partition of a transactional
// id: Utils.abs(transactionalId.hashCode()) % partitions, the hash Kafka
// uses for groups too.
func PartitionFor(transactionalID string, partitions int32) int32 {
	return shards.PartitionFor(transactionalID, partitions)
}
