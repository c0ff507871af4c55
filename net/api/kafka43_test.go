package api_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node/nodetest"
)

// Kafka 4.3's versions of the APIs kzero serves, with raw requests:
// ListOffsets v11, OffsetCommit and OffsetFetch v10 (topic ids),
// DescribeLogDirs v5 over several log dirs, UpdateFeatures,
// ListConfigResources.

// ListOffsets v11 (KIP-1023): -6, the earliest offset not yet uploaded to
// remote storage, and -5, the latest tiered one, are -1 with no error:
// nothing is tiered, as on a Kafka topic without remote storage.
func TestListOffsetsV11(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.ProducerLinger(0))
	kzerotest.CreateTopic(t, ctx, cl, "v11", 1, nil)
	for i := range 3 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "v11", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	conn := kzerotest.Dial(t, b.Addr().String())
	for _, tc := range []struct {
		timestamp, offset int64
		epoch             int32
	}{{-1, 3, 0}, {-2, 0, 0}, {-4, 0, 0}, {-5, -1, -1}, {-6, -1, -1}} {
		req := kmsg.NewPtrListOffsetsRequest()
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = "v11"
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Timestamp = tc.timestamp
		rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{rp}
		req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
		p := kzerotest.Do[*kmsg.ListOffsetsResponse](t, conn, 11, req).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.Offset != tc.offset || p.LeaderEpoch != tc.epoch {
			t.Errorf("timestamp %d: %v offset %d epoch %d, want %d %d", tc.timestamp, kerr.ErrorForCode(p.ErrorCode), p.Offset, p.LeaderEpoch, tc.offset, tc.epoch)
		}
	}
}

// OffsetCommit and OffsetFetch v10 name topics by id: a commit by id reads
// back by name (v9) and by id (v10); an unknown id is UNKNOWN_TOPIC_ID on
// each partition; a fetch of every offset answers with ids.
func TestOffsetsByTopicID(t *testing.T) {
	b := startBroker(t, t.TempDir(), fastGroups)
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b)
	kzerotest.CreateTopic(t, ctx, cl, "ids", 2, nil)
	td, err := kadm.NewClient(cl).ListTopics(ctx, "ids")
	if err != nil || td["ids"].Err != nil {
		t.Fatal(err, td["ids"].Err)
	}
	id := [16]byte(td["ids"].ID)
	unknown := [16]byte{1, 2, 3}
	conn := kzerotest.Dial(t, b.Addr().String())
	fc := kmsg.NewPtrFindCoordinatorRequest()
	fc.CoordinatorKey = "g10"
	kzerotest.WantCode(t, "find coordinator", kzerotest.FindCoordinator(t, conn, 3, fc).ErrorCode, nil)

	commit := kmsg.NewPtrOffsetCommitRequest()
	commit.Group = "g10"
	for _, topicID := range [][16]byte{id, unknown} {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.TopicID = topicID
		for p := range int32(2) {
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.Metadata = p, 10+int64(p), kmsg.StringPtr("m")
			rt.Partitions = append(rt.Partitions, rp)
		}
		commit.Topics = append(commit.Topics, rt)
	}
	cr := kzerotest.Do[*kmsg.OffsetCommitResponse](t, conn, 10, commit)
	if len(cr.Topics) != 2 || cr.Topics[0].TopicID != id || cr.Topics[1].TopicID != unknown {
		t.Fatalf("commit v10 topics: %+v", cr.Topics)
	}
	for _, p := range cr.Topics[0].Partitions {
		kzerotest.WantCode(t, "commit v10 by id", p.ErrorCode, nil)
	}
	for _, p := range cr.Topics[1].Partitions {
		if p.ErrorCode != kerr.UnknownTopicID.Code {
			t.Errorf("commit v10, unknown id, partition %d: %v", p.Partition, kerr.ErrorForCode(p.ErrorCode))
		}
	}

	fetch := func(v int16, topics []kmsg.OffsetFetchRequestGroupTopic) kmsg.OffsetFetchResponseGroup {
		t.Helper()
		req := kmsg.NewPtrOffsetFetchRequest()
		g := kmsg.NewOffsetFetchRequestGroup()
		g.Group, g.Topics = "g10", topics
		req.Groups = []kmsg.OffsetFetchRequestGroup{g}
		resp := kzerotest.Do[*kmsg.OffsetFetchResponse](t, conn, v, req)
		if len(resp.Groups) != 1 || resp.Groups[0].ErrorCode != 0 {
			t.Fatalf("fetch v%d: %+v", v, resp.Groups)
		}
		return resp.Groups[0]
	}
	byName := fetch(9, []kmsg.OffsetFetchRequestGroupTopic{{Topic: "ids", Partitions: []int32{0, 1}}})
	if ps := byName.Topics[0].Partitions; ps[0].Offset != 10 || ps[1].Offset != 11 {
		t.Errorf("fetch v9 by name: %+v", ps)
	}
	byID := fetch(10, []kmsg.OffsetFetchRequestGroupTopic{{TopicID: id, Partitions: []int32{1}}, {TopicID: unknown, Partitions: []int32{0}}})
	if len(byID.Topics) != 2 || byID.Topics[0].TopicID != id || byID.Topics[0].Partitions[0].Offset != 11 || byID.Topics[0].Partitions[0].ErrorCode != 0 {
		t.Fatalf("fetch v10 by id: %+v", byID.Topics)
	}
	if u := byID.Topics[1]; u.TopicID != unknown || u.Partitions[0].ErrorCode != kerr.UnknownTopicID.Code || u.Partitions[0].Offset != -1 {
		t.Errorf("fetch v10, unknown id: %+v", u)
	}
	all := fetch(10, nil)
	if len(all.Topics) != 1 || all.Topics[0].TopicID != id || len(all.Topics[0].Partitions) != 2 {
		t.Errorf("fetch v10, every offset: %+v", all.Topics)
	}
}

// DescribeLogDirs across two log dirs: each partition once, in the dir
// holding its folder, with its size; v4 the file system's bytes; v5 not
// cordoned.
func TestDescribeLogDirsSeveralDirs(t *testing.T) {
	root := t.TempDir()
	dirs := []string{filepath.Join(root, "a"), filepath.Join(root, "b")}
	b := nodetest.Start(t, nodetest.Config(dirs...))
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b, kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	kzerotest.CreateTopic(t, ctx, cl, "spread", 6, nil)
	for p := range int32(6) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "spread", Partition: p, Value: []byte("x")}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	conn := kzerotest.Dial(t, b.Addr().String())
	req := kmsg.NewPtrDescribeLogDirsRequest()
	rt := kmsg.NewDescribeLogDirsRequestTopic()
	rt.Topic, rt.Partitions = "spread", []int32{0, 1, 2, 3, 4, 5}
	req.Topics = []kmsg.DescribeLogDirsRequestTopic{rt}
	for _, v := range []int16{0, 4, 5} {
		resp := kzerotest.Do[*kmsg.DescribeLogDirsResponse](t, conn, v, req)
		var got []string
		seen := map[int32]string{}
		for _, d := range resp.Dirs {
			got = append(got, d.Dir)
			if d.ErrorCode != 0 || d.IsCordoned || (v >= 4 && (d.TotalBytes <= 0 || d.UsableBytes <= 0)) {
				t.Errorf("v%d, dir %s: %+v", v, d.Dir, d)
			}
			for _, tp := range d.Topics {
				for _, p := range tp.Partitions {
					if prev, dup := seen[p.Partition]; dup {
						t.Errorf("v%d: partition %d in %s and %s", v, p.Partition, prev, d.Dir)
					}
					seen[p.Partition] = d.Dir
					if p.Size == 0 {
						t.Errorf("v%d: partition %d has size 0", v, p.Partition)
					}
					if _, err := os.Stat(filepath.Join(d.Dir, fmt.Sprintf("spread-%d", p.Partition))); err != nil {
						t.Errorf("v%d: partition %d listed in %s: %v", v, p.Partition, d.Dir, err)
					}
				}
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, dirs) || len(seen) != 6 {
			t.Fatalf("v%d: dirs %v, partitions %v", v, got, seen)
		}
		// A new partition goes to the dir with the fewest: both hold some.
		per := map[string]int{}
		for _, d := range seen {
			per[d]++
		}
		if per[dirs[0]] == 0 || per[dirs[1]] == 0 {
			t.Errorf("v%d: partitions per dir %v", v, per)
		}
	}
}

// UpdateFeatures: the level a feature runs at is accepted (nothing
// changes), any other is INVALID_UPDATE_VERSION, as Kafka answers a level
// its controller does not support; ApiVersions lists each feature
// supported and finalized at that one level.
func TestUpdateFeatures(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	conn := kzerotest.Dial(t, b.Addr().String())
	av := kmsg.NewPtrApiVersionsRequest()
	av.ClientSoftwareName, av.ClientSoftwareVersion = "kzero-test", "1"
	versions := kzerotest.Do[*kmsg.ApiVersionsResponse](t, conn, 3, av)
	levels := map[string]int16{}
	for _, f := range versions.FinalizedFeatures {
		levels[f.Name] = f.MaxVersionLevel
		if f.MinVersionLevel != f.MaxVersionLevel {
			t.Errorf("%s finalized at %d-%d", f.Name, f.MinVersionLevel, f.MaxVersionLevel)
		}
	}
	for _, f := range versions.SupportedFeatures {
		if f.MinVersion != levels[f.Name] || f.MaxVersion != levels[f.Name] {
			t.Errorf("%s supported %d-%d, finalized %d", f.Name, f.MinVersion, f.MaxVersion, levels[f.Name])
		}
	}
	if levels["transaction.version"] != 2 || levels["group.version"] != 1 || levels["metadata.version"] == 0 {
		t.Fatalf("finalized features %v", levels)
	}
	// The epoch is the metadata offset the answer was read at (Kafka's):
	// past the bootstrap records, and never going back.
	if versions.FinalizedFeaturesEpoch <= 1 {
		t.Fatalf("finalized features epoch %d", versions.FinalizedFeaturesEpoch)
	}
	if again := kzerotest.Do[*kmsg.ApiVersionsResponse](t, conn, 3, av); again.FinalizedFeaturesEpoch < versions.FinalizedFeaturesEpoch {
		t.Fatalf("finalized features epoch went from %d to %d", versions.FinalizedFeaturesEpoch, again.FinalizedFeaturesEpoch)
	}

	update := func(v int16, validateOnly bool, updates ...kmsg.UpdateFeaturesRequestFeatureUpdate) *kmsg.UpdateFeaturesResponse {
		t.Helper()
		req := kmsg.NewPtrUpdateFeaturesRequest()
		req.FeatureUpdates, req.ValidateOnly = updates, validateOnly
		return kzerotest.Do[*kmsg.UpdateFeaturesResponse](t, conn, v, req)
	}
	feature := func(name string, level int16, upgradeType int8) kmsg.UpdateFeaturesRequestFeatureUpdate {
		u := kmsg.NewUpdateFeaturesRequestFeatureUpdate()
		u.Feature, u.MaxVersionLevel, u.UpgradeType = name, level, upgradeType
		return u
	}
	same := []kmsg.UpdateFeaturesRequestFeatureUpdate{feature("group.version", 1, 1), feature("transaction.version", 2, 1)}
	for _, v := range []int16{0, 1, 2} {
		r := update(v, false, same...)
		kzerotest.WantCode(t, "update to the current levels", r.ErrorCode, nil)
		if want := 2; v == 2 {
			want = 0
			if len(r.Results) != want {
				t.Errorf("v%d: %d results", v, len(r.Results))
			}
		} else if len(r.Results) != want || r.Results[0].ErrorCode != 0 {
			t.Errorf("v%d: results %+v", v, r.Results)
		}
	}
	for _, tc := range []struct {
		what   string
		update kmsg.UpdateFeaturesRequestFeatureUpdate
		msg    string
	}{
		{"downgrade", feature("group.version", 0, 2), "Invalid update version 0 for feature group.version. Local controller 1 only supports versions 1"},
		{"upgrade", feature("transaction.version", 3, 1), "Invalid update version 3 for feature transaction.version. Local controller 1 only supports versions 2"},
		{"unknown feature", feature("test.feature.version", 1, 1), "Invalid update version 1 for feature test.feature.version. Local controller 1 does not support this feature."},
		{"upgrade type", feature("group.version", 1, 9), "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."},
		{"negative", feature("group.version", -1, 3), "Invalid update version -1 for feature group.version. A feature version cannot be less than 0."},
	} {
		for _, validateOnly := range []bool{false, true} {
			r := update(1, validateOnly, same[0], tc.update)
			if r.ErrorCode != kerr.InvalidUpdateVersion.Code || r.ErrorMessage == nil || *r.ErrorMessage != tc.msg || len(r.Results) != 0 {
				t.Errorf("%s (validate only %v): %v %v, results %+v", tc.what, validateOnly, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, r.Results)
			}
		}
	}
	// An unknown feature to level 0 is already so: a no-op.
	kzerotest.WantCode(t, "unknown feature to 0", update(2, false, feature("test.feature.version", 0, 2)).ErrorCode, nil)

	// kadm reads the same and refuses the same.
	adm := kadm.NewClient(nodetest.Client(t, b))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	up, err := adm.UpdateFeatures(ctx, false, kadm.FeatureUpdate{Feature: "group.version", MaxVersionLevel: 0, UpgradeType: 2})
	if err != nil || !errors.Is(up.Error(), kerr.InvalidUpdateVersion) {
		t.Errorf("kadm: downgrading group.version: %v %v", err, up.Error())
	}
	up, err = adm.UpdateFeatures(ctx, true, kadm.FeatureUpdate{Feature: "transaction.version", MaxVersionLevel: 2, UpgradeType: 1})
	if err != nil || up.Error() != nil {
		t.Errorf("kadm: transaction.version at its level: %v %v", err, up.Error())
	}
}

// ListConfigResources: v1 lists topics and live brokers, all types when
// none is named, and refuses a type Kafka does not list; v0 (client
// metrics subscriptions) is empty.
func TestListConfigResources(t *testing.T) {
	b := startBroker(t, t.TempDir())
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl := nodetest.Client(t, b)
	kzerotest.CreateTopic(t, ctx, cl, "listed-b", 1, nil)
	kzerotest.CreateTopic(t, ctx, cl, "listed-a", 1, nil)
	conn := kzerotest.Dial(t, b.Addr().String())
	list := func(v int16, types ...kmsg.ConfigResourceType) *kmsg.ListConfigResourcesResponse {
		t.Helper()
		req := kmsg.NewPtrListConfigResourcesRequest()
		for _, ty := range types {
			req.ResourceTypes = append(req.ResourceTypes, int8(ty))
		}
		return kzerotest.Do[*kmsg.ListConfigResourcesResponse](t, conn, v, req)
	}
	names := func(r *kmsg.ListConfigResourcesResponse) []string {
		var out []string
		for _, c := range r.ConfigResources {
			out = append(out, kmsg.ConfigResourceType(c.Type).String()+":"+c.Name)
		}
		return out
	}
	if r := list(1); r.ErrorCode != 0 || !slices.Equal(names(r), []string{"TOPIC:listed-a", "TOPIC:listed-b", "BROKER:1"}) {
		t.Errorf("v1, every type: %v %v", kerr.ErrorForCode(r.ErrorCode), names(r))
	}
	if r := list(1, kmsg.ConfigResourceTypeBroker); r.ErrorCode != 0 || !slices.Equal(names(r), []string{"BROKER:1"}) {
		t.Errorf("v1, brokers: %v %v", kerr.ErrorForCode(r.ErrorCode), names(r))
	}
	if r := list(1, kmsg.ConfigResourceTypeGroupConfig, kmsg.ConfigResourceTypeClientMetrics); r.ErrorCode != 0 || len(r.ConfigResources) != 0 {
		t.Errorf("v1, groups and client metrics: %v %v", kerr.ErrorForCode(r.ErrorCode), names(r))
	}
	if r := list(1, kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceType(7)); r.ErrorCode != kerr.UnsupportedVersion.Code || len(r.ConfigResources) != 0 {
		t.Errorf("v1, an unknown type: %v %v", kerr.ErrorForCode(r.ErrorCode), names(r))
	}
	if r := list(0); r.ErrorCode != 0 || len(r.ConfigResources) != 0 {
		t.Errorf("v0: %v %v", kerr.ErrorForCode(r.ErrorCode), names(r))
	}
	listed, err := kadm.NewClient(cl).ListConfigResources(ctx, kadm.ConfigResourceTopic)
	if err != nil || listed.Err != nil || len(listed.Resources) != 2 {
		t.Errorf("kadm: %v %+v", err, listed)
	}
}
