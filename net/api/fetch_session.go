package api

import (
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Fetch sessions (KIP-227): a client that fetches the same partitions
// over and over creates a session, then sends only what changed (new fetch
// offsets, partitions added or forgotten), and gets back only partitions
// with news: records, a moved high watermark, last stable offset or log
// start offset, or an error.
//
// Epochs, as FetchMetadata defines them: a request with session id 0 and
// epoch 0 opens a session; epoch -1 is sessionless (closing the named
// session, if any); otherwise the epoch must be the session's next one,
// which wraps from MaxInt32 to 1.

// maxFetchSessions is max.incremental.fetch.session.cache.slots.
const maxFetchSessions = 1000

// sessionKey names a partition in a session: by topic name before Fetch
// v13, by topic id after.
type sessionKey struct {
	topic     string
	id        [16]byte
	partition int32
}

// sessionPartition is a partition of a session: what the client last asked
// for and what it was last told.
type sessionPartition struct {
	key          sessionKey
	fetchOffset  int64
	maxBytes     int32
	currentEpoch int32
	replicaHW    int64 // the HW a v18 follower knows (KIP-1166); MaxInt64 when unsaid
	sent         bool  // told at least once
	hw, lso      int64
	logStart     int64
}

type fetchSession struct {
	mu       sync.Mutex
	id       int32
	epoch    int32 // the epoch the next request must carry
	parts    []*sessionPartition
	index    map[sessionKey]*sessionPartition
	lastUsed time.Time
	// topicIDs: the session was opened at Fetch v13+ and names its
	// partitions by topic id; a request of the other kind cannot use it.
	topicIDs bool
}

// fetchSessions is the broker's session cache.
type fetchSessions struct {
	mu       sync.Mutex
	sessions map[int32]*fetchSession
}

func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// newFetchSession is a session for a full fetch that asks for one
// (epoch 0): it holds the request's partitions but has no id and is in
// no cache until add registers it, once the fetch is answered unthrottled
// (Kafka's FullFetchContext creates its session with the response: a
// throttled full fetch answers session id 0 and creates none).
func newFetchSession() *fetchSession {
	return &fetchSession{index: map[sessionKey]*sessionPartition{}, lastUsed: time.Now()}
}

// add gives s an id and puts it in the cache, evicting the least recently
// used session when the cache is full. It reports false, leaving s out,
// when no id could be found.
func (c *fetchSessions) add(s *fetchSession) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessions == nil {
		c.sessions = map[int32]*fetchSession{}
	}
	if len(c.sessions) >= maxFetchSessions {
		var oldest *fetchSession
		for _, s := range c.sessions {
			if oldest == nil || s.lastUsed.Before(oldest.lastUsed) {
				oldest = s
			}
		}
		delete(c.sessions, oldest.id)
	}
	for try := 0; try < 8; try++ {
		id := rand.Int32()
		if _, taken := c.sessions[id]; id != 0 && !taken {
			s.id = id
			c.sessions[id] = s
			return true
		}
	}
	return false
}

// len is the number of sessions in the cache.
func (c *fetchSessions) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.sessions)
}

func (c *fetchSessions) get(id int32) *fetchSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessions[id]
}

func (c *fetchSessions) close(id int32) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.sessions, id)
}

// sessionFor applies a fetch request's session fields. It returns the
// session (nil for a sessionless fetch; one with id 0, not yet in the
// cache, for a full fetch that opens one: see newFetchSession), whether
// the response is full (all partitions) or incremental, and a top-level
// error code.
func (c *fetchSessions) sessionFor(r *kmsg.FetchRequest) (s *fetchSession, full bool, errCode int16) {
	if r.Version < 7 {
		return nil, true, 0
	}
	switch {
	case r.SessionEpoch == -1:
		if r.SessionID != 0 {
			c.close(r.SessionID)
		}
		return nil, true, 0
	case r.SessionEpoch == 0:
		if r.SessionID != 0 {
			c.close(r.SessionID)
		}
		s = newFetchSession()
		s.topicIDs = r.Version >= 13
		s.update(r) // s is not shared yet
		return s, true, 0
	}
	s = c.get(r.SessionID)
	if s == nil {
		return nil, true, kerr.FetchSessionIDNotFound.Code
	}
	s.mu.Lock()
	if r.SessionEpoch != s.epoch {
		s.mu.Unlock()
		return nil, true, kerr.InvalidFetchSessionEpoch.Code
	}
	if s.topicIDs != (r.Version >= 13) {
		// Kafka's newContext: a session keyed by topic id (or name) serves
		// no request of the other kind.
		s.mu.Unlock()
		return nil, true, kerr.FetchSessionTopicIDError.Code
	}
	s.update(r)
	empty := len(s.parts) == 0
	s.mu.Unlock()
	if empty {
		// No partition left: Kafka closes the session and serves the
		// request as a sessionless fetch (session id 0 in the answer).
		c.close(s.id)
		return nil, true, 0
	}
	return s, false, 0
}

// update adds or changes the request's partitions and drops the forgotten
// ones, and moves to the next epoch. Caller holds s.mu.
func (s *fetchSession) update(r *kmsg.FetchRequest) {
	s.lastUsed = time.Now()
	s.epoch = nextEpoch(s.epoch)
	key := func(topic string, id [16]byte, p int32) sessionKey {
		if r.Version >= 13 {
			return sessionKey{id: id, partition: p}
		}
		return sessionKey{topic: topic, partition: p}
	}
	for _, t := range r.Topics {
		for _, p := range t.Partitions {
			k := key(t.Topic, t.TopicID, p.Partition)
			sp := s.index[k]
			if sp == nil {
				// The name aliases the request's buffer (request_decode.go),
				// which the next request reuses; the session outlives it.
				k.topic = strings.Clone(k.topic)
				sp = &sessionPartition{key: k}
				s.index[k] = sp
				s.parts = append(s.parts, sp)
			}
			sp.fetchOffset, sp.maxBytes, sp.currentEpoch = p.FetchOffset, p.PartitionMaxBytes, p.CurrentLeaderEpoch
			sp.replicaHW = replicaHW(r, &p)
		}
	}
	if len(r.ForgottenTopics) == 0 {
		return
	}
	for _, t := range r.ForgottenTopics {
		for _, p := range t.Partitions {
			delete(s.index, key(t.Topic, t.TopicID, p))
		}
	}
	kept := s.parts[:0]
	for _, sp := range s.parts {
		if s.index[sp.key] == sp {
			kept = append(kept, sp)
		}
	}
	clear(s.parts[len(kept):])
	s.parts = kept
}
