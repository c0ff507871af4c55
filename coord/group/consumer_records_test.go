package group

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

// hx decodes golden bytes written as hex a field at a time; spaces are
// ignored.
func hx(parts ...string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(strings.Join(parts, ""), " ", ""))
	if err != nil {
		panic(err) // a typo in a test table
	}
	return b
}

// goldenTopic is tidOf("t"), as a record spells it.
const goldenTopic = "74000000000000000000000000000001"

// checkGolden checks that a record encodes to the golden key and value
// (nil: a tombstone) and that the golden bytes decode to a record that
// encodes to them again.
func checkGolden(t *testing.T, name string, key, value, wantKey, wantValue []byte, reencode func(key, value []byte) ([]byte, []byte, error)) {
	t.Helper()
	if !bytes.Equal(key, wantKey) || !bytes.Equal(value, wantValue) || (value == nil) != (wantValue == nil) {
		t.Errorf("%s encodes as\n key   %x\n value %x\nwant\n key   %x\n value %x", name, key, value, wantKey, wantValue)
		return
	}
	k, v, err := reencode(wantKey, wantValue)
	if err != nil {
		t.Errorf("%s: golden bytes do not decode: %v", name, err)
		return
	}
	if !bytes.Equal(k, wantKey) || !bytes.Equal(v, wantValue) || (v == nil) != (wantValue == nil) {
		t.Errorf("%s decodes and encodes again as\n key   %x\n value %x\nwant\n key   %x\n value %x", name, k, v, wantKey, wantValue)
	}
}

func encodeConsumer(r *consumerRecord) (key, value []byte) {
	key = appendConsumerKey(nil, r.typ, "g", r.member)
	if !r.tombstone {
		value = appendConsumerValue(nil, r)
	}
	return key, value
}

// The consumer group records are the bytes of Kafka's schemas
// (group-coordinator/src/main/resources/common/message/ConsumerGroup*.json,
// Kafka 4.3), hand-encoded: key int16 type, GroupId and MemberId int16
// strings; value int16 version 0, then flexible fields.
func TestConsumerRecordsGolden(t *testing.T) {
	id := tidOf("t")
	for _, c := range []struct {
		name       string
		rec        consumerRecord
		key, value []byte
	}{
		{"metadata", consumerRecord{typ: consumerEpochType, epoch: 3, metaHash: -5},
			hx("0003", "0001 67"),
			hx("0000", "00000003", "01 00 08 fffffffffffffffb")}, // tag 0: MetadataHash
		{"metadata without hash", consumerRecord{typ: consumerEpochType, epoch: 1},
			hx("0003", "0001 67"),
			hx("0000", "00000001", "00")},
		{"member", consumerRecord{typ: consumerMemberType, member: "m", meta: memberMeta{instanceID: "i", clientID: "c", clientHost: "/h",
			topics: []string{"a", "b"}, regex: "x.*", rebalanceTimeout: 5, assignor: "range"}},
			hx("0005", "0001 67", "0001 6d"),
			hx("0000",
				"02 69",         // InstanceId
				"00",            // RackId null
				"02 63",         // ClientId
				"03 2f68",       // ClientHost
				"03 0261 0262",  // SubscribedTopicNames
				"04 782e2a",     // SubscribedTopicRegex
				"00000005",      // RebalanceTimeoutMs
				"06 72616e6765", // ServerAssignor
				"00")},
		{"classic member", consumerRecord{typ: consumerMemberType, member: "m", meta: memberMeta{clientID: "c", topics: []string{"a"}, rebalanceTimeout: 5,
			classic: &classicMeta{sessionTimeout: 10, protocols: []Protocol{{Name: "range", Metadata: []byte{0, 1}}}}}},
			hx("0005", "0001 67", "0001 6d"),
			hx("0000", "00", "00", "02 63", "01", "02 0261", "00", "00000005", "00",
				"01 00 11",                    // tag 0 (ClassicMemberMetadata), 17 bytes
				"01",                          // not null
				"0000000a",                    // SessionTimeoutMs
				"02 06 72616e6765 03 0001 00", // SupportedProtocols: Name, Metadata, tags
				"00")},
		{"target metadata", consumerRecord{typ: consumerTargetEpochType, epoch: 2},
			hx("0006", "0001 67"),
			hx("0000", "00000002", "00")},
		{"target metadata with AssignmentTimestamp", consumerRecord{typ: consumerTargetEpochType, epoch: 2, assignedAt: 0x19a00000000},
			hx("0006", "0001 67"),
			hx("0000", "00000002", "01 00 08 0000019a00000000")}, // tag 0, 8 bytes
		{"target member", consumerRecord{typ: consumerTargetMemberType, member: "m", target: tpSet{id: {0, 3}}},
			hx("0007", "0001 67", "0001 6d"),
			hx("0000", "02", goldenTopic, "03 00000000 00000003", "00", "00")},
		{"current assignment", consumerRecord{typ: consumerCurrentType, member: "m", current: currentAssignment{epoch: 2, previousEpoch: 1,
			state: memberUnrevoked, assigned: tpSet{id: {1}}, revoking: tpSet{id: {2}}, epochs: map[tp]int32{{id, 1}: 1, {id, 2}: 2}}},
			hx("0008", "0001 67", "0001 6d"),
			hx("0000", "00000002", "00000001", "01",
				"02", goldenTopic, "02 00000001", "01 00 05 02 00000001", // AssignedPartitions, tag 0: AssignmentEpochs
				"02", goldenTopic, "02 00000002", "01 00 05 02 00000002", // PartitionsPendingRevocation
				"00")},
		{"tombstone", consumerRecord{typ: consumerCurrentType, member: "m", tombstone: true},
			hx("0008", "0001 67", "0001 6d"), nil},
	} {
		k, v := encodeConsumer(&c.rec)
		checkGolden(t, c.name, k, v, c.key, c.value, func(key, value []byte) ([]byte, []byte, error) {
			r, err := decodeRecord(key, value)
			if err == nil && !sameConsumerRecord(&r.cr, &c.rec) {
				t.Errorf("%s decodes as %+v, want %+v", c.name, r.cr, c.rec)
			}
			k, v := encodeConsumer(&r.cr)
			return k, v, err
		})
	}
}

// Consumer group records as Kafka 4.3 writes them, with tagged fields kzero
// does not write, read as kzero keeps them.
func TestConsumerRecordsFromKafka(t *testing.T) {
	for _, c := range []struct {
		name       string
		key, value []byte
		want       consumerRecord
	}{
		{"target metadata with AssignmentTimestamp", hx("0006", "0001 67"),
			hx("0000", "00000002", "01 00 08 0000019a00000000"), // tag 0: AssignmentTimestamp
			consumerRecord{typ: consumerTargetEpochType, epoch: 2, assignedAt: 0x19a00000000}},
	} {
		r, err := decodeRecord(c.key, c.value)
		if err != nil || r.kind != recordConsumer || !sameConsumerRecord(&r.cr, &c.want) {
			t.Errorf("%s decodes as %+v (%v), want %+v", c.name, r.cr, err, c.want)
		}
	}
}
