package coord

import (
	"context"
	"fmt"
	"time"

	"kzero/coord/control"
	"kzero/coord/metadata"
)

// UnregisterBroker removes a broker's registration (UnregisterBroker,
// KIP-631): it leaves every ISR and leadership, then its registration
// goes, so Metadata and DescribeCluster no longer list it. As in Kafka,
// any registered broker may be removed, fenced or not; the operator's use
// is a broker that is gone for good. A kzero node still running keeps
// serving what it holds but is no broker of the cluster until it restarts
// and registers again. BROKER_ID_NOT_REGISTERED when id has no
// registration. A broker-only node also leaves the quorum's learners
// (learner.go): it gets no more of the metadata log until it restarts.
func (c *Controller) UnregisterBroker(ctx context.Context, id int32) Result {
	_ = c.caughtUp(ctx) // without a reachable quorum leader: decide on this node's image
	for try := 0; ; try++ {
		groups, err := control.New(c.controlConfig()).Unregister(c.Image(), time.Now(), id)
		if err != nil {
			return Result{err, fmt.Sprintf("Broker ID %d is not currently registered", id)}
		}
		res, perr := c.propose(ctx, groups)
		switch {
		case perr != nil:
			return Result{codeFor(perr), perr.Error()}
		case res[len(res)-1] == nil:
			c.removeLearner(id) // a no-op for a node that is no learner
			return Result{}
		case staleDecision(res[len(res)-1]) && try < maxRedecide && ctx.Err() == nil:
			continue // decided on an image that moved on: again, on the newer one
		}
		code, msg := metadata.Split(res[len(res)-1])
		return Result{code, msg}
	}
}
