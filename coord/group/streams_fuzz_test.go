package group

import (
	"bytes"
	"testing"
)

// FuzzDecodeStreamsRecord feeds arbitrary bytes to the decoder of streams
// group records (as a load reads them from __consumer_offsets): never a
// panic; a decoded record encodes to bytes that decode to the same record
// (encoding it again gives the same bytes); and the group it replays into
// answers its state and configures its topology without a panic.
func FuzzDecodeStreamsRecord(f *testing.F) {
	top := &streamsTopology{epoch: 2, subtopologies: []subtopology{
		{id: "0", sourceTopics: []string{"a", "b"}, repartitionSinks: []string{"r"},
			changelogs:        []internalTopic{{name: "c", configs: []keyValue{{"cleanup.policy", "compact"}}}},
			copartitionGroups: []copartitionGroup{{sourceTopics: []int16{0, 1}}}},
		{id: "1", repartitionSources: []internalTopic{{name: "r", partitions: 3, replicationFactor: 2}}, sourceRegex: []string{"x.*"}},
	}}
	tasks := taskAssignment{active: taskSet{"0": {0, 2}}, standby: taskSet{"1": {1}}, warmup: taskSet{}}
	for _, r := range []streamsRecord{
		{typ: streamsEpochType, epoch: 3, metaHash: -5, validatedEpoch: 2, standbys: 1},
		{typ: streamsEpochType, epoch: 1, validatedEpoch: -1, standbys: -1},
		{typ: streamsTopologyType, topology: top},
		{typ: streamsMemberType, member: "m", meta: streamsMemberMeta{instanceID: "i", rackID: "r", clientID: "c", clientHost: "/h",
			rebalanceTimeout: 5, topologyEpoch: 2, processID: "p", endpoint: &hostPort{"h", 80}, clientTags: []keyValue{{"k", "v"}}}},
		{typ: streamsMemberType, member: "m", meta: streamsMemberMeta{clientID: "c", processID: "p"}},
		{typ: streamsTargetEpochType, epoch: 2},
		{typ: streamsTargetMemberType, member: "m", target: tasks},
		{typ: streamsCurrentType, member: "m", current: streamsCurrent{epoch: 2, previousEpoch: 1, state: streamsUnrevoked, assigned: tasks, revoking: tasks}},
		{typ: streamsCurrentType, member: "m", tombstone: true},
	} {
		var v []byte
		if !r.tombstone {
			v = appendStreamsValue(nil, &r)
		}
		f.Add(appendStreamsKey(nil, r.typ, "g", r.member), v)
	}
	f.Add([]byte{0, 23, 0, 1, 'g'}, []byte{0, 0, 0, 0, 0, 1, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := decodeRecord(key, value)
		if err != nil || r.kind != recordStreams {
			return
		}
		encode := func(r *streamsRecord) (k, v []byte) {
			k = appendStreamsKey(nil, r.typ, "g", r.member)
			if !r.tombstone {
				v = appendStreamsValue(nil, r)
			}
			return k, v
		}
		k1, v1 := encode(&r.sr)
		r2, err := decodeRecord(k1, v1)
		if err != nil {
			t.Fatalf("streams record %+v encodes to %x / %x, which does not decode: %v", r.sr, k1, v1, err)
		}
		if k2, v2 := encode(&r2.sr); !bytes.Equal(k1, k2) || !bytes.Equal(v1, v2) || (v1 == nil) != (v2 == nil) {
			t.Fatalf("streams record %+v re-encodes as %x / %x, then %x / %x", r.sr, k1, v1, k2, v2)
		}
		sg := newStreamsGroup()
		sg.replay(&r.sr)
		sg.replay(&r2.sr)
		_ = sg.stateOf()
		_ = sg.configure(&testTopics{topics: []TopicInfo{{Name: "a", Partitions: 3}, {Name: "b", Partitions: 2}}})
		_ = sg.nextDeadline()
	})
}
