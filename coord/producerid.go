package coord

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// ProducerIDBlockSize is how many producer ids a broker gets at a time, as
// in Kafka.
const ProducerIDBlockSize = 1000

// AllocateProducerIDs hands broker a block of ProducerIDBlockSize producer
// ids, [first, first+size), never handed out before, across restarts too:
// the block is a record in the metadata log. err is a *kerr.Error for a
// Kafka-level failure (NOT_CONTROLLER, REQUEST_TIMED_OUT) or a Go error.
func (c *Controller) AllocateProducerIDs(ctx context.Context, brokerID int32) (first int64, size int32, err error) {
	for {
		next := c.Image().NextProducerID()
		blk := &metadata.ProducerIDBlock{Broker: brokerID, First: next, Size: ProducerIDBlockSize}
		res, err := c.propose(ctx, [][]metadata.Record{{blk}})
		if err != nil {
			return 0, 0, fmt.Errorf("allocate producer ids: %w: %w", codeFor(err), err)
		}
		switch rej := res[0]; {
		case rej == nil:
			return blk.First, blk.Size, nil
		case rej.Err == kerr.InvalidUpdateVersion:
			// Another allocation took that block first; the image that
			// answered us already shows it. Try the next.
			continue
		default:
			return 0, 0, fmt.Errorf("allocate producer ids: %s: %w", rej.Message, rej.Err)
		}
	}
}
