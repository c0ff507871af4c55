package group

import (
	"encoding/binary"
	"maps"
	"slices"
	"strconv"

	"kzero/coord/coordrecord"
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
//	                               tag 0: ValidatedTopologyEpoch int32
//	                               (default -1), tag 1:
//	                               LastAssignmentConfigs []{Key, Value
//	                               string} (default null)
//	19 StreamsGroupMemberMetadata  InstanceId string?, RackId string?,
//	                               ClientId, ClientHost string,
//	                               RebalanceTimeoutMs, TopologyEpoch int32,
//	                               ProcessId string, UserEndpoint
//	                               {Host string, Port uint16}? (int8 -1
//	                               null, 1 present), ClientTags []{Key,
//	                               Value string}
//	20 StreamsGroupTargetAssignmentMetadata  AssignmentEpoch int32; tag 0:
//	                               AssignmentTimestamp int64 (KIP-1263,
//	                               read and ignored)
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
	assignedAt     int64 // 20: AssignmentTimestamp (tag 0, KIP-1263), ms; 0 none

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
	return heldSince(c.epochs, task{sub, p}, c.epoch)
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
	return appendRecordKey(dst, typ, group, member, streamsTypes.keyHasMember(typ))
}

// appendStreamsValue appends r's value; nothing for a tombstone.
func appendStreamsValue(dst []byte, r *streamsRecord) []byte {
	if r.tombstone {
		return dst
	}
	dst = appendValueVersion(dst)
	switch r.typ {
	case streamsEpochType:
		dst = coordrecord.AppendInt32(dst, r.epoch)
		dst = coordrecord.AppendInt64(dst, r.metaHash)
		// A tagged field at its default is not written:
		// ValidatedTopologyEpoch -1, LastAssignmentConfigs null.
		validated, configs := r.validatedEpoch != -1, r.standbys >= 0
		dst = coordrecord.AppendTagCount(dst, b2i(validated)+b2i(configs))
		if validated {
			dst = coordrecord.AppendTaggedInt32(dst, 0, r.validatedEpoch)
		}
		if configs {
			kvs := appendKeyValues(nil, []keyValue{{numStandbyReplicasKey, strconv.Itoa(int(r.standbys))}})
			dst = coordrecord.AppendTag(dst, 1, kvs)
		}
		return dst
	case streamsMemberType:
		m := &r.meta
		dst = coordrecord.AppendCompactNullableString(dst, m.instanceID)
		dst = coordrecord.AppendCompactNullableString(dst, m.rackID)
		dst = coordrecord.AppendCompactString(dst, m.clientID)
		dst = coordrecord.AppendCompactString(dst, m.clientHost)
		dst = coordrecord.AppendInt32(dst, m.rebalanceTimeout)
		dst = coordrecord.AppendInt32(dst, m.topologyEpoch)
		dst = coordrecord.AppendCompactString(dst, m.processID)
		if m.endpoint == nil {
			dst = coordrecord.AppendInt8(dst, -1)
		} else {
			dst = coordrecord.AppendInt8(dst, 1)
			dst = coordrecord.AppendCompactString(dst, m.endpoint.host)
			dst = coordrecord.AppendUint16(dst, m.endpoint.port)
			dst = coordrecord.AppendNoTags(dst)
		}
		dst = appendKeyValues(dst, m.clientTags)
		return coordrecord.AppendNoTags(dst)
	case streamsTargetEpochType:
		return appendTargetMetadata(dst, r.epoch, r.assignedAt)
	case streamsTargetMemberType:
		dst = appendTaskSet(dst, r.target.active, nil)
		dst = appendTaskSet(dst, r.target.standby, nil)
		dst = appendTaskSet(dst, r.target.warmup, nil)
		return coordrecord.AppendNoTags(dst)
	case streamsCurrentType:
		c := &r.current
		dst = coordrecord.AppendInt32(dst, c.epoch)
		dst = coordrecord.AppendInt32(dst, c.previousEpoch)
		dst = coordrecord.AppendInt8(dst, int8(c.state))
		dst = appendTaskSet(dst, c.assigned.active, c.epochOf)
		dst = appendTaskSet(dst, c.assigned.standby, nil)
		dst = appendTaskSet(dst, c.assigned.warmup, nil)
		dst = appendTaskSet(dst, c.revoking.active, c.epochOf)
		dst = appendTaskSet(dst, c.revoking.standby, nil)
		dst = appendTaskSet(dst, c.revoking.warmup, nil)
		return coordrecord.AppendNoTags(dst)
	case streamsTopologyType:
		t := r.topology
		dst = coordrecord.AppendInt32(dst, t.epoch)
		dst = coordrecord.AppendArrayLen(dst, len(t.subtopologies))
		for i := range t.subtopologies {
			dst = appendSubtopology(dst, &t.subtopologies[i])
		}
		return coordrecord.AppendNoTags(dst)
	}
	return dst
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// numStandbyReplicasKey names the assignment config a group's metadata
// record keeps (LastAssignmentConfigs), as Kafka names it.
const numStandbyReplicasKey = "num.standby.replicas"

func appendKeyValues(dst []byte, kvs []keyValue) []byte {
	dst = coordrecord.AppendArrayLen(dst, len(kvs))
	for _, kv := range kvs {
		dst = coordrecord.AppendCompactString(dst, kv.key)
		dst = coordrecord.AppendCompactString(dst, kv.value)
		dst = coordrecord.AppendNoTags(dst)
	}
	return dst
}

func appendInternalTopics(dst []byte, ts []internalTopic) []byte {
	dst = coordrecord.AppendArrayLen(dst, len(ts))
	for _, t := range ts {
		dst = coordrecord.AppendCompactString(dst, t.name)
		dst = coordrecord.AppendInt32(dst, t.partitions)
		dst = coordrecord.AppendInt16(dst, t.replicationFactor)
		dst = appendKeyValues(dst, t.configs)
		dst = coordrecord.AppendNoTags(dst)
	}
	return dst
}

func appendSubtopology(dst []byte, s *subtopology) []byte {
	dst = coordrecord.AppendCompactString(dst, s.id)
	dst = coordrecord.AppendCompactStrings(dst, s.sourceTopics)
	dst = coordrecord.AppendCompactStrings(dst, s.sourceRegex)
	dst = appendInternalTopics(dst, s.changelogs)
	dst = coordrecord.AppendCompactStrings(dst, s.repartitionSinks)
	dst = appendInternalTopics(dst, s.repartitionSources)
	dst = coordrecord.AppendArrayLen(dst, len(s.copartitionGroups))
	for _, g := range s.copartitionGroups {
		dst = coordrecord.AppendInt16s(dst, g.sourceTopics)
		dst = coordrecord.AppendInt16s(dst, g.sourceRegex)
		dst = coordrecord.AppendInt16s(dst, g.repartitionSources)
		dst = coordrecord.AppendNoTags(dst)
	}
	return coordrecord.AppendNoTags(dst)
}

// appendTaskSet writes s as []{SubtopologyId, Partitions}, by subtopology
// id. With epochOf (active tasks of a current assignment), each
// subtopology's partitions' assignment epochs follow in tagged field 0
// (AssignmentEpochs).
func appendTaskSet(dst []byte, s taskSet, epochOf func(string, int32) int32) []byte {
	return appendPartitionsBy(dst, s.ids(), s, coordrecord.AppendCompactString, epochOf)
}

// decodeStreamsRecord reads a streams group record of type typ. Any bytes
// give a record or an error, never a panic.
func decodeStreamsRecord(typ int16, key, value []byte) (group string, r streamsRecord, err error) {
	r.typ, r.tombstone = typ, value == nil
	group, r.member, err = decodeGroupRecord("streams", typ, key, value, streamsTypes.keyHasMember(typ), func(vr *coordrecord.Reader) {
		switch typ {
		case streamsEpochType:
			r.epoch = vr.Int32()
			r.metaHash = vr.Int64()
			r.validatedEpoch, r.standbys = -1, -1
			vr.Tags(func(tag uint64, b []byte) {
				switch tag {
				case 0:
					if len(b) == 4 {
						r.validatedEpoch = int32(binary.BigEndian.Uint32(b))
					}
				case 1:
					cr := coordrecord.NewReader(b)
					for _, kv := range readKeyValues(&cr) {
						if n, err := strconv.Atoi(kv.value); err == nil && kv.key == numStandbyReplicasKey && n >= 0 && n <= 1<<20 {
							r.standbys = int32(n)
						}
					}
				}
			})
		case streamsMemberType:
			m := &r.meta
			m.instanceID = vr.CompactNullableString()
			m.rackID = vr.CompactNullableString()
			m.clientID = vr.CompactString()
			m.clientHost = vr.CompactString()
			m.rebalanceTimeout = vr.Int32()
			m.topologyEpoch = vr.Int32()
			m.processID = vr.CompactString()
			if vr.Int8() >= 0 && vr.Err() == nil {
				m.endpoint = &hostPort{host: vr.CompactString(), port: vr.Uint16()}
				vr.Tags(nil)
			}
			m.clientTags = readKeyValues(vr)
			vr.Tags(nil)
		case streamsTargetEpochType:
			r.epoch, r.assignedAt = readTargetMetadata(vr)
		case streamsTargetMemberType:
			r.target.active = readTaskSet(vr, nil)
			r.target.standby = readTaskSet(vr, nil)
			r.target.warmup = readTaskSet(vr, nil)
			vr.Tags(nil)
		case streamsCurrentType:
			c := &r.current
			c.epoch = vr.Int32()
			c.previousEpoch = vr.Int32()
			c.state = streamsState(vr.Int8())
			c.epochs = map[task]int32{}
			c.assigned = taskAssignment{readTaskSet(vr, c.epochs), readTaskSet(vr, nil), readTaskSet(vr, nil)}
			c.revoking = taskAssignment{readTaskSet(vr, c.epochs), readTaskSet(vr, nil), readTaskSet(vr, nil)}
			vr.Tags(nil)
		case streamsTopologyType:
			t := &streamsTopology{epoch: vr.Int32()}
			n := vr.ArrayLen()
			for i := 0; i < n && vr.Err() == nil; i++ {
				t.subtopologies = append(t.subtopologies, readSubtopology(vr))
			}
			vr.Tags(nil)
			r.topology = t
		}
	})
	return group, r, err
}

func readKeyValues(r *coordrecord.Reader) []keyValue {
	n := r.ArrayLen()
	var out []keyValue
	for i := 0; i < n && r.Err() == nil; i++ {
		kv := keyValue{key: r.CompactString(), value: r.CompactString()}
		r.Tags(nil)
		out = append(out, kv)
	}
	return out
}

func readInternalTopics(r *coordrecord.Reader) []internalTopic {
	n := r.ArrayLen()
	var out []internalTopic
	for i := 0; i < n && r.Err() == nil; i++ {
		t := internalTopic{name: r.CompactString(), partitions: r.Int32(), replicationFactor: r.Int16()}
		t.configs = readKeyValues(r)
		r.Tags(nil)
		out = append(out, t)
	}
	return out
}

func readSubtopology(r *coordrecord.Reader) subtopology {
	s := subtopology{id: r.CompactString()}
	s.sourceTopics = r.CompactStrings()
	s.sourceRegex = r.CompactStrings()
	s.changelogs = readInternalTopics(r)
	s.repartitionSinks = r.CompactStrings()
	s.repartitionSources = readInternalTopics(r)
	n := r.ArrayLen()
	for i := 0; i < n && r.Err() == nil; i++ {
		g := copartitionGroup{sourceTopics: r.Int16s(), sourceRegex: r.Int16s(), repartitionSources: r.Int16s()}
		r.Tags(nil)
		s.copartitionGroups = append(s.copartitionGroups, g)
	}
	r.Tags(nil)
	return s
}

// readTaskSet reads []{SubtopologyId string, Partitions []int32, tags},
// with the assignment epochs of tag 0 into epochs (when not nil).
func readTaskSet(r *coordrecord.Reader, epochs map[task]int32) taskSet {
	var epoch func(string, int32, int32)
	if epochs != nil {
		epoch = func(sub string, p, e int32) { epochs[task{sub, p}] = e }
	}
	s := taskSet(readPartitionsBy(r, (*coordrecord.Reader).CompactString, epoch))
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
