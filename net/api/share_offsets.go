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
// coordinator, summarizing, initializing and deleting share partition
// state in the share coordinator: in process (coord/share.Store) when this
// broker leads the state partition, else with ReadShareGroupStateSummary,
// InitializeShareGroupState and DeleteShareGroupState to the broker that
// does (share.Manager.SummaryState, InitializeState, DeleteState).

// shareOffset is a share partition's start offset as the share group
// offsets APIs show it: as Kafka, the summary of its saved state on the
// share coordinator (ReadShareGroupStateSummary when another broker
// coordinates it), with the lag when this broker leads the topic
// partition; a share partition with no saved state (kept in memory only,
// without __share_group_state) shows the live one led here. -1 when it
// has neither.
func (h *Handler) shareOffset(k share.Key, topic string) (start int64, leaderEpoch int32, lag int64, code int16) {
	start, leaderEpoch, lag = -1, -1, -1
	part, err := h.replicas.Get(log.TopicPartition{Topic: topic, Partition: k.Partition})
	leads := err == nil && part.IsLeader()
	if st := h.shares.Store(); st != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := st.Await(ctx, k)
		cancel()
		if err != nil && !errors.Is(err, kerr.NotCoordinator) {
			return start, leaderEpoch, lag, storeUnavailable(err)
		}
		sum, err := h.shares.SummaryState(k)
		if err != nil {
			return start, leaderEpoch, lag, storeUnavailable(err)
		}
		if sum.StartOffset >= 0 {
			start, leaderEpoch = sum.StartOffset, sum.LeaderEpoch
			if leads {
				lag = max(part.HighWatermark()-start-int64(sum.DeliveryComplete), 0)
			}
			return start, leaderEpoch, lag, 0
		}
	}
	if leads {
		if e, p := h.shares.Peek(k); e != nil {
			start, leaderEpoch, lag = p.Start(), part.LeaderEpoch(), p.Lag(part.HighWatermark())
			e.Unlock()
		}
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

// stateErrCode is the code for a share coordinator's answer about one
// share partition: its own codes (FENCED_STATE_EPOCH,
// UNKNOWN_TOPIC_OR_PARTITION, INVALID_REQUEST) pass, a coordinator this
// broker cannot reach is storeUnavailable's.
func stateErrCode(err error) int16 {
	switch code := errCode(err); code {
	case kerr.FencedStateEpoch.Code, kerr.UnknownTopicOrPartition.Code, kerr.InvalidRequest.Code:
		return code
	}
	return storeUnavailable(err)
}
