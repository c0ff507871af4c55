package replica

import (
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
	"kzero/net/wire"
)

// Manager holds this broker's partition replicas.
type Manager struct {
	nodeID int32
	logs   *log.Manager
	cfg    Config

	mu      sync.RWMutex
	parts   map[log.TopicPartition]*Partition
	offline map[log.TopicPartition]error // replicas whose log failed to open

	fetchers *fetchers
	stop     chan struct{}
	done     sync.WaitGroup
	stats    stats
}

// Config is how replicas replicate: Kafka's replica.* settings and the
// node's hooks to the metadata.
type Config struct {
	LagTimeMax     time.Duration // replica.lag.time.max.ms
	FetchMaxBytes  int32         // replica.fetch.max.bytes, per partition
	FetchRespBytes int32         // replica.fetch.response.max.bytes
	FetchWaitMax   time.Duration // replica.fetch.wait.max.ms
	FetchMinBytes  int32         // replica.fetch.min.bytes
	FetchBackoff   time.Duration // replica.fetch.backoff.ms
	NumFetchers    int           // num.replica.fetchers: fetchers per leader broker (default 1)
	// BrokerAddr resolves a broker's inter-broker address.
	BrokerAddr func(id int32) (string, bool)
	// Dialer connects the fetchers to leaders with the inter-broker
	// listener's TLS and SASL; nil: PLAINTEXT.
	Dialer *wire.Dialer
	// BrokerRack resolves a broker's broker.rack (rack-aware reads).
	BrokerRack func(id int32) (string, bool)
	// AlterPartition asks the controller for a partition's new ISR and
	// reports whether it was made; a false leaves the partition to ask
	// again. Called on its own goroutine.
	AlterPartition func(tp log.TopicPartition, topicID [16]byte, leaderEpoch, partitionEpoch int32, isr []int32) error
	// ReplicaOffline tells the controller that a replica's log went
	// offline after an I/O error, so that it leaves the ISR and another
	// replica leads (Kafka's offline log dirs in the broker heartbeat).
	// Called once per replica, from the tick loop, until it succeeds.
	ReplicaOffline func(tp log.TopicPartition) error
	Logger         *slog.Logger
}

func (c *Config) setDefaults() {
	if c.LagTimeMax <= 0 {
		c.LagTimeMax = 30 * time.Second
	}
	if c.FetchMaxBytes <= 0 {
		c.FetchMaxBytes = 1 << 20
	}
	if c.FetchRespBytes <= 0 {
		c.FetchRespBytes = 10 << 20
	}
	if c.FetchWaitMax <= 0 {
		c.FetchWaitMax = 500 * time.Millisecond
	}
	if c.FetchMinBytes <= 0 {
		c.FetchMinBytes = 1
	}
	if c.FetchBackoff <= 0 {
		c.FetchBackoff = time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// NewManager serves the replicas whose logs live in logs. Until Start,
// it leads only (no fetchers, no ISR shrinking).
func NewManager(nodeID int32, logs *log.Manager) *Manager {
	m := &Manager{nodeID: nodeID, logs: logs, parts: map[log.TopicPartition]*Partition{},
		offline: map[log.TopicPartition]error{}, stop: make(chan struct{})}
	m.cfg.setDefaults()
	m.fetchers = newFetchers(m)
	return m
}

// Start replicates: followers fetch from their leaders, leaders shrink
// the ISR of followers that fell behind.
func (m *Manager) Start(cfg Config) {
	cfg.setDefaults()
	m.cfg = cfg
	m.done.Add(1)
	go m.tickLoop()
}

// Close stops the fetchers and the ISR ticks.
func (m *Manager) Close() {
	select {
	case <-m.stop:
		return
	default:
	}
	close(m.stop)
	m.fetchers.closeAll()
	m.done.Wait()
	// Moves stop; their future logs stay, for the next start to resume.
	m.mu.RLock()
	var moves []*move
	for _, p := range m.parts {
		if mv := p.move.Load(); mv != nil {
			moves = append(moves, mv)
		}
	}
	m.mu.RUnlock()
	for _, mv := range moves {
		mv.cancel()
	}
}

// tickLoop checks the ISRs every half replica.lag.time.max.ms, as Kafka
// does, and every second reports the replicas whose log went offline.
func (m *Manager) tickLoop() {
	defer m.done.Done()
	t := time.NewTicker(m.cfg.LagTimeMax / 2)
	defer t.Stop()
	offline := time.NewTicker(time.Second)
	defer offline.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-offline.C:
			m.reportOffline()
			continue
		case <-t.C:
		}
		m.mu.RLock()
		parts := make([]*Partition, 0, len(m.parts))
		for _, p := range m.parts {
			if p.Role() == Leader {
				parts = append(parts, p)
			}
		}
		m.mu.RUnlock()
		for _, p := range parts {
			p.tick()
		}
	}
}

// reportOffline tells the controller about the replicas whose log went
// offline (Config.ReplicaOffline), once each, and stops their fetching:
// nothing can be appended to them until the broker restarts.
func (m *Manager) reportOffline() {
	m.mu.RLock()
	var gone []*Partition
	for _, p := range m.parts {
		if p.Log().Offline() && !p.offlineReported.Load() {
			gone = append(gone, p)
		}
	}
	m.mu.RUnlock()
	for _, p := range gone {
		m.fetchers.remove(p)
		if m.cfg.ReplicaOffline == nil {
			continue
		}
		if err := m.cfg.ReplicaOffline(p.TP); err != nil {
			m.cfg.Logger.Warn("cannot report an offline replica to the controller; retrying", "partition", p.TP.String(), "err", err)
			continue
		}
		m.cfg.Logger.Warn("replica offline after an I/O error: reported to the controller", "partition", p.TP.String())
		p.offlineReported.Store(true)
	}
}

// alterISR sends a leader's ISR change to the controller on its own
// goroutine; a change not made is forgotten, to be asked again.
func (m *Manager) alterISR(p *Partition, leaderEpoch, partitionEpoch int32, isr []int32) {
	if cur := p.ISR(); len(isr) < len(cur) {
		m.stats.isrShrinks.Add(1)
	} else {
		m.stats.isrExpands.Add(1)
	}
	if m.cfg.AlterPartition == nil {
		p.alterFailed()
		return
	}
	go func() {
		if err := m.cfg.AlterPartition(p.TP, p.TopicID, leaderEpoch, partitionEpoch, isr); err != nil {
			m.cfg.Logger.Info("ISR change not made", "partition", p.TP.String(), "isr", isr, "err", err)
			p.alterFailed()
		}
	}()
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
// failed to open or went offline after an I/O error, or
// UNKNOWN_TOPIC_OR_PARTITION.
func (m *Manager) Get(tp log.TopicPartition) (*Partition, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if p, ok := m.parts[tp]; ok {
		if p.Log().Offline() {
			return nil, fmt.Errorf("partition %s went offline after an I/O error: %w", tp, kerr.KafkaStorageError)
		}
		return p, nil
	}
	if err, ok := m.offline[tp]; ok {
		return nil, fmt.Errorf("partition %s is offline: %v: %w", tp, err, kerr.KafkaStorageError)
	}
	return nil, kerr.UnknownTopicOrPartition
}

// Offline reports why a replica this broker should lead is offline: its
// log failed to open, or went offline after an I/O error (nil when it is
// not offline). A log that failed to open stays offline until a later
// MakeLeader opens it or it is removed; one that went offline, until the
// broker restarts and recovers it.
func (m *Manager) Offline(tp log.TopicPartition) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if p, ok := m.parts[tp]; ok && p.Log().Offline() {
		return errLogOffline
	}
	return m.offline[tp]
}

var errLogOffline = fmt.Errorf("the log went offline after an I/O error: %w", kerr.KafkaStorageError)

// OfflineCount is the number of offline replicas: logs that failed to open
// and logs an I/O error took offline. Metadata asks it for every topic, so
// it counts nothing itself.
func (m *Manager) OfflineCount() int {
	m.mu.RLock()
	n := len(m.offline)
	m.mu.RUnlock()
	return n + m.logs.OfflineLogs()
}

// LeaderSpec is what the controller says about a partition this broker leads.
type LeaderSpec struct {
	TP                log.TopicPartition
	TopicID           [16]byte
	LeaderEpoch       int32
	PartitionEpoch    int32
	Replicas          []int32 // nil: the ISR
	ISR               []int32
	Ineligible        []int32 // replicas on fenced or shutting-down brokers
	MinInsyncReplicas int
	Config            log.Config
}

// FollowerSpec is what the controller says about a partition this broker
// follows.
type FollowerSpec struct {
	TP          log.TopicPartition
	TopicID     [16]byte
	Leader      int32 // -1: none for now
	LeaderEpoch int32
	Config      log.Config
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
	p, err := m.openLocked(s.TP, s.TopicID, s.Config)
	if err != nil {
		return p, err
	}
	m.fetchers.remove(p)
	p.makeLeader(s)
	return p, nil
}

// MakeFollower creates the replica's log if needed and makes this broker
// a follower of s.Leader: its fetcher truncates the log where it diverged
// from the leader's and copies the leader's batches. Errors as MakeLeader.
func (m *Manager) MakeFollower(s FollowerSpec) (*Partition, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	p, err := m.openLocked(s.TP, s.TopicID, s.Config)
	if err != nil && p == nil {
		m.offline[s.TP] = err
		return nil, fmt.Errorf("%w: %w", err, kerr.KafkaStorageError)
	}
	delete(m.offline, s.TP)
	if err != nil {
		return p, err
	}
	if p.Role() == Follower && p.LeaderEpoch() == s.LeaderEpoch && p.leaderID.Load() == s.Leader {
		return p, nil
	}
	m.fetchers.remove(p)
	p.makeFollower(s.Leader, s.LeaderEpoch)
	if s.Leader >= 0 && !p.Log().Offline() { // an offline log takes no appends

		m.fetchers.add(p, s.Leader, s.LeaderEpoch)
	}
	return p, nil
}

// openLocked returns the replica, opening or creating its log, with its
// config and topic id set.
func (m *Manager) openLocked(tp log.TopicPartition, topicID [16]byte, cfg log.Config) (*Partition, error) {
	p, ok := m.parts[tp]
	if !ok {
		l, err := m.logs.GetOrCreate(tp, cfg)
		if err != nil {
			return nil, fmt.Errorf("create log %s: %w", tp, err)
		}
		// A log left from another topic of the same name (its
		// partition.metadata names another id) is not this partition's:
		// it is set aside, never deleted (it may hold the only copy of
		// acknowledged data, if the metadata is what went wrong).
		if cur, ok, _ := log.ReadTopicID(l.Dir()); ok && topicID != ([16]byte{}) && cur != topicID {
			if _, err := m.logs.SetAside(tp); err != nil {
				return nil, fmt.Errorf("set aside stale log %s: %w", tp, err)
			}
			if l, err = m.logs.GetOrCreate(tp, cfg); err != nil {
				return nil, fmt.Errorf("create log %s: %w", tp, err)
			}
		}
		p = newPartition(m, tp, topicID, l)
		m.parts[tp] = p
		// A move a restart interrupted goes on.
		if fut, dir, ok := m.logs.Future(tp); ok {
			fut.SetConfig(cfg)
			m.startMove(p, fut, dir)
		}
	}
	p.Log().SetConfig(cfg)
	if topicID != ([16]byte{}) {
		if err := p.Log().SetTopicID(topicID); err != nil {
			return p, err
		}
	}
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
	m.fetchers.remove(p)
	if mv := p.move.Load(); mv != nil {
		mv.cancel()
	}
	p.stop()
	if deleteLog {
		return m.logs.Delete(tp)
	}
	return nil
}
