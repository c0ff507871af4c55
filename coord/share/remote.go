package share

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Remote reaches the share coordinator on another broker (Kafka's
// persister): the share partition leader reads and writes state with
// ReadShareGroupState and WriteShareGroupState, the share group's
// coordinator initializes, summarizes and deletes it with
// InitializeShareGroupState, ReadShareGroupStateSummary and
// DeleteShareGroupState, each sent to the leader of the share partition's
// __share_group_state partition. It is used only when the Store says
// another broker coordinates the state: a local state partition is read
// and written in process.
type Remote interface {
	// Read returns the saved state of k; found is false when the
	// coordinator has none or it has no start offset (snap still
	// carries its state epoch then). leaderEpoch is the share
	// partition's: an older one than the coordinator saved is fenced.
	Read(k Key, leaderEpoch int32) (snap Snapshot, found bool, err error)
	// Write saves the state of k and returns once it is committed.
	Write(k Key, snap Snapshot) error
	// Delete deletes the saved state of keys (DeleteShareGroupState).
	Delete(keys []Key) error
	// Initialize starts the state of k afresh (Store.Initialize).
	Initialize(k Key, stateEpoch int32, start int64) error
	// Summary summarizes the saved state of k (Store.Summary).
	Summary(k Key) (Summary, error)
}

// SetRemote makes the manager reach share coordinators on other brokers
// through r (set before the manager serves).
func (m *Manager) SetRemote(r Remote) { m.remote = r }

// remoteFor reports whether k's state is coordinated by another broker
// that the manager can reach: the store answered NOT_COORDINATOR, the
// state topic exists and another broker leads the state partition.
func (m *Manager) remoteFor(k Key, err error) bool {
	if m.remote == nil || m.store == nil || m.store.cfg.Leader == nil || !errors.Is(err, kerr.NotCoordinator) {
		return false
	}
	local, exists := m.store.cfg.Leader(m.store.PartitionFor(k))
	return exists && !local
}

// WriteFenced is Write for a share partition leader on another broker
// (WriteShareGroupState): a write from an older leader epoch or state
// epoch than the saved state's is refused with FENCED_LEADER_EPOCH or
// FENCED_STATE_EPOCH, as Kafka's share coordinator does, so a deposed
// leader cannot overwrite its successor's progress.
func (s *Store) WriteFenced(k Key, snap Snapshot) error {
	sh, err := s.table.Lock(s.PartitionFor(k))
	if err != nil {
		return err
	}
	defer sh.Unlock()
	if prev := sh.states[k]; prev != nil {
		switch {
		case snap.LeaderEpoch < prev.LeaderEpoch:
			return fmt.Errorf("share state of %s: leader epoch %d < %d: %w", stateKey(k), snap.LeaderEpoch, prev.LeaderEpoch, kerr.FencedLeaderEpoch)
		case snap.StateEpoch < prev.StateEpoch:
			return fmt.Errorf("share state of %s: state epoch %d < %d: %w", stateKey(k), snap.StateEpoch, prev.StateEpoch, kerr.FencedStateEpoch)
		}
	}
	return s.writeLocked(sh, k, snap)
}

// ReadFenced is Read for a share partition leader on another broker
// (ReadShareGroupState): a reader with an older leader epoch than the
// saved state's is refused with FENCED_LEADER_EPOCH.
func (s *Store) ReadFenced(k Key, leaderEpoch int32) (snap Snapshot, found bool, err error) {
	snap, found, err = s.Read(k)
	if err == nil && found && leaderEpoch >= 0 && leaderEpoch < snap.LeaderEpoch {
		return Snapshot{}, false, fmt.Errorf("share state of %s: leader epoch %d < %d: %w", stateKey(k), leaderEpoch, snap.LeaderEpoch, kerr.FencedLeaderEpoch)
	}
	return snap, found, err
}

// remoteKey reports whether another broker coordinates k's state and the
// manager can reach it.
func (m *Manager) remoteKey(k Key) bool {
	return m.remoteFor(k, kerr.NotCoordinator)
}

// DeleteState deletes the saved state of keys: in the store for those
// this broker coordinates, with the share coordinator on another broker
// for the others.
func (m *Manager) DeleteState(keys []Key) error {
	if m.store == nil {
		return nil
	}
	var local, remote []Key
	for _, k := range keys {
		if m.remoteKey(k) {
			remote = append(remote, k)
		} else {
			local = append(local, k)
		}
	}
	if err := m.store.Delete(local); err != nil {
		return err
	}
	if len(remote) > 0 {
		return m.remote.Delete(remote)
	}
	return nil
}

// DeleteChecked deletes one share partition's saved state (a tombstone)
// for DeleteShareGroupState: unlike Delete, a state partition this broker
// does not serve is an error (NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS). No saved state is no error.
func (s *Store) DeleteChecked(k Key) error {
	sh, err := s.table.Lock(s.PartitionFor(k))
	if err != nil {
		return err
	}
	defer sh.Unlock()
	return sh.deleteLocked(k)
}

// Initialize starts a share partition's state afresh
// (InitializeShareGroupState, sent by the share group's coordinator when
// AlterShareGroupOffsets resets it, and with start -1 before the group is
// first assigned the partition): a snapshot with state epoch stateEpoch,
// start offset start (-1: the share partition leader starts it at
// share.auto.offset.reset) and nothing in flight. A state epoch older than the saved state's is
// refused with FENCED_STATE_EPOCH (-1 is never fenced), as Kafka's
// ShareCoordinatorShard.initializeState does. The saved leader epoch is
// kept, so a deposed leader stays fenced (Kafka keeps the highest leader
// epoch it has seen beside the snapshot). A share partition leader
// writing under the older state epoch is fenced from then on: it reads
// the state again.
func (s *Store) Initialize(k Key, stateEpoch int32, start int64) error {
	sh, err := s.table.Lock(s.PartitionFor(k))
	if err != nil {
		return err
	}
	defer sh.Unlock()
	snap := Snapshot{StateEpoch: stateEpoch, LeaderEpoch: -1, StartOffset: start}
	if prev := sh.states[k]; prev != nil {
		if stateEpoch != -1 && stateEpoch < prev.StateEpoch {
			return fmt.Errorf("share state of %s: state epoch %d < %d: %w", stateKey(k), stateEpoch, prev.StateEpoch, kerr.FencedStateEpoch)
		}
		snap.LeaderEpoch = prev.LeaderEpoch
	}
	return s.writeLocked(sh, k, snap)
}

// Summary is what ReadShareGroupStateSummary tells of a share partition's
// saved state.
type Summary struct {
	StateEpoch  int32
	LeaderEpoch int32
	StartOffset int64 // -1: no saved state, or not initialized with one
	// DeliveryComplete counts the offsets from StartOffset whose
	// delivery is complete (acknowledged or archived; KIP-1226).
	DeliveryComplete int32
}

// noSummary is the summary of a share partition without saved state, as
// Kafka answers it: start offset -1, epochs 0.
var noSummary = Summary{StartOffset: -1}

// summaryOf summarizes a snapshot.
func summaryOf(snap *Snapshot) Summary {
	sum := Summary{StateEpoch: snap.StateEpoch, LeaderEpoch: snap.LeaderEpoch, StartOffset: snap.StartOffset}
	for _, b := range snap.Batches {
		if (b.State == stateAcknowledged || b.State == stateArchived) && b.Last >= snap.StartOffset {
			sum.DeliveryComplete += int32(b.Last - max(b.First, snap.StartOffset) + 1)
		}
	}
	return sum
}

// Summary returns the summary of k's saved state
// (ReadShareGroupStateSummary): start offset -1 when it has none.
func (s *Store) Summary(k Key) (Summary, error) {
	snap, found, err := s.Read(k)
	if err != nil || !found {
		return noSummary, err
	}
	return summaryOf(&snap), nil
}

// InitializeState initializes k's state (Store.Initialize) on the share
// coordinator: in the store when this broker coordinates it, else on the
// broker that does (InitializeShareGroupState). Without a store there is
// no share coordinator: COORDINATOR_NOT_AVAILABLE.
func (m *Manager) InitializeState(k Key, stateEpoch int32, start int64) error {
	if m.store == nil {
		return kerr.CoordinatorNotAvailable
	}
	if m.remoteKey(k) {
		return m.remote.Initialize(k, stateEpoch, start)
	}
	return m.store.Initialize(k, stateEpoch, start)
}

// SummaryState returns the summary of k's saved state, from the store
// when this broker coordinates it, else from the share coordinator on
// another broker (ReadShareGroupStateSummary).
func (m *Manager) SummaryState(k Key) (Summary, error) {
	if m.store == nil {
		return noSummary, nil
	}
	if m.remoteKey(k) {
		return m.remote.Summary(k)
	}
	return m.store.Summary(k)
}

// Serves reports whether this broker serves k's state partition: nil, or
// an error wrapping kerr.NotCoordinator or
// kerr.CoordinatorLoadInProgress, the share coordinator's first answer to
// any request about k.
func (s *Store) Serves(k Key) error {
	sh, err := s.table.Lock(s.PartitionFor(k))
	if err != nil {
		return err
	}
	sh.Unlock()
	return nil
}
