package replica

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/wire"
)

// A follower copies its leader's log with fetchers: num.replica.fetchers
// of them per leader broker (Kafka's replica fetcher threads), each one
// goroutine, one connection and one fetch session, batching the
// partitions this broker follows there that hash to it into each Fetch. A partition starts by truncating: it asks the
// leader (OffsetForLeaderEpoch) where its own latest leader epoch ends in
// the leader's log and cuts its log there, so records of an old leader
// that the new one never had are dropped before anything is copied
// (KIP-101, KIP-279). Then it fetches from its log end: the leader's
// batches are appended as they are (log.OriginReplication: offsets and
// epochs kept), and the leader's HW and log start offset follow.

// fetchers holds the fetchers of each leader broker.
type fetchers struct {
	m  *Manager
	mu sync.Mutex
	by map[fetcherKey]*fetcher
	wg sync.WaitGroup
}

// fetcherKey names a fetcher: its leader broker, and which of the
// num.replica.fetchers for that broker.
type fetcherKey struct {
	leader int32
	slot   int
}

func newFetchers(m *Manager) *fetchers {
	return &fetchers{m: m, by: map[fetcherKey]*fetcher{}}
}

// slotOf is the fetcher of its leader that fetches tp, as Kafka spreads
// partitions over num.replica.fetchers (a hash of topic and partition).
func (fs *fetchers) slotOf(tp log.TopicPartition) int {
	n := fs.m.cfg.NumFetchers
	if n <= 1 {
		return 0
	}
	h := fnv.New32a()
	h.Write([]byte(tp.Topic))
	return int((h.Sum32()*31 + uint32(tp.Partition)) % uint32(n))
}

// add makes p fetch from leader at epoch, truncating first.
func (fs *fetchers) add(p *Partition, leader, epoch int32) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	select {
	case <-fs.m.stop:
		return
	default:
	}
	key := fetcherKey{leader, fs.slotOf(p.TP)}
	f, ok := fs.by[key]
	if !ok {
		f = &fetcher{m: fs.m, leader: leader, parts: map[*Partition]*fetchState{}, wake: make(chan struct{}, 1), stop: make(chan struct{})}
		fs.by[key] = f
		fs.wg.Add(1)
		go func() {
			defer fs.wg.Done()
			f.run()
		}()
	}
	f.mu.Lock()
	f.parts[p] = &fetchState{epoch: epoch, truncate: true}
	f.mu.Unlock()
	f.signal()
}

// remove stops fetching p. A fetch in flight may still hold it: its
// answer is dropped (the role check under the partition's roleMu).
func (fs *fetchers) remove(p *Partition) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	for id, f := range fs.by {
		f.mu.Lock()
		delete(f.parts, p)
		empty := len(f.parts) == 0
		f.mu.Unlock()
		if empty {
			close(f.stop)
			delete(fs.by, id)
		}
	}
}

func (fs *fetchers) closeAll() {
	fs.mu.Lock()
	for id, f := range fs.by {
		close(f.stop)
		delete(fs.by, id)
	}
	fs.mu.Unlock()
	fs.wg.Wait()
}

// maxFetchFrame bounds a fetch response a follower reads.
const maxFetchFrame = 1 << 30

// fetcher fetches every partition this broker follows on one leader.
type fetcher struct {
	m      *Manager
	leader int32
	mu     sync.Mutex
	parts  map[*Partition]*fetchState
	wake   chan struct{}
	stop   chan struct{}
	conn   *wire.Client
	// session is the fetch session with the leader (fetch_session.go),
	// owned by the fetcher's goroutine.
	session fetchSession
}

// fetchState is one partition's progress with its fetcher.
type fetchState struct {
	epoch        int32 // the leader epoch it follows
	truncate     bool  // ask OffsetForLeaderEpoch before fetching
	outOfRange   bool  // the last fetch was out of range after truncating: check the leader's log start
	backoffUntil time.Time
}

func (f *fetcher) signal() {
	select {
	case f.wake <- struct{}{}:
	default:
	}
}

type fetchItem struct {
	p *Partition
	s fetchState
}

// snapshot lists the partitions to work on now, and when the next one in
// backoff is due.
func (f *fetcher) snapshot(now time.Time) (items []fetchItem, next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for p, s := range f.parts {
		if now.Before(s.backoffUntil) {
			if next.IsZero() || s.backoffUntil.Before(next) {
				next = s.backoffUntil
			}
			continue
		}
		items = append(items, fetchItem{p, *s})
	}
	return items, next
}

// update changes p's state if p is still fetched at epoch.
func (f *fetcher) update(p *Partition, epoch int32, fn func(*fetchState)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s, ok := f.parts[p]; ok && s.epoch == epoch {
		fn(s)
	}
}

func (f *fetcher) backoff(p *Partition, epoch int32) {
	until := time.Now().Add(f.m.cfg.FetchBackoff)
	f.update(p, epoch, func(s *fetchState) { s.backoffUntil = until })
}

func (f *fetcher) stopped() bool {
	select {
	case <-f.stop:
		return true
	default:
		return false
	}
}

// sleep waits d, or until stopped; it reports whether to go on.
func (f *fetcher) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.stop:
		return false
	case <-f.wake:
		return true
	case <-t.C:
		return true
	}
}

func (f *fetcher) run() {
	defer func() {
		if f.conn != nil {
			f.conn.Close()
		}
	}()
	logger := f.m.cfg.Logger.With("leader", f.leader)
	for !f.stopped() {
		items, next := f.snapshot(time.Now())
		if len(items) == 0 {
			wait := time.Hour
			if !next.IsZero() {
				wait = time.Until(next)
			}
			if !f.sleep(wait) {
				return
			}
			continue
		}
		if err := f.round(items); err != nil {
			if f.stopped() {
				return
			}
			logger.Info("replica fetcher: leader unreachable; retrying", "err", err)
			if f.conn != nil {
				f.conn.Close()
				f.conn = nil
			}
			f.session.reset()
			if !f.sleep(f.m.cfg.FetchBackoff) {
				return
			}
		}
	}
}

func (f *fetcher) client() (*wire.Client, error) {
	if f.conn != nil {
		return f.conn, nil
	}
	addr, ok := f.m.cfg.BrokerAddr(f.leader)
	if !ok {
		return nil, fmt.Errorf("no address for broker %d", f.leader)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The response may exceed replica.fetch.response.max.bytes: the first
	// batch comes whole however large (KIP-74), up to the topic's
	// max.message.bytes.
	c, err := f.m.cfg.Dialer.Dial(ctx, addr, "kzero-replica-fetcher-"+strconv.Itoa(int(f.m.nodeID)), maxFetchFrame)
	if err != nil {
		return nil, err
	}
	f.conn = c
	return c, nil
}

// round truncates the partitions that need it, then fetches the others
// once. An error is the connection's.
func (f *fetcher) round(items []fetchItem) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	var trunc, fetch []fetchItem
	for _, it := range items {
		if it.s.truncate {
			trunc = append(trunc, it)
		} else {
			fetch = append(fetch, it)
		}
	}
	if len(trunc) > 0 {
		if err := f.truncate(c, trunc); err != nil {
			return err
		}
	}
	for _, it := range fetch {
		if it.s.outOfRange {
			if err := f.startAtLeaderLogStart(c, it); err != nil {
				return err
			}
		}
	}
	if len(fetch) == 0 {
		return nil
	}
	return f.fetch(c, fetch)
}

func (f *fetcher) deadline() time.Time {
	return time.Now().Add(f.m.cfg.FetchWaitMax + 30*time.Second)
}

// truncate asks the leader where each partition's latest epoch ends and
// cuts the local log there.
func (f *fetcher) truncate(c *wire.Client, items []fetchItem) error {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(4)
	req.ReplicaID = f.m.nodeID
	local := map[log.TopicPartition]int32{}
	for _, it := range items {
		epochs := it.p.Log().LeaderEpochs()
		if len(epochs) == 0 {
			// No epoch (an empty log, or one from before epochs): the
			// HW is what the log can keep.
			f.cut(it, it.p.HighWatermark(), "no leader epoch")
			continue
		}
		last := epochs[len(epochs)-1].Epoch
		local[it.p.TP] = last
		t := kmsg.NewOffsetForLeaderEpochRequestTopic()
		t.Topic = it.p.TP.Topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = it.p.TP.Partition, it.s.epoch, last
		t.Partitions = append(t.Partitions, rp)
		req.Topics = append(req.Topics, t)
	}
	if len(req.Topics) == 0 {
		return nil
	}
	resp := kmsg.NewPtrOffsetForLeaderEpochResponse()
	if err := c.Do(req, resp, f.deadline()); err != nil {
		return err
	}
	byTP := map[log.TopicPartition]fetchItem{}
	for _, it := range items {
		byTP[it.p.TP] = it
	}
	for _, t := range resp.Topics {
		for _, rp := range t.Partitions {
			tp := log.TopicPartition{Topic: t.Topic, Partition: rp.Partition}
			it, ok := byTP[tp]
			if !ok {
				continue
			}
			if rp.ErrorCode != 0 {
				f.backoff(it.p, it.s.epoch)
				continue
			}
			var offset int64
			switch {
			case rp.EndOffset < 0 || rp.LeaderEpoch < 0:
				// The leader knows no epoch at or below ours.
				offset = it.p.HighWatermark()
			default:
				// The leader's epoch may be older than ours: then our
				// log ends that epoch where it ends it, and we keep the
				// smaller of the two ends.
				offset = rp.EndOffset
				if rp.LeaderEpoch < local[tp] {
					if e, end := it.p.Log().EndOffsetForEpoch(rp.LeaderEpoch); e == rp.LeaderEpoch {
						offset = min(offset, end)
					}
				}
			}
			f.cut(it, offset, "diverged from the leader")
		}
	}
	return nil
}

// cut truncates a follower's log at offset (nothing when it ends before)
// and marks the partition ready to fetch.
func (f *fetcher) cut(it fetchItem, offset int64, why string) {
	p := it.p
	p.roleMu.Lock()
	ok := p.Role() == Follower && p.LeaderEpoch() == it.s.epoch
	var err error
	if ok && offset < p.Log().LogEndOffset() {
		f.m.cfg.Logger.Info("follower truncates its log", "partition", p.TP.String(), "from", p.Log().LogEndOffset(), "to", offset, "why", why)
		err = p.truncate(offset, false)
	}
	p.roleMu.Unlock()
	if err != nil {
		f.m.cfg.Logger.Error("follower cannot truncate its log", "partition", p.TP.String(), "err", err)
		f.backoff(p, it.s.epoch)
		return
	}
	f.update(p, it.s.epoch, func(s *fetchState) { s.truncate = false })
}

// startAtLeaderLogStart handles a fetch out of range after truncating:
// the follower's log ends before the leader's log starts (retention or
// DeleteRecords ran while it was away), so it starts over there.
func (f *fetcher) startAtLeaderLogStart(c *wire.Client, it fetchItem) error {
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(4)
	req.ReplicaID = f.m.nodeID
	t := kmsg.NewListOffsetsRequestTopic()
	t.Topic = it.p.TP.Topic
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.CurrentLeaderEpoch, rp.Timestamp = it.p.TP.Partition, it.s.epoch, -2
	t.Partitions = append(t.Partitions, rp)
	req.Topics = append(req.Topics, t)
	resp := kmsg.NewPtrListOffsetsResponse()
	if err := c.Do(req, resp, f.deadline()); err != nil {
		return err
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 || resp.Topics[0].Partitions[0].ErrorCode != 0 {
		f.backoff(it.p, it.s.epoch)
		return nil
	}
	start := resp.Topics[0].Partitions[0].Offset
	p := it.p
	p.roleMu.Lock()
	var err error
	if p.Role() == Follower && p.LeaderEpoch() == it.s.epoch && p.Log().LogEndOffset() < start {
		f.m.cfg.Logger.Info("follower starts over at the leader's log start", "partition", p.TP.String(), "offset", start)
		err = p.truncate(start, true)
	}
	p.roleMu.Unlock()
	if err != nil {
		f.m.cfg.Logger.Error("follower cannot restart its log", "partition", p.TP.String(), "err", err)
	}
	f.update(p, it.s.epoch, func(s *fetchState) { s.outOfRange = false })
	return nil
}

// fetch sends one Fetch for items, in the fetcher's session, and appends
// what comes back.
func (f *fetcher) fetch(c *wire.Client, items []fetchItem) error {
	cfg := &f.m.cfg
	req := kmsg.NewPtrFetchRequest()
	// v18: topic ids, ReplicaState, and the HW this follower knows
	// (KIP-1166), which lets the leader answer as soon as its HW passes it.
	req.SetVersion(18)
	for _, it := range items {
		if it.p.TopicID == ([16]byte{}) {
			req.SetVersion(12) // a topic without an id (never in a cluster's image)
			break
		}
	}
	req.ReplicaID = f.m.nodeID
	req.ReplicaState.ID = f.m.nodeID
	req.ReplicaState.Epoch = -1
	req.MaxWaitMillis = int32(cfg.FetchWaitMax.Milliseconds())
	req.MinBytes = cfg.FetchMinBytes
	req.MaxBytes = cfg.FetchRespBytes
	f.session.build(req, items, cfg.FetchMaxBytes)
	resp := kmsg.NewPtrFetchResponse()
	if err := c.Do(req, resp, f.deadline()); err != nil {
		return err
	}
	switch err := kerr.ErrorForCode(resp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.FetchSessionIDNotFound), errors.Is(err, kerr.InvalidFetchSessionEpoch):
		// The leader lost or evicted the session: open a new one.
		f.session.reset()
		return nil
	default:
		return fmt.Errorf("fetch: %w", err)
	}
	f.session.answered(resp.SessionID)
	byTP := make(map[log.TopicPartition]fetchItem, len(items))
	byID := make(map[[16]byte]string, len(items))
	for _, it := range items {
		byTP[it.p.TP] = it
		byID[it.p.TopicID] = it.p.TP.Topic
	}
	for _, t := range resp.Topics {
		topic := t.Topic
		if req.Version >= 13 {
			topic = byID[t.TopicID]
		}
		for i := range t.Partitions {
			rp := &t.Partitions[i]
			it, ok := byTP[log.TopicPartition{Topic: topic, Partition: rp.Partition}]
			if !ok {
				continue
			}
			f.apply(it, rp)
		}
	}
	return nil
}

// apply appends one partition's fetched batches and takes the leader's
// HW and log start offset.
func (f *fetcher) apply(it fetchItem, rp *kmsg.FetchResponseTopicPartition) {
	p := it.p
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case err == nil:
	case errors.Is(err, kerr.OffsetOutOfRange):
		// Ahead of the leader (diverged) or behind its log start:
		// truncate again, then check the log start.
		f.update(p, it.s.epoch, func(s *fetchState) { s.truncate, s.outOfRange = true, true })
		return
	default:
		// Not (yet) the leader here, an epoch the leader does not know
		// yet, a storage error: the metadata will tell.
		f.backoff(p, it.s.epoch)
		return
	}
	records := wholeBatches(rp.RecordBatches)
	p.roleMu.Lock()
	defer p.roleMu.Unlock()
	if p.Role() != Follower || p.LeaderEpoch() != it.s.epoch {
		return
	}
	if len(records) > 0 {
		f.m.stats.fetchedBytes.Add(int64(len(records)))
		if err := p.write(func(l *log.Log) error {
			_, err := l.Append(records, log.OriginReplication, it.s.epoch)
			return err
		}); err != nil {
			f.m.cfg.Logger.Error("follower cannot append the leader's batches", "partition", p.TP.String(), "err", err)
			f.update(p, it.s.epoch, func(s *fetchState) { s.truncate = true })
			f.backoff(p, it.s.epoch)
			return
		}
	}
	leo := p.Log().LogEndOffset()
	if start := min(rp.LogStartOffset, leo); start > p.Log().LogStartOffset() {
		if err := p.write(func(l *log.Log) error {
			_, err := l.DeleteRecordsBefore(start)
			return err
		}); err != nil {
			f.m.cfg.Logger.Warn("follower cannot raise its log start offset", "partition", p.TP.String(), "err", err)
		}
	}
	if hw := min(rp.HighWatermark, leo); hw > p.HighWatermark() {
		p.setHW(hw)
		p.wakeReaders(int64(len(records))) // consumers reading from this follower (KIP-392)
	}
}

// wholeBatches cuts a fetched record set after its last whole batch: a
// leader may end a response inside a batch (a partition's max bytes).
func wholeBatches(b []byte) []byte {
	n := 0
	for {
		rest := b[n:]
		if len(rest) < 12 {
			return b[:n]
		}
		size := int(int32(uint32(rest[8])<<24 | uint32(rest[9])<<16 | uint32(rest[10])<<8 | uint32(rest[11])))
		if size <= 0 || len(rest) < 12+size {
			return b[:n]
		}
		n += 12 + size
	}
}
