package main

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"kzero/kzerotest/await"
)

// aclProps: the SASL listener with PLAIN users admin (a super user), alice
// and bob, and the StandardAuthorizer with closed defaults.
func aclProps() []string {
	return append(saslProps(),
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required
			user_admin="admin-pw" user_alice="alice-pw" user_bob="bob-pw";`,
		"authorizer.class.name", "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
		"super.users", "User:admin",
		"allow.everyone.if.no.acl.found", "false",
		"offsets.topic.replication.factor", "1",
	)
}

// TestACLs: a super user creates topics and ACLs; a principal sees and
// writes only what its ACLs allow (prefixed topic ACL, literal group ACL),
// another sees nothing; the ACL APIs need cluster rights; a DENY beats an
// ALLOW; deleted ACLs stop applying; ACLs survive a restart.
func TestACLs(t *testing.T) {
	dir := t.TempDir()
	b := startTestBroker(t, dir, aclProps()...)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	user := func(name string, opts ...kgo.Opt) *kgo.Client {
		return newSASLClient(t, b, plain.Auth{User: name, Pass: name + "-pw"}.AsMechanism(), append(opts, kgo.RequestRetries(1))...)
	}
	admin := kadm.NewClient(user("admin"))
	for _, topic := range []string{"orders", "orders-eu", "secret"} {
		if _, err := admin.CreateTopic(ctx, 1, 1, nil, topic); err != nil {
			t.Fatal(err)
		}
	}
	created, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("ord").
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpRead, kadm.OpWrite))
	if err != nil {
		t.Fatal(err)
	}
	created2, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Groups("g").Operations(kadm.OpRead))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range append(created, created2...) {
		if c.Err != nil {
			t.Fatalf("create acl %+v", c)
		}
	}

	alice := user("alice")
	aliceAdm := kadm.NewClient(alice)
	topics, err := aliceAdm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if names := topics.Names(); !slices.Equal(names, []string{"orders", "orders-eu"}) {
		t.Errorf("alice sees %v", names)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); err != nil {
		t.Errorf("alice produce to orders: %v", err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "secret", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("alice produce to secret: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	commit := func(cl *kadm.Client, group string) error {
		os := kadm.Offsets{}
		os.Add(kadm.Offset{Topic: "orders", Partition: 0, At: 1, LeaderEpoch: -1})
		var err error
		await.PollCtx(ctx, func() bool {
			var resp kadm.OffsetResponses
			if resp, err = cl.CommitOffsets(ctx, group, os); err == nil {
				err = resp.Error()
			}
			// The first group request creates __consumer_offsets; until its
			// partitions are led and loaded the coordinator is not
			// available (as in Kafka), which clients retry.
			return !errors.Is(err, kerr.CoordinatorNotAvailable) && !errors.Is(err, kerr.CoordinatorLoadInProgress)
		})
		return err
	}
	if err := commit(aliceAdm, "g"); err != nil {
		t.Errorf("alice commits for group g: %v", err)
	}
	if err := commit(aliceAdm, "h"); !errors.Is(err, kerr.GroupAuthorizationFailed) {
		t.Errorf("alice commits for group h: %v, want GROUP_AUTHORIZATION_FAILED", err)
	}
	if res, err := aliceAdm.DescribeACLs(ctx, anyACL()); err != nil || len(res) == 0 || !errors.Is(res[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Errorf("alice describes ACLs: %+v, %v, want CLUSTER_AUTHORIZATION_FAILED", res, err)
	}

	// A consumer may not fetch as a follower (CVE-2018-1288): a fetch with
	// a replica id needs CLUSTER_ACTION, and Kafka answers every partition
	// TOPIC_AUTHORIZATION_FAILED, even one the consumer may read.
	for _, replicaID := range []int32{-1, 1} {
		code, records := fetchAs(ctx, t, alice, topics["orders"].ID, replicaID)
		if replicaID < 0 && (code != 0 || records == 0) {
			t.Errorf("alice's consumer fetch of orders: code %d, %d record bytes", code, records)
		}
		if replicaID >= 0 && (code != kerr.TopicAuthorizationFailed.Code || records != 0) {
			t.Errorf("alice fetching orders as replica %d: code %d, %d record bytes, want TOPIC_AUTHORIZATION_FAILED", replicaID, code, records)
		}
	}

	bob := user("bob")
	if topics, err := kadm.NewClient(bob).ListTopics(ctx); err != nil || len(topics) != 0 {
		t.Errorf("bob sees %v, %v", topics.Names(), err)
	}
	if err := bob.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("bob produce to orders: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}

	// DESCRIBE_CONFIGS is implied by ALTER_CONFIGS only, not by READ.
	for name, cl := range map[string]*kadm.Client{"alice": aliceAdm, "bob": kadm.NewClient(bob)} {
		if _, err := cl.DescribeTopicConfigs(ctx, "orders"); !errors.Is(err, kerr.TopicAuthorizationFailed) {
			t.Errorf("%s describes the configs of orders: %v, want TOPIC_AUTHORIZATION_FAILED", name, err)
		}
	}
	if rc, err := admin.DescribeTopicConfigs(ctx, "orders"); err != nil || len(rc) != 1 || rc[0].Err != nil {
		t.Errorf("admin describes the configs of orders: %+v, %v", rc, err)
	}

	// A DENY on one topic beats the prefixed ALLOW.
	if _, err := admin.CreateACLs(ctx, kadm.NewACLs().Deny("User:alice").Topics("orders-eu").Operations(kadm.OpAll)); err != nil {
		t.Fatal(err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders-eu", Value: []byte("x")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("alice produce to denied orders-eu: %v", err)
	}
	described, err := admin.DescribeACLs(ctx, anyACL())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range described {
		if d.Err != nil {
			t.Fatalf("describe: %+v", d)
		}
		n += len(d.Described)
	}
	if n != 4 {
		t.Errorf("described %d ACLs, want 4: %+v", n, described)
	}

	// ACLs are metadata: after a restart they still apply.
	stopBroker(t, b)
	b = startTestBroker(t, dir, aclProps()...)
	defer stopBroker(t, b)
	alice = user("alice")
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("y")}).FirstErr(); err != nil {
		t.Errorf("alice after restart: %v", err)
	}
	admin = kadm.NewClient(user("admin"))
	deleted, err := admin.DeleteACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts().Topics("ord").
		ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpAny))
	if err != nil || len(deleted) != 1 || len(deleted[0].Deleted) != 2 {
		t.Fatalf("delete: %+v, %v", deleted, err)
	}
	if err := alice.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("z")}).FirstErr(); !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("alice after the delete: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
}

// anyACL is a filter matching every ACL.
func anyACL() *kadm.ACLBuilder {
	return kadm.NewACLs().AnyResource().Allow().AllowHosts().Deny().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny)
}

// TestAuthorizedOperations (KIP-430): the operations a client may do, as
// bit fields in Metadata, DescribeCluster, DescribeGroups and
// DescribeTopicPartitions, follow its ACLs (DESCRIBE implied by READ and
// WRITE); a super user gets every operation.
func TestAuthorizedOperations(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), aclProps()...)
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	user := func(name string) *kgo.Client {
		return newSASLClient(t, b, plain.Auth{User: name, Pass: name + "-pw"}.AsMechanism(), kgo.RequestRetries(1))
	}
	admin := kadm.NewClient(user("admin"))
	if _, err := admin.CreateTopic(ctx, 1, 1, nil, "orders"); err != nil {
		t.Fatal(err)
	}
	for _, acl := range []*kadm.ACLBuilder{
		kadm.NewACLs().Allow("User:alice").Topics("orders").Operations(kadm.OpRead, kadm.OpWrite),
		kadm.NewACLs().Allow("User:alice").Groups("g").Operations(kadm.OpRead),
	} {
		if created, err := admin.CreateACLs(ctx, acl); err != nil || created[0].Err != nil {
			t.Fatalf("create acls: %v %+v", err, created)
		}
	}
	const (
		read, write, create, del, alter, describe, clusterAction, describeConfigs, alterConfigs, idempotentWrite = 1 << 3, 1 << 4, 1 << 5, 1 << 6, 1 << 7, 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
	)
	ops := func(cl *kgo.Client) (topic, cluster, group, described int32) {
		t.Helper()
		md := kmsg.NewPtrMetadataRequest()
		md.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr("orders")}}
		md.IncludeTopicAuthorizedOperations = true
		mresp, err := md.RequestWith(ctx, cl)
		if err != nil || len(mresp.Topics) != 1 || mresp.Topics[0].ErrorCode != 0 {
			t.Fatalf("metadata: %v %+v", err, mresp)
		}
		dc := kmsg.NewPtrDescribeClusterRequest()
		dc.IncludeClusterAuthorizedOperations = true
		cresp, err := dc.RequestWith(ctx, cl)
		if err != nil {
			t.Fatal(err)
		}
		dg := kmsg.NewPtrDescribeGroupsRequest()
		dg.Groups, dg.IncludeAuthorizedOperations = []string{"g"}, true
		var gresp *kmsg.DescribeGroupsResponse
		await.PollCtx(ctx, func() bool {
			gresp, err = dg.RequestWith(ctx, cl)
			return !errors.Is(err, kerr.CoordinatorNotAvailable) // __consumer_offsets being created
		})
		if err != nil || len(gresp.Groups) != 1 {
			t.Fatalf("describe groups: %v %+v", err, gresp)
		}
		d := describeTopicPartitions(ctx, t, cl, "orders")
		return mresp.Topics[0].AuthorizedOperations, cresp.ClusterAuthorizedOperations, gresp.Groups[0].AuthorizedOperations, d
	}
	topic, cluster, group, described := ops(user("alice"))
	if topic != read|write|describe || described != topic {
		t.Errorf("alice's topic operations %b (DescribeTopicPartitions %b), want READ|WRITE|DESCRIBE", topic, described)
	}
	if cluster != 0 || group != read|describe {
		t.Errorf("alice's cluster operations %b (none), group %b (READ|DESCRIBE)", cluster, group)
	}
	topic, cluster, group, _ = ops(user("admin"))
	if topic != read|write|create|del|alter|describe|describeConfigs|alterConfigs ||
		cluster != create|alter|describe|clusterAction|describeConfigs|alterConfigs|idempotentWrite || group != read|del|describe {
		t.Errorf("the super user's operations: topic %b, cluster %b, group %b; want all of each", topic, cluster, group)
	}
}

func describeTopicPartitions(ctx context.Context, t *testing.T, cl *kgo.Client, topic string) int32 {
	t.Helper()
	req := kmsg.NewPtrDescribeTopicPartitionsRequest()
	rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
	rt.Topic = topic
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || len(resp.Topics) != 1 || resp.Topics[0].ErrorCode != 0 {
		t.Fatalf("describe topic partitions: %v %+v", err, resp)
	}
	return resp.Topics[0].AuthorizedOperations
}

// fetchAs sends one Fetch of partition 0 of a topic from offset 0 with
// the replica id given and returns the partition's error code and how
// many record bytes came back.
func fetchAs(ctx context.Context, t *testing.T, cl *kgo.Client, topic [16]byte, replicaID int32) (int16, int) {
	t.Helper()
	req := kmsg.NewPtrFetchRequest()
	req.ReplicaID, req.ReplicaState.ID, req.ReplicaState.Epoch = replicaID, replicaID, -1
	req.MaxBytes, req.SessionEpoch = 1<<20, -1
	rt := kmsg.NewFetchRequestTopic()
	rt.TopicID = topic
	rp := kmsg.NewFetchRequestTopicPartition()
	rp.PartitionMaxBytes, rp.CurrentLeaderEpoch, rp.LogStartOffset = 1<<20, -1, -1
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("fetch as replica %d: %v", replicaID, err)
	}
	if resp.ErrorCode != 0 {
		return resp.ErrorCode, 0
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		t.Fatalf("fetch as replica %d: %+v", replicaID, resp)
	}
	p := resp.Topics[0].Partitions[0]
	return p.ErrorCode, len(p.RecordBatches)
}
