package replica

import (
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
)

// Manager holds this broker's partition replicas.
type Manager struct {
	nodeID int32
	logs   *log.Manager

	mu      sync.RWMutex
	parts   map[log.TopicPartition]*Partition
	offline map[log.TopicPartition]error // replicas whose log failed to open
}

// NewManager serves the replicas whose logs live in logs.
func NewManager(nodeID int32, logs *log.Manager) *Manager {
	return &Manager{nodeID: nodeID, logs: logs, parts: map[log.TopicPartition]*Partition{},
		offline: map[log.TopicPartition]error{}}
}

// Logs is the log manager behind the replicas.
func (m *Manager) Logs() *log.Manager { return m.logs }

// Partition returns a local replica.
func (m *Manager) Partition(tp log.TopicPartition) (*Partition, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	p, ok := m.parts[tp]
	return p, ok
}

// Get returns the local replica, KAFKA_STORAGE_ERROR for one whose log
// failed to open, or UNKNOWN_TOPIC_OR_PARTITION.
func (m *Manager) Get(tp log.TopicPartition) (*Partition, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if p, ok := m.parts[tp]; ok {
		return p, nil
	}
	if err, ok := m.offline[tp]; ok {
		return nil, fmt.Errorf("partition %s is offline: %v: %w", tp, err, kerr.KafkaStorageError)
	}
	return nil, kerr.UnknownTopicOrPartition
}

// Offline reports why a replica this broker should lead is offline: its
// log failed to open (nil when it is not offline). The replica stays
// offline until a later MakeLeader opens it or it is removed.
func (m *Manager) Offline(tp log.TopicPartition) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.offline[tp]
}

// OfflineCount is the number of offline replicas.
func (m *Manager) OfflineCount() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.offline)
}

// LeaderSpec is what the controller says about a partition this broker leads.
type LeaderSpec struct {
	TP                log.TopicPartition
	TopicID           [16]byte
	LeaderEpoch       int32
	ISR               []int32
	MinInsyncReplicas int
	Config            log.Config
}

// MakeLeader creates the replica's log if needed and makes this broker
// its leader; a later epoch of a partition already led updates it. A log
// that cannot be opened or created (out of descriptors, a damaged disk)
// leaves the replica offline (see Offline) and returns an error wrapping
// KAFKA_STORAGE_ERROR.
func (m *Manager) MakeLeader(s LeaderSpec) (*Partition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.makeLeaderLocked(s)
	if err != nil && p == nil {
		m.offline[s.TP] = err
		return nil, fmt.Errorf("%w: %w", err, kerr.KafkaStorageError)
	}
	delete(m.offline, s.TP)
	return p, err
}

func (m *Manager) makeLeaderLocked(s LeaderSpec) (*Partition, error) {
	p, ok := m.parts[s.TP]
	if !ok {
		l, err := m.logs.GetOrCreate(s.TP, s.Config)
		if err != nil {
			return nil, fmt.Errorf("create log %s: %w", s.TP, err)
		}
		// A log left from another topic of the same name (its
		// partition.metadata names another id) is not this partition's:
		// it is set aside, never deleted (it may hold the only copy of
		// acknowledged data, if the metadata is what went wrong).
		if cur, ok, _ := log.ReadTopicID(l.Dir()); ok && s.TopicID != ([16]byte{}) && cur != s.TopicID {
			if _, err := m.logs.SetAside(s.TP); err != nil {
				return nil, fmt.Errorf("set aside stale log %s: %w", s.TP, err)
			}
			if l, err = m.logs.GetOrCreate(s.TP, s.Config); err != nil {
				return nil, fmt.Errorf("create log %s: %w", s.TP, err)
			}
		}
		p = newPartition(s.TP, s.TopicID, l, m.nodeID)
		m.parts[s.TP] = p
	}
	p.log.SetConfig(s.Config)
	if s.TopicID != ([16]byte{}) {
		if err := p.log.SetTopicID(s.TopicID); err != nil {
			return p, err
		}
	}
	p.makeLeader(s.LeaderEpoch, s.ISR, s.MinInsyncReplicas)
	return p, nil
}

// Remove drops a replica; with deleteLog its log is deleted from disk.
func (m *Manager) Remove(tp log.TopicPartition, deleteLog bool) error {
	m.mu.Lock()
	p, ok := m.parts[tp]
	delete(m.parts, tp)
	delete(m.offline, tp)
	m.mu.Unlock()
	if !ok {
		return nil
	}
	p.leader.Store(false)
	if deleteLog {
		return m.logs.Delete(tp)
	}
	return nil
}
