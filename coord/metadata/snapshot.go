package metadata

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// A snapshot's data is the Image written as the records that rebuild it:
//
//	+---------+--------------------------------------------+
//	| version | records: count (uvarint), then each record |
//	|  byte   | as a length (uvarint) and its bytes        |
//	+---------+--------------------------------------------+
//
// in this order: cluster, features, brokers (RegisterBroker v1, with their
// epochs, fencing and registration offsets), then per
// topic its TopicRecord, PartitionRecords (v2, with any reassignment in
// progress and the eligible leader replicas) and ConfigRecords, then broker
// configs, then the SCRAM credentials, the ACLs, the delegation tokens, the client quotas, then the last producer id block. The metadata offset is the
// snapshot's raft index, kept by raft beside the data.

const snapshotVersion = 1

// EncodeImage returns img's snapshot data.
func EncodeImage(img *Image) []byte {
	var recs []Record
	if img.clusterID != "" {
		recs = append(recs, &ClusterRecord{ID: img.clusterID})
	}
	for _, name := range slices.Sorted(maps.Keys(img.features)) {
		recs = append(recs, &FeatureLevel{Name: name, Level: img.features[name]})
	}
	for _, b := range img.Brokers() {
		recs = append(recs, &RegisterBroker{ID: b.ID, Incarnation: b.Incarnation, Epoch: b.Epoch, Rack: b.Rack, Listeners: b.Listeners,
			Fenced: b.Fenced, InControlledShutdown: b.InControlledShutdown, Registered: b.Registered})
	}
	for _, t := range img.Topics() {
		recs = append(recs, &TopicRecord{Name: t.Name, ID: t.ID})
		for _, p := range t.Partitions {
			recs = append(recs, &PartitionRecord{TopicID: t.ID, Partition: p.Partition, Replicas: p.Replicas, ISR: p.ISR,
				Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, PartitionEpoch: p.PartitionEpoch,
				AddingReplicas: p.AddingReplicas, RemovingReplicas: p.RemovingReplicas, LeaderRecovery: p.LeaderRecovery,
				ELR: p.ELR, LastKnownELR: p.LastKnownELR})
		}
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			recs = append(recs, &ConfigRecord{ResourceType: ResourceTopic, Name: t.Name, Key: k, Value: t.Configs[k]})
		}
	}
	names := slices.SortedFunc(maps.Keys(img.brokerConfigs), func(a, b string) int {
		return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b))
	})
	for _, name := range names {
		cfg := img.brokerConfigs[name]
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			recs = append(recs, &ConfigRecord{ResourceType: ResourceBroker, Name: name, Key: k, Value: cfg[k]})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(img.groupConfigs)) {
		cfg := img.groupConfigs[name]
		for _, k := range slices.Sorted(maps.Keys(cfg)) {
			recs = append(recs, &ConfigRecord{ResourceType: ResourceGroup, Name: name, Key: k, Value: cfg[k]})
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(img.scram), func(a, b ScramKey) int {
		return cmp.Or(strings.Compare(a.User, b.User), cmp.Compare(a.Mechanism, b.Mechanism))
	}) {
		c := img.scram[k]
		recs = append(recs, &c)
	}
	for _, id := range slices.SortedFunc(maps.Keys(img.acls), func(a, b [16]byte) int { return bytes.Compare(a[:], b[:]) }) {
		recs = append(recs, img.acls[id])
	}
	for _, id := range slices.Sorted(maps.Keys(img.tokens)) {
		t := img.tokens[id]
		recs = append(recs, &t)
	}
	for _, e := range slices.SortedFunc(maps.Keys(img.quotas), compareQuotaEntities) {
		vals := img.quotas[e]
		for _, k := range slices.Sorted(maps.Keys(vals)) {
			recs = append(recs, &ClientQuota{Entity: e, Key: k, Value: vals[k]})
		}
	}
	if img.lastPIDBlock.Size > 0 {
		blk := img.lastPIDBlock
		recs = append(recs, &blk)
	}
	return appendRecords([]byte{snapshotVersion}, recs)
}

// DecodeImage rebuilds the Image a snapshot holds, at offset.
func DecodeImage(data []byte, offset int64) (*Image, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("metadata snapshot: %w", errTruncated)
	}
	if data[0] != snapshotVersion {
		return nil, fmt.Errorf("%w: snapshot version %d", ErrUnknownRecord, data[0])
	}
	r := &reader{b: data[1:]}
	recs, err := r.records()
	if err != nil {
		return nil, fmt.Errorf("metadata snapshot: %w", err)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("metadata snapshot: %d trailing bytes", len(r.b))
	}
	b := NewBuilder(EmptyImage())
	for i, rec := range recs {
		if err := b.Apply(rec, offset); err != nil {
			return nil, fmt.Errorf("metadata snapshot: record %d: %w", i, err)
		}
	}
	return b.Finish(offset), nil
}
