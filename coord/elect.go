package coord

import (
	"context"
	"errors"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// ElectLeaders runs an ElectLeaders request (KIP-460): a preferred
// election moves each partition's leadership to its first replica when
// that one is in the ISR and active; an unclean one elects a leader for a
// partition without one, from outside the ISR if need be (the operator
// asked for it: unclean.leader.election.enable is not consulted). The
// answer has one TopicResults per requested topic, in request order, each
// partition's outcome (ELECTION_NOT_NEEDED, PREFERRED_LEADER_NOT_AVAILABLE,
// ELIGIBLE_LEADERS_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION, or a
// proposal's failure). With partitions nil every partition of every topic
// is tried and the answer has every topic, listing only the partitions
// that needed an election, as Kafka's controller does. An unknown election
// type is INVALID_REQUEST for the whole request.
//
// Any node serves it: it catches up with the quorum's commit index (a read
// barrier), decides on its image and proposes; raft takes the proposal to
// the quorum leader. It returns once the changes applied here.
func (c *Controller) ElectLeaders(ctx context.Context, typ control.ElectionType, partitions []control.TopicPartitions) ([]TopicResults, error) {
	_ = c.caughtUp(ctx) // without a reachable quorum leader: decide on this node's image
	ctl := control.New(c.controlConfig())
	img := c.Image()
	groups, results, err := ctl.ElectLeaders(img, typ, partitions)
	if err != nil {
		return nil, err
	}
	c.settle(ctx, groups, results, func(img *metadata.Image, idx []int) ([][]metadata.Record, []control.PartitionResult) {
		tps := make([]control.TopicPartitions, len(idx))
		for j, i := range idx {
			tps[j] = control.TopicPartitions{Topic: results[i].Topic, Partitions: []int32{results[i].Partition}}
		}
		groups, sub, _ := ctl.ElectLeaders(img, typ, tps)
		return groups, sub
	})
	var topics []string
	var counts []int
	if partitions != nil {
		for _, tps := range partitions {
			topics, counts = append(topics, tps.Topic), append(counts, len(tps.Partitions))
		}
		return topicResults(topics, counts, results), nil
	}
	// Every topic of the image decided on, its partitions that needed an
	// election (results come topic by topic, in the image's order).
	var kept []control.PartitionResult
	next := 0
	for _, t := range img.Topics() {
		n := 0
		for ; next < len(results) && results[next].Topic == t.Name; next++ {
			if !errors.Is(results[next].Err, kerr.ElectionNotNeeded) { // decided again meanwhile
				kept = append(kept, results[next])
				n++
			}
		}
		topics, counts = append(topics, t.Name), append(counts, n)
	}
	return topicResults(topics, counts, kept), nil
}
