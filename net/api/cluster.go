package api

import (
	"context"

	"kzero/coord/metadata"
)

// Cluster is what the handlers need of the controller: the current
// metadata image, and topic creation for Metadata's auto-create.
type Cluster interface {
	Image() *metadata.Image
	// AutoCreateTopic creates a topic with the broker's defaults
	// (num.partitions, default.replication.factor) and returns once the
	// image holds it; nil when it exists already.
	AutoCreateTopic(ctx context.Context, name string) error
}

// topicName resolves a topic id (Produce v13, Fetch v13+).
func (h *Handler) topicName(id [16]byte) (string, bool) {
	if t := h.cluster.Image().TopicByID(id); t != nil {
		return t.Name, true
	}
	return "", false
}
