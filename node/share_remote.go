package node

import (
	"errors"
	"fmt"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/share"
	"kzero/log"
)

// shareRemote is the persister of the share partitions whose
// __share_group_state partition another broker leads: a share partition
// leader reads and writes their state there with ReadShareGroupState and
// WriteShareGroupState, a share group's coordinator initializes,
// summarizes and deletes it with InitializeShareGroupState,
// ReadShareGroupStateSummary and DeleteShareGroupState (Kafka's
// persister does the same).
// The coordinator is the state partition's leader in this node's metadata
// image, not a FindCoordinator round trip.
type shareRemote struct{ n *Node }

// coordinatorRetryTime bounds how long a share group coordinator's call
// (Initialize, Summary, Delete) retries a share coordinator that is not
// ready: __share_group_state just created (no leader yet, or its leader
// still loading the partition) or its leadership moving.
const coordinatorRetryTime = 5 * time.Second

// retryCoordinator runs op until it succeeds, fails otherwise than with
// COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS or
// NOT_COORDINATOR, or coordinatorRetryTime passes, with backoff; Kafka's
// persister retries those the same way. Without it, the first
// AlterShareGroupOffsets of a cluster (which creates __share_group_state)
// failed with COORDINATOR_NOT_AVAILABLE for partitions whose state another
// broker was still taking up. The share partition leader's Read and Write
// do not retry here: they run while the share partition waits, and their
// callers retry on the next fetch or acknowledgement.
func retryCoordinator(op func() error) error {
	deadline := time.Now().Add(coordinatorRetryTime)
	backoff := 20 * time.Millisecond
	for {
		err := op()
		if err == nil || !(errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.CoordinatorLoadInProgress) || errors.Is(err, kerr.NotCoordinator)) ||
			time.Now().Add(backoff).After(deadline) {
			return err
		}
		time.Sleep(backoff)
		backoff = min(2*backoff, 500*time.Millisecond)
	}
}

// coordinator is the broker leading k's state partition.
func (r shareRemote) coordinator(k share.Key) (int32, error) {
	leader := r.n.leaderOf(log.TopicPartition{Topic: share.StateTopic, Partition: r.n.shareState.PartitionFor(k)})
	if leader < 0 {
		return -1, fmt.Errorf("no leader of %s partition %d: %w", share.StateTopic, r.n.shareState.PartitionFor(k), kerr.CoordinatorNotAvailable)
	}
	return leader, nil
}

// call sends req to k's coordinator; a broker it cannot reach is
// COORDINATOR_NOT_AVAILABLE (retriable), as Kafka's persister treats it.
func (r shareRemote) call(k share.Key, req kmsg.Request, resp kmsg.Response) error {
	broker, err := r.coordinator(k)
	if err != nil {
		return err
	}
	if err := r.n.peers.do(broker, req, resp); err != nil {
		r.n.logger.Info("cannot reach the share coordinator", "coordinator", broker, "err", err)
		return fmt.Errorf("share coordinator %d: %v: %w", broker, err, kerr.CoordinatorNotAvailable)
	}
	return nil
}

// Read implements share.Remote.
func (r shareRemote) Read(k share.Key, leaderEpoch int32) (share.Snapshot, bool, error) {
	req := kmsg.NewPtrReadShareGroupStateRequest()
	req.GroupID = k.Group
	t := kmsg.NewReadShareGroupStateRequestTopic()
	t.TopicID = k.Topic
	p := kmsg.NewReadShareGroupStateRequestTopicPartition()
	p.Partition, p.LeaderEpoch = k.Partition, leaderEpoch
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp := kmsg.NewPtrReadShareGroupStateResponse()
	if err := r.call(k, req, resp); err != nil {
		return share.Snapshot{}, false, err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.TopicID != k.Topic || rp.Partition != k.Partition {
				continue
			}
			switch rp.ErrorCode {
			case 0:
			case kerr.UnknownTopicOrPartition.Code:
				return share.Snapshot{}, false, nil // no state (Kafka's answer for an uninitialized one)
			default:
				return share.Snapshot{}, false, kerr.ErrorForCode(rp.ErrorCode)
			}
			if rp.StartOffset < 0 {
				return share.Snapshot{StateEpoch: rp.StateEpoch, StartOffset: -1}, false, nil // initialized without a start offset
			}
			snap := share.Snapshot{StateEpoch: rp.StateEpoch, LeaderEpoch: leaderEpoch, StartOffset: rp.StartOffset}
			for _, b := range rp.StateBatches {
				snap.Batches = append(snap.Batches, share.StateBatch{First: b.FirstOffset, Last: b.LastOffset, State: b.DeliveryState, Count: b.DeliveryCount})
			}
			return snap, true, nil
		}
	}
	return share.Snapshot{}, false, fmt.Errorf("share coordinator answered no partition: %w", kerr.UnknownServerError)
}

// Write implements share.Remote.
func (r shareRemote) Write(k share.Key, snap share.Snapshot) error {
	req := kmsg.NewPtrWriteShareGroupStateRequest()
	req.GroupID = k.Group
	t := kmsg.NewWriteShareGroupStateRequestTopic()
	t.TopicID = k.Topic
	p := kmsg.NewWriteShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.LeaderEpoch, p.StartOffset = k.Partition, snap.StateEpoch, snap.LeaderEpoch, snap.StartOffset
	for _, b := range snap.Batches {
		sb := kmsg.NewWriteShareGroupStateRequestTopicPartitionStateBatch()
		sb.FirstOffset, sb.LastOffset, sb.DeliveryState, sb.DeliveryCount = b.First, b.Last, b.State, b.Count
		p.StateBatches = append(p.StateBatches, sb)
	}
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp := kmsg.NewPtrWriteShareGroupStateResponse()
	if err := r.call(k, req, resp); err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.TopicID == k.Topic && rp.Partition == k.Partition {
				return kerr.ErrorForCode(rp.ErrorCode)
			}
		}
	}
	return fmt.Errorf("share coordinator answered no partition: %w", kerr.UnknownServerError)
}

// Delete implements share.Remote: one DeleteShareGroupState per
// coordinator and group.
func (r shareRemote) Delete(keys []share.Key) error {
	return retryCoordinator(func() error { return r.delete(keys) })
}

func (r shareRemote) delete(keys []share.Key) error {
	type dest struct {
		broker int32
		group  string
	}
	reqs := map[dest]*kmsg.DeleteShareGroupStateRequest{}
	var order []dest
	for _, k := range keys {
		broker, err := r.coordinator(k)
		if err != nil {
			return err
		}
		d := dest{broker, k.Group}
		req := reqs[d]
		if req == nil {
			req = kmsg.NewPtrDeleteShareGroupStateRequest()
			req.GroupID = k.Group
			reqs[d] = req
			order = append(order, d)
		}
		i := len(req.Topics) - 1
		if i < 0 || req.Topics[i].TopicID != k.Topic {
			t := kmsg.NewDeleteShareGroupStateRequestTopic()
			t.TopicID = k.Topic
			req.Topics = append(req.Topics, t)
			i++
		}
		p := kmsg.NewDeleteShareGroupStateRequestTopicPartition()
		p.Partition = k.Partition
		req.Topics[i].Partitions = append(req.Topics[i].Partitions, p)
	}
	for _, d := range order {
		resp := kmsg.NewPtrDeleteShareGroupStateResponse()
		if err := r.n.peers.do(d.broker, reqs[d], resp); err != nil {
			r.n.logger.Info("cannot reach the share coordinator", "coordinator", d.broker, "err", err)
			return fmt.Errorf("share coordinator %d: %v: %w", d.broker, err, kerr.CoordinatorNotAvailable)
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					return fmt.Errorf("delete share state at broker %d: %w", d.broker, err)
				}
			}
		}
	}
	return nil
}

// Initialize implements share.Remote.
func (r shareRemote) Initialize(k share.Key, stateEpoch int32, start int64) error {
	return retryCoordinator(func() error { return r.initialize(k, stateEpoch, start) })
}

func (r shareRemote) initialize(k share.Key, stateEpoch int32, start int64) error {
	req := kmsg.NewPtrInitializeShareGroupStateRequest()
	req.GroupID = k.Group
	t := kmsg.NewInitializeShareGroupStateRequestTopic()
	t.TopicID = k.Topic
	p := kmsg.NewInitializeShareGroupStateRequestTopicPartition()
	p.Partition, p.StateEpoch, p.StartOffset = k.Partition, stateEpoch, start
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp := kmsg.NewPtrInitializeShareGroupStateResponse()
	if err := r.call(k, req, resp); err != nil {
		return err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.TopicID == k.Topic && rp.Partition == k.Partition {
				return kerr.ErrorForCode(rp.ErrorCode)
			}
		}
	}
	return fmt.Errorf("share coordinator answered no partition: %w", kerr.UnknownServerError)
}

// Summary implements share.Remote (ReadShareGroupStateSummary v1, with
// the delivery-complete count).
func (r shareRemote) Summary(k share.Key) (sum share.Summary, err error) {
	err = retryCoordinator(func() error {
		sum, err = r.summary(k)
		return err
	})
	return sum, err
}

func (r shareRemote) summary(k share.Key) (share.Summary, error) {
	req := kmsg.NewPtrReadShareGroupStateSummaryRequest()
	req.Version = 1
	req.GroupID = k.Group
	t := kmsg.NewReadShareGroupStateSummaryRequestTopic()
	t.TopicID = k.Topic
	p := kmsg.NewReadShareGroupStateSummaryRequestTopicPartition()
	p.Partition, p.LeaderEpoch = k.Partition, -1
	t.Partitions = append(t.Partitions, p)
	req.Topics = append(req.Topics, t)
	resp := kmsg.NewPtrReadShareGroupStateSummaryResponse()
	resp.Version = req.Version
	none := share.Summary{StartOffset: -1}
	if err := r.call(k, req, resp); err != nil {
		return none, err
	}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rt.TopicID != k.Topic || rp.Partition != k.Partition {
				continue
			}
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				return none, err
			}
			return share.Summary{StateEpoch: rp.StateEpoch, LeaderEpoch: rp.LeaderEpoch, StartOffset: rp.StartOffset, DeliveryComplete: max(rp.DeliveryCompleteCount, 0)}, nil
		}
	}
	return none, fmt.Errorf("share coordinator answered no partition: %w", kerr.UnknownServerError)
}
