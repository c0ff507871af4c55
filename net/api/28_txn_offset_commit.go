package api

// TxnOffsetCommit: v0-v5 (KIP-98). A transactional producer commits a
// group's offsets as part of its transaction: they are written to the
// group's __consumer_offsets partition as a transactional batch of the
// producer and stay invisible to OffsetFetch until the transaction commits
// (coord/group's CompleteTxn, called by the transaction coordinator). v2
// adds leader epochs (KIP-320); v3 is flexible and adds the member's
// generation, member id and group.instance.id (KIP-447), checked as
// OffsetCommit checks them when given (ILLEGAL_GENERATION,
// UNKNOWN_MEMBER_ID, FENCED_INSTANCE_ID); v4 may answer
// TRANSACTION_ABORTABLE (KIP-890); v5 (transactions v2) adds the
// partition to the transaction rather than only checking it is in it.
//
// The partition is first verified with the transaction coordinator
// (KIP-890 part 1); its errors are mapped as Kafka's partition leaders map
// them for the group coordinator: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH,
// TRANSACTION_ABORTABLE before v4 INVALID_TXN_STATE, and a coordinator
// that is busy or elsewhere COORDINATOR_NOT_AVAILABLE, which producers
// retry. An epoch older than the partition's gets INVALID_PRODUCER_EPOCH;
// before v2, COORDINATOR_LOAD_IN_PROGRESS is COORDINATOR_NOT_AVAILABLE
// (0.11-2.0 producers do not expect it).

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.TxnOffsetCommit.Int16(), 0, 5, (*Handler).txnOffsetCommit) }

func (h *Handler) txnOffsetCommit(req *server.Request) error {
	r := kmsg.NewPtrTxnOffsetCommitRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	img := h.cluster.Image()
	tr := &group.TxnCommitRequest{Group: r.Group, ProducerID: r.ProducerID, ProducerEpoch: r.ProducerEpoch, Generation: -1}
	if r.Version >= 3 {
		tr.Generation, tr.MemberID = r.Generation, r.MemberID
		if r.InstanceID != nil {
			tr.InstanceID = *r.InstanceID
		}
	}
	resp := kmsg.NewPtrTxnOffsetCommitResponse()
	var denied *kerr.Error // for every partition
	switch {
	case !h.authorized(req, opWrite, resTxnID, r.TransactionalID):
		denied = kerr.TransactionalIDAuthorizationFailed
	case !h.authorized(req, opRead, resGroup, r.Group):
		denied = kerr.GroupAuthorizationFailed
	}
	// where[i] is the response partition of tr.Offsets[i].
	var where []*kmsg.TxnOffsetCommitResponseTopicPartition
	resp.Topics = make([]kmsg.TxnOffsetCommitResponseTopic, len(r.Topics))
	for i, t := range r.Topics {
		rt := &resp.Topics[i]
		*rt = kmsg.NewTxnOffsetCommitResponseTopic()
		rt.Topic = t.Topic
		rt.Partitions = make([]kmsg.TxnOffsetCommitResponseTopicPartition, len(t.Partitions))
		topic := img.Topic(t.Topic)
		for j, p := range t.Partitions {
			rp := &rt.Partitions[j]
			*rp = kmsg.NewTxnOffsetCommitResponseTopicPartition()
			rp.Partition = p.Partition
			if denied != nil {
				rp.ErrorCode = denied.Code
				continue
			}
			if !h.authorized(req, opRead, resTopic, t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				continue
			}
			if topic == nil || p.Partition < 0 || int(p.Partition) >= len(topic.Partitions) {
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
				continue
			}
			o := group.CommitOffset{TopicPartition: group.TopicPartition{Topic: t.Topic, Partition: p.Partition},
				Offset: p.Offset, LeaderEpoch: -1}
			if r.Version >= 2 {
				o.LeaderEpoch = p.LeaderEpoch
			}
			if p.Metadata != nil {
				o.Metadata = *p.Metadata
			}
			tr.Offsets = append(tr.Offsets, o)
			where = append(where, rp)
		}
	}
	if len(tr.Offsets) > 0 {
		for i, err := range h.commitTxnOffsets(r, tr) {
			if errors.Is(err, kerr.CoordinatorLoadInProgress) && r.Version < 2 {
				err = fmt.Errorf("%v: %w", err, kerr.CoordinatorNotAvailable)
			}
			where[i].ErrorCode = errCode(err)
		}
	}
	respond(req, resp)
	return nil
}

// commitTxnOffsets verifies the group's partition with the transaction
// coordinator, then commits: an error per offset of tr.
func (h *Handler) commitTxnOffsets(r *kmsg.TxnOffsetCommitRequest, tr *group.TxnCommitRequest) []error {
	if r.Group == "" {
		return h.groups.TxnOffsetCommit(tr) // INVALID_GROUP_ID
	}
	tp := log.TopicPartition{Topic: group.TopicName, Partition: h.groups.PartitionFor(r.Group)}
	err := h.verifyTxnPartition(r.TransactionalID, r.ProducerID, r.ProducerEpoch, tp, r.Version >= 5)
	switch {
	case err == nil:
		return h.groups.TxnOffsetCommit(tr)
	case errors.Is(err, kerr.ProducerFenced):
		err = fmt.Errorf("%v: %w", err, kerr.InvalidProducerEpoch)
	case errors.Is(err, kerr.TransactionAbortable):
		if r.Version < 4 {
			err = fmt.Errorf("%v: %w", err, kerr.InvalidTxnState)
		}
	case errors.Is(err, kerr.ConcurrentTransactions), errors.Is(err, kerr.CoordinatorNotAvailable),
		errors.Is(err, kerr.NotCoordinator), errors.Is(err, kerr.CoordinatorLoadInProgress):
		err = fmt.Errorf("%v: %w", err, kerr.CoordinatorNotAvailable)
	}
	errs := make([]error, len(tr.Offsets))
	for i := range errs {
		errs[i] = err
	}
	return errs
}
