package api

// AlterShareGroupOffsets: v0 (KIP-932). Sets the share-partition start
// offset of a share group's partitions: as Kafka's group coordinator, it
// initializes their state on the share coordinator
// (InitializeShareGroupState when another broker leads the state
// partition) with that offset, nothing in flight, and a newer state epoch:
// the group epoch, or one past the saved state epoch if that is not newer.
// A share partition leader holding the old state is fenced at its next
// write and reads the state again. The group must be empty
// (NON_EMPTY_GROUP); one that does not exist is created, empty, as Kafka
// does; one of another type gets GROUP_ID_NOT_FOUND. READ on the group
// and READ on each topic.

import (
	"context"
	"errors"
	"hash/maphash"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/coord/share"
	"kzero/net/server"
)

func init() {
	register(kmsg.AlterShareGroupOffsets.Int16(), 0, 0, (*Handler).alterShareGroupOffsets)
}

func (h *Handler) alterShareGroupOffsets(req *server.Request) error {
	r := kmsg.NewPtrAlterShareGroupOffsetsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrAlterShareGroupOffsetsResponse()
	fail := func(code int16) error {
		resp.ErrorCode = code
		respond(req, resp)
		return nil
	}
	if !h.authorized(req, opRead, resGroup, r.GroupID) {
		return fail(kerr.GroupAuthorizationFailed.Code)
	}
	empty, groupEpoch, err := h.groups.ShareGroupStatus(r.GroupID, true)
	if err != nil {
		return fail(errCode(err))
	}
	if !empty {
		return fail(kerr.NonEmptyGroup.Code)
	}
	st := h.shares.Store()
	if st != nil {
		h.internalTopic(share.StateTopic, st.TopicSpec)
	}
	var set []group.TopicPartitions // initialized here, recorded with the group below (which merges them by topic)
	for _, t := range r.Topics {
		rt := kmsg.NewAlterShareGroupOffsetsResponseTopic()
		rt.Topic = t.Topic
		tm := h.cluster.Image().Topic(t.Topic)
		if tm != nil {
			rt.TopicID = tm.ID
		}
		for _, p := range t.Partitions {
			rp := kmsg.NewAlterShareGroupOffsetsResponseTopicPartition()
			rp.Partition = p.Partition
			switch {
			case tm == nil || p.Partition < 0 || int(p.Partition) >= len(tm.Partitions):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case !h.authorized(req, opRead, resTopic, t.Topic):
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			case p.StartOffset < 0:
				rp.ErrorCode = kerr.InvalidRequest.Code
			default:
				rp.ErrorCode = h.setShareStart(share.Key{Group: r.GroupID, Topic: tm.ID, Partition: p.Partition}, groupEpoch, p.StartOffset)
				if rp.ErrorCode == 0 {
					set = append(set, group.TopicPartitions{TopicID: tm.ID, Topic: t.Topic, Partitions: []int32{p.Partition}})
				}
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	// The group records them as initialized, so that describing all its
	// offsets finds them wherever their state is kept (another broker's
	// share coordinator, in a cluster).
	if err := h.groups.ShareStatesInitialized(r.GroupID, set); err != nil {
		code := errCode(err)
		for i := range resp.Topics {
			for j := range resp.Topics[i].Partitions {
				if rp := &resp.Topics[i].Partitions[j]; rp.ErrorCode == 0 {
					rp.ErrorCode = code
				}
			}
		}
	}
	respond(req, resp)
	return nil
}

// setShareStart initializes a share partition's state with a new start
// offset and a newer state epoch, and drops the live share partition
// here so it is read again (a leader on another broker is fenced).
func (h *Handler) setShareStart(k share.Key, groupEpoch int32, start int64) int16 {
	if st := h.shares.Store(); st != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := st.Await(ctx, k)
		cancel()
		if err != nil && !errors.Is(err, kerr.NotCoordinator) {
			return storeUnavailable(err)
		}
	}
	defer h.shareInit.lock(k)()
	sum, err := h.shares.SummaryState(k) // ReadShareGroupStateSummary when another broker coordinates it
	if err != nil {
		return storeUnavailable(err)
	}
	if err := h.shares.InitializeState(k, max(groupEpoch, sum.StateEpoch+1), start); err != nil {
		return stateErrCode(err)
	}
	h.shares.Forget(k)
	return 0
}

// shareInitParallel bounds the share partitions one background
// initialization (InitializeShareStates) initializes at once.
const shareInitParallel = 16

// InitializeShareStates initializes the share state of partitions before
// their share group is first assigned them (group.Config.
// InitializeShareState): the group coordinator calls it in the background,
// after answering the heartbeat that recorded them as initializing, with
// all that heartbeat's partitions. They are initialized concurrently (at
// most shareInitParallel at once), each as InitializeShareState does; it
// returns those that failed.
func (h *Handler) InitializeShareStates(grp string, stateEpoch int32, topics []group.TopicPartitions) (failed []group.TopicPartitions) {
	type job struct {
		t int
		p int32
	}
	var jobs []job
	for i, t := range topics {
		for _, p := range t.Partitions {
			jobs = append(jobs, job{i, p})
		}
	}
	errs := make([]error, len(jobs))
	sem := make(chan struct{}, shareInitParallel)
	var wg sync.WaitGroup
	for i, j := range jobs {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = h.InitializeShareState(grp, stateEpoch, topics[j.t].TopicID, j.p)
		}()
	}
	wg.Wait()
	byTopic := map[int]int{} // topics index -> failed index
	for i, j := range jobs {
		if errs[i] == nil {
			continue
		}
		if h.logger != nil {
			h.logger.Warn("cannot initialize share partition state", "group", grp, "topic", topics[j.t].Topic, "partition", j.p, "err", errs[i])
		}
		k, ok := byTopic[j.t]
		if !ok {
			k = len(failed)
			byTopic[j.t] = k
			failed = append(failed, group.TopicPartitions{TopicID: topics[j.t].TopicID, Topic: topics[j.t].Topic})
		}
		failed[k].Partitions = append(failed[k].Partitions, j.p)
	}
	return failed
}

// InitializeShareState initializes a share partition's state before its
// share group is first assigned it (InitializeShareStates), as
// Kafka's group coordinator does: InitializeShareGroupState with start
// offset -1, so the share partition leader starts it at the group's
// share.auto.offset.reset, and the group epoch as state epoch. State
// already saved (set by AlterShareGroupOffsets, or saved before this
// broker recorded initializations) is kept. Without a share coordinator
// (no __share_group_state) there is nothing to initialize.
func (h *Handler) InitializeShareState(group string, stateEpoch int32, topic [16]byte, partition int32) error {
	st := h.shares.Store()
	if st == nil {
		return nil
	}
	h.internalTopic(share.StateTopic, st.TopicSpec)
	k := share.Key{Group: group, Topic: topic, Partition: partition}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	err := st.Await(ctx, k)
	cancel()
	if err != nil && !errors.Is(err, kerr.NotCoordinator) {
		return err
	}
	defer h.shareInit.lock(k)()
	sum, err := h.shares.SummaryState(k) // ReadShareGroupStateSummary when another broker coordinates it
	if err != nil {
		return err
	}
	if sum.StartOffset >= 0 {
		return nil
	}
	return h.shares.InitializeState(k, max(stateEpoch, sum.StateEpoch), -1)
}

// shareInitLocks serialize, per share partition, reading its saved state's
// summary and initializing it, as AlterShareGroupOffsets (setShareStart)
// and the first assignment (InitializeShareState) both do on the share
// group's coordinator. Without them a reset could land between an
// initialization's read (no state yet) and its write: the initialization,
// with the group epoch past the reset's state epoch, would start the
// state afresh at share.auto.offset.reset over the reset's start offset.
// Serialized, an initialization after a reset finds its start offset and
// keeps it, and a reset after an initialization takes a state epoch past
// it. Kafka's group coordinator orders the two on its shard instead.
type shareInitLocks struct {
	stripes [64]sync.Mutex
}

// shareInitSeed spreads share partitions over shareInitLocks' stripes.
var shareInitSeed = maphash.MakeSeed()

// lock locks k's stripe and returns its unlock.
func (l *shareInitLocks) lock(k share.Key) func() {
	mu := &l.stripes[maphash.Comparable(shareInitSeed, k)%uint64(len(l.stripes))]
	mu.Lock()
	return mu.Unlock
}
