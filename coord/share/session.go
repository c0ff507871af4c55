package share

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// TP is a topic partition by topic id.
type TP struct {
	Topic     [16]byte
	Partition int32
}

// sessionKey names a share session: a member of a share group fetching
// from this broker.
type sessionKey struct{ group, member string }

// Session is a member's share session on this broker (KIP-932): the
// partitions it fetches, and the epoch its next request must carry. A
// ShareFetch with epoch 0 opens it (replacing one the member had), each
// later ShareFetch or ShareAcknowledge carries the next epoch and may add
// partitions to it or forget some, and epoch -1 closes it. When a session
// ends, the records its member holds are given back.
type Session struct {
	key   sessionKey
	epoch int32 // the epoch of the next request
	parts []TP  // in the order they were added
	used  int64 // unix ms of the last request
}

// Partitions lists the session's partitions (a copy).
func (s *Session) Partitions() []TP { return slices.Clone(s.parts) }

// nextEpoch is the epoch after e: Kafka's wrap from MaxInt32 to 1.
func nextEpoch(e int32) int32 {
	if e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// OpenSession opens member's share session (ShareFetch epoch 0) with
// partitions tps, replacing (and ending) one it had. At the session limit
// a session idle for longer than the lock duration is evicted; if there is
// none, SHARE_SESSION_LIMIT_REACHED.
func (m *Manager) OpenSession(group, member string, tps []TP) (*Session, error) {
	now := time.Now().UnixMilli()
	k := sessionKey{group, member}
	m.mu.Lock()
	old := m.sessions[k]
	var evicted *Session
	if old == nil && len(m.sessions) >= m.cfg.MaxSessions {
		for _, s := range m.sessions {
			if now-s.used > m.cfg.LockDuration && (evicted == nil || s.used < evicted.used) {
				evicted = s
			}
		}
		if evicted == nil {
			m.mu.Unlock()
			return nil, errSessionLimit
		}
		delete(m.sessions, evicted.key)
	}
	s := &Session{key: sessionKey{strings.Clone(group), strings.Clone(member)}, epoch: 1, used: now}
	s.add(tps)
	m.sessions[s.key] = s
	m.mu.Unlock()
	for _, gone := range []*Session{old, evicted} {
		if gone != nil {
			m.releaseMember(gone.key.group, gone.key.member, gone.parts)
		}
	}
	return s, nil
}

// add puts partitions in the session.
func (s *Session) add(tps []TP) {
	for _, tp := range tps {
		if !slices.Contains(s.parts, tp) {
			s.parts = append(s.parts, tp)
		}
	}
}

// errSessionNotFound and errSessionEpoch: a request of a session this
// broker does not have, or out of order.
var (
	errSessionNotFound = fmt.Errorf("no share session: %w", kerr.ShareSessionNotFound)
	errSessionEpoch    = fmt.Errorf("share session epoch out of order: %w", kerr.InvalidShareSessionEpoch)
)

// UpdateSession takes the next request (epoch > 0) of member's session:
// adds partitions tps, removes forgotten, and moves the epoch on. It
// returns the session's partitions then. A forgotten partition's records
// the member holds stay acquired, as in Kafka's ShareSession.update: the
// same request may carry their acknowledgements (a consumer forgets a
// partition its heartbeat took away and acknowledges what it read of it
// at once), and what is not acknowledged goes back when its lock expires.
func (m *Manager) UpdateSession(group, member string, epoch int32, tps, forgotten []TP) ([]TP, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[sessionKey{group, member}]
	switch {
	case s == nil:
		return nil, errSessionNotFound
	case s.epoch != epoch:
		return nil, errSessionEpoch
	}
	s.epoch, s.used = nextEpoch(s.epoch), time.Now().UnixMilli()
	s.add(tps)
	if len(forgotten) > 0 {
		s.parts = slices.DeleteFunc(s.parts, func(tp TP) bool { return slices.Contains(forgotten, tp) })
	}
	return slices.Clone(s.parts), nil
}

// CloseSession ends member's share session (epoch -1): the records it
// holds are given back. The caller applies the request's
// acknowledgements first.
func (m *Manager) CloseSession(group, member string) error {
	m.mu.Lock()
	k := sessionKey{group, member}
	s := m.sessions[k]
	if s == nil {
		m.mu.Unlock()
		return errSessionNotFound
	}
	delete(m.sessions, k)
	m.mu.Unlock()
	m.releaseMember(group, member, s.parts)
	return nil
}

// HasSession reports whether member has a share session here.
func (m *Manager) HasSession(group, member string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.sessions[sessionKey{group, member}] != nil
}
