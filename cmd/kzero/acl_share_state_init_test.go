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

// TestShareStateInitAndSummaryNeedClusterAction: InitializeShareGroupState
// (v0) and ReadShareGroupStateSummary (v0-v1) are advertised and answer
// CLUSTER_AUTHORIZATION_FAILED to a principal without CLUSTER_ACTION on
// the cluster; a super user reaches the share coordinator
// (NOT_COORDINATOR here: no __share_group_state exists).
func TestShareStateInitAndSummaryNeedClusterAction(t *testing.T) {
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
		versions, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, br)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int16][2]int16{83: {0, 0}, 87: {0, 1}}
		for _, k := range versions.ApiKeys {
			if w, ok := want[k.ApiKey]; ok {
				if k.MinVersion != w[0] || k.MaxVersion != w[1] {
					t.Errorf("API %d: v%d-%d, want v%d-%d", k.ApiKey, k.MinVersion, k.MaxVersion, w[0], w[1])
				}
				delete(want, k.ApiKey)
			}
		}
		if len(want) > 0 {
			t.Errorf("not advertised: %v", want)
		}
		id := [16]byte{1}
		initReq := kmsg.NewPtrInitializeShareGroupStateRequest()
		initReq.GroupID = "g"
		it := kmsg.NewInitializeShareGroupStateRequestTopic()
		it.TopicID, it.Partitions = id, []kmsg.InitializeShareGroupStateRequestTopicPartition{{Partition: 0, StateEpoch: 1, StartOffset: 3}}
		initReq.Topics = append(initReq.Topics, it)
		var out []int16
		if resp, err := initReq.RequestWith(ctx, br); err != nil {
			t.Fatal(err)
		} else {
			out = append(out, resp.Topics[0].Partitions[0].ErrorCode)
		}
		for v := int16(0); v <= 1; v++ {
			sum := kmsg.NewPtrReadShareGroupStateSummaryRequest()
			sum.Version, sum.GroupID = v, "g"
			st := kmsg.NewReadShareGroupStateSummaryRequestTopic()
			st.TopicID, st.Partitions = id, []kmsg.ReadShareGroupStateSummaryRequestTopicPartition{{Partition: 0}}
			sum.Topics = append(sum.Topics, st)
			resp, err := sum.RequestWith(ctx, br)
			if err != nil {
				t.Fatal(err)
			}
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
