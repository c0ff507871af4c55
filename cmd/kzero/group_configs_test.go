package main

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
)

// consumerHeartbeat sends a ConsumerGroupHeartbeat join of member to
// topics, retrying while the group's coordinator is loading.
func consumerHeartbeat(t *testing.T, ctx context.Context, cl *kgo.Client, group, member string, topics []string) *kmsg.ConsumerGroupHeartbeatResponse {
	t.Helper()
	for {
		req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
		req.Group, req.MemberID, req.RebalanceTimeoutMillis = group, member, 30000
		req.SubscribedTopicNames, req.Topics = topics, []kmsg.ConsumerGroupHeartbeatRequestTopic{}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil && !coordinatorPending(err) {
			t.Fatalf("consumer heartbeat of %s: %v", member, err)
		}
		if err == nil && !coordinatorPending(kerr.ErrorForCode(resp.ErrorCode)) {
			return resp
		}
		select {
		case <-ctx.Done():
			t.Fatalf("consumer heartbeat of %s: coordinator never ready", member)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestConsumerShareGroupHeartbeatConfigs: the group configs
// consumer.heartbeat.interval.ms and share.heartbeat.interval.ms
// (IncrementalAlterConfigs on the GROUP resource) are the intervals the
// members of their group are told, in place of the broker's
// group.consumer.heartbeat.interval.ms and
// group.share.heartbeat.interval.ms (5s); other groups keep the broker's.
// (That the session timeouts apply is shown by the coordinator's scripts,
// testdata/{consumer,share}/group_configs.txt: it takes a clock.)
func TestConsumerShareGroupHeartbeatConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	cl := newClient(t, b)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "cfg-t"); err != nil {
		t.Fatal(err)
	}
	// Each value within the broker's group.<type>.min/max bounds (45s-60s,
	// 5s-15s), as Kafka's GroupConfig.validate.
	for _, bad := range []struct{ key, value, msg string }{
		{"consumer.session.timeout.ms", "1000", "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
		{"share.heartbeat.interval.ms", "20000", "share.heartbeat.interval.ms must be less than or equal to group.share.max.heartbeat.interval.ms"},
		{"streams.assignment.interval.ms", "20000", "streams.assignment.interval.ms must be less than or equal to group.streams.max.assignment.interval.ms"},
		{"consumer.assignment.interval.ms", "20000", "consumer.assignment.interval.ms must be less than or equal to group.consumer.max.assignment.interval.ms"},
		{"share.assignment.interval.ms", "15001", "share.assignment.interval.ms must be less than or equal to group.share.max.assignment.interval.ms"},
	} {
		if r := alterGroupConfigs(t, ctx, cl, "cfg-bad", bad.key, bad.value); r.ErrorCode != kerr.InvalidConfig.Code || r.ErrorMessage == nil || *r.ErrorMessage != bad.msg {
			t.Errorf("%s=%s: %v %v, want INVALID_CONFIG %q", bad.key, bad.value, kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage, bad.msg)
		}
	}
	setGroupConfigs(t, ctx, cl, "cfg-consumer", "consumer.heartbeat.interval.ms", "7000", "consumer.session.timeout.ms", "50000")
	setGroupConfigs(t, ctx, cl, "cfg-share", "share.heartbeat.interval.ms", "8000", "share.session.timeout.ms", "50000")

	resp := consumerHeartbeat(t, ctx, cl, "cfg-consumer", "c1", []string{"cfg-t"})
	wantNoErr(t, "consumer join", resp.ErrorCode)
	if resp.HeartbeatIntervalMillis != 7000 {
		t.Errorf("consumer heartbeat interval %d, want the group's 7000", resp.HeartbeatIntervalMillis)
	}
	resp = consumerHeartbeat(t, ctx, cl, "plain-consumer", "c1", []string{"cfg-t"})
	wantNoErr(t, "consumer join", resp.ErrorCode)
	if resp.HeartbeatIntervalMillis != 5000 {
		t.Errorf("consumer heartbeat interval %d, want the broker's 5000", resp.HeartbeatIntervalMillis)
	}

	sresp := shareHeartbeat(t, ctx, cl, "cfg-share", "s1", 0, []string{"cfg-t"})
	wantNoErr(t, "share join", sresp.ErrorCode)
	if sresp.HeartbeatIntervalMillis != 8000 {
		t.Errorf("share heartbeat interval %d, want the group's 8000", sresp.HeartbeatIntervalMillis)
	}
	sresp = shareHeartbeat(t, ctx, cl, "plain-share", "s1", 0, []string{"cfg-t"})
	wantNoErr(t, "share join", sresp.ErrorCode)
	if sresp.HeartbeatIntervalMillis != 5000 {
		t.Errorf("share heartbeat interval %d, want the broker's 5000", sresp.HeartbeatIntervalMillis)
	}
}

// TestAssignmentIntervalGroupConfigs: the group configs
// consumer.assignment.interval.ms and share.assignment.interval.ms
// (KIP-1263) reach the coordinator. With the group's 15s, a second
// member's join keeps the first member's target assignment (it gets no
// partitions); with the group's 0, the next heartbeat computes the new
// target and the second member gets its partitions. (That the broker's
// 1s default holds back a join, and that the last assignment's time
// survives a restart, is shown by the coordinator's scripts,
// testdata/{consumer,share}/assignment_interval.txt: it takes a clock.)
func TestAssignmentIntervalGroupConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	cl := newClient(t, b)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "ival-t"); err != nil {
		t.Fatal(err)
	}
	setGroupConfigs(t, ctx, cl, "ival-consumer", "consumer.assignment.interval.ms", "15000")

	partitions := func(ts []kmsg.ConsumerGroupHeartbeatResponseAssignmentTopic) int {
		n := 0
		for _, t := range ts {
			n += len(t.Partitions)
		}
		return n
	}
	c1 := consumerHeartbeat(t, ctx, cl, "ival-consumer", "c1", []string{"ival-t"})
	wantNoErr(t, "consumer c1 join", c1.ErrorCode)
	if c1.Assignment == nil || partitions(c1.Assignment.Topics) != 2 {
		t.Fatalf("c1 joined with %+v, want both partitions: the group's first assignment is at once", c1.Assignment)
	}
	c2 := consumerHeartbeat(t, ctx, cl, "ival-consumer", "c2", []string{"ival-t"})
	wantNoErr(t, "consumer c2 join", c2.ErrorCode)
	if c2.MemberEpoch != c1.MemberEpoch || c2.Assignment == nil || partitions(c2.Assignment.Topics) != 0 {
		t.Fatalf("c2 joined at epoch %d with %+v, want epoch %d and no partitions within the interval", c2.MemberEpoch, c2.Assignment, c1.MemberEpoch)
	}

	// A new share group's partitions get their share state in the
	// background after s1's join is answered (as Kafka's coordinator
	// does), and s1 gets them at a later heartbeat: the share interval is
	// set once they are assigned.
	s1 := shareHeartbeat(t, ctx, cl, "ival-share", "s1", 0, []string{"ival-t"})
	wantNoErr(t, "share s1 join", s1.ErrorCode)
	await.TrueCtx(t, ctx, func() bool {
		if assigned(s1.Assignment) == 2 {
			return true
		}
		s1 = shareHeartbeat(t, ctx, cl, "ival-share", "s1", s1.MemberEpoch, nil)
		wantNoErr(t, "share s1 heartbeat", s1.ErrorCode)
		return assigned(s1.Assignment) == 2
	}, "s1 assigned both partitions once their share state is initialized")
	setGroupConfigs(t, ctx, cl, "ival-share", "share.assignment.interval.ms", "15000")
	s2 := shareHeartbeat(t, ctx, cl, "ival-share", "s2", 0, []string{"ival-t"})
	wantNoErr(t, "share s2 join", s2.ErrorCode)
	if s2.MemberEpoch != s1.MemberEpoch || assigned(s2.Assignment) != 0 {
		t.Fatalf("s2 joined at epoch %d (s1's %d) with %d partitions, want the same epoch and none within the interval",
			s2.MemberEpoch, s1.MemberEpoch, assigned(s2.Assignment))
	}

	setGroupConfigs(t, ctx, cl, "ival-consumer", "consumer.assignment.interval.ms", "0")
	setGroupConfigs(t, ctx, cl, "ival-share", "share.assignment.interval.ms", "0")
	req := kmsg.NewPtrConsumerGroupHeartbeatRequest()
	req.Group, req.MemberID, req.MemberEpoch, req.RebalanceTimeoutMillis = "ival-consumer", "c2", c2.MemberEpoch, -1
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	wantNoErr(t, "consumer c2 heartbeat", resp.ErrorCode)
	if resp.MemberEpoch <= c2.MemberEpoch {
		t.Errorf("c2 heartbeat: epoch %d, want past %d: the group config's 0 assigns at once", resp.MemberEpoch, c2.MemberEpoch)
	}
	s2 = shareHeartbeat(t, ctx, cl, "ival-share", "s2", s2.MemberEpoch, nil)
	wantNoErr(t, "share s2 heartbeat", s2.ErrorCode)
	if assigned(s2.Assignment) != 1 {
		t.Errorf("s2 heartbeat: %d partitions, want 1: the group config's 0 assigns at once", assigned(s2.Assignment))
	}
}

// TestDescribeGroupConfigsBrokerDefaults: DescribeConfigs of a GROUP
// resource shows, for a key the group does not set, the value of the
// broker's group.* config it overrides, with that config's source
// (STATIC_BROKER_CONFIG for server.properties) and the synonyms of each
// level under the broker key ending with DEFAULT_CONFIG, as Kafka 4.3
// does (DynamicGroupConfigIntegrationTest); a key no broker config backs
// shows Kafka's GroupConfig default, DEFAULT_CONFIG under the group key;
// a key the group sets its value, GROUP_CONFIG, before the broker chain.
func TestDescribeGroupConfigsBrokerDefaults(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir(),
		"group.consumer.session.timeout.ms", "50000",
		"group.share.record.lock.duration.ms", "15000",
		"group.streams.num.standby.replicas", "1")
	defer stopBroker(t, b)
	cl := newClient(t, b)
	setGroupConfigs(t, ctx, cl, "described", "consumer.heartbeat.interval.ms", "6000", "consumer.session.timeout.ms", "55000")
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.IncludeSynonyms = true
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, "described"
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe group configs: %v %+v", err, resp)
	}
	got := map[string]kmsg.DescribeConfigsResponseResourceConfig{}
	for _, c := range resp.Resources[0].Configs {
		got[c.Name] = c
	}
	const (
		group   = kmsg.ConfigSourceGroupConfig
		static  = kmsg.ConfigSourceStaticBrokerConfig
		builtin = kmsg.ConfigSourceDefaultConfig
	)
	type syn struct {
		name, value string
		source      kmsg.ConfigSource
	}
	str := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	for _, w := range []struct {
		key, value string
		source     kmsg.ConfigSource
		synonyms   []syn
	}{
		{"consumer.session.timeout.ms", "55000", group, []syn{{"consumer.session.timeout.ms", "55000", group},
			{"group.consumer.session.timeout.ms", "50000", static}, {"group.consumer.session.timeout.ms", "45000", builtin}}},
		{"consumer.assignment.interval.ms", "0", static, []syn{ // startGroupBroker's
			{"group.consumer.assignment.interval.ms", "0", static}, {"group.consumer.assignment.interval.ms", "1000", builtin}}},
		{"share.record.lock.duration.ms", "15000", static, []syn{
			{"group.share.record.lock.duration.ms", "15000", static}, {"group.share.record.lock.duration.ms", "30000", builtin}}},
		{"streams.num.standby.replicas", "1", static, []syn{
			{"group.streams.num.standby.replicas", "1", static}, {"group.streams.num.standby.replicas", "0", builtin}}},
		{"share.session.timeout.ms", "45000", builtin, []syn{{"group.share.session.timeout.ms", "45000", builtin}}},
		{"share.auto.offset.reset", "latest", builtin, []syn{{"share.auto.offset.reset", "latest", builtin}}},
		{"consumer.heartbeat.interval.ms", "6000", group, []syn{{"consumer.heartbeat.interval.ms", "6000", group},
			{"group.consumer.heartbeat.interval.ms", "5000", builtin}}},
	} {
		c, ok := got[w.key]
		if !ok {
			t.Errorf("%s: not described", w.key)
			continue
		}
		if str(c.Value) != w.value || c.Source != w.source {
			t.Errorf("%s = %s (source %v), want %s (source %v)", w.key, str(c.Value), c.Source, w.value, w.source)
		}
		var synonyms []syn
		for _, s := range c.ConfigSynonyms {
			synonyms = append(synonyms, syn{s.Name, str(s.Value), s.Source})
		}
		if !slices.Equal(synonyms, w.synonyms) {
			t.Errorf("%s: synonyms %v, want %v", w.key, synonyms, w.synonyms)
		}
	}
}
