package replica

import "sync/atomic"

// Stats are the replication counters of a Manager, for /metrics.
type Stats struct {
	FollowerReadBytes int64 // record bytes this broker read for its followers' fetches, as leader
	FetchedBytes      int64 // record bytes this broker's fetchers appended, as follower
	ServedAsFollower  int64 // record bytes consumers read from this broker as a follower (KIP-392)
	ISRShrinks        int64 // ISR changes asked for that drop a follower
	ISRExpands        int64 // ISR changes asked for that add one
	MovedBytes        int64 // record bytes replica moves copied between log dirs (AlterReplicaLogDirs)
	MoveHeldBytes     int64 // of those, the bytes copied in a move's last step, with the partition's writes held
	UnderReplicated   int   // partitions led here whose ISR is smaller than their replicas
	Leaders           int   // partitions led here
	Followers         int   // partitions followed here
	Fetchers          int   // replica fetchers running (num.replica.fetchers per leader broker at most)
}

type stats struct {
	followerReadBytes   atomic.Int64
	fetchedBytes        atomic.Int64
	followerServedBytes atomic.Int64
	isrShrinks          atomic.Int64
	isrExpands          atomic.Int64
	movedBytes          atomic.Int64
	moveHeldBytes       atomic.Int64
}

// Stats returns the counters and the partitions' replication state now.
func (m *Manager) Stats() Stats {
	s := Stats{
		FollowerReadBytes: m.stats.followerReadBytes.Load(),
		FetchedBytes:      m.stats.fetchedBytes.Load(),
		ServedAsFollower:  m.stats.followerServedBytes.Load(),
		ISRShrinks:        m.stats.isrShrinks.Load(),
		ISRExpands:        m.stats.isrExpands.Load(),
		MovedBytes:        m.stats.movedBytes.Load(),
		MoveHeldBytes:     m.stats.moveHeldBytes.Load(),
	}
	m.fetchers.mu.Lock()
	s.Fetchers = len(m.fetchers.by)
	m.fetchers.mu.Unlock()
	m.mu.RLock()
	parts := make([]*Partition, 0, len(m.parts))
	for _, p := range m.parts {
		parts = append(parts, p)
	}
	m.mu.RUnlock()
	for _, p := range parts {
		switch p.Role() {
		case Leader:
			s.Leaders++
			p.mu.Lock()
			if is := p.mu.isr; is != nil && len(is.isr) < len(is.replicas) {
				s.UnderReplicated++
			}
			p.mu.Unlock()
		case Follower:
			s.Followers++
		}
	}
	return s
}
