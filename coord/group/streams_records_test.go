package group

import (
	"reflect"
	"testing"
)

func encodeStreams(r *streamsRecord) (key, value []byte) {
	key = appendStreamsKey(nil, r.typ, "g", r.member)
	if !r.tombstone {
		value = appendStreamsValue(nil, r)
	}
	return key, value
}

// The streams group records are the bytes of Kafka's schemas
// (group-coordinator/src/main/resources/common/message/StreamsGroup*.json,
// Kafka 4.3), hand-encoded: key int16 type, GroupId and MemberId int16
// strings; value int16 version 0, then flexible fields.
func TestStreamsRecordsGolden(t *testing.T) {
	tasks := taskAssignment{active: taskSet{"0": {0, 2}}, standby: taskSet{"1": {1}}, warmup: taskSet{}}
	top := &streamsTopology{epoch: 2, subtopologies: []subtopology{{
		id: "0", sourceTopics: []string{"a"}, sourceRegex: []string{"x.*"},
		changelogs:         []internalTopic{{name: "c", configs: []keyValue{{"cleanup.policy", "compact"}}}},
		repartitionSinks:   []string{"r"},
		repartitionSources: []internalTopic{{name: "r", partitions: 3, replicationFactor: 2}},
		copartitionGroups:  []copartitionGroup{{sourceTopics: []int16{0}, sourceRegex: []int16{0}, repartitionSources: []int16{0}}},
	}}}
	for _, c := range []struct {
		name       string
		rec        streamsRecord
		key, value []byte
	}{
		{"metadata", streamsRecord{typ: streamsEpochType, epoch: 3, metaHash: -5, validatedEpoch: 2, standbys: 1},
			hx("0011", "0001 67"),
			hx("0000", "00000003", "fffffffffffffffb",
				"02",             // two tagged fields
				"00 04 00000002", // tag 0: ValidatedTopologyEpoch
				"01 19 02 15 6e756d2e7374616e6462792e7265706c69636173 02 31 00")}, // tag 1: LastAssignmentConfigs
		{"metadata, nothing validated", streamsRecord{typ: streamsEpochType, epoch: 1, validatedEpoch: -1, standbys: -1},
			hx("0011", "0001 67"),
			hx("0000", "00000001", "0000000000000000", "00")}, // both tagged fields at their defaults
		{"metadata, configs only", streamsRecord{typ: streamsEpochType, epoch: 1, validatedEpoch: -1, standbys: 0},
			hx("0011", "0001 67"),
			hx("0000", "00000001", "0000000000000000",
				"01 01 19 02 15 6e756d2e7374616e6462792e7265706c69636173 02 30 00")}, // tag 1 only
		{"member", streamsRecord{typ: streamsMemberType, member: "m", meta: streamsMemberMeta{instanceID: "i", rackID: "r", clientID: "c", clientHost: "/h",
			rebalanceTimeout: 5, topologyEpoch: 2, processID: "p", endpoint: &hostPort{"h", 80}, clientTags: []keyValue{{"k", "v"}}}},
			hx("0013", "0001 67", "0001 6d"),
			hx("0000",
				"02 69",             // InstanceId
				"02 72",             // RackId
				"02 63",             // ClientId
				"03 2f68",           // ClientHost
				"00000005",          // RebalanceTimeoutMs
				"00000002",          // TopologyEpoch
				"02 70",             // ProcessId
				"01 02 68 0050 00",  // UserEndpoint: not null, Host, Port, tags
				"02 02 6b 02 76 00", // ClientTags
				"00")},
		{"member without endpoint", streamsRecord{typ: streamsMemberType, member: "m", meta: streamsMemberMeta{clientID: "c", processID: "p"}},
			hx("0013", "0001 67", "0001 6d"),
			hx("0000", "00", "00", "02 63", "01", "00000000", "00000000", "02 70", "ff", "01", "00")},
		{"target metadata", streamsRecord{typ: streamsTargetEpochType, epoch: 2},
			hx("0014", "0001 67"),
			hx("0000", "00000002", "00")},
		{"target metadata with AssignmentTimestamp", streamsRecord{typ: streamsTargetEpochType, epoch: 2, assignedAt: 0x19a00000000},
			hx("0014", "0001 67"),
			hx("0000", "00000002", "01 00 08 0000019a00000000")},
		{"target member", streamsRecord{typ: streamsTargetMemberType, member: "m", target: tasks},
			hx("0015", "0001 67", "0001 6d"),
			hx("0000",
				"02 02 30 03 00000000 00000002 00", // ActiveTasks
				"02 02 31 02 00000001 00",          // StandbyTasks
				"01",                               // WarmupTasks
				"00")},
		{"current assignment", streamsRecord{typ: streamsCurrentType, member: "m", current: streamsCurrent{epoch: 2, previousEpoch: 1, state: streamsUnrevoked,
			assigned: tasks, revoking: taskAssignment{active: taskSet{"1": {3}}},
			epochs: map[task]int32{{"0", 0}: 1, {"0", 2}: 2, {"1", 3}: 2}}},
			hx("0016", "0001 67", "0001 6d"),
			hx("0000", "00000002", "00000001", "01",
				"02 02 30 03 00000000 00000002 01 00 09 03 00000001 00000002", // ActiveTasks, tag 0: AssignmentEpochs
				"02 02 31 02 00000001 00",                                     // StandbyTasks
				"01",                                                          // WarmupTasks
				"02 02 31 02 00000003 01 00 05 02 00000002",                   // ActiveTasksPendingRevocation
				"01", "01", // StandbyTasksPendingRevocation, WarmupTasksPendingRevocation
				"00")},
		{"topology", streamsRecord{typ: streamsTopologyType, topology: top},
			hx("0017", "0001 67"),
			hx("0000", "00000002",
				"02",           // one subtopology
				"02 30",        // SubtopologyId
				"02 02 61",     // SourceTopics
				"02 04 782e2a", // SourceTopicRegex
				"02 02 63 00000000 0000 02 0f 636c65616e75702e706f6c696379 08 636f6d70616374 00 00", // StateChangelogTopics
				"02 02 72",                      // RepartitionSinkTopics
				"02 02 72 00000003 0002 01 00",  // RepartitionSourceTopics
				"02 02 0000 02 0000 02 0000 00", // CopartitionGroups
				"00",                            // the subtopology's tagged fields
				"00")},
		{"tombstone", streamsRecord{typ: streamsCurrentType, member: "m", tombstone: true},
			hx("0016", "0001 67", "0001 6d"), nil},
	} {
		k, v := encodeStreams(&c.rec)
		checkGolden(t, c.name, k, v, c.key, c.value, func(key, value []byte) ([]byte, []byte, error) {
			r, err := decodeRecord(key, value)
			k, v := encodeStreams(&r.sr)
			return k, v, err
		})
	}
}

// Streams group records as Kafka 4.3 writes them, with tagged fields
// kzero does not write, read as kzero keeps them.
func TestStreamsRecordsFromKafka(t *testing.T) {
	for _, c := range []struct {
		name       string
		key, value []byte
		want       streamsRecord
	}{
		{"target metadata with AssignmentTimestamp", hx("0014", "0001 67"),
			hx("0000", "00000002", "01 00 08 0000019a00000000"), // tag 0: AssignmentTimestamp
			streamsRecord{typ: streamsTargetEpochType, epoch: 2, assignedAt: 0x19a00000000}},
		{"metadata with empty LastAssignmentConfigs", hx("0011", "0001 67"),
			hx("0000", "00000004", "0000000000000007", "02", "00 04 00000003", "01 01 01"),
			streamsRecord{typ: streamsEpochType, epoch: 4, metaHash: 7, validatedEpoch: 3, standbys: -1}},
	} {
		r, err := decodeRecord(c.key, c.value)
		if err != nil || r.kind != recordStreams || !reflect.DeepEqual(r.sr, c.want) {
			t.Errorf("%s decodes as %+v (%v), want %+v", c.name, r.sr, err, c.want)
		}
	}
}
