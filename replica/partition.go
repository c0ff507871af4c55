package replica

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
)

// Role is what this broker is for a partition.
type Role int32

const (
	// Stopped: no longer a replica here (moved away or deleted), or not
	// yet told.
	Stopped Role = iota
	// Leader: serves produce and fetch, tracks the followers and the HW.
	Leader
	// Follower: copies the leader's log with a fetcher.
	Follower
)

// Partition is one local replica of a partition.
type Partition struct {
	TP      log.TopicPartition
	TopicID [16]byte
	// cur is the partition's log; a move to another log dir replaces it
	// (move.go), so every use loads it (Log) and a read that finds it
	// closed reads again from the new one.
	cur    atomic.Pointer[log.Log]
	nodeID int32
	m      *Manager
	// move is the partition's move to another log dir in progress.
	move atomic.Pointer[move]
	// swapping: a move's last step closes the log and publishes the new
	// one; a read that finds the old one closed meanwhile reads nothing.
	swapping atomic.Bool

	role        atomic.Int32
	leaderEpoch atomic.Int32
	leaderID    atomic.Int32
	// roleMu orders role changes with a follower's appends: the fetcher
	// appends under it after checking the role and epoch it fetched for,
	// so no batch of an old leadership lands after this broker took over.
	roleMu sync.Mutex
	// offlineReported: the controller knows the log went offline.
	offlineReported atomic.Bool

	mu struct {
		sync.Mutex
		isr               *isrState // the leader's view; nil when not leading
		minInsyncReplicas int
		watchers          map[*Waiter]struct{} // consumer fetches: woken as the HW moves
		followerWatchers  map[*Waiter]int64    // follower fetches, with the HW each knows: woken as the log grows or the HW passes it
		commits           []*commitWaiter      // writes waiting for the HW (acks=all)
		marks             [64]appendMark       // recent appends' end offsets and cumulative bytes
		nmarks            uint64
		appended          int64 // bytes appended while leading
		hwBytes           int64 // appended bytes below the HW, credited to watchers
	}
}

// appendMark is where an append ended, in offsets and cumulative bytes: a
// HW move credits consumer waiters with the bytes it made visible.
type appendMark struct{ end, bytes int64 }

func newPartition(m *Manager, tp log.TopicPartition, id [16]byte, l *log.Log) *Partition {
	p := &Partition{TP: tp, TopicID: id, nodeID: m.nodeID, m: m}
	p.cur.Store(l)
	p.mu.watchers = map[*Waiter]struct{}{}
	p.mu.followerWatchers = map[*Waiter]int64{}
	p.mu.minInsyncReplicas = 1
	p.leaderID.Store(-1)
	return p
}

// Log is the partition's log, for tests that look at what is on disk:
// serving code reads through the Partition (lookup.go), which knows the
// role and the high watermark. A move to another log dir replaces it.
func (p *Partition) Log() *log.Log { return p.cur.Load() }

// Role is this broker's role for the partition.
func (p *Partition) Role() Role { return Role(p.role.Load()) }

// LeaderEpoch is the epoch of the current leadership.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch.Load() }

// IsLeader reports whether this broker leads the partition.
func (p *Partition) IsLeader() bool { return p.Role() == Leader }

// HighWatermark is the offset below which records are committed. It lives
// in the log (log.Log.HighWatermark), which persists it in
// replication-offset-checkpoint.
func (p *Partition) HighWatermark() int64 { return p.Log().HighWatermark() }

// LastStableOffset is the high watermark, or the first offset of the
// oldest transaction not yet decided below it.
func (p *Partition) LastStableOffset() int64 {
	hw := p.HighWatermark()
	if o, ok := p.Log().FirstUnstableOffset(); ok && o < hw {
		return o
	}
	return hw
}

// ISR is the committed in-sync replica set as this leader knows it (nil
// when not leading).
func (p *Partition) ISR() []int32 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.isr == nil {
		return nil
	}
	return slices.Clone(p.mu.isr.isr)
}

func nowMs() int64 { return time.Now().UnixMilli() }

// makeLeader makes this broker the leader at s.LeaderEpoch, or takes a
// new ISR or partition epoch of the leadership it has.
func (p *Partition) makeLeader(s LeaderSpec) {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	now := nowMs()
	p.mu.Lock()
	p.mu.minInsyncReplicas = max(s.MinInsyncReplicas, 1)
	replicas := s.Replicas
	if len(replicas) == 0 {
		replicas = s.ISR
	}
	var moved bool
	if p.mu.isr == nil || p.Role() != Leader || p.leaderEpoch.Load() != s.LeaderEpoch {
		p.mu.isr = newISRState(p.nodeID, replicas, s.ISR, s.Ineligible, s.PartitionEpoch, p.mu.minInsyncReplicas, p.Log().LogEndOffset(), p.Log().HighWatermark(), now, p.m.cfg.LagTimeMax.Milliseconds())
		p.mu.appended, p.mu.hwBytes, p.mu.nmarks = 0, 0, 0
		moved = true
	} else {
		moved = p.mu.isr.setMetadata(replicas, s.ISR, s.PartitionEpoch, s.Ineligible, p.mu.minInsyncReplicas, now)
	}
	hw := p.mu.isr.hw
	p.mu.Unlock()
	p.leaderEpoch.Store(s.LeaderEpoch)
	p.leaderID.Store(p.nodeID)
	p.role.Store(int32(Leader))
	if moved {
		p.onHW(hw, false)
	}
}

// makeFollower makes this broker a follower of leader at epoch: writes
// waiting for the HW fail with NOT_LEADER_OR_FOLLOWER and consumer fetches
// are answered (with that error).
func (p *Partition) makeFollower(leader, epoch int32) {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	p.mu.Lock()
	p.mu.isr = nil
	p.mu.Unlock()
	p.leaderEpoch.Store(epoch)
	p.leaderID.Store(leader)
	p.role.Store(int32(Follower))
	p.failCommits(kerr.NotLeaderForPartition)
	p.wakeAll()
}

// stop ends every role: waiting writes fail, waiting fetches are answered.
func (p *Partition) stop() {
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	p.mu.Lock()
	p.mu.isr = nil
	p.mu.Unlock()
	p.role.Store(int32(Stopped))
	p.failCommits(kerr.NotLeaderForPartition)
	p.wakeAll()
}

// CheckLeaderEpoch applies KIP-320: a request naming an older leader epoch is
// fenced, a newer one is unknown to this broker yet. -1 skips the check.
func (p *Partition) CheckLeaderEpoch(current int32) error {
	if current < 0 {
		return nil
	}
	switch e := p.leaderEpoch.Load(); {
	case current < e:
		return kerr.FencedLeaderEpoch
	case current > e:
		return kerr.UnknownLeaderEpoch
	}
	return nil
}

// Append writes a produce request's record set. acks=-1 needs at least
// min.insync.replicas in the ISR before the append; the caller then waits
// for the HW with Committed.
func (p *Partition) Append(records []byte, acks int16) (log.AppendInfo, error) {
	if p.Role() != Leader {
		return log.AppendInfo{}, kerr.NotLeaderForPartition
	}
	if acks == -1 {
		p.mu.Lock()
		n, min := 0, p.mu.minInsyncReplicas
		if p.mu.isr != nil {
			n = p.mu.isr.isrSize()
		}
		p.mu.Unlock()
		if n < min {
			return log.AppendInfo{}, fmt.Errorf("isr %d below min.insync.replicas %d: %w", n, min, kerr.NotEnoughReplicas)
		}
	}
	var info log.AppendInfo
	err := p.write(func(l *log.Log) (err error) {
		info, err = l.Append(records, log.OriginClient, p.leaderEpoch.Load())
		return err
	})
	if err != nil {
		return info, err
	}
	p.afterAppend(info, true)
	return info, nil
}

// AppendCoordinator writes records a coordinator of this broker made: a
// transaction marker, or a coordinator's transactional records (see
// log.OriginCoordinator). The coordinator waits for the HW with Committed
// before it answers.
func (p *Partition) AppendCoordinator(records []byte) (log.AppendInfo, error) {
	if p.Role() != Leader {
		return log.AppendInfo{}, kerr.NotLeaderForPartition
	}
	var info log.AppendInfo
	err := p.write(func(l *log.Log) (err error) {
		info, err = l.Append(records, log.OriginCoordinator, p.leaderEpoch.Load())
		return err
	})
	if err == nil {
		p.afterAppend(info, false)
	}
	return info, err
}

// afterAppend steps the leader's state with its new log end: followers'
// fetches are woken, and with no follower in the ISR the HW moves. A
// client's produce answers the fetches it satisfies itself (inline, see
// fire); a coordinator's append, made under the coordinator's locks,
// leaves them to their own goroutines.
func (p *Partition) afterAppend(info log.AppendInfo, inline bool) {
	if info.Duplicate || info.Bytes == 0 {
		return
	}
	leo := p.Log().LogEndOffset()
	p.mu.Lock()
	p.mu.appended += info.Bytes
	p.mu.marks[p.mu.nmarks%uint64(len(p.mu.marks))] = appendMark{end: info.LastOffset + 1, bytes: p.mu.appended}
	p.mu.nmarks++
	moved, hw := false, int64(0)
	if s := p.mu.isr; s != nil {
		moved, hw = s.appended(leo, nowMs()), s.hw
	}
	var wake [4]waiterRef // ready's room on the stack: most appends wake a few fetches, or none
	ready := readyLocked(wake[:0], p.mu.followerWatchers, info.Bytes)
	p.mu.Unlock()
	fire(ready, inline)
	if moved {
		p.onHW(hw, inline)
	}
}

// onHW publishes a HW move: the log learns it (LSO, cleaner bound,
// checkpoint), consumer fetches are credited with the bytes it made
// visible, writes it committed complete. inline: the fetches it satisfies
// may be answered on this goroutine (fire).
func (p *Partition) onHW(hw int64, inline bool) {
	p.setHW(hw)
	p.mu.Lock()
	credited := p.mu.appended
	for i := uint64(0); i < min(p.mu.nmarks, uint64(len(p.mu.marks))); i++ {
		m := p.mu.marks[(p.mu.nmarks-1-i)%uint64(len(p.mu.marks))]
		if m.end <= hw {
			credited = m.bytes
			break
		}
	}
	grown := max(credited-p.mu.hwBytes, 1)
	p.mu.hwBytes = max(p.mu.hwBytes, credited)
	var wake [4]waiterRef // ready's room on the stack: most HW moves wake a few fetches, or none
	ready := p.hwReadyLocked(hw, readyLocked(wake[:0], p.mu.watchers, grown))
	var done []*commitWaiter
	kept := p.mu.commits[:0]
	for _, c := range p.mu.commits {
		if c.offset <= hw {
			done = append(done, c)
		} else {
			kept = append(kept, c)
		}
	}
	clear(p.mu.commits[len(kept):])
	p.mu.commits = kept
	enough := p.mu.isr == nil || p.mu.isr.isrSize() >= p.mu.minInsyncReplicas
	p.mu.Unlock()
	fire(ready, inline)
	for _, c := range done {
		if enough {
			c.complete(nil)
		} else {
			c.complete(kerr.NotEnoughReplicasAfterAppend)
		}
	}
}

// ReadResult is one partition's part of a fetch.
type ReadResult struct {
	Range            log.FileRange // release after sending
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	Aborted          []log.AbortedTxn
	End              int64 // the offset the read could go up to: the HW, LSO or log end it saw
}

// Read serves a consumer's fetch: records from offset up to the HW
// (read_uncommitted) or the LSO (read_committed, with the aborted
// transactions in range). With fromFollower a follower serves it too, up
// to the HW its leader told it (KIP-392). aborted is reused as the Aborted
// slice's storage.
func (p *Partition) Read(offset int64, maxBytes int, readCommitted, minOneBatch bool, currentEpoch int32, fromFollower bool, aborted []log.AbortedTxn) (ReadResult, error) {
	role := p.Role()
	if role != Leader && (role != Follower || !fromFollower) {
		return ReadResult{}, kerr.NotLeaderForPartition
	}
	if err := p.CheckLeaderEpoch(currentEpoch); err != nil {
		return ReadResult{}, err
	}
	res := ReadResult{HighWatermark: p.HighWatermark(), LastStableOffset: p.LastStableOffset(), LogStartOffset: p.Log().LogStartOffset()}
	bound := res.HighWatermark
	if readCommitted {
		bound = res.LastStableOffset
	}
	res.End = bound
	r, err := p.readLog(offset, maxBytes, bound, minOneBatch)
	if err != nil {
		return res, err
	}
	res.Range = r
	if role == Follower {
		p.m.stats.followerServedBytes.Add(r.Len)
	}
	if readCommitted && !r.Empty() {
		res.Aborted, err = p.Log().AbortedTxns(aborted[:0], offset, bound)
	}
	return res, err
}

// ReadForFollower serves a follower's fetch: its fetch offset is its log
// end offset, which steps the ISR state (the HW may move, the ISR may be
// asked to change), and it reads up to this leader's log end.
func (p *Partition) ReadForFollower(replica int32, offset int64, maxBytes int, minOneBatch bool, currentEpoch int32) (ReadResult, error) {
	if p.Role() != Leader {
		return ReadResult{}, kerr.NotLeaderForPartition
	}
	if err := p.CheckLeaderEpoch(currentEpoch); err != nil {
		return ReadResult{}, err
	}
	leo := p.Log().LogEndOffset()
	if offset > leo {
		return ReadResult{}, fmt.Errorf("follower %d fetches at %d past the log end %d: %w", replica, offset, leo, kerr.OffsetOutOfRange)
	}
	p.mu.Lock()
	s := p.mu.isr
	if s == nil {
		p.mu.Unlock()
		return ReadResult{}, kerr.NotLeaderForPartition
	}
	moved, alter, ok := s.fetched(replica, offset, nowMs())
	hw, partitionEpoch := s.hw, s.partitionEpoch
	p.mu.Unlock()
	if !ok {
		return ReadResult{}, fmt.Errorf("broker %d is not a replica: %w", replica, kerr.NotLeaderForPartition)
	}
	if moved {
		p.onHW(hw, true)
	}
	if alter != nil {
		p.m.alterISR(p, p.leaderEpoch.Load(), partitionEpoch, alter)
	}
	res := ReadResult{HighWatermark: p.HighWatermark(), LastStableOffset: p.LastStableOffset(), LogStartOffset: p.Log().LogStartOffset(), End: leo}
	r, err := p.readLog(offset, maxBytes, leo, minOneBatch)
	if err != nil {
		return res, err
	}
	res.Range = r
	p.m.stats.followerReadBytes.Add(r.Len)
	return res, nil
}

// ReadBound is the offset a read could go up to now: the log end for a
// follower, else the LSO (committed) or the HW.
func (p *Partition) ReadBound(follower, committed bool) int64 {
	switch {
	case follower:
		return p.Log().LogEndOffset()
	case committed:
		return p.LastStableOffset()
	}
	return p.HighWatermark()
}

// Available is what a fetch from offset could read below bound (a
// ReadResult's End) now, as Kafka's DelayedFetch counts it to decide
// whether a fetch has its min bytes: the bytes from offset to bound in
// one segment, math.MaxInt64 when bound lies in a later segment (Kafka
// answers at once), 0 when nothing is there.
func (p *Partition) Available(offset, bound int64) int64 {
	return p.Log().Available(offset, bound)
}

// tick shrinks the ISR of followers out of sync.
func (p *Partition) tick() {
	p.mu.Lock()
	s := p.mu.isr
	if s == nil {
		p.mu.Unlock()
		return
	}
	alter, moved := s.tick(nowMs())
	hw, partitionEpoch := s.hw, s.partitionEpoch
	p.mu.Unlock()
	if moved {
		p.onHW(hw, false)
	}
	if alter != nil {
		p.m.alterISR(p, p.leaderEpoch.Load(), partitionEpoch, alter)
	}
}

// alterFailed forgets an ISR change the controller did not make.
func (p *Partition) alterFailed() {
	p.mu.Lock()
	if p.mu.isr != nil {
		p.mu.isr.alterFailed()
	}
	p.mu.Unlock()
}

// DeleteRecordsBefore raises the log start offset (DeleteRecords); offset
// -1 means the high watermark. It returns the new low watermark.
func (p *Partition) DeleteRecordsBefore(offset int64) (int64, error) {
	if p.Role() != Leader {
		return -1, kerr.NotLeaderForPartition
	}
	hw := p.HighWatermark()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return -1, fmt.Errorf("offset %d above the high watermark %d: %w", offset, hw, kerr.OffsetOutOfRange)
	}
	var start int64
	err := p.write(func(l *log.Log) (err error) {
		start, err = l.DeleteRecordsBefore(offset)
		return err
	})
	return start, err
}

// PreferredReadReplica is the replica a consumer in clientRack should
// fetch from at offset (KIP-392, Kafka's RackAwareReplicaSelector): -1
// for this leader (the client is in its rack, or no replica there may
// serve), else an in-sync follower in that rack whose log holds offset,
// the furthest along first.
func (p *Partition) PreferredReadReplica(clientRack string, offset int64) int32 {
	rack := p.m.cfg.BrokerRack
	if rack == nil {
		return -1
	}
	if r, _ := rack(p.nodeID); r == clientRack {
		return -1
	}
	now := nowMs()
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.mu.isr
	if s == nil {
		return -1
	}
	best, bestLEO := int32(-1), int64(-1)
	for id, f := range s.followers {
		if !slices.Contains(s.isr, id) || f.leo < offset || f.leo <= bestLEO || !s.caughtUp(f, now) {
			continue
		}
		if r, ok := rack(id); ok && r == clientRack {
			best, bestLEO = id, f.leo
		}
	}
	return best
}

// wakeReaders credits consumer fetches waiting on a follower with grown
// bytes below its new HW.
func (p *Partition) wakeReaders(grown int64) {
	p.mu.Lock()
	ready := readyLocked(nil, p.mu.watchers, max(grown, 1))
	p.mu.Unlock()
	fire(ready, false)
}

// write runs a write (an append, truncation or log start change) on the
// partition's log, and once more on the log a move swapped in meanwhile:
// the move's last step held the old log's writes (log.Log.HoldWrites), so
// one that waited for it found the old log closed and wrote nothing.
func (p *Partition) write(f func(l *log.Log) error) error {
	for {
		l := p.Log()
		err := f(l)
		if err == nil || p.Log() == l || !errors.Is(err, kerr.KafkaStorageError) {
			return err
		}
	}
}

// readLog reads the partition's log. A read that found the log closed
// because a move replaced it reads again from the new one; one that found
// it closed while the move swaps it reads nothing (a fetch waits, or
// comes back), rather than failing.
func (p *Partition) readLog(offset int64, maxBytes int, bound int64, minOneBatch bool) (log.FileRange, error) {
	l := p.Log()
	r, err := l.Read(offset, maxBytes, bound, minOneBatch)
	if err != nil && errors.Is(err, kerr.KafkaStorageError) {
		if nl := p.Log(); nl != l {
			return nl.Read(offset, maxBytes, bound, minOneBatch)
		}
		if p.swapping.Load() {
			return log.FileRange{}, nil
		}
	}
	return r, err
}

// setHW gives the log the partition's high watermark. A move's swap
// carries the old log's over after publishing the new log, and this looks
// at the log again after setting it: whichever runs second sees the
// other's, so a move loses no HW step.
func (p *Partition) setHW(hw int64) {
	l := p.Log()
	l.OnHighWatermark(hw)
	if nl := p.Log(); nl != l {
		nl.OnHighWatermark(hw)
	}
}
