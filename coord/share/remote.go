package share

import (
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Remote reaches the share coordinator on another broker: the share
// partition leader's persister, which sends ReadShareGroupState and
// WriteShareGroupState to the leader of the share partition's
// __share_group_state partition. It is used only when the Store says
// another broker coordinates the state: a local state partition is read
// and written in process.
type Remote interface {
	// Read returns the saved state of k; found is false when the
	// coordinator has none. leaderEpoch is the share partition's: an
	// older one than the coordinator saved is fenced.
	Read(k Key, leaderEpoch int32) (snap Snapshot, found bool, err error)
	// Write saves the state of k and returns once it is committed.
	Write(k Key, snap Snapshot) error
	// Delete deletes the saved state of keys (DeleteShareGroupState).
	Delete(keys []Key) error
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

// ReadState returns k's saved state, from the store when this broker
// coordinates it, else from the share coordinator on another broker
// (with no leader epoch: the share group offsets APIs read it, not a
// share partition leader).
func (m *Manager) ReadState(k Key) (snap Snapshot, found bool, err error) {
	if m.store == nil {
		return Snapshot{}, false, nil
	}
	if m.remoteKey(k) {
		return m.remote.Read(k, -1)
	}
	return m.store.Read(k)
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
