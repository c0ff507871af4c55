package replica

import (
	"math"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A fetcher talks to its leader through a fetch session (KIP-227): the
// first Fetch names every partition and opens the session; each later one
// names only the partitions whose fetch position changed (new log end, log
// start, HW or epoch) and forgets those no longer fetched, and the leader
// answers only with partitions that have news. With many quiet partitions
// per leader that keeps each round's request and response small. The
// session belongs to the fetcher's goroutine; it starts over (epoch 0)
// after a connection is lost or the leader refused it.

// fetchPosition is what the leader was last told about a partition.
type fetchPosition struct {
	offset, logStart, hw int64
	epoch                int32
}

type fetchSession struct {
	id      int32
	epoch   int32 // the next request's; 0 opens a session
	version int16 // sessions key partitions by name before v13, by id after
	sent    map[*Partition]fetchPosition
}

// reset starts the session over: the next request is full and opens a new
// session, closing the old one on the leader.
func (s *fetchSession) reset() {
	s.epoch = 0
	clear(s.sent)
}

// build fills req's session fields and partitions for items: all of them
// when opening, otherwise those whose position changed, and the
// partitions sent before that items no longer hold as forgotten.
func (s *fetchSession) build(req *kmsg.FetchRequest, items []fetchItem, partMaxBytes int32) {
	if s.sent == nil {
		s.sent = map[*Partition]fetchPosition{}
	}
	if req.Version != s.version {
		s.version = req.Version
		s.reset()
	}
	full := s.epoch == 0
	req.SessionID, req.SessionEpoch = s.id, s.epoch
	topics := map[string]int{}
	add := func(topics map[string]int, list *[]kmsg.FetchRequestTopic, p *Partition) *kmsg.FetchRequestTopic {
		i, ok := topics[p.TP.Topic]
		if !ok {
			i = len(*list)
			topics[p.TP.Topic] = i
			t := kmsg.NewFetchRequestTopic()
			t.Topic, t.TopicID = p.TP.Topic, p.TopicID
			*list = append(*list, t)
		}
		return &(*list)[i]
	}
	now := make(map[*Partition]bool, len(items))
	for _, it := range items {
		p := it.p
		now[p] = true
		pos := fetchPosition{offset: p.Log().LogEndOffset(), logStart: p.Log().LogStartOffset(), hw: p.HighWatermark(), epoch: it.s.epoch}
		if last, ok := s.sent[p]; ok && last == pos && !full {
			continue
		}
		s.sent[p] = pos
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = p.TP.Partition
		rp.CurrentLeaderEpoch = pos.epoch
		rp.FetchOffset = pos.offset
		rp.LastFetchedEpoch = -1
		rp.LogStartOffset = pos.logStart
		rp.PartitionMaxBytes = partMaxBytes
		rp.HighWatermark = pos.hw
		if req.Version < 18 {
			rp.HighWatermark = math.MaxInt64
		}
		t := add(topics, &req.Topics, p)
		t.Partitions = append(t.Partitions, rp)
	}
	forgotten := map[string]int{}
	var gone []kmsg.FetchRequestTopic
	for p := range s.sent {
		if now[p] {
			continue
		}
		delete(s.sent, p)
		if full {
			continue
		}
		t := add(forgotten, &gone, p)
		t.Partitions = append(t.Partitions, kmsg.NewFetchRequestTopicPartition())
		t.Partitions[len(t.Partitions)-1].Partition = p.TP.Partition
	}
	for _, t := range gone {
		ft := kmsg.NewFetchRequestForgottenTopic()
		ft.Topic, ft.TopicID = t.Topic, t.TopicID
		for _, rp := range t.Partitions {
			ft.Partitions = append(ft.Partitions, rp.Partition)
		}
		req.ForgottenTopics = append(req.ForgottenTopics, ft)
	}
}

// answered moves the session on after the leader answered with id: the
// next request carries the next epoch (wrapping to 1, as KIP-227 says).
func (s *fetchSession) answered(id int32) {
	if id == 0 {
		// The leader keeps no session (cache full): stay sessionless,
		// sending everything, and try to open one next time.
		s.reset()
		return
	}
	s.id = id
	if s.epoch == math.MaxInt32 {
		s.epoch = 1
	} else {
		s.epoch++
	}
}
