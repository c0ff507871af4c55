package api_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
	"kzero/node"
	"kzero/node/nodetest"
)

// With delete.topic.enable=false DeleteTopics deletes nothing: v3 and later
// answer TOPIC_DELETION_DISABLED for every topic, named or by id, older
// versions INVALID_REQUEST, as Kafka's controller does.
func TestDeleteTopicsDisabled(t *testing.T) {
	b := startBroker(t, t.TempDir(), func(c *node.Config) {
		c.TopicDeletionDisabled, c.StaticConfigs["delete.topic.enable"] = true, "false"
	})
	defer nodetest.Stop(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	created, err := adm.CreateTopic(ctx, 1, 1, nil, "kept")
	if err != nil || created.Err != nil {
		t.Fatalf("create: %v %v", err, created.Err)
	}

	conn := kzerotest.Dial(t, b.Addr().String())
	for _, v := range []int16{0, 2, 3, 5, 6} {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.SetVersion(v)
		req.TimeoutMillis = 5000
		if v >= 6 {
			byName := kmsg.NewDeleteTopicsRequestTopic()
			byName.Topic = kmsg.StringPtr("kept")
			byID := kmsg.NewDeleteTopicsRequestTopic()
			byID.TopicID = created.ID
			req.Topics = []kmsg.DeleteTopicsRequestTopic{byName, byID}
		} else {
			req.TopicNames = []string{"kept"}
		}
		resp, err := conn.Request(req)
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		want := kerr.TopicDeletionDisabled
		if v < 3 {
			want = kerr.InvalidRequest
		}
		topics := resp.(*kmsg.DeleteTopicsResponse).Topics
		if len(topics) != len(req.Topics)+len(req.TopicNames) {
			t.Fatalf("v%d: %d topics answered", v, len(topics))
		}
		for _, rt := range topics {
			if rt.ErrorCode != want.Code {
				t.Fatalf("v%d: %+v: %v, want %v", v, rt, kerr.ErrorForCode(rt.ErrorCode), want)
			}
		}
	}
	// kadm (v6 by name) sees the error, and the topic is still there.
	if res, err := adm.DeleteTopic(ctx, "kept"); !errors.Is(err, kerr.TopicDeletionDisabled) || res.Err != kerr.TopicDeletionDisabled {
		t.Fatalf("kadm delete: %v %v", err, res.Err)
	}
	td, err := adm.ListTopics(ctx, "kept")
	if err != nil || td["kept"].Err != nil || len(td["kept"].Partitions) != 1 {
		t.Fatalf("after refused deletes: %v %+v", err, td["kept"])
	}
}
