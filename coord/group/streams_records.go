package group

import (
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// The records of KIP-1071 streams groups in __consumer_offsets, in Kafka's
// format (the coordinator-key and coordinator-value schemas of Kafka 4.3's
// group coordinator), so Kafka's tools decode them:
//
//	key   int16 record type, then GroupId string (int16 length), then for
//	      types 19, 21 and 22 MemberId string
//	value null: a tombstone; else int16 version 0, then the fields below,
//	      all flexible (compact strings and arrays, a tagged fields
//	      section at the end of every struct)
//
//	17 StreamsGroupMetadata        Epoch int32, MetadataHash int64;
//	                               tag 0: ValidatedTopologyEpoch int32,
//	                               tag 1: LastAssignmentConfigs
//	                               []{Key, Value string}
//	19 StreamsGroupMemberMetadata  InstanceId string?, RackId string?,
//	                               ClientId, ClientHost string,
//	                               RebalanceTimeoutMs, TopologyEpoch int32,
//	                               ProcessId string, UserEndpoint
//	                               {Host string, Port uint16}? (int8 -1
//	                               null, 1 present), ClientTags []{Key,
//	                               Value string}
//	20 StreamsGroupTargetAssignmentMetadata  AssignmentEpoch int32
//	21 StreamsGroupTargetAssignmentMember    ActiveTasks, StandbyTasks,
//	                               WarmupTasks []{SubtopologyId string,
//	                               Partitions []int32}
//	22 StreamsGroupCurrentMemberAssignment   MemberEpoch,
//	                               PreviousMemberEpoch int32, State int8,
//	                               ActiveTasks, StandbyTasks, WarmupTasks,
//	                               and the three ...PendingRevocation,
//	                               each []{SubtopologyId, Partitions};
//	                               active tasks with tag 0:
//	                               AssignmentEpochs []int32, the epoch of
//	                               each partition
//	23 StreamsGroupTopology        Epoch int32, Subtopologies
//	                               []{SubtopologyId string, SourceTopics
//	                               []string, SourceTopicRegex []string,
//	                               StateChangelogTopics []TopicInfo,
//	                               RepartitionSinkTopics []string,
//	                               RepartitionSourceTopics []TopicInfo,
//	                               CopartitionGroups []{SourceTopics,
//	                               SourceTopicRegex, RepartitionSourceTopics
//	                               []int16}}; TopicInfo is {Name string,
//	                               Partitions int32, ReplicationFactor
//	                               int16, TopicConfigs []{Key, Value}}
//
// Type 18 (StreamsGroupPartitionMetadata, written by Kafka 4.0) and later
// types are read and ignored: kzero keeps a hash of the topology's topics
// in the group's metadata record instead. Unknown tagged fields are
// skipped.

// Record types of streams groups.
const (
	streamsEpochType        = 17
	streamsMemberType       = 19
	streamsTargetEpochType  = 20
	streamsTargetMemberType = 21
	streamsCurrentType      = 22
	streamsTopologyType     = 23
)

// isStreamsType reports whether a record type is a streams group record
// this coordinator keeps.
func isStreamsType(t int16) bool {
	switch t {
	case streamsEpochType, streamsMemberType, streamsTargetEpochType, streamsTargetMemberType, streamsCurrentType, streamsTopologyType:
		return true
	}
	return false
}

// streamsRecord is one decoded streams group record; its strings and
// slices are copies.
type streamsRecord struct {
	typ       int16
	member    string // types 19, 21, 22
	tombstone bool

	epoch          int32 // 17: the group epoch; 20: the assignment epoch
	metaHash       int64 // 17
	validatedEpoch int32 // 17: the topology epoch last found ready; -1 none
	standbys       int32 // 17: num.standby.replicas of the last assignment; -1 unknown

	meta     streamsMemberMeta // 19
	target   taskAssignment    // 21
	current  streamsCurrent    // 22
	topology *streamsTopology  // 23
}

// streamsMemberMeta is a member's metadata (record type 19). An empty
// string is a null one.
type streamsMemberMeta struct {
	instanceID, rackID   string
	clientID, clientHost string
	rebalanceTimeout     int32
	topologyEpoch        int32
	processID            string
	endpoint             *hostPort
	clientTags           []keyValue
}

// hostPort is a member's user endpoint (for interactive queries).
type hostPort struct {
	host string
	port uint16
}

// keyValue is a client tag or a topic config.
type keyValue struct{ key, value string }

// streamsState is a streams member's reconciliation state (Kafka's
// streams MemberState).
type streamsState int8

const (
	streamsStable     streamsState = 0 // at its target with all its tasks
	streamsUnrevoked  streamsState = 1 // must revoke tasks first
	streamsUnreleased streamsState = 2 // waits for tasks others still hold
)

// taskSet is tasks by subtopology id: sorted, distinct partitions.
type taskSet map[string][]int32

// taskAssignment is a member's active, standby and warm-up tasks.
type taskAssignment struct {
	active, standby, warmup taskSet
}

// streamsCurrent is a member's epoch and tasks (record type 22).
type streamsCurrent struct {
	epoch, previousEpoch int32
	state                streamsState
	assigned, revoking   taskAssignment
	// epochs is the epoch at which the member got each active task it
	// holds (assigned or being revoked), so that an offset commit with
	// an older member epoch is accepted for the tasks held since then
	// (Kafka's assignment epochs); a task without one got it at
	// max(epoch, 0).
	epochs map[task]int32
}

// epochOf is the epoch at which the member got active task (sub, p).
func (c *streamsCurrent) epochOf(sub string, p int32) int32 {
	if e, ok := c.epochs[task{sub, p}]; ok {
		return e
	}
	return max(c.epoch, 0)
}

// streamsTopology is a group's topology (record type 23).
type streamsTopology struct {
	epoch         int32
	subtopologies []subtopology // in the order the member sent them
}

// subtopology is one sub-topology of a streams application.
type subtopology struct {
	id                 string
	sourceTopics       []string
	sourceRegex        []string
	changelogs         []internalTopic
	repartitionSinks   []string
	repartitionSources []internalTopic
	copartitionGroups  []copartitionGroup
}

// internalTopic is a changelog or repartition topic the application
// needs: partitions 0 means derived (always for changelogs), replication
// factor 0 the broker's default.
type internalTopic struct {
	name              string
	partitions        int32
	replicationFactor int16
	configs           []keyValue
}

// copartitionGroup lists source topics that must have as many partitions,
// as indexes into the subtopology's lists.
type copartitionGroup struct {
	sourceTopics, sourceRegex, repartitionSources []int16
}

// appendStreamsKey appends the key of a streams group record.
func appendStreamsKey(dst []byte, typ int16, group, member string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(typ))
	dst = appendString16(dst, group)
	if typ == streamsMemberType || typ == streamsTargetMemberType || typ == streamsCurrentType {
		dst = appendString16(dst, member)
	}
	return dst
}

// appendStreamsValue appends r's value; nothing for a tombstone.
func appendStreamsValue(dst []byte, r *streamsRecord) []byte {
	if r.tombstone {
		return dst
	}
	dst = binary.BigEndian.AppendUint16(dst, 0)
	switch r.typ {
	case streamsEpochType:
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.epoch))
		dst = binary.BigEndian.AppendUint64(dst, uint64(r.metaHash))
		var configs []byte
		if r.standbys >= 0 {
			configs = binary.AppendUvarint(nil, 2)
			configs = appendCompact(configs, numStandbyReplicasKey)
			configs = appendCompact(configs, strconv.Itoa(int(r.standbys)))
			configs = append(configs, 0)
		}
		n := 1
		if configs != nil {
			n = 2
		}
		dst = append(dst, byte(n), 0, 4) // tag 0, 4 bytes
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.validatedEpoch))
		if configs != nil {
			dst = append(dst, 1)
			dst = binary.AppendUvarint(dst, uint64(len(configs)))
			dst = append(dst, configs...)
		}
		return dst
	case streamsMemberType:
		m := &r.meta
		dst = appendNullableCompact(dst, m.instanceID)
		dst = appendNullableCompact(dst, m.rackID)
		dst = appendCompact(dst, m.clientID)
		dst = appendCompact(dst, m.clientHost)
		dst = binary.BigEndian.AppendUint32(dst, uint32(m.rebalanceTimeout))
		dst = binary.BigEndian.AppendUint32(dst, uint32(m.topologyEpoch))
		dst = appendCompact(dst, m.processID)
		if m.endpoint == nil {
			dst = append(dst, 0xff)
		} else {
			dst = append(dst, 1)
			dst = appendCompact(dst, m.endpoint.host)
			dst = binary.BigEndian.AppendUint16(dst, m.endpoint.port)
			dst = append(dst, 0)
		}
		dst = appendKeyValues(dst, m.clientTags)
		return append(dst, 0)
	case streamsTargetEpochType:
		dst = binary.BigEndian.AppendUint32(dst, uint32(r.epoch))
		return append(dst, 0)
	case streamsTargetMemberType:
		dst = appendTaskSet(dst, r.target.active)
		dst = appendTaskSet(dst, r.target.standby)
		dst = appendTaskSet(dst, r.target.warmup)
		return append(dst, 0)
	case streamsCurrentType:
		c := &r.current
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.epoch))
		dst = binary.BigEndian.AppendUint32(dst, uint32(c.previousEpoch))
		dst = append(dst, byte(c.state))
		dst = appendActiveTasks(dst, c, c.assigned.active)
		dst = appendTaskSet(dst, c.assigned.standby)
		dst = appendTaskSet(dst, c.assigned.warmup)
		dst = appendActiveTasks(dst, c, c.revoking.active)
		dst = appendTaskSet(dst, c.revoking.standby)
		dst = appendTaskSet(dst, c.revoking.warmup)
		return append(dst, 0)
	case streamsTopologyType:
		t := r.topology
		dst = binary.BigEndian.AppendUint32(dst, uint32(t.epoch))
		dst = binary.AppendUvarint(dst, uint64(len(t.subtopologies))+1)
		for i := range t.subtopologies {
			dst = appendSubtopology(dst, &t.subtopologies[i])
		}
		return append(dst, 0)
	}
	return dst
}

// numStandbyReplicasKey names the assignment config a group's metadata
// record keeps (LastAssignmentConfigs), as Kafka names it.
const numStandbyReplicasKey = "num.standby.replicas"

func appendStrings(dst []byte, ss []string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ss))+1)
	for _, s := range ss {
		dst = appendCompact(dst, s)
	}
	return dst
}

func appendKeyValues(dst []byte, kvs []keyValue) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(kvs))+1)
	for _, kv := range kvs {
		dst = appendCompact(dst, kv.key)
		dst = appendCompact(dst, kv.value)
		dst = append(dst, 0)
	}
	return dst
}

func appendInt16s(dst []byte, vs []int16) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(vs))+1)
	for _, v := range vs {
		dst = binary.BigEndian.AppendUint16(dst, uint16(v))
	}
	return dst
}

func appendInternalTopics(dst []byte, ts []internalTopic) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(ts))+1)
	for _, t := range ts {
		dst = appendCompact(dst, t.name)
		dst = binary.BigEndian.AppendUint32(dst, uint32(t.partitions))
		dst = binary.BigEndian.AppendUint16(dst, uint16(t.replicationFactor))
		dst = appendKeyValues(dst, t.configs)
		dst = append(dst, 0)
	}
	return dst
}

func appendSubtopology(dst []byte, s *subtopology) []byte {
	dst = appendCompact(dst, s.id)
	dst = appendStrings(dst, s.sourceTopics)
	dst = appendStrings(dst, s.sourceRegex)
	dst = appendInternalTopics(dst, s.changelogs)
	dst = appendStrings(dst, s.repartitionSinks)
	dst = appendInternalTopics(dst, s.repartitionSources)
	dst = binary.AppendUvarint(dst, uint64(len(s.copartitionGroups))+1)
	for _, g := range s.copartitionGroups {
		dst = appendInt16s(dst, g.sourceTopics)
		dst = appendInt16s(dst, g.sourceRegex)
		dst = appendInt16s(dst, g.repartitionSources)
		dst = append(dst, 0)
	}
	return append(dst, 0)
}

// appendTaskSet writes s as []{SubtopologyId, Partitions}, by subtopology
// id.
func appendTaskSet(dst []byte, s taskSet) []byte {
	ids := s.ids()
	dst = binary.AppendUvarint(dst, uint64(len(ids))+1)
	for _, id := range ids {
		dst = appendCompact(dst, id)
		ps := s[id]
		dst = binary.AppendUvarint(dst, uint64(len(ps))+1)
		for _, p := range ps {
			dst = binary.BigEndian.AppendUint32(dst, uint32(p))
		}
		dst = append(dst, 0)
	}
	return dst
}

// appendActiveTasks writes active tasks as appendTaskSet does, with each
// partition's assignment epoch in tagged field 0.
func appendActiveTasks(dst []byte, c *streamsCurrent, s taskSet) []byte {
	ids := s.ids()
	dst = binary.AppendUvarint(dst, uint64(len(ids))+1)
	for _, id := range ids {
		dst = appendCompact(dst, id)
		ps := s[id]
		dst = binary.AppendUvarint(dst, uint64(len(ps))+1)
		for _, p := range ps {
			dst = binary.BigEndian.AppendUint32(dst, uint32(p))
		}
		n := uint64(len(ps)) + 1
		dst = append(dst, 1, 0) // one tagged field, tag 0
		dst = binary.AppendUvarint(dst, uint64(uvarintLen(n))+4*uint64(len(ps)))
		dst = binary.AppendUvarint(dst, n)
		for _, p := range ps {
			dst = binary.BigEndian.AppendUint32(dst, uint32(c.epochOf(id, p)))
		}
	}
	return dst
}

// decodeStreamsRecord reads a streams group record of type typ. Any bytes
// give a record or an error, never a panic.
func decodeStreamsRecord(typ int16, key, value []byte) (group string, r streamsRecord, err error) {
	kr := reader{b: key[2:]}
	group = kr.string16()
	r.typ = typ
	if typ == streamsMemberType || typ == streamsTargetMemberType || typ == streamsCurrentType {
		r.member = kr.string16()
	}
	if kr.err != nil {
		return "", r, fmt.Errorf("streams group record key of type %d: %w", typ, kr.err)
	}
	if value == nil {
		r.tombstone = true
		return group, r, nil
	}
	vr := reader{b: value}
	if v := vr.int16(); vr.err == nil && v != 0 {
		return "", r, fmt.Errorf("streams group record type %d value version %d: %w", typ, v, errConsumerRecord)
	}
	switch typ {
	case streamsEpochType:
		r.epoch = vr.int32()
		r.metaHash = int64(vr.int64())
		r.validatedEpoch, r.standbys = -1, -1
		vr.tags(func(tag uint64, b []byte) {
			switch tag {
			case 0:
				if len(b) == 4 {
					r.validatedEpoch = int32(binary.BigEndian.Uint32(b))
				}
			case 1:
				cr := reader{b: b}
				for _, kv := range cr.keyValues() {
					if n, err := strconv.Atoi(kv.value); err == nil && kv.key == numStandbyReplicasKey && n >= 0 && n <= 1<<20 {
						r.standbys = int32(n)
					}
				}
			}
		})
	case streamsMemberType:
		m := &r.meta
		m.instanceID = vr.nullableCompact()
		m.rackID = vr.nullableCompact()
		m.clientID = vr.compact()
		m.clientHost = vr.compact()
		m.rebalanceTimeout = vr.int32()
		m.topologyEpoch = vr.int32()
		m.processID = vr.compact()
		if vr.int8() >= 0 && vr.err == nil {
			m.endpoint = &hostPort{host: vr.compact(), port: uint16(vr.int16())}
			vr.tags(nil)
		}
		m.clientTags = vr.keyValues()
		vr.tags(nil)
	case streamsTargetEpochType:
		r.epoch = vr.int32()
		vr.tags(nil)
	case streamsTargetMemberType:
		r.target.active = vr.taskSet()
		r.target.standby = vr.taskSet()
		r.target.warmup = vr.taskSet()
		vr.tags(nil)
	case streamsCurrentType:
		c := &r.current
		c.epoch = vr.int32()
		c.previousEpoch = vr.int32()
		c.state = streamsState(vr.int8())
		c.epochs = map[task]int32{}
		c.assigned = taskAssignment{vr.activeTasks(c.epochs), vr.taskSet(), vr.taskSet()}
		c.revoking = taskAssignment{vr.activeTasks(c.epochs), vr.taskSet(), vr.taskSet()}
		vr.tags(nil)
	case streamsTopologyType:
		t := &streamsTopology{epoch: vr.int32()}
		n := vr.arrayLen()
		for i := 0; i < n && vr.err == nil; i++ {
			t.subtopologies = append(t.subtopologies, vr.subtopology())
		}
		vr.tags(nil)
		r.topology = t
	}
	if vr.err != nil {
		return "", r, fmt.Errorf("streams group record of type %d for %q: %w", typ, group, vr.err)
	}
	return group, r, nil
}

func (r *reader) int64() uint64 {
	if b := r.need(8); b != nil {
		return binary.BigEndian.Uint64(b)
	}
	return 0
}

func (r *reader) strings() []string {
	n := r.arrayLen()
	out := make([]string, 0, min(n, len(r.b)))
	for i := 0; i < n && r.err == nil; i++ {
		out = append(out, r.compact())
	}
	return out
}

func (r *reader) keyValues() []keyValue {
	n := r.arrayLen()
	var out []keyValue
	for i := 0; i < n && r.err == nil; i++ {
		kv := keyValue{key: r.compact(), value: r.compact()}
		r.tags(nil)
		out = append(out, kv)
	}
	return out
}

func (r *reader) int16s() []int16 {
	n := r.arrayLen()
	if n > len(r.b)/2 {
		r.err = fmt.Errorf("%w: %d int16s", errConsumerRecord, n)
		return nil
	}
	out := make([]int16, n)
	for i := range out {
		out[i] = r.int16()
	}
	return out
}

func (r *reader) internalTopics() []internalTopic {
	n := r.arrayLen()
	var out []internalTopic
	for i := 0; i < n && r.err == nil; i++ {
		t := internalTopic{name: r.compact(), partitions: r.int32(), replicationFactor: r.int16()}
		t.configs = r.keyValues()
		r.tags(nil)
		out = append(out, t)
	}
	return out
}

func (r *reader) subtopology() subtopology {
	s := subtopology{id: r.compact()}
	s.sourceTopics = r.strings()
	s.sourceRegex = r.strings()
	s.changelogs = r.internalTopics()
	s.repartitionSinks = r.strings()
	s.repartitionSources = r.internalTopics()
	n := r.arrayLen()
	for i := 0; i < n && r.err == nil; i++ {
		g := copartitionGroup{sourceTopics: r.int16s(), sourceRegex: r.int16s(), repartitionSources: r.int16s()}
		r.tags(nil)
		s.copartitionGroups = append(s.copartitionGroups, g)
	}
	r.tags(nil)
	return s
}

// taskSet reads []{SubtopologyId string, Partitions []int32, tags}.
func (r *reader) taskSet() taskSet { return r.activeTasks(nil) }

// activeTasks reads a taskSet with the assignment epochs of tag 0 into
// epochs (when not nil).
func (r *reader) activeTasks(epochs map[task]int32) taskSet {
	n := r.arrayLen()
	s := taskSet{}
	for i := 0; i < n && r.err == nil; i++ {
		id := r.compact()
		ps := r.int32s()
		r.tags(func(tag uint64, v []byte) {
			if tag != 0 || epochs == nil {
				return
			}
			er := reader{b: v}
			if es := er.int32s(); er.err == nil && len(es) == len(ps) {
				for j, p := range ps {
					epochs[task{id, p}] = es[j]
				}
			}
		})
		for _, p := range ps {
			s.add(id, p)
		}
	}
	s.normalize()
	return s
}

// ids lists the subtopology ids with tasks, sorted.
func (s taskSet) ids() []string {
	ids := make([]string, 0, len(s))
	for id, ps := range s {
		if len(ps) > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// add adds a task; call normalize after adding.
func (s taskSet) add(id string, p int32) { s[id] = append(s[id], p) }

// normalize sorts and dedups each subtopology's partitions and drops
// empty ones.
func (s taskSet) normalize() {
	for id, ps := range s {
		if len(ps) == 0 {
			delete(s, id)
			continue
		}
		slices.Sort(ps)
		s[id] = slices.Compact(ps)
	}
}

// has reports whether s holds task (id, p).
func (s taskSet) has(id string, p int32) bool {
	_, ok := slices.BinarySearch(s[id], p)
	return ok
}

// size is the number of tasks.
func (s taskSet) size() int {
	n := 0
	for _, ps := range s {
		n += len(ps)
	}
	return n
}

// equal reports whether two task sets hold the same tasks.
func (s taskSet) equal(o taskSet) bool {
	return maps.EqualFunc(s.nonEmpty(), o.nonEmpty(), slices.Equal[[]int32])
}

func (s taskSet) nonEmpty() map[string][]int32 {
	out := make(map[string][]int32, len(s))
	for id, ps := range s {
		if len(ps) > 0 {
			out[id] = ps
		}
	}
	return out
}

// intersects reports whether s and o share a task.
func (s taskSet) intersects(o taskSet) bool {
	for id, ps := range s {
		for _, p := range ps {
			if o.has(id, p) {
				return true
			}
		}
	}
	return false
}

// clone copies s.
func (s taskSet) clone() taskSet {
	out := make(taskSet, len(s))
	for id, ps := range s {
		if len(ps) > 0 {
			out[id] = slices.Clone(ps)
		}
	}
	return out
}

func (a taskAssignment) equal(b taskAssignment) bool {
	return a.active.equal(b.active) && a.standby.equal(b.standby) && a.warmup.equal(b.warmup)
}

func (a taskAssignment) empty() bool {
	return a.active.size() == 0 && a.standby.size() == 0 && a.warmup.size() == 0
}

func (a taskAssignment) clone() taskAssignment {
	return taskAssignment{a.active.clone(), a.standby.clone(), a.warmup.clone()}
}

func (a *streamsCurrent) equal(b *streamsCurrent) bool {
	if a.epoch != b.epoch || a.previousEpoch != b.previousEpoch || a.state != b.state ||
		!a.assigned.equal(b.assigned) || !a.revoking.equal(b.revoking) {
		return false
	}
	for _, s := range []taskSet{a.assigned.active, a.revoking.active} {
		for sub, ps := range s {
			for _, p := range ps {
				if a.epochOf(sub, p) != b.epochOf(sub, p) {
					return false
				}
			}
		}
	}
	return true
}

func (a *streamsMemberMeta) equal(b *streamsMemberMeta) bool {
	return a.instanceID == b.instanceID && a.rackID == b.rackID && a.clientID == b.clientID &&
		a.clientHost == b.clientHost && a.rebalanceTimeout == b.rebalanceTimeout &&
		a.topologyEpoch == b.topologyEpoch && a.processID == b.processID &&
		((a.endpoint == nil) == (b.endpoint == nil)) && (a.endpoint == nil || *a.endpoint == *b.endpoint) &&
		slices.Equal(a.clientTags, b.clientTags)
}
