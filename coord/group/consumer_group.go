package group

import (
	"cmp"
	"hash/fnv"
	"regexp"
	"slices"
	"strings"
)

// consumerGroup is the state of a group using KIP-848's consumer protocol:
// its epoch, members, target assignment and the members' current
// assignments. It changes only by replaying records (replay), live after
// they are written and on load alike, so what a load rebuilds is what was
// served. The heartbeat logic (consumer_heartbeat.go) reads it and returns
// the records of a change; it is pure, with no I/O and no clock.
type consumerGroup struct {
	epoch           int32 // the group epoch
	metaHash        int64 // hash of the subscribed topics' metadata at epoch
	assignmentEpoch int32 // the epoch of the target assignment
	assignedAt      int64 // ms, when the target assignment was computed; 0 unknown
	members         map[string]*consumerMember
	static          map[string]string // instance id -> member id
	target          map[string]tpSet  // member id -> target assignment
	// owners is, for each partition a member holds (assigned or being
	// revoked), that member and its epoch: a partition goes to its next
	// member only once released.
	owners map[topicID]map[int32]owner

	// Not persisted: the subscriptions resolved against the topics of
	// one metadata version, and the regular expressions compiled.
	resolved struct {
		version int64 // Topics.Version; -1 none
		topics  map[topicID]assignTopic
		members map[string][]topicID
	}
	regexes map[string]*regexp.Regexp
}

// owner is the member holding a partition and its epoch.
type owner struct {
	member string
	epoch  int32
}

// consumerMember is one member of a consumer group.
type consumerMember struct {
	id string
	memberMeta
	current currentAssignment

	// Timers, not persisted (restarted on load): the session expires
	// unless the member heartbeats; a revocation must end within the
	// member's rebalance timeout. 0: none.
	sessionDeadline int64
	revokeDeadline  int64
	// classicDeadline (classic members): the member must rejoin (after
	// REBALANCE_IN_PROGRESS) or sync (after its JoinGroup) by then, else
	// it is fenced (Kafka's join and sync timeouts).
	classicDeadline int64
}

func newConsumerGroup() *consumerGroup {
	cg := &consumerGroup{
		members: map[string]*consumerMember{},
		static:  map[string]string{},
		target:  map[string]tpSet{},
		owners:  map[topicID]map[int32]owner{},
		regexes: map[string]*regexp.Regexp{},
	}
	cg.resolved.version = -1
	return cg
}

// replay applies one record of the group. A group epoch tombstone is the
// caller's to apply (the group is deleted).
func (cg *consumerGroup) replay(r *consumerRecord) {
	switch r.typ {
	case consumerEpochType:
		cg.epoch, cg.metaHash = r.epoch, r.metaHash
		cg.resolved.version = -1
	case consumerMemberType:
		m := cg.members[r.member]
		if r.tombstone {
			if m != nil {
				cg.releaseAll(m)
				if m.instanceID != "" && cg.static[m.instanceID] == m.id {
					delete(cg.static, m.instanceID)
				}
				delete(cg.members, r.member)
			}
			cg.resolved.version = -1
			return
		}
		if m == nil {
			m = cg.member(r.member)
		}
		if m.instanceID != "" && cg.static[m.instanceID] == m.id {
			delete(cg.static, m.instanceID)
		}
		m.memberMeta = r.meta
		if m.instanceID != "" {
			cg.static[m.instanceID] = m.id
		}
		cg.resolved.version = -1
	case consumerTargetEpochType:
		cg.assignmentEpoch, cg.assignedAt = r.epoch, r.assignedAt
		if r.tombstone {
			cg.assignmentEpoch, cg.assignedAt = 0, 0
		}
	case consumerTargetMemberType:
		if r.tombstone {
			delete(cg.target, r.member)
			return
		}
		cg.target[r.member] = r.target
	case consumerCurrentType:
		m := cg.members[r.member]
		if r.tombstone {
			if m != nil {
				cg.releaseAll(m)
				m.current = currentAssignment{}
			}
			return
		}
		if m == nil {
			m = cg.member(r.member)
		}
		cg.releaseAll(m)
		m.current = r.current
		cg.hold(m, m.current.assigned)
		cg.hold(m, m.current.revoking)
	}
}

// member returns the member id, created with no metadata if new.
func (cg *consumerGroup) member(id string) *consumerMember {
	m := cg.members[id]
	if m == nil {
		m = &consumerMember{id: id}
		cg.members[id] = m
	}
	return m
}

// releaseAll frees the partitions m holds.
func (cg *consumerGroup) releaseAll(m *consumerMember) {
	for _, s := range []tpSet{m.current.assigned, m.current.revoking} {
		for id, ps := range s {
			byP := cg.owners[id]
			for _, p := range ps {
				if o, ok := byP[p]; ok && o.member == m.id {
					delete(byP, p)
				}
			}
			if len(byP) == 0 {
				delete(cg.owners, id)
			}
		}
	}
}

// hold records that m holds the partitions of s at its epoch.
func (cg *consumerGroup) hold(m *consumerMember, s tpSet) {
	for id, ps := range s {
		byP := cg.owners[id]
		if byP == nil {
			byP = map[int32]owner{}
			cg.owners[id] = byP
		}
		for _, p := range ps {
			byP[p] = owner{m.id, m.current.epoch}
		}
	}
}

// heldByOther reports whether a member other than those named holds
// partition p of topic id.
func (cg *consumerGroup) heldByOther(id topicID, p int32, self, replaced string) bool {
	o, ok := cg.owners[id][p]
	return ok && o.member != self && o.member != replaced
}

// stateOf is the group's state as Kafka derives it: Empty without members,
// Assigning while the target assignment lags the group epoch, Reconciling
// while a member is not at the target epoch with its whole assignment,
// else Stable.
func (cg *consumerGroup) stateOf() State {
	switch {
	case len(cg.members) == 0:
		return Empty
	case cg.epoch > cg.assignmentEpoch:
		return Assigning
	}
	for _, m := range cg.members {
		if m.current.state != memberStable || m.current.epoch != cg.assignmentEpoch {
			return Reconciling
		}
	}
	return Stable
}

// sortedMembers lists the members by id.
func (cg *consumerGroup) sortedMembers() []*consumerMember {
	out := make([]*consumerMember, 0, len(cg.members))
	for _, m := range cg.members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *consumerMember) int { return cmp.Compare(a.id, b.id) })
	return out
}

// preferredAssignor is the server assignor most members ask for (ties to
// the name first in order), else the default, the first configured.
func (cg *consumerGroup) preferredAssignor(p *Policy, override map[string]string) string {
	votes := map[string]int{}
	for id, m := range cg.members {
		name := m.assignor
		if o, ok := override[id]; ok {
			name = o
		}
		if name != "" {
			votes[name]++
		}
	}
	for id, name := range override {
		if _, ok := cg.members[id]; !ok && name != "" {
			votes[name]++
		}
	}
	best, n := "", 0
	for name, v := range votes {
		if _, ok := assignors[name]; ok && (v > n || (v == n && name < best)) {
			best, n = name, v
		}
	}
	if best == "" && len(p.ConsumerAssignors) > 0 {
		best = p.ConsumerAssignors[0]
	}
	if _, ok := assignors[best]; !ok {
		best = "uniform"
	}
	return best
}

// regex compiles a subscription's regular expression as Kafka matches it
// (RE2 syntax, the whole topic name); nil if it does not compile.
func (cg *consumerGroup) regex(expr string) *regexp.Regexp {
	if re, ok := cg.regexes[expr]; ok {
		return re
	}
	re, err := compileSubscription(expr)
	if err != nil {
		re = nil
	}
	if len(cg.regexes) > 1024 {
		clear(cg.regexes)
	}
	cg.regexes[strings.Clone(expr)] = re
	return re
}

// compileSubscription compiles a subscription regex to match whole names.
func compileSubscription(expr string) (*regexp.Regexp, error) {
	return regexp.Compile(`^(?:` + expr + `)$`)
}

// resolve maps each member's subscription (names that exist, and the
// topics its regex matches, internal ones too, as Kafka) to topic ids, with
// the subscribed topics and a hash of their metadata (names, ids and
// partition counts), which changes when a subscribed topic is created,
// deleted or grows.
func (cg *consumerGroup) resolve(topics Topics, members map[string]*memberMeta) (byMember map[string][]topicID, subscribed map[topicID]assignTopic, hash int64) {
	byMember = make(map[string][]topicID, len(members))
	subscribed = map[topicID]assignTopic{}
	var all []TopicInfo
	for id, m := range members {
		var ids []topicID
		for _, name := range m.topics {
			if t, ok := topics.ByName(name); ok {
				ids = append(ids, t.ID)
				subscribed[t.ID] = assignTopic{id: t.ID, name: t.Name, partitions: t.Partitions}
			}
		}
		if m.regex != "" {
			if re := cg.regex(m.regex); re != nil {
				if all == nil {
					all = topics.All()
				}
				for _, t := range all {
					if re.MatchString(t.Name) {
						ids = append(ids, t.ID)
						subscribed[t.ID] = assignTopic{id: t.ID, name: t.Name, partitions: t.Partitions}
					}
				}
			}
		}
		slices.SortFunc(ids, compareIDs)
		byMember[id] = slices.Compact(ids)
	}
	ts := make([]assignTopic, 0, len(subscribed))
	for _, t := range subscribed {
		ts = append(ts, t)
	}
	slices.SortFunc(ts, func(a, b assignTopic) int { return compareIDs(a.id, b.id) })
	h := fnv.New64a()
	var b []byte
	for _, t := range ts {
		b = append(b[:0], t.id[:]...)
		b = append(b, t.name...)
		b = append(b, byte(t.partitions>>24), byte(t.partitions>>16), byte(t.partitions>>8), byte(t.partitions))
		h.Write(b)
	}
	hash = int64(h.Sum64())
	if len(ts) == 0 {
		hash = 0
	}
	return byMember, subscribed, hash
}

// subscribedNames lists the topics the members subscribe to by name, and
// those their regexes match now: what a consumer group's offsets may not
// be deleted or expired for.
func (cg *consumerGroup) subscribedNames(topics Topics) map[string]bool {
	out := map[string]bool{}
	for _, t := range cg.resolved.topics {
		out[t.name] = true // as last resolved, regexes included
	}
	for _, m := range cg.members {
		for _, t := range m.topics {
			out[t] = true
		}
		if m.regex != "" {
			if re := cg.regex(m.regex); re != nil {
				for _, t := range topics.All() {
					if re.MatchString(t.Name) {
						out[t.Name] = true
					}
				}
			}
		}
	}
	return out
}

// equal reports whether two members' metadata are the same.
func (a *memberMeta) equal(b *memberMeta) bool {
	return a.instanceID == b.instanceID && a.rackID == b.rackID && a.clientID == b.clientID &&
		a.clientHost == b.clientHost && slices.Equal(a.topics, b.topics) && a.regex == b.regex &&
		a.rebalanceTimeout == b.rebalanceTimeout && a.assignor == b.assignor && a.classic.equal(b.classic)
}

// equal reports whether two current assignments are the same.
func (a *currentAssignment) equal(b *currentAssignment) bool {
	if a.epoch != b.epoch || a.previousEpoch != b.previousEpoch || a.state != b.state ||
		!a.assigned.equal(b.assigned) || !a.revoking.equal(b.revoking) {
		return false
	}
	for _, s := range []tpSet{a.assigned, a.revoking} {
		for id, ps := range s {
			for _, p := range ps {
				if a.epochOf(id, p) != b.epochOf(id, p) {
					return false
				}
			}
		}
	}
	return true
}

// cloneMeta copies m's strings out of a request's buffer.
func cloneMeta(m memberMeta) memberMeta {
	m.instanceID, m.rackID = strings.Clone(m.instanceID), strings.Clone(m.rackID)
	m.clientID, m.clientHost = strings.Clone(m.clientID), strings.Clone(m.clientHost)
	m.regex, m.assignor = strings.Clone(m.regex), strings.Clone(m.assignor)
	topics := make([]string, len(m.topics))
	for i, t := range m.topics {
		topics[i] = strings.Clone(t)
	}
	m.topics = topics
	if m.classic != nil {
		m.classic = &classicMeta{sessionTimeout: m.classic.sessionTimeout, protocols: cloneProtocols(m.classic.protocols)}
	}
	return m
}
