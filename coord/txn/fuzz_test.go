package txn

import (
	"testing"

	"kzero/log"
)

// FuzzDecodeRecord: __transaction_state records from disk never panic the
// loader, and what decodes re-encodes to a record that decodes the same.
func FuzzDecodeRecord(f *testing.F) {
	m := &txnMeta{id: "t", producerID: 7, prevProducerID: -1, nextProducerID: -1, epoch: 3, timeoutMs: 6000,
		state: Ongoing, startMs: 5, updateMs: 6, clientVersion: 2,
		partitions: map[log.TopicPartition]struct{}{{Topic: "a", Partition: 1}: {}, {Topic: "b"}: {}}}
	f.Add(appendKey(nil, "t"), appendValue(nil, m))
	f.Add(appendKey(nil, ""), []byte(nil))
	f.Add([]byte{0, 1, 0}, []byte{0, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		id, m, err := decodeRecord(key, value)
		if err != nil || m == nil {
			return
		}
		id2, m2, err := decodeRecord(appendKey(nil, id), appendValue(nil, m))
		if err != nil || id2 != id || m2.producerID != m.producerID || m2.state != m.state || len(m2.partitions) != len(m.partitions) {
			t.Fatalf("re-encoded %q %+v: %q %+v %v", id, m, id2, m2, err)
		}
	})
}
