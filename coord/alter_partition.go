package coord

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// AlterPartition changes a partition's ISR as its leader (this node) asks:
// Kafka's AlterPartition request, decided with coord/control's checks on
// this node's image (stale epochs, ineligible replicas), proposed to the
// quorum, and re-checked when it applies (the partition epoch must not
// have moved meanwhile). Every node learns the new ISR from the metadata
// log, the leader too. It returns nil once the change applied (or there
// was nothing to change), else why not: a kerr error from the checks, a
// rejection at apply time, or the proposal's failure.
func (c *Controller) AlterPartition(ctx context.Context, topicID [16]byte, partition, leaderEpoch, partitionEpoch int32, isr []int32) error {
	img := c.Image()
	b, ok := img.Broker(c.cfg.NodeID)
	if !ok {
		return fmt.Errorf("broker %d is not registered: %w", c.cfg.NodeID, kerr.StaleBrokerEpoch)
	}
	members := make([]control.ISRMember, len(isr))
	for i, r := range isr {
		members[i] = control.ISRMember{Broker: r, Epoch: -1}
	}
	req := control.AlterPartition{Broker: b.ID, BrokerEpoch: b.Epoch, Topics: []control.AlterPartitionTopic{{
		TopicID: topicID,
		Partitions: []control.ISRChange{{Partition: partition, LeaderEpoch: leaderEpoch, PartitionEpoch: partitionEpoch,
			NewISR: members, LeaderRecovery: metadata.Recovered}},
	}}}
	ctl := control.New(control.Config{SessionTimeout: c.cfg.BrokerSessionTimeout})
	groups, reply := ctl.AlterPartition(img, req)
	if reply.Err != nil {
		return reply.Err
	}
	res := reply.Topics[0].Partitions[0]
	if res.Err != nil && !errors.Is(res.Err, kerr.NewLeaderElected) {
		return fmt.Errorf("%s: %w", res.Message, res.Err)
	}
	if len(groups) == 0 {
		return nil
	}
	rejs, err := c.propose(ctx, groups)
	if err != nil {
		return err
	}
	for _, r := range rejs {
		if r != nil {
			code, msg := metadata.Split(r)
			return fmt.Errorf("%s: %w", msg, code)
		}
	}
	return nil
}
