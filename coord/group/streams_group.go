package group

import (
	"cmp"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
)

// streamsGroup is the state of a group using KIP-1071's streams protocol:
// its epoch, topology, members, target assignment and the members'
// current tasks. Like consumerGroup it changes only by replaying records
// (replay), live and on load alike; the heartbeat logic
// (streams_heartbeat.go) reads it and returns the records of a change.
type streamsGroup struct {
	epoch           int32
	metaHash        int64 // hash of the topology's topics in the metadata at epoch
	validatedEpoch  int32 // the topology epoch found ready at epoch; -1 none
	standbys        int32 // num.standby.replicas of the last assignment; -1 unknown
	topology        *streamsTopology
	assignmentEpoch int32
	assignedAt      int64 // ms, when the target assignment was computed; 0 unknown
	members         map[string]*streamsMember
	target          map[string]taskAssignment
	// shutdownBy: the first member that asked the application to shut
	// down, until the group is empty; not persisted (as Kafka).
	shutdownBy string
	// endpointEpoch numbers the versions of the partitions behind the
	// members' user endpoints, not persisted (as Kafka): a member whose
	// last seen epoch differs gets them again.
	endpointEpoch int32
	// delayUntil: the initial rebalance delay of the group's first
	// member ends then (0 none), when the assignment is computed; not
	// persisted (Kafka's is a timer).
	delayUntil int64

	// Not persisted: the topology configured against the topics of one
	// metadata version (-1: none yet).
	configured struct {
		version int64
		cfg     *configuredTopology
	}
}

// streamsMember is one member of a streams group.
type streamsMember struct {
	id string
	streamsMemberMeta
	current streamsCurrent

	// Timers, not persisted (restarted on load); 0 none.
	sessionDeadline int64
	revokeDeadline  int64
}

func newStreamsGroup() *streamsGroup {
	sg := &streamsGroup{
		validatedEpoch: 0, // as Kafka's new group: a topology at epoch 0 found ready bumps nothing more
		standbys:       -1,
		members:        map[string]*streamsMember{},
		target:         map[string]taskAssignment{},
	}
	sg.configured.version = -1
	return sg
}

// replay applies one record of the group. A group epoch tombstone is the
// caller's to apply (the group is deleted).
func (sg *streamsGroup) replay(r *streamsRecord) {
	switch r.typ {
	case streamsEpochType:
		sg.epoch, sg.metaHash, sg.validatedEpoch, sg.standbys = r.epoch, r.metaHash, r.validatedEpoch, r.standbys
		sg.configured.version = -1
	case streamsTopologyType:
		sg.topology = r.topology
		if r.tombstone {
			sg.topology = nil
		}
		sg.configured.version = -1
	case streamsMemberType:
		if r.tombstone {
			delete(sg.members, r.member)
			if len(sg.members) == 0 {
				sg.shutdownBy = ""
			}
			return
		}
		sg.member(r.member).streamsMemberMeta = r.meta
	case streamsTargetEpochType:
		sg.assignmentEpoch, sg.assignedAt = r.epoch, r.assignedAt
		if r.tombstone {
			sg.assignmentEpoch, sg.assignedAt = 0, 0
		}
	case streamsTargetMemberType:
		if r.tombstone {
			delete(sg.target, r.member)
			return
		}
		sg.target[r.member] = r.target
	case streamsCurrentType:
		if r.tombstone {
			if m := sg.members[r.member]; m != nil {
				m.current = streamsCurrent{}
			}
			return
		}
		sg.member(r.member).current = r.current
	}
}

// member returns the member id, created with no metadata if new.
func (sg *streamsGroup) member(id string) *streamsMember {
	m := sg.members[id]
	if m == nil {
		m = &streamsMember{id: id}
		sg.members[id] = m
	}
	return m
}

// sortedMembers lists the members by id.
func (sg *streamsGroup) sortedMembers() []*streamsMember {
	out := make([]*streamsMember, 0, len(sg.members))
	for _, m := range sg.members {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *streamsMember) int { return cmp.Compare(a.id, b.id) })
	return out
}

// stateOf is the group's state as Kafka derives it: Empty without
// members, NotReady while the topology is not ready (missing topics),
// Assigning while the target assignment lags the group epoch,
// Reconciling while a member is not at the target with all its tasks,
// else Stable.
func (sg *streamsGroup) stateOf() State {
	switch {
	case len(sg.members) == 0:
		return Empty
	case sg.topology == nil || sg.validatedEpoch != sg.topology.epoch:
		return NotReady
	case sg.epoch > sg.assignmentEpoch:
		return Assigning
	}
	for _, m := range sg.members {
		if m.current.state != streamsStable || m.current.epoch != sg.assignmentEpoch {
			return Reconciling
		}
	}
	return Stable
}

// configuredTopology is a topology checked against the cluster's topics
// (Kafka's ConfiguredTopology, what its InternalTopicManager computes):
// the number of tasks of each subtopology when every topic it needs
// exists with the partitions it needs; else why not (a status for the
// heartbeat response) and the internal topics to create.
type configuredTopology struct {
	tasks     map[string]int32 // subtopology id -> number of tasks; nil if not ready
	status    int8             // a Status code; -1 ready
	detail    string
	create    []StreamsTopic      // missing internal topics, with their partition counts
	hash      int64               // of the topics the topology reads, by name, id and partitions
	topicsFor map[string][]string // subtopology -> its source topics (input and repartition), for endpoints
	internal  map[string]int32    // every internal topic's partition count; nil if not ready
}

// Heartbeat response statuses (StreamsGroupHeartbeatResponse.Status).
const (
	statusStaleTopology        int8 = 0
	statusMissingSourceTopics  int8 = 1
	statusIncorrectPartitions  int8 = 2
	statusMissingInternalTopic int8 = 3
	statusAssignmentDelayed    int8 = 5
)

// StreamsTopic is an internal topic a streams group needs created.
type StreamsTopic struct {
	Name              string
	Partitions        int32
	ReplicationFactor int16 // 0: the broker's default
	Configs           map[string]string
}

// ready reports whether the topology can be assigned.
func (c *configuredTopology) ready() bool { return c != nil && c.tasks != nil }

// configureTopology checks t against topics as Kafka's InternalTopicManager
// does: every source topic must exist (else MISSING_SOURCE_TOPICS);
// repartition topics take their partition count from the topology, or
// from the largest source topic of the subtopologies that write them;
// copartitioned source topics must agree (else
// INCORRECTLY_PARTITIONED_TOPICS), repartition topics among them follow;
// changelog topics have one partition per task. Internal topics that do
// not exist are to be created (MISSING_INTERNAL_TOPICS); existing ones
// with other partition counts are INCORRECTLY_PARTITIONED_TOPICS.
func configureTopology(t *streamsTopology, topics Topics) *configuredTopology {
	c := &configuredTopology{status: -1, topicsFor: map[string][]string{}}
	c.hash = topologyHash(t, topics)
	if t == nil {
		c.status, c.detail = statusMissingSourceTopics, "The topology is not initialized."
		return c
	}
	var missing []string
	for _, s := range t.subtopologies {
		for _, name := range s.sourceTopics {
			if _, ok := topics.ByName(name); !ok && !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		c.status, c.detail = statusMissingSourceTopics, fmt.Sprintf("Source topics %s are missing.", strings.Join(missing, ", "))
		return c
	}

	// Partition counts of the repartition topics: fixed, or derived
	// from the subtopologies writing them, repeated until nothing moves
	// (a chain of repartitions).
	parts := map[string]int32{}
	for _, s := range t.subtopologies {
		for _, r := range s.repartitionSources {
			if r.partitions > 0 {
				parts[r.name] = r.partitions
			}
		}
	}
	sourceParts := func(s *subtopology) int32 {
		n := int32(0)
		for _, name := range s.sourceTopics {
			if ti, ok := topics.ByName(name); ok {
				n = max(n, ti.Partitions)
			}
		}
		for _, r := range s.repartitionSources {
			n = max(n, parts[r.name])
		}
		return n
	}
	for range len(t.subtopologies) + 1 {
		moved := false
		for i := range t.subtopologies {
			s := &t.subtopologies[i]
			n := sourceParts(s)
			if n == 0 {
				continue
			}
			for _, sink := range s.repartitionSinks {
				if fixed := repartitionFixed(t, sink); fixed > 0 {
					continue
				}
				if parts[sink] < n {
					parts[sink], moved = n, true
				}
			}
		}
		if !moved {
			break
		}
	}
	// Copartition groups: source topics must agree; repartition topics
	// without a fixed count follow them.
	for i := range t.subtopologies {
		s := &t.subtopologies[i]
		for _, g := range s.copartitionGroups {
			want := int32(-1)
			var names []string
			for _, ix := range g.sourceTopics {
				if int(ix) < 0 || int(ix) >= len(s.sourceTopics) {
					continue
				}
				ti, _ := topics.ByName(s.sourceTopics[ix])
				names = append(names, ti.Name)
				if want >= 0 && ti.Partitions != want {
					c.status = statusIncorrectPartitions
					c.detail = fmt.Sprintf("Following topics do not have the same number of partitions: [%s]", strings.Join(names, ", "))
					return c
				}
				want = ti.Partitions
			}
			for _, ix := range g.repartitionSources {
				if int(ix) < 0 || int(ix) >= len(s.repartitionSources) {
					continue
				}
				r := s.repartitionSources[ix]
				switch {
				case want < 0:
					want = parts[r.name]
				case repartitionFixed(t, r.name) == 0:
					parts[r.name] = want
				case parts[r.name] != want:
					c.status = statusIncorrectPartitions
					c.detail = fmt.Sprintf("Number of partitions %d of repartition topic %s does not match the copartitioned topics (%d).", parts[r.name], r.name, want)
					return c
				}
			}
		}
	}

	// The tasks, and the internal topics each needs.
	tasks := map[string]int32{}
	need := map[string]StreamsTopic{}
	var order []string
	needTopic := func(it internalTopic, n int32) {
		if _, ok := need[it.name]; !ok {
			order = append(order, it.name)
		}
		cfg := map[string]string{}
		for _, kv := range it.configs {
			cfg[kv.key] = kv.value
		}
		need[it.name] = StreamsTopic{Name: it.name, Partitions: n, ReplicationFactor: it.replicationFactor, Configs: cfg}
	}
	for i := range t.subtopologies {
		s := &t.subtopologies[i]
		n := sourceParts(s)
		if n == 0 {
			c.status = statusMissingSourceTopics
			c.detail = fmt.Sprintf("The number of partitions of the source topics of subtopology %s is unknown.", s.id)
			return c
		}
		tasks[s.id] = n
		src := slices.Clone(s.sourceTopics)
		for _, r := range s.repartitionSources {
			needTopic(r, parts[r.name])
			src = append(src, r.name)
		}
		c.topicsFor[s.id] = src
		for _, cl := range s.changelogs {
			needTopic(cl, n)
		}
	}
	var wrong []string
	for _, name := range order {
		want := need[name]
		ti, ok := topics.ByName(name)
		switch {
		case !ok:
			c.create = append(c.create, want)
		case ti.Partitions != want.Partitions:
			wrong = append(wrong, fmt.Sprintf("%s (%d, expected %d)", name, ti.Partitions, want.Partitions))
		}
	}
	switch {
	case len(wrong) > 0:
		c.status = statusIncorrectPartitions
		c.detail = "Existing internal topics have invalid number of partitions: " + strings.Join(wrong, ", ")
	case len(c.create) > 0:
		names := make([]string, len(c.create))
		for i, t := range c.create {
			names[i] = t.Name
		}
		c.status = statusMissingInternalTopic
		c.detail = "Internal topics are missing: [" + strings.Join(names, ", ") + "]"
	default:
		c.tasks = tasks
		c.internal = make(map[string]int32, len(need))
		for name, t := range need {
			c.internal[name] = t.Partitions
		}
	}
	return c
}

// repartitionFixed is the partition count the topology fixes for a
// repartition topic; 0 if derived.
func repartitionFixed(t *streamsTopology, name string) int32 {
	for _, s := range t.subtopologies {
		for _, r := range s.repartitionSources {
			if r.name == name && r.partitions > 0 {
				return r.partitions
			}
		}
	}
	return 0
}

// topologyHash hashes the metadata (name, id, partitions) of every topic
// the topology names that exists: it changes when one is created, deleted
// or grows, which reconfigures the topology and bumps the group epoch.
func topologyHash(t *streamsTopology, topics Topics) int64 {
	if t == nil {
		return 0
	}
	var names []string
	for _, s := range t.subtopologies {
		names = append(names, s.sourceTopics...)
		names = append(names, s.repartitionSinks...)
		for _, r := range s.repartitionSources {
			names = append(names, r.name)
		}
		for _, r := range s.changelogs {
			names = append(names, r.name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	h := fnv.New64a()
	var b []byte
	found := false
	for _, n := range names {
		ti, ok := topics.ByName(n)
		if !ok {
			continue
		}
		found = true
		b = append(b[:0], ti.ID[:]...)
		b = append(b, ti.Name...)
		b = append(b, byte(ti.Partitions>>24), byte(ti.Partitions>>16), byte(ti.Partitions>>8), byte(ti.Partitions))
		h.Write(b)
	}
	if !found {
		return 0
	}
	return int64(h.Sum64())
}

// configure returns the topology configured against topics, computed
// once per metadata version.
func (sg *streamsGroup) configure(topics Topics) *configuredTopology {
	if v := topics.Version(); sg.configured.version != v || sg.configured.cfg == nil {
		sg.configured.version, sg.configured.cfg = v, configureTopology(sg.topology, topics)
	}
	return sg.configured.cfg
}

// sourceTopicNames lists the topics the topology reads: what a streams
// group with members may not have its offsets deleted or expired for
// (none once empty, so that its offsets expire, as Kafka's).
func (sg *streamsGroup) sourceTopicNames() map[string]bool {
	out := map[string]bool{}
	if sg.topology == nil || len(sg.members) == 0 {
		return out
	}
	for _, s := range sg.topology.subtopologies {
		for _, n := range s.sourceTopics {
			out[n] = true
		}
		for _, r := range s.repartitionSources {
			out[r.name] = true
		}
	}
	return out
}
