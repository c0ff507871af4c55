package txn

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
)

// Record versions kzero writes: key v0 (the only one), value v1 (flexible,
// with KIP-890's tagged producer ids and client transaction version).
const (
	keyVersion   = 0
	valueVersion = 1
)

// appendKey encodes a transactional id's record key.
func appendKey(dst []byte, id string) []byte {
	k := kmsg.TxnMetadataKey{Version: keyVersion, TransactionalID: id}
	return k.AppendTo(dst)
}

// appendValue encodes a transactional id's state.
func appendValue(dst []byte, m *txnMeta) []byte {
	v := kmsg.NewTxnMetadataValue()
	v.Version = valueVersion
	v.ProducerID = m.producerID
	v.ProducerEpoch = m.epoch
	v.TimeoutMillis = m.timeoutMs
	v.State = kmsg.TransactionState(m.state)
	v.LastUpdateTimestamp = m.updateMs
	v.StartTimestamp = m.startMs
	v.PreviousProducerID = m.prevProducerID
	v.NextProducerID = m.nextProducerID
	v.ClientTransactionVersion = m.clientVersion
	var topic *kmsg.TxnMetadataValueTopic
	for _, tp := range m.sortedPartitions() {
		if topic == nil || topic.Topic != tp.Topic {
			v.Topics = append(v.Topics, kmsg.TxnMetadataValueTopic{Topic: tp.Topic})
			topic = &v.Topics[len(v.Topics)-1]
		}
		topic.Partitions = append(topic.Partitions, tp.Partition)
	}
	if v.Topics == nil {
		v.Topics = []kmsg.TxnMetadataValueTopic{}
	}
	return v.AppendTo(dst)
}

// errNotTxnRecord marks a record of a key type this package does not own.
var errNotTxnRecord = errors.New("not a transaction metadata record")

// decodeRecord reads one __transaction_state record; a nil value (a
// tombstone) gives a nil meta.
func decodeRecord(key, value []byte) (id string, m *txnMeta, err error) {
	if len(key) < 2 {
		return "", nil, fmt.Errorf("record key of %d bytes: %w", len(key), errNotTxnRecord)
	}
	if v := int16(binary.BigEndian.Uint16(key)); v != keyVersion {
		return "", nil, fmt.Errorf("record key version %d: %w", v, errNotTxnRecord)
	}
	var k kmsg.TxnMetadataKey
	if err := k.ReadFrom(key); err != nil {
		return "", nil, fmt.Errorf("decode transaction key: %w", err)
	}
	if value == nil {
		return k.TransactionalID, nil, nil
	}
	v := kmsg.NewTxnMetadataValue()
	if err := v.ReadFrom(value); err != nil {
		return "", nil, fmt.Errorf("decode transaction %q: %w", k.TransactionalID, err)
	}
	if v.Version < 0 || v.Version > valueVersion {
		return "", nil, fmt.Errorf("transaction %q value version %d unknown", k.TransactionalID, v.Version)
	}
	if v.State < kmsg.TransactionState(Empty) || v.State > kmsg.TransactionState(PrepareEpochFence) {
		return "", nil, fmt.Errorf("transaction %q state %d unknown", k.TransactionalID, v.State)
	}
	m = &txnMeta{
		id:             k.TransactionalID,
		producerID:     v.ProducerID,
		prevProducerID: v.PreviousProducerID,
		nextProducerID: v.NextProducerID,
		epoch:          v.ProducerEpoch,
		lastEpoch:      -1,
		timeoutMs:      v.TimeoutMillis,
		state:          State(v.State),
		partitions:     map[log.TopicPartition]struct{}{},
		startMs:        v.StartTimestamp,
		updateMs:       v.LastUpdateTimestamp,
		clientVersion:  v.ClientTransactionVersion,
	}
	if m.clientVersion == 0 {
		m.clientVersion = 1
	}
	for _, t := range v.Topics {
		for _, p := range t.Partitions {
			m.partitions[log.TopicPartition{Topic: t.Topic, Partition: p}] = struct{}{}
		}
	}
	return k.TransactionalID, m, nil
}
