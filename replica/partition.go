package replica

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/log"
)

// Partition is one local replica of a partition.
type Partition struct {
	TP      log.TopicPartition
	TopicID [16]byte
	log     *log.Log
	nodeID  int32

	leaderEpoch atomic.Int32
	leader      atomic.Bool
	hw          atomic.Int64

	mu struct {
		sync.Mutex
		isr               []int32
		minInsyncReplicas int
		watchers          map[*Waiter]struct{}
	}
}

func newPartition(tp log.TopicPartition, id [16]byte, l *log.Log, nodeID int32) *Partition {
	p := &Partition{TP: tp, TopicID: id, log: l, nodeID: nodeID}
	p.mu.watchers = map[*Waiter]struct{}{}
	p.mu.minInsyncReplicas = 1
	return p
}

// Log is the partition's log.
func (p *Partition) Log() *log.Log { return p.log }

// LeaderEpoch is the epoch of the current leadership.
func (p *Partition) LeaderEpoch() int32 { return p.leaderEpoch.Load() }

// IsLeader reports whether this broker leads the partition.
func (p *Partition) IsLeader() bool { return p.leader.Load() }

// HighWatermark is the offset below which records are committed.
func (p *Partition) HighWatermark() int64 { return p.hw.Load() }

// LastStableOffset is the high watermark, or the first offset of the
// oldest transaction not yet decided below it.
func (p *Partition) LastStableOffset() int64 {
	hw := p.hw.Load()
	if o, ok := p.log.FirstUnstableOffset(); ok && o < hw {
		return o
	}
	return hw
}

// makeLeader makes this broker the leader at epoch with the given ISR.
func (p *Partition) makeLeader(epoch int32, isr []int32, minISR int) {
	p.mu.Lock()
	p.mu.isr = append(p.mu.isr[:0], isr...)
	p.mu.minInsyncReplicas = max(minISR, 1)
	p.mu.Unlock()
	p.leaderEpoch.Store(epoch)
	p.leader.Store(true)
	p.maybeAdvanceHW(0)
}

// maybeAdvanceHW moves the high watermark to the smallest log end offset
// in the ISR. With this broker the only replica, that is its own LEO;
// followers' LEOs join when replication lands.
func (p *Partition) maybeAdvanceHW(grown int64) {
	leo := p.log.LogEndOffset()
	for {
		cur := p.hw.Load()
		if leo <= cur {
			return
		}
		if p.hw.CompareAndSwap(cur, leo) {
			p.log.OnHighWatermark(leo)
			p.notify(grown)
			return
		}
	}
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
// min.insync.replicas in the ISR; with every ISR member this broker the
// append is committed when it returns.
func (p *Partition) Append(records []byte, acks int16) (log.AppendInfo, error) {
	if !p.leader.Load() {
		return log.AppendInfo{}, kerr.NotLeaderForPartition
	}
	if acks == -1 {
		p.mu.Lock()
		n, min := len(p.mu.isr), p.mu.minInsyncReplicas
		p.mu.Unlock()
		if n < min {
			return log.AppendInfo{}, fmt.Errorf("isr %d below min.insync.replicas %d: %w", n, min, kerr.NotEnoughReplicas)
		}
	}
	info, err := p.log.Append(records, log.OriginClient, p.leaderEpoch.Load())
	if err != nil {
		return info, err
	}
	p.maybeAdvanceHW(info.Bytes)
	return info, nil
}

// AppendCoordinator writes records a coordinator of this broker made: a
// transaction marker, or a coordinator's transactional records (see
// log.OriginCoordinator).
func (p *Partition) AppendCoordinator(records []byte) (log.AppendInfo, error) {
	if !p.leader.Load() {
		return log.AppendInfo{}, kerr.NotLeaderForPartition
	}
	info, err := p.log.Append(records, log.OriginCoordinator, p.leaderEpoch.Load())
	if err == nil {
		p.maybeAdvanceHW(info.Bytes)
	}
	return info, err
}

// ReadResult is one partition's part of a fetch.
type ReadResult struct {
	Range            log.FileRange // release after sending
	HighWatermark    int64
	LastStableOffset int64
	LogStartOffset   int64
	Aborted          []log.AbortedTxn
}

// Read serves a fetch: records from offset up to the HW (read_uncommitted)
// or the LSO (read_committed, with the aborted transactions in range).
// aborted is reused as the Aborted slice's storage.
func (p *Partition) Read(offset int64, maxBytes int, readCommitted, minOneBatch bool, currentEpoch int32, aborted []log.AbortedTxn) (ReadResult, error) {
	if !p.leader.Load() {
		return ReadResult{}, kerr.NotLeaderForPartition
	}
	if err := p.CheckLeaderEpoch(currentEpoch); err != nil {
		return ReadResult{}, err
	}
	res := ReadResult{HighWatermark: p.hw.Load(), LastStableOffset: p.LastStableOffset(), LogStartOffset: p.log.LogStartOffset()}
	bound := res.HighWatermark
	if readCommitted {
		bound = res.LastStableOffset
	}
	r, err := p.log.Read(offset, maxBytes, bound, minOneBatch)
	if err != nil {
		return res, err
	}
	res.Range = r
	if readCommitted && !r.Empty() {
		res.Aborted, err = p.log.AbortedTxns(aborted[:0], offset, bound)
	}
	return res, err
}

// DeleteRecordsBefore raises the log start offset (DeleteRecords); offset
// -1 means the high watermark. It returns the new low watermark.
func (p *Partition) DeleteRecordsBefore(offset int64) (int64, error) {
	if !p.leader.Load() {
		return -1, kerr.NotLeaderForPartition
	}
	hw := p.hw.Load()
	if offset == -1 {
		offset = hw
	}
	if offset < 0 || offset > hw {
		return -1, fmt.Errorf("offset %d above the high watermark %d: %w", offset, hw, kerr.OffsetOutOfRange)
	}
	return p.log.DeleteRecordsBefore(offset)
}
