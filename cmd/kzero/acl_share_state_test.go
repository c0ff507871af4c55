package main

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
)

// TestShareStateAPIsNeedClusterAction: the inter-broker share state APIs
// (ReadShareGroupState, WriteShareGroupState, DeleteShareGroupState)
// answer CLUSTER_AUTHORIZATION_FAILED to a principal without
// CLUSTER_ACTION on the cluster; a super user reaches the share
// coordinator (NOT_COORDINATOR here: no __share_group_state exists).
func TestShareStateAPIsNeedClusterAction(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), aclProps()...)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	codes := func(user string) []int16 {
		cl := newSASLClient(t, b, plain.Auth{User: user, Pass: user + "-pw"}.AsMechanism(), kgo.RequestRetries(1))
		brokers, err := kadm.NewClient(cl).ListBrokers(ctx)
		if err != nil || len(brokers) != 1 {
			t.Fatalf("brokers: %v %v", brokers, err)
		}
		br := cl.Broker(int(brokers[0].NodeID))
		id := [16]byte{1}
		read := kmsg.NewPtrReadShareGroupStateRequest()
		read.GroupID = "g"
		rt := kmsg.NewReadShareGroupStateRequestTopic()
		rt.TopicID, rt.Partitions = id, []kmsg.ReadShareGroupStateRequestTopicPartition{{Partition: 0}}
		read.Topics = append(read.Topics, rt)
		write := kmsg.NewPtrWriteShareGroupStateRequest()
		write.GroupID = "g"
		wt := kmsg.NewWriteShareGroupStateRequestTopic()
		wt.TopicID, wt.Partitions = id, []kmsg.WriteShareGroupStateRequestTopicPartition{{Partition: 0, StateEpoch: 1}}
		write.Topics = append(write.Topics, wt)
		del := kmsg.NewPtrDeleteShareGroupStateRequest()
		del.GroupID = "g"
		dt := kmsg.NewDeleteShareGroupStateRequestTopic()
		dt.TopicID, dt.Partitions = id, []kmsg.DeleteShareGroupStateRequestTopicPartition{{Partition: 0}}
		del.Topics = append(del.Topics, dt)
		var out []int16
		if resp, err := read.RequestWith(ctx, br); err != nil {
			t.Fatal(err)
		} else {
			out = append(out, resp.Topics[0].Partitions[0].ErrorCode)
		}
		if resp, err := write.RequestWith(ctx, br); err != nil {
			t.Fatal(err)
		} else {
			out = append(out, resp.Topics[0].Partitions[0].ErrorCode)
		}
		if resp, err := del.RequestWith(ctx, br); err != nil {
			t.Fatal(err)
		} else {
			out = append(out, resp.Topics[0].Partitions[0].ErrorCode)
		}
		return out
	}
	for i, code := range codes("alice") {
		if code != kerr.ClusterAuthorizationFailed.Code {
			t.Errorf("alice, request %d: %v, want CLUSTER_AUTHORIZATION_FAILED", i, kerr.ErrorForCode(code))
		}
	}
	for i, code := range codes("admin") {
		if code != kerr.NotCoordinator.Code {
			t.Errorf("admin, request %d: %v, want NOT_COORDINATOR", i, kerr.ErrorForCode(code))
		}
	}
}
