package coord

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// ProducerIDBlockSize is how many producer ids a broker gets at a time, as
// in Kafka.
const ProducerIDBlockSize = 1000

// AllocateProducerIDs hands broker a block of ProducerIDBlockSize producer
// ids, [first, first+size), never handed out before, across restarts too:
// the block is a record in the metadata log. err wraps a kerr sentinel for
// a Kafka-level failure (NOT_CONTROLLER, REQUEST_TIMED_OUT) or a Go error.
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
		case errors.Is(rej, kerr.InvalidUpdateVersion):
			// Another allocation took that block first; the image that
			// answered us already shows it. Try the next.
			continue
		default:
			code, msg := metadata.Split(rej)
			return 0, 0, fmt.Errorf("allocate producer ids: %s: %w", msg, code)
		}
	}
}

// ProducerIDs hands out one broker's producer ids from the blocks the
// quorum gives it, fetching the next block when one runs out. Idempotent
// producers and the transaction coordinator share it.
type ProducerIDs struct {
	alloc      func(ctx context.Context) (first int64, size int32, err error)
	mu         sync.Mutex
	next, last int64 // [next, last) left in the block
}

// NewProducerIDs returns ids of the blocks alloc hands out (usually
// Controller.AllocateProducerIDs for this broker).
func NewProducerIDs(alloc func(ctx context.Context) (first int64, size int32, err error)) *ProducerIDs {
	return &ProducerIDs{alloc: alloc}
}

// Next is a producer id never handed out before.
func (p *ProducerIDs) Next(ctx context.Context) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next >= p.last {
		first, size, err := p.alloc(ctx)
		if err != nil {
			return -1, err
		}
		p.next, p.last = first, first+int64(size)
	}
	id := p.next
	p.next++
	return id, nil
}
