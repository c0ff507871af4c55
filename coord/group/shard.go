package group

import (
	"fmt"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/shards"
	krecord "kzero/record"
)

// shard is the groups of one __consumer_offsets partition this broker
// leads. The runtime's lock guards every group in it and the partition's
// writes, so the order of records in the partition is the order of
// changes.
type shard struct {
	*shards.Shard
	c *Coordinator

	// mu is the state the Shard's lock guards.
	mu struct {
		groups map[string]*entry
		// txns: the groups holding offsets of each producer's open
		// transaction (TxnOffsetCommit), for CompleteTxn.
		txns map[int64]map[string]struct{}
		// scratch holds the bytes of the records being written.
		scratch []byte
	}
}

// entry is a group with its timer.
type entry struct {
	g     *Group
	timer *time.Timer
	at    int64 // the deadline the timer is armed for; 0 none
}

// kv is one record to write: offsets into the shard's scratch bytes; a
// value end of -1 is a null value (tombstone).
type kv struct{ k0, k1, v0, v1 int }

// appendRecordsLocked appends recs' bytes to scratch and their kvs to kvs.
func appendRecordsLocked[R any, P groupRecord[R]](s *shard, kvs []kv, group string, recs []R) []kv {
	for i := range recs {
		rec := P(&recs[i])
		r := kv{k0: len(s.mu.scratch)}
		s.mu.scratch = rec.appendKey(s.mu.scratch, group)
		r.k1, r.v0, r.v1 = len(s.mu.scratch), len(s.mu.scratch), -1
		if !rec.isTombstone() {
			s.mu.scratch = rec.appendValue(s.mu.scratch)
			r.v1 = len(s.mu.scratch)
		}
		kvs = append(kvs, r)
	}
	return kvs
}

// appendGroupMetadataLocked appends a classic group's metadata record to
// scratch and its kv to kvs: a tombstone for v nil.
func (s *shard) appendGroupMetadataLocked(kvs []kv, group string, v *kmsg.GroupMetadataValue) []kv {
	r := kv{k0: len(s.mu.scratch)}
	s.mu.scratch = appendGroupKey(s.mu.scratch, group)
	r.k1, r.v0, r.v1 = len(s.mu.scratch), len(s.mu.scratch), -1
	if v != nil {
		s.mu.scratch = appendGroupValue(s.mu.scratch, v)
		r.v1 = len(s.mu.scratch)
	}
	return append(kvs, r)
}

// writeRecordsLocked writes a group's records as one batch.
func writeRecordsLocked[R any, P groupRecord[R]](s *shard, group string, recs []R) error {
	return writeConvertingLocked[R, P](s, group, recs, false, nil)
}

// writeConvertingLocked writes a group's records as one batch, after the
// tombstone of its classic metadata with dropClassic, and before classic
// (its classic metadata) when not nil.
func writeConvertingLocked[R any, P groupRecord[R]](s *shard, group string, recs []R, dropClassic bool, classic *kmsg.GroupMetadataValue) error {
	s.mu.scratch = s.mu.scratch[:0]
	kvs := make([]kv, 0, len(recs)+1)
	if dropClassic {
		kvs = s.appendGroupMetadataLocked(kvs, group, nil)
	}
	kvs = appendRecordsLocked[R, P](s, kvs, group, recs)
	if classic != nil {
		kvs = s.appendGroupMetadataLocked(kvs, group, classic)
	}
	if len(kvs) == 0 {
		return nil
	}
	_, err := s.appendLocked(kvs)
	return err
}

// groupState is a consumer, share or streams group's state, which
// replays records of its kind.
type groupState[P any] interface {
	comparable
	replay(P)
}

// replayRecords applies written records to a group's state of their kind
// (*state, nil for none).
func replayRecords[R any, P groupRecord[R], G groupState[P]](state *G, recs []R, newState func() G) {
	var none G
	for i := range recs {
		r := P(&recs[i])
		if r.endsGroup() {
			*state = none
			continue
		}
		if *state == none {
			*state = newState()
		}
		(*state).replay(r)
	}
}

// loadRecord applies a record read at load to its group's state in
// byGroup, and reports whether it created that state.
func loadRecord[R any, P groupRecord[R], G groupState[P]](byGroup map[string]G, group string, r P, newState func() G) (created bool) {
	var none G
	st := byGroup[group]
	switch {
	case r.endsGroup():
		delete(byGroup, group)
		return false
	case st == none && r.isTombstone():
		return false
	case st == none:
		st, created = newState(), true
		byGroup[group] = st
	}
	st.replay(r)
	return created
}

func newShard(c *Coordinator, rt *shards.Shard) *shard {
	s := &shard{Shard: rt, c: c}
	s.mu.groups = map[string]*entry{}
	s.mu.txns = map[int64]map[string]struct{}{}
	return s
}

// addLocked creates an empty group.
func (s *shard) addLocked(id string, now int64) *entry {
	id = strings.Clone(id)
	e := &entry{g: newGroup(id, &s.c.policy, now)}
	s.mu.groups[id] = e
	return e
}

// finishLocked settles the group after a change, unlocks the shard and
// runs the responses the change completed.
func (s *shard) finishLocked(e *entry, now int64) {
	ready := s.settleLocked(e, now)
	s.Unlock()
	for _, f := range ready {
		f()
	}
}

// settleLocked makes the group's pending writes, runs its timers that are
// already due (a zero initial rebalance delay), removes it if dead and arms
// its timer; it returns the responses to send.
func (s *shard) settleLocked(e *entry, now int64) []func() {
	g := e.g
	if g.consumer != nil {
		s.expireConsumerLocked(e, now)
	}
	if g.streams != nil {
		s.expireStreamsLocked(e, now)
	}
	if g.share != nil {
		s.expireShareLocked(e, now)
	}
	for range 64 {
		if g.consumer != nil || g.streams != nil || g.share != nil {
			break // no classic members, nothing classic to store
		}
		stores := g.takeStores()
		for i := range stores {
			g.stored(now, stores[i], s.storeGroupLocked(g, &stores[i]))
		}
		if d := g.NextDeadline(); d != 0 && d <= now {
			g.Tick(now)
			continue
		}
		if len(stores) == 0 {
			break
		}
	}
	ready := g.takeReady()
	if g.state == Dead {
		if s.mu.groups[g.id] == e {
			delete(s.mu.groups, g.id)
		}
		if e.timer != nil {
			e.timer.Stop()
		}
		return ready
	}
	s.armLocked(e, now)
	return ready
}

// armLocked points the group's timer at its next deadline.
func (s *shard) armLocked(e *entry, now int64) {
	d := e.g.NextDeadline()
	if d == e.at {
		return
	}
	e.at = d
	if d == 0 {
		if e.timer != nil {
			e.timer.Stop()
		}
		return
	}
	wait := time.Duration(max(d-now, 1)) * time.Millisecond
	if e.timer == nil {
		e.timer = time.AfterFunc(wait, func() { s.fire(e) })
		return
	}
	e.timer.Reset(wait)
}

// fire runs a group's due timers.
func (s *shard) fire(e *entry) {
	s.Lock()
	if s.StateLocked() != shards.Active || s.mu.groups[e.g.id] != e {
		s.Unlock()
		return
	}
	now := s.c.now()
	e.at = 0 // re-arm even if nothing was due yet
	e.g.Tick(now)
	s.finishLocked(e, now)
}

// storeGroupLocked writes a group's metadata record (a tombstone for a
// deleted group) and returns the error code for whoever waits on it.
func (s *shard) storeGroupLocked(g *Group, st *store) error {
	s.mu.scratch = s.mu.scratch[:0]
	var v *kmsg.GroupMetadataValue // nil: a tombstone
	if st.kind != storeTombstone {
		v = g.metadataValue(st)
	}
	if _, err := s.appendLocked(s.appendGroupMetadataLocked(make([]kv, 0, 1), g.id, v)); err != nil {
		s.c.logger.Warn("cannot store group metadata", "group", g.id, "partition", s.Partition, "err", err)
		return storeErr(err)
	}
	return nil
}

// appendLocked writes records (their bytes in scratch) as one batch to the
// partition, acks=-1, and returns the log offset of the first.
func (s *shard) appendLocked(recs []kv) (int64, error) {
	return s.writeLocked(recs, krecord.NoProducerID, krecord.NoProducerEpoch)
}

// writeLocked writes records as one batch: a plain one, or with a producer
// id a transactional one of that producer (see shards.Shard.BatchLocked).
// It returns the log offset of the first record once the batch is
// committed.
func (s *shard) writeLocked(recs []kv, producerID int64, producerEpoch int16) (int64, error) {
	b := s.BatchLocked(producerID, producerEpoch)
	for i, r := range recs {
		rec := krecord.Record{OffsetDelta: int32(i), Key: s.mu.scratch[r.k0:r.k1]}
		if r.v1 >= 0 {
			rec.Value = s.mu.scratch[r.v0:r.v1]
		}
		b.Add(&rec)
	}
	return s.WriteLocked()
}

// Unload drops the shard's groups; waiting requests are told
// NOT_COORDINATOR (shards.Coordinated).
func (s *shard) Unload() func() {
	now := s.c.now()
	var ready []func()
	for id, e := range s.mu.groups {
		if e.timer != nil {
			e.timer.Stop()
		}
		e.g.markDead(now, kerr.NotCoordinator)
		ready = append(ready, e.g.takeReady()...)
		delete(s.mu.groups, id)
	}
	return func() {
		for _, f := range ready {
			f()
		}
	}
}

// Load reads the shard's groups from the partition and returns how to
// serve them (shards.Coordinated).
func (s *shard) Load() shards.Install {
	if s.c.loadGate != nil {
		s.c.loadGate(s.Partition)
	}
	start := time.Now()
	ld := newLoader()
	err := s.read(ld)
	return func() func() {
		if err != nil {
			// The records before the error are kept: serving them beats
			// serving nothing.
			s.c.logger.Error("cannot read all of __consumer_offsets partition; groups after the error are lost", "partition", s.Partition, "err", err)
		}
		if ld.skipped > 0 {
			s.c.logger.Warn("skipped undecodable __consumer_offsets records", "partition", s.Partition, "records", ld.skipped, "first_err", ld.firstErr)
		}
		now := s.c.now()
		for id, g := range ld.groups(&s.c.policy, now) {
			p := s.c.groupPolicy(id)
			if g.consumer != nil {
				g.consumer.restartTimers(now, p)
			}
			if g.streams != nil {
				g.streams.restartTimers(now, &p.Streams)
			}
			if g.share != nil {
				g.share.restartTimers(now, p)
			}
			e := &entry{g: g}
			s.mu.groups[id] = e
			for pid := range g.txnOffsets {
				s.indexTxnLocked(pid, id)
			}
			s.armLocked(e, now)
		}
		s.c.logger.Info("loaded group coordinator partition", "partition", s.Partition, "groups", len(s.mu.groups), "took", time.Since(start))
		return nil
	}
}

// read feeds every record of the partition, from its log start to its
// end (open transactions included), to ld: the records of a transactional
// batch under its producer id, and transaction markers.
func (s *shard) read(ld *loader) error {
	var rr krecord.Iter
	defer rr.Release()
	return s.Replica().ScanAll(func(b krecord.Batch) error {
		if err := rr.Reset(b, 0); err != nil {
			return fmt.Errorf("batch at offset %d: %w", b.BaseOffset(), err)
		}
		producerID := int64(krecord.NoProducerID)
		if b.IsTransactional() {
			producerID = b.ProducerID()
		}
		for rr.Next() {
			rec := rr.Record()
			if b.IsControl() {
				ld.marker(producerID, rec.Key, rec.Value)
				continue
			}
			ld.apply(rec.Key, rec.Value, rr.Offset(), producerID)
		}
		if err := rr.Err(); err != nil {
			return fmt.Errorf("batch at offset %d: %w", b.BaseOffset(), err)
		}
		return nil
	})
}

// loader gathers a partition's records: the last one of each key wins,
// as compaction would leave it; offsets of transactions are staged until
// their marker.
type loader struct {
	meta     map[string]*kmsg.GroupMetadataValue
	consumer map[string]*consumerGroup
	streams  map[string]*streamsGroup
	share    map[string]*shareGroup
	offsets  map[string]map[TopicPartition]Offset
	// txns: offsets of open transactions, by producer id, group and
	// partition.
	txns     map[int64]map[string]map[TopicPartition]Offset
	skipped  int
	firstErr error
}

func newLoader() *loader {
	return &loader{
		meta:     map[string]*kmsg.GroupMetadataValue{},
		consumer: map[string]*consumerGroup{},
		streams:  map[string]*streamsGroup{},
		share:    map[string]*shareGroup{},
		offsets:  map[string]map[TopicPartition]Offset{},
		txns:     map[int64]map[string]map[TopicPartition]Offset{},
	}
}

// skip counts an undecodable record.
func (ld *loader) skip(err error) {
	if ld.skipped == 0 {
		ld.firstErr = err
	}
	ld.skipped++
}

// apply takes one record at log offset at, of a transaction of producerID
// (krecord.NoProducerID for none); an undecodable one is counted and skipped.
func (ld *loader) apply(key, value []byte, at, producerID int64) {
	r, err := decodeRecord(key, value)
	if err != nil {
		ld.skip(err)
		return
	}
	switch r.kind {
	case recordOffset:
		if value == nil {
			delete(ld.offsets[r.group], r.tp)
			for _, groups := range ld.txns {
				delete(groups[r.group], r.tp)
			}
			return
		}
		r.offset.at = at
		if producerID != krecord.NoProducerID {
			groups := ld.txns[producerID]
			if groups == nil {
				groups = map[string]map[TopicPartition]Offset{}
				ld.txns[producerID] = groups
			}
			setOffset(groups, r.group, r.tp, r.offset)
			return
		}
		setOffset(ld.offsets, r.group, r.tp, r.offset)
	case recordGroup:
		if r.meta == nil {
			delete(ld.meta, r.group)
			return
		}
		ld.meta[r.group] = r.meta
		delete(ld.consumer, r.group) // back to the classic protocol
		delete(ld.streams, r.group)
	case recordConsumer:
		if loadRecord(ld.consumer, r.group, &r.cr, newConsumerGroup) {
			delete(ld.meta, r.group) // converted from the classic protocol
			delete(ld.streams, r.group)
		}
	case recordStreams:
		if loadRecord(ld.streams, r.group, &r.sr, newStreamsGroup) {
			delete(ld.meta, r.group) // converted from another protocol
			delete(ld.consumer, r.group)
		}
	case recordShare:
		loadRecord(ld.share, r.group, &r.shr, newShareGroup)
	}
}

// setOffset puts o in a map of offsets by group.
func setOffset(byGroup map[string]map[TopicPartition]Offset, group string, tp TopicPartition, o Offset) {
	offs := byGroup[group]
	if offs == nil {
		offs = map[TopicPartition]Offset{}
		byGroup[group] = offs
	}
	offs[tp] = o
}

// marker takes a control record of producerID: a commit or abort marker
// ends its transaction as CompleteTxn does.
func (ld *loader) marker(producerID int64, key, value []byte) {
	t, _, err := krecord.ParseControl(key, value)
	if err != nil {
		ld.skip(err)
		return
	}
	if t != krecord.ControlCommit && t != krecord.ControlAbort {
		return
	}
	staged := ld.txns[producerID]
	delete(ld.txns, producerID)
	if t != krecord.ControlCommit {
		return
	}
	for group, offs := range staged {
		for tp, o := range offs {
			if cur, ok := ld.offsets[group][tp]; !ok || o.at > cur.at {
				setOffset(ld.offsets, group, tp, o)
			}
		}
	}
}

// groups builds the loaded groups: those with metadata, and those with
// only offsets, committed or staged (as empty groups).
func (ld *loader) groups(policy *Policy, now int64) map[string]*Group {
	out := make(map[string]*Group, len(ld.meta)+len(ld.consumer))
	for id, v := range ld.meta {
		out[id] = loadGroup(id, policy, v, now)
	}
	for id, cg := range ld.consumer {
		g := newGroup(id, policy, now)
		g.consumer = cg
		out[id] = g
	}
	for id, sg := range ld.streams {
		g := newGroup(id, policy, now)
		g.streams = sg
		out[id] = g
	}
	for id, sg := range ld.share {
		g := newGroup(id, policy, now)
		g.share = sg
		out[id] = g
	}
	get := func(id string) *Group {
		g := out[id]
		if g == nil {
			g = newGroup(id, policy, now)
			out[id] = g
		}
		return g
	}
	for id, offs := range ld.offsets {
		if len(offs) > 0 {
			get(id).offsets = offs
		}
	}
	for pid, groups := range ld.txns {
		for id, offs := range groups {
			if len(offs) > 0 {
				get(id).txnOffsets[pid] = offs
			}
		}
	}
	return out
}
