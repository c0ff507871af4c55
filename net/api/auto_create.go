package api

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord"
	"kzero/coord/group"
	"kzero/coord/share"
	"kzero/coord/txn"
)

// autoCreateTimeout bounds one background creation, as Kafka bounds its
// CreateTopics request to the controller by request.timeout.ms (30s).
const autoCreateTimeout = 30 * time.Second

// autoCreator starts topic creations on behalf of Metadata requests, as
// Kafka's AutoTopicCreationManager does: the request that finds a topic
// missing starts its creation and answers at once, without waiting for
// it; one creation per topic is in flight, and the requests meanwhile
// answer the same way. Creations run on their own goroutines.
type autoCreator struct {
	mu       sync.Mutex
	inflight map[string]struct{}
}

// startAutoCreate starts creating a missing topic unless its creation is
// in flight already: an internal topic with its coordinator's layout,
// any other with the broker's defaults. A failure is only logged; the
// next Metadata request tries again.
func (h *Handler) startAutoCreate(name string) {
	c := &h.creating
	c.mu.Lock()
	if _, busy := c.inflight[name]; busy {
		c.mu.Unlock()
		return
	}
	if c.inflight == nil {
		c.inflight = map[string]struct{}{}
	}
	// The name aliases the request's buffer, which is reused once the
	// response is sent; the creation outlives it.
	name = strings.Clone(name)
	c.inflight[name] = struct{}{}
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			delete(c.inflight, name)
			c.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), autoCreateTimeout)
		defer cancel()
		if err := h.createMissingTopic(ctx, name); err != nil {
			h.logger.Warn("auto topic creation failed", "topic", name, "err", err)
		}
	}()
}

// createMissingTopic creates name and returns once the image holds it; nil
// when it exists already.
func (h *Handler) createMissingTopic(ctx context.Context, name string) error {
	switch name {
	case group.TopicName:
		return h.createInternalTopic(ctx, name, h.groups.TopicSpec)
	case txn.TopicName:
		return h.createInternalTopic(ctx, name, h.txns.TopicSpec)
	case share.StateTopic:
		if st := h.shares.Store(); st != nil {
			return h.createInternalTopic(ctx, name, st.TopicSpec)
		}
	}
	return h.cluster.AutoCreateTopic(ctx, name)
}

// createInternalTopic creates a coordinator's topic with the layout spec
// gives for the live brokers; nil when it exists already.
func (h *Handler) createInternalTopic(ctx context.Context, name string, spec func(liveBrokers int) (int32, int16, map[string]string)) error {
	parts, rf, configs := spec(len(h.cluster.Image().LiveBrokers()))
	res := h.cluster.CreateTopics(ctx, []coord.TopicSpec{{Name: name, NumPartitions: parts, ReplicationFactor: rf, Configs: configs}}, false)
	if err := res[0].Err; err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("%s: %w", res[0].Message, err)
	}
	return nil
}
