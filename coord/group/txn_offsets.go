package group

// Transactional offset commits (KIP-98, KIP-447): a transactional producer
// commits a consumer group's offsets as part of its transaction
// (TxnOffsetCommit). They are written to the group's partition at once, as
// one transactional batch of the producer, and staged: OffsetFetch does not
// see them (with require_stable it reports UNSTABLE_OFFSET_COMMIT for their
// partitions) until the transaction coordinator ends the transaction
// (CompleteTxn), which writes the commit or abort marker to the partition
// and then makes the staged offsets the committed ones, or drops them. A
// reload replays the same: records of transactional batches are staged
// under their producer id, markers end them, and a transaction still open
// at the end of the partition stays staged until the coordinator ends it.

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TxnCommitRequest is a TxnOffsetCommit request.
type TxnCommitRequest struct {
	Group         string
	ProducerID    int64
	ProducerEpoch int16
	// Generation, MemberID and InstanceID (v3+, KIP-447) are checked as
	// OffsetCommit checks them when any is given; -1, "" and "" (and
	// every request before v3) are not checked.
	Generation int32
	MemberID   string
	InstanceID string
	Offsets    []CommitOffset
}

// TxnOffsetCommit handles a TxnOffsetCommit: the offsets are written to the
// group's partition as one transactional batch of the producer and staged
// until the transaction ends. It returns a code per offset, in order; a
// producer epoch older than the one the partition knows gets
// INVALID_PRODUCER_EPOCH (the producer is fenced).
func (c *Coordinator) TxnOffsetCommit(r *TxnCommitRequest) []error {
	errs := make([]error, len(r.Offsets))
	all := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	switch {
	case r.Group == "":
		return all(kerr.InvalidGroupID)
	case r.ProducerID < 0:
		return all(kerr.InvalidProducerIDMapping)
	case r.ProducerEpoch < 0:
		return all(kerr.InvalidProducerEpoch)
	}
	s, err := c.lock(r.Group)
	if err != nil {
		return all(err)
	}
	now := c.now()
	e := s.mu.groups[r.Group]
	if e == nil {
		if r.Generation >= 0 {
			s.Unlock()
			return all(kerr.IllegalGeneration)
		}
		e = s.addLocked(r.Group, now)
	}
	if err := e.g.validateTxnCommit(r); err != nil {
		s.finishLocked(e, now)
		return all(err)
	}
	recs, idx, vals := s.offsetRecordsLocked(e.g.id, r.Offsets, -1, now, errs)
	if len(recs) > 0 {
		base, err := s.writeLocked(recs, r.ProducerID, r.ProducerEpoch)
		if err != nil {
			c.logger.Warn("cannot store transactional offsets", "group", e.g.id, "partition", s.Partition, "producer", r.ProducerID, "err", err)
			err = storeErr(err)
			for _, i := range idx {
				errs[i] = err
			}
			s.finishLocked(e, now)
			return errs
		}
		for k, i := range idx {
			vals[k].at = base + int64(k)
			e.g.stageTxnOffset(r.ProducerID, cloneTP(r.Offsets[i].TopicPartition), vals[k])
		}
		s.indexTxnLocked(r.ProducerID, e.g.id)
	}
	s.finishLocked(e, now)
	return errs
}

// CompleteTxn ends a producer's transaction in __consumer_offsets
// partition: the transaction coordinator calls it for each such partition
// of the transaction. It writes the commit or abort marker to the
// partition, then makes the producer's staged offsets in every group of
// the partition committed (commit) or drops them (abort). A staged offset
// replaces a committed one only if its record is later in the log, so a
// plain commit made while the transaction was open wins. A partition this
// broker does not lead, or is still loading, gives an error wrapping
// kerr.NotLeaderForPartition (the coordinator retries); a marker the
// partition refuses gives the log's error (kerr.InvalidProducerEpoch,
// kerr.TransactionCoordinatorFenced).
func (c *Coordinator) CompleteTxn(partition int32, producerID int64, producerEpoch int16, coordinatorEpoch int32, commit bool) error {
	s, err := c.table.Lock(partition)
	if err != nil {
		return fmt.Errorf("group coordinator: %v: %w", err, kerr.NotLeaderForPartition)
	}
	defer s.Unlock()
	if err := s.WriteMarkerLocked(producerID, producerEpoch, coordinatorEpoch, commit); err != nil {
		return err
	}
	for id := range s.mu.txns[producerID] {
		if e := s.mu.groups[id]; e != nil {
			e.g.endTxn(producerID, commit)
		}
	}
	delete(s.mu.txns, producerID)
	return nil
}

// indexTxnLocked notes that group holds offsets of producerID's open
// transaction, for CompleteTxn to find them. An entry may outlive the
// offsets (a deleted group): CompleteTxn skips what it does not find.
func (s *shard) indexTxnLocked(producerID int64, group string) {
	groups := s.mu.txns[producerID]
	if groups == nil {
		groups = map[string]struct{}{}
		s.mu.txns[producerID] = groups
	}
	groups[group] = struct{}{}
}

// validateTxnCommit checks a TxnOffsetCommit's generation and member
// against the group as validateCommit does, except that a request naming
// no member is accepted whatever the group's state (TxnOffsetCommit before
// v3 names none) and a rebalance in progress does not refuse it.
func (g *Group) validateTxnCommit(r *TxnCommitRequest) error {
	if g.state == Dead {
		return kerr.CoordinatorNotAvailable
	}
	if g.consumer != nil {
		if r.Generation == -1 && r.MemberID == "" && r.InstanceID == "" {
			return nil // no member named (before v3)
		}
		return g.consumer.validateCommit(r.MemberID, r.Generation, true, true)
	}
	if g.streams != nil {
		if r.Generation == -1 && r.MemberID == "" && r.InstanceID == "" {
			return nil // no member named (before v3)
		}
		return g.streams.validateCommit(r.MemberID, r.Generation, true)
	}
	if r.Generation < 0 && g.state == Empty {
		return nil
	}
	if r.Generation >= 0 || r.MemberID != "" || r.InstanceID != "" {
		if err := g.validateMember(r.MemberID, r.InstanceID); err != nil {
			return err
		}
		if r.Generation != g.generation {
			return kerr.IllegalGeneration
		}
	}
	return nil
}

// stageTxnOffset keeps an offset of producerID's open transaction.
func (g *Group) stageTxnOffset(producerID int64, tp TopicPartition, o Offset) {
	offs := g.txnOffsets[producerID]
	if offs == nil {
		offs = map[TopicPartition]Offset{}
		g.txnOffsets[producerID] = offs
	}
	offs[tp] = o
}

// endTxn commits or drops producerID's staged offsets. A staged offset
// replaces the committed one only when its record is the later one.
func (g *Group) endTxn(producerID int64, commit bool) {
	staged := g.txnOffsets[producerID]
	delete(g.txnOffsets, producerID)
	if !commit {
		return
	}
	for tp, o := range staged {
		if cur, ok := g.offsets[tp]; !ok || o.at > cur.at {
			g.offsets[tp] = o
		}
	}
}

// hasTxnOffset reports whether an open transaction holds an offset of tp.
func (g *Group) hasTxnOffset(tp TopicPartition) bool {
	for _, offs := range g.txnOffsets {
		if _, ok := offs[tp]; ok {
			return true
		}
	}
	return false
}

// dropTxnOffsets forgets the staged offsets of tp, whose offset was
// deleted (a tombstone deletes both, as a reload replays it).
func (g *Group) dropTxnOffsets(tp TopicPartition) {
	for pid, offs := range g.txnOffsets {
		delete(offs, tp)
		if len(offs) == 0 {
			delete(g.txnOffsets, pid)
		}
	}
}

// allPartitions lists the partitions with a committed or staged offset,
// by topic and partition: what deleting the group writes tombstones for.
func (g *Group) allPartitions() []TopicPartition {
	tps := g.sortedPartitions()
	for _, offs := range g.txnOffsets {
		for tp := range offs {
			if _, ok := g.offsets[tp]; !ok && !slices.Contains(tps, tp) {
				tps = append(tps, tp)
			}
		}
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		return cmp.Or(cmp.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
	})
	return tps
}
