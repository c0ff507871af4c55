package coord

import (
	"context"
	"fmt"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// ReplicaOffline tells the controller that this broker's replica of
// topic's partition went offline (its log failed an I/O operation): the
// replica leaves the ISR and the ELR, and a partition it led gets another
// leader (control.ReplicaOffline). The decision is made on this node's
// image after a read barrier and decided again if the image moved on
// before it applied, a few times at most. nil when nothing had to change.
func (c *Controller) ReplicaOffline(ctx context.Context, topic string, partition int32) error {
	_ = c.caughtUp(ctx) // without a reachable quorum leader: decide on this node's image
	ctl := control.New(c.controlConfig())
	for try := 0; ; try++ {
		groups, err := ctl.ReplicaOffline(c.Image(), c.cfg.NodeID, topic, partition)
		if err != nil {
			code, msg := metadata.Split(err)
			return fmt.Errorf("%s: %w", msg, code)
		}
		if len(groups) == 0 {
			return nil
		}
		res, err := c.propose(ctx, groups)
		switch {
		case err != nil:
			return err
		case res[0] == nil:
			return nil
		case !staleDecision(res[0]) || try == maxRedecide:
			code, msg := metadata.Split(res[0])
			return fmt.Errorf("%s: %w", msg, code)
		}
	}
}
