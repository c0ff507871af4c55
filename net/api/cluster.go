package api

import (
	"context"

	"kzero/coord"
	"kzero/coord/control"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
)

// Cluster is what the handlers need of the controller: the current
// metadata image and the changes admin requests make. *coord.Controller
// provides most of it; the broker adds auto-creation with its defaults and
// its static configs.
type Cluster interface {
	Image() *metadata.Image
	// Quorum is the metadata quorum as this node sees it.
	Quorum() coord.Quorum
	// AutoCreateTopic creates a topic with the broker's defaults
	// (num.partitions, default.replication.factor) and returns once the
	// image holds it; nil when it exists already.
	AutoCreateTopic(ctx context.Context, name string) error
	CreateTopics(ctx context.Context, specs []coord.TopicSpec, validateOnly bool) []coord.TopicResult
	DeleteTopics(ctx context.Context, names []string, ids [][16]byte) []coord.DeleteResult
	CreatePartitions(ctx context.Context, specs []coord.PartitionSpec, validateOnly bool) []coord.Result
	AlterConfigs(ctx context.Context, alters []coord.ConfigAlter, validateOnly bool) []coord.Result
	// AlterScramCredentials applies SCRAM credential changes, one group of
	// records per user.
	AlterScramCredentials(ctx context.Context, groups [][]metadata.Record) []coord.Result
	// AlterACLs applies ACL changes, each group whole or not at all.
	AlterACLs(ctx context.Context, groups [][]metadata.Record) []coord.Result
	// AlterDelegationTokens applies delegation token changes, each group
	// whole or not at all.
	AlterDelegationTokens(ctx context.Context, groups [][]metadata.Record) []coord.Result
	// AlterClientQuotas applies client quota changes, one group per entity.
	AlterClientQuotas(ctx context.Context, groups [][]metadata.Record) []coord.Result
	AllocateProducerIDs(ctx context.Context, brokerID int32) (first int64, size int32, err error)
	// ElectLeaders, AlterPartitionReassignments, ListPartitionReassignments
	// and UnregisterBroker are the cluster admin requests (coord).
	ElectLeaders(ctx context.Context, typ control.ElectionType, partitions []control.TopicPartitions) ([]coord.TopicResults, error)
	AlterPartitionReassignments(ctx context.Context, topics []coord.ReassignTopic, keepRF bool) []coord.TopicResults
	ListPartitionReassignments(ctx context.Context, partitions []control.TopicPartitions) []control.Ongoing
	UnregisterBroker(ctx context.Context, id int32) coord.Result
	// BrokerConfigs are where a topic config without its own value comes
	// from, for DescribeConfigs and CreateTopics' response.
	BrokerConfigs() topicconfig.BrokerConfigs
}

// topicName resolves a topic id (Produce v13, Fetch v13+).
func (h *Handler) topicName(id [16]byte) (string, bool) {
	if t := h.cluster.Image().TopicByID(id); t != nil {
		return t.Name, true
	}
	return "", false
}
