package txn

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/shards"
	"kzero/log"
)

// Description is a transactional id's state (DescribeTransactions).
type Description struct {
	ID         string
	State      State
	TimeoutMs  int32
	StartMs    int64 // -1 with no transaction open
	ProducerID int64
	Epoch      int16
	Partitions []log.TopicPartition
}

// Describe describes a transactional id; TRANSACTIONAL_ID_NOT_FOUND when
// this coordinator has none of that name.
func (c *Coordinator) Describe(id string) (Description, error) {
	s, err := c.shardFor(id)
	if err != nil {
		return Description{}, err
	}
	defer s.Unlock()
	m := s.mu.txns[id]
	if m == nil {
		return Description{}, kerr.TransactionalIDNotFound
	}
	return m.describe(), nil
}

func (m *txnMeta) describe() Description {
	d := Description{ID: m.id, State: m.state, TimeoutMs: m.timeoutMs, StartMs: m.startMs, ProducerID: m.producerID, Epoch: m.epoch, Partitions: m.sortedPartitions()}
	if m.state != Ongoing && !m.state.preparing() {
		d.StartMs = -1
	}
	return d
}

// ListFilter selects transactions for List: each non-empty filter must
// match; MinDurationMs > 0 keeps transactions open at least that long.
type ListFilter struct {
	States        []State
	ProducerIDs   []int64
	MinDurationMs int64
}

// List describes the transactional ids of the partitions this broker
// coordinates (ListTransactions), sorted by id. loading reports whether a
// partition was still loading (COORDINATOR_LOAD_IN_PROGRESS).
func (c *Coordinator) List(f ListFilter) (out []Description, loading bool) {
	now := c.now()
	for _, s := range c.table.All() {
		s.Lock()
		if s.StateLocked() == shards.Loading {
			loading = true
		}
		for _, m := range s.mu.txns {
			if len(f.States) > 0 && !slices.Contains(f.States, m.state) {
				continue
			}
			if len(f.ProducerIDs) > 0 && !slices.Contains(f.ProducerIDs, m.producerID) {
				continue
			}
			d := m.describe()
			if f.MinDurationMs > 0 && (d.StartMs < 0 || now-d.StartMs < f.MinDurationMs) {
				continue
			}
			out = append(out, d)
		}
		s.Unlock()
	}
	slices.SortFunc(out, func(a, b Description) int {
		if a.ID < b.ID {
			return -1
		}
		if a.ID > b.ID {
			return 1
		}
		return 0
	})
	return out, loading
}
