package group

import (
	"bytes"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// FuzzDecodeRecord feeds arbitrary key and value bytes to the decoder of
// __consumer_offsets records and rebuilds a group from whatever metadata
// decodes: never a panic, and a decoded record's key encodes back to the
// bytes it was read from (bytes after the key are ignored, as Kafka does).
func FuzzDecodeRecord(f *testing.F) {
	offsetKey := appendOffsetKey(nil, "g", TopicPartition{Topic: "t", Partition: 3})
	f.Add(offsetKey, appendOffsetValue(nil, Offset{Offset: 5, LeaderEpoch: 1, Metadata: "m", CommitTime: 9, ExpireTime: -1}))
	f.Add(offsetKey, appendOffsetValue(nil, Offset{Offset: 5, ExpireTime: 100}))
	f.Add(offsetKey, []byte(nil))
	p, l, inst := "range", "m1", "i1"
	meta := &kmsg.GroupMetadataValue{ProtocolType: "consumer", Generation: 3, Protocol: &p, Leader: &l, Members: []kmsg.GroupMetadataValueMember{
		{MemberID: "m1", InstanceID: &inst, ClientID: "c", SessionTimeoutMillis: 10, Subscription: []byte{1}, Assignment: []byte{2}},
		{MemberID: "m2", InstanceID: &inst, SessionTimeoutMillis: 10},
	}}
	f.Add(appendGroupKey(nil, "g"), appendGroupValue(nil, meta))
	meta.Version = 4
	f.Add(appendGroupKey(nil, "g"), meta.AppendTo(nil))
	f.Add([]byte{0, 3, 0, 0}, []byte{1})
	f.Add([]byte{0}, []byte{})
	id := tidOf("t")
	for _, r := range []consumerRecord{
		{typ: consumerEpochType, epoch: 3, metaHash: -5},
		{typ: consumerEpochType, epoch: 1},
		{typ: consumerMemberType, member: "m", meta: memberMeta{instanceID: "i", clientID: "c", clientHost: "/h", topics: []string{"a", "b"}, regex: "x.*", rebalanceTimeout: 5, assignor: "range"}},
		{typ: consumerMemberType, member: "c", meta: memberMeta{clientID: "c", topics: []string{"a"}, rebalanceTimeout: 5,
			classic: &classicMeta{sessionTimeout: 10, protocols: []Protocol{{Name: "range", Metadata: []byte{0, 1}}}}}},
		{typ: consumerTargetEpochType, epoch: 2},
		{typ: consumerTargetEpochType, epoch: 3, assignedAt: 1760936591360},
		{typ: consumerTargetMemberType, member: "m", target: tpSet{id: {0, 3}}},
		{typ: consumerCurrentType, member: "m", current: currentAssignment{epoch: 2, previousEpoch: 1, state: memberUnrevoked, assigned: tpSet{id: {1}}, revoking: tpSet{id: {2}}}},
		{typ: consumerCurrentType, member: "m", tombstone: true},
	} {
		var v []byte
		if !r.tombstone {
			v = appendConsumerValue(nil, &r)
		}
		f.Add(appendConsumerKey(nil, r.typ, "g", r.member), v)
	}
	policy := &Policy{MinSessionTimeout: 1, MaxSessionTimeout: 1 << 30, MaxSize: 10, NewID: func() string { return "x" }}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		r, err := decodeRecord(key, value)
		if err != nil {
			return
		}
		switch r.kind {
		case recordOffset:
			var k kmsg.OffsetCommitKey
			if k.ReadFrom(key) == nil && k.Version == offsetKeyVersion {
				if got := appendOffsetKey(nil, r.group, r.tp); !bytes.HasPrefix(key, got) {
					t.Fatalf("offset key %x re-encodes as %x", key, got)
				}
			}
		case recordConsumer:
			// A decoded consumer record encodes back to what decodes the
			// same, and replays without a panic.
			var v []byte
			if !r.cr.tombstone {
				v = appendConsumerValue(nil, &r.cr)
			}
			r2, err := decodeRecord(appendConsumerKey(nil, r.cr.typ, r.group, r.cr.member), v)
			if err != nil || r2.group != r.group || !sameConsumerRecord(&r.cr, &r2.cr) {
				t.Fatalf("consumer record %+v re-decodes as %+v (%v)", r.cr, r2.cr, err)
			}
			cg := newConsumerGroup()
			cg.replay(&r.cr)
			cg.replay(&r.cr)
			_ = cg.stateOf()
		case recordGroup:
			if got := appendGroupKey(nil, r.group); !bytes.HasPrefix(key, got) {
				t.Fatalf("group key %x re-encodes as %x", key, got)
			}
			if r.meta != nil {
				g := loadGroup(r.group, policy, r.meta, 1000)
				_ = appendGroupValue(nil, g.metadataValue(nil))
				g.Describe()
				g.Tick(1 << 40)
				_ = g.NextDeadline()
			}
		}
	})
}

func sameConsumerRecord(a, b *consumerRecord) bool {
	return a.typ == b.typ && a.member == b.member && a.tombstone == b.tombstone && a.epoch == b.epoch &&
		a.metaHash == b.metaHash && a.assignedAt == b.assignedAt && a.meta.equal(&b.meta) && a.target.equal(b.target) && a.current.equal(&b.current)
}
