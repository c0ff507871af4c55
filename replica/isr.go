package replica

import "slices"

// isrState is a partition leader's view of its followers: their log end
// offsets (LEOs) and when each was last caught up, the ISR, and the high
// watermark (HW). It is a pure state machine in etcd raft's shape: follower
// fetches, the leader's own appends, metadata changes and ticks step it,
// each with the time; it answers whether the HW moved and which ISR change
// to ask the controller for (AlterPartition). No clock, no I/O, no locks:
// the Partition serialises the steps under its mutex.
//
// The rules are Kafka's (Partition.scala, ReplicaState, KIP-841):
//   - A follower's fetch offset is its LEO. It was caught up at this fetch
//     if the offset reached the leader's LEO, or at its previous fetch if
//     the offset reached the leader's LEO as it was then.
//   - A follower is in sync while its LEO equals the leader's or it was
//     caught up within replica.lag.time.max.ms; one in the ISR that is not
//     is shrunk out (on a tick).
//   - A follower outside the ISR joins it (on its fetch) once its LEO
//     reached both the HW and the offset this leadership began at.
//   - One ISR change is in flight at a time. While it is, the HW counts
//     the maximal ISR (the committed one and the asked-for one together),
//     so a shrink cannot commit records the old ISR has not got, and an
//     expansion counts the joining replica at once.
//   - The HW is the smallest LEO of the maximal ISR and of any eligible
//     follower in sync that is on its way in (not fenced, not shutting
//     down); a follower whose LEO is not known yet (none since this
//     leadership began) holds it. It never goes down.
//   - The HW moves only while the committed ISR holds min.insync.replicas
//     (KIP-966's strict min ISR, which eligible leader replicas rely on:
//     a replica that leaves an ISR below it has every committed record).
//     acks=0/1 records written meanwhile are kept but not yet visible.
type isrState struct {
	self           int32
	replicas       []int32
	isr            []int32 // committed: the metadata's
	partitionEpoch int32
	pending        []int32 // the ISR asked for and not yet committed; nil: none
	ineligible     []int32 // fenced or shutting down: neither joins the ISR nor holds the HW from outside it
	followers      map[int32]*follower
	leo            int64 // the leader's own log end offset
	hw             int64
	epochStart     int64 // the leader's LEO when this leadership began
	lagMs          int64 // replica.lag.time.max.ms
	minISR         int   // min.insync.replicas
}

// follower is what the leader knows of one follower.
type follower struct {
	leo                int64 // -1: not fetched since this leadership began
	lastCaughtUpMs     int64
	lastFetchMs        int64
	lastFetchLeaderLEO int64
}

// newISRState starts a leadership at nowMs: the leader's log ends at leo
// and its HW is hw (as far as it knew it as a follower). Followers' LEOs
// are unknown; those in the ISR count as caught up now.
func newISRState(self int32, replicas, isr, ineligible []int32, partitionEpoch int32, minISR int, leo, hw, nowMs, lagMs int64) *isrState {
	s := &isrState{self: self, leo: leo, hw: min(hw, leo), epochStart: leo, lagMs: lagMs, followers: map[int32]*follower{}}
	s.setMetadata(replicas, isr, partitionEpoch, ineligible, minISR, nowMs)
	return s
}

// setMetadata takes the replicas and committed ISR from the metadata. A
// newer partition epoch settles the ISR change in flight (committed or
// superseded). ineligible are the replicas whose brokers are fenced or
// shutting down; minISR is the topic's min.insync.replicas. It reports
// whether the HW moved.
func (s *isrState) setMetadata(replicas, isr []int32, partitionEpoch int32, ineligible []int32, minISR int, nowMs int64) bool {
	s.minISR = minISR
	if partitionEpoch > s.partitionEpoch {
		s.pending = nil
	}
	s.replicas, s.isr, s.partitionEpoch = slices.Clone(replicas), slices.Clone(isr), partitionEpoch
	s.ineligible = slices.Clone(ineligible)
	for _, r := range s.replicas {
		if r == s.self {
			continue
		}
		if _, ok := s.followers[r]; !ok {
			f := &follower{leo: -1, lastFetchLeaderLEO: -1, lastCaughtUpMs: -1 << 62}
			if slices.Contains(isr, r) {
				f.lastCaughtUpMs = nowMs
			}
			s.followers[r] = f
		}
	}
	for r := range s.followers {
		if !slices.Contains(s.replicas, r) {
			delete(s.followers, r)
		}
	}
	return s.advanceHW(nowMs)
}

// appended steps the leader's own LEO forward; it reports whether the HW
// moved (with no follower in the ISR, it follows the LEO).
func (s *isrState) appended(leo int64, nowMs int64) bool {
	s.leo = max(s.leo, leo)
	return s.advanceHW(nowMs)
}

// truncated sets the leader's LEO after its log was cut (DeleteRecords
// never cuts the end; only a leader that just took over and was behind).
func (s *isrState) truncated(leo int64) { s.leo = leo }

// fetched records a follower's fetch at offset. It reports whether the HW
// moved and the ISR to ask for (nil: none); ok is false for a replica
// that is not one of the partition's.
func (s *isrState) fetched(id int32, offset, nowMs int64) (hwMoved bool, alter []int32, ok bool) {
	f, ok := s.followers[id]
	if !ok {
		return false, nil, false
	}
	if offset > s.leo {
		// Ahead of this leader: records of an old epoch the follower
		// must truncate first (the fetch answers OFFSET_OUT_OF_RANGE).
		return false, nil, true
	}
	switch {
	case offset >= s.leo:
		f.lastCaughtUpMs = max(f.lastCaughtUpMs, nowMs)
	case offset >= f.lastFetchLeaderLEO && f.lastFetchLeaderLEO >= 0:
		f.lastCaughtUpMs = max(f.lastCaughtUpMs, f.lastFetchMs)
	}
	f.leo = offset
	f.lastFetchLeaderLEO, f.lastFetchMs = s.leo, nowMs
	if s.pending == nil && !slices.Contains(s.isr, id) && !slices.Contains(s.ineligible, id) && f.leo >= s.hw && f.leo >= s.epochStart {
		s.pending = append(slices.Clone(s.isr), id)
		alter = s.pending
	}
	return s.advanceHW(nowMs), alter, true
}

// tick shrinks the ISR: it returns the ISR without the followers out of
// sync (nil when all are in sync or a change is in flight), and whether the
// HW moved.
func (s *isrState) tick(nowMs int64) (alter []int32, hwMoved bool) {
	if s.pending != nil {
		return nil, false
	}
	var keep []int32
	shrink := false
	for _, r := range s.isr {
		if f, ok := s.followers[r]; ok && !s.caughtUp(f, nowMs) {
			shrink = true
			continue
		}
		keep = append(keep, r)
	}
	if !shrink {
		return nil, false
	}
	s.pending = keep
	return keep, s.advanceHW(nowMs)
}

// alterFailed forgets the ISR change in flight (the controller refused it,
// or the request failed): the next fetch or tick decides again.
func (s *isrState) alterFailed() { s.pending = nil }

func (s *isrState) caughtUp(f *follower, nowMs int64) bool {
	return f.leo == s.leo || nowMs-f.lastCaughtUpMs <= s.lagMs
}

// maximal reports whether r is in the committed ISR or the one asked for.
func (s *isrState) maximal(r int32) bool {
	return slices.Contains(s.isr, r) || slices.Contains(s.pending, r)
}

func (s *isrState) advanceHW(nowMs int64) bool {
	if len(s.isr) < s.minISR {
		return false
	}
	hw := s.leo
	for r, f := range s.followers {
		if f.leo < hw && (s.maximal(r) || (f.leo >= 0 && s.caughtUp(f, nowMs) && !slices.Contains(s.ineligible, r))) {
			hw = f.leo
		}
	}
	if hw > s.hw {
		s.hw = hw
		return true
	}
	return false
}

// isrSize is the committed ISR's size, which min.insync.replicas counts.
func (s *isrState) isrSize() int { return len(s.isr) }
