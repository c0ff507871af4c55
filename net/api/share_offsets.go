package api

import (
	"context"
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/share"
	"kzero/log"
)

// The share group offsets APIs (90-92) are served by the group's
// coordinator, reading and deleting share partition state in the share
// coordinator: in process (coord/share.Store) when this broker leads the
// state partition, else with ReadShareGroupState and DeleteShareGroupState
// to the broker that does (share.Manager.ReadState, DeleteState).
// AlterShareGroupOffsets writes in process only: a share partition whose
// state partition another broker leads answers COORDINATOR_NOT_AVAILABLE.

// shareOffset is a share partition's start offset as the share group
// offsets APIs show it: the live share partition's when this broker leads
// the topic partition, else the saved one; -1 when it has none.
func (h *Handler) shareOffset(k share.Key, topic string) (start int64, leaderEpoch int32, lag int64, code int16) {
	start, leaderEpoch, lag = -1, -1, -1
	part, err := h.replicas.Get(log.TopicPartition{Topic: topic, Partition: k.Partition})
	if err == nil && part.IsLeader() {
		if e, p := h.shares.Peek(k); e != nil {
			start, leaderEpoch, lag = p.Start(), part.LeaderEpoch(), p.Lag(part.HighWatermark())
			e.Unlock()
			return start, leaderEpoch, lag, 0
		}
	}
	st := h.shares.Store()
	if st == nil {
		return start, leaderEpoch, lag, 0
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Await(ctx, k); err != nil && !errors.Is(err, kerr.NotCoordinator) {
		return start, leaderEpoch, lag, storeUnavailable(err)
	}
	snap, found, err := h.shares.ReadState(k) // ReadShareGroupState when another broker coordinates it
	if err != nil {
		return start, leaderEpoch, lag, storeUnavailable(err)
	}
	if !found {
		return start, leaderEpoch, lag, 0
	}
	start, leaderEpoch = snap.StartOffset, snap.LeaderEpoch
	if err == nil && part.IsLeader() {
		p := share.RestorePartition(snap.StartOffset, snap.Batches, share.Limits{MaxInFlight: 1 << 16, DeliveryLimit: 1 << 15})
		lag = p.Lag(part.HighWatermark())
	}
	return start, leaderEpoch, lag, 0
}

// storeUnavailable is the code for a share state partition this broker
// cannot reach.
func storeUnavailable(err error) int16 {
	if code := errCode(err); code == kerr.CoordinatorLoadInProgress.Code {
		return code
	}
	return kerr.CoordinatorNotAvailable.Code
}
