package coord

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// controlConfig is the configuration of the controller's decisions
// (coord/control), from this node's configs.
func (c *Controller) controlConfig() control.Config {
	return control.Config{
		SessionTimeout: c.cfg.BrokerSessionTimeout,
		Unclean:        control.UncleanFromImage(c.cfg.UncleanLeaderElection),
		// eligible.leader.replicas.version=1, the default of new Kafka
		// 4.1+ clusters (KIP-966).
		ELR:                    true,
		MinInsync:              control.MinInsyncFromImage(max(c.cfg.MinInsyncReplicas, 1)),
		AutoLeaderRebalance:    c.cfg.AutoLeaderRebalance,
		ImbalanceCheckInterval: c.cfg.LeaderImbalanceCheckInterval,
		// leader.imbalance.per.broker.percentage: Kafka 4.x's KRaft
		// controller ignores it; 0 is its rule.
	}
}

// maxRedecide bounds how often an admin request is decided again because
// the image moved on under it.
const maxRedecide = 5

// settle proposes the groups of an admin decision and answers each
// per-partition result from the group that carries it: a group that
// applied leaves the result as decided, a refused group answers its
// Rejection, a proposal whose outcome is unknown answers codeFor(err).
//
// The decision was made on this node's image, which may be behind the
// quorum's (a follower) or overtaken by another change before the entry
// commits; the records then fail Check (INVALID_UPDATE_VERSION,
// STALE_BROKER_EPOCH) and apply nothing. decide makes the decision again,
// for the results at the indexes given, on the image that refused them
// (propose returns once this node applied the entry); it returns the new
// groups and one result per index. After maxRedecide tries, or once ctx
// ends, the refusal is the answer.
func (c *Controller) settle(ctx context.Context, groups [][]metadata.Record, results []control.PartitionResult,
	decide func(img *metadata.Image, idx []int) ([][]metadata.Record, []control.PartitionResult)) {
	stale := c.settleOnce(ctx, groups, results)
	for try := 0; len(stale) > 0 && try < maxRedecide && ctx.Err() == nil; try++ {
		groups, sub := decide(c.Image(), stale)
		again := c.settleOnce(ctx, groups, sub)
		for j, i := range stale {
			results[i] = sub[j]
		}
		next := make([]int, len(again))
		for k, j := range again {
			next[k] = stale[j]
		}
		stale = next
	}
}

// settleOnce proposes groups and answers results (see settle); it returns
// the indexes of the results refused for a stale decision.
func (c *Controller) settleOnce(ctx context.Context, groups [][]metadata.Record, results []control.PartitionResult) []int {
	if len(groups) == 0 {
		return nil
	}
	res, err := c.propose(ctx, groups)
	var stale []int
	for i := range results {
		r := &results[i]
		g := r.Group
		if g < 0 {
			continue
		}
		r.Group = -1
		switch {
		case err != nil:
			r.Err, r.Message = codeFor(err), err.Error()
		case res[g] != nil:
			r.Err, r.Message = metadata.Split(res[g])
			if staleDecision(res[g]) {
				stale = append(stale, i)
			}
		}
	}
	return stale
}

// staleDecision reports whether a group was refused because it was decided
// on an image that has moved on: deciding again can succeed.
func staleDecision(err error) bool {
	return errors.Is(err, kerr.InvalidUpdateVersion) || errors.Is(err, kerr.StaleBrokerEpoch)
}

// codeName is the Kafka name of the error code err wraps
// (UNKNOWN_SERVER_ERROR for none), for Go errors that name it before the
// message.
func codeName(err error) string {
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Message
	}
	return kerr.UnknownServerError.Message
}

// TopicResults is one topic's part of the answer to a per-partition admin
// request (ElectLeaders, AlterPartitionReassignments).
type TopicResults struct {
	Topic      string
	Partitions []PartitionResult
}

// PartitionResult is one partition's outcome. Err is nil on success.
type PartitionResult struct {
	Partition int32
	Err       error
	Message   string
}

// topicResults groups flat results, made for a request's topics in order
// (each topic's partitions one after the other), back into those topics.
func topicResults(topics []string, counts []int, results []control.PartitionResult) []TopicResults {
	out := make([]TopicResults, len(topics))
	next := 0
	for i, name := range topics {
		out[i].Topic = name
		for _, r := range results[next : next+counts[i]] {
			out[i].Partitions = append(out[i].Partitions, PartitionResult{Partition: r.Partition, Err: r.Err, Message: r.Message})
		}
		next += counts[i]
	}
	return out
}
