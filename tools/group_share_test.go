package tools

import (
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestGroupShare lists and describes a share group whose consumer has
// acknowledged the first 10 records of its partition and not yet seen the
// 5 after: its type, its member, and the share partition's start offset
// 10 and lag 5. Its start offsets cannot be reset while it has a member;
// once its consumer has left they can, and be deleted, and then the group.
func TestGroupShare(t *testing.T) {
	ctx := testCtx(t)
	env, out := testEnv(t, Text)
	suffix := strconv.FormatInt(time.Now().UnixNano(), 36)
	group, topic := "sh-group-"+suffix, "sh-in-"+suffix
	must(t, TopicCreate(ctx, env, TopicSpec{Names: []string{topic}, Partitions: 1, ReplicationFactor: 1}))
	prod, err := kgo.NewClient(kgo.SeedBrokers(broker.addr), kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	must(t, err)
	t.Cleanup(prod.Close)
	produce := func(from, n int) {
		var rs []*kgo.Record
		for i := from; i < from+n; i++ {
			rs = append(rs, &kgo.Record{Value: []byte(strconv.Itoa(i))})
		}
		must(t, prod.ProduceSync(ctx, rs...).FirstErr())
	}
	// The group's share partition starts at the log start, not at its
	// end (share.auto.offset.reset's default), so it gets what is
	// produced before it first fetches.
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name, c.Value = "share.auto.offset.reset", kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, prod)
	must(t, err)
	must(t, kerr.ErrorForCode(resp.Resources[0].ErrorCode))
	produce(0, 10)

	cons, err := kgo.NewClient(kgo.SeedBrokers(broker.addr), kgo.ClientID("share-one"), kgo.ShareGroup(group),
		kgo.ConsumeTopics(topic), kgo.FetchMaxWait(200*time.Millisecond))
	must(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			cons.Close()
		}
	})
	for got := 0; got < 10; {
		fs := cons.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records: %v", got, ctx.Err())
		}
		for _, r := range fs.Records() {
			r.Ack(kgo.AckAccept)
			got++
		}
	}
	must(t, cons.FlushAcks(ctx))
	produce(10, 5)

	out.Reset()
	must(t, GroupList(ctx, env, nil))
	if !regexp.MustCompile(`(?m)^` + group + ` +share +share +Stable$`).MatchString(out.String()) {
		t.Fatalf("list:\n%s", out)
	}
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{group}, GroupMembers))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^`+group+` +\S+ +\S+ +share-one +\d+ +1 +`+topic+`\(0\)$`).MatchString(lines[1]) {
		t.Fatalf("describe --members:\n%s", out)
	}
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{group}, GroupOffsets))
	lines = strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !regexp.MustCompile(`^`+group+` +`+topic+` +0 +\d+ +10 +15 +5$`).MatchString(lines[1]) {
		t.Fatalf("describe:\n%s", out)
	}
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{group}, GroupStateView))
	if !regexp.MustCompile(`(?m)^` + group + ` +\S+ \(\d+\) +simple +Stable +\d+ +\d+ +1$`).MatchString(out.String()) {
		t.Fatalf("describe --state:\n%s", out)
	}

	jenv, jout := testEnv(t, JSON)
	must(t, GroupDescribe(ctx, jenv, []string{group}, GroupOffsets))
	var descs []groupDescription
	if err := json.Unmarshal(jout.Bytes(), &descs); err != nil {
		t.Fatal(err)
	}
	if len(descs) != 1 || descs[0].ProtocolType != "share" || len(descs[0].Members) != 1 || descs[0].Members[0].ClientID != "share-one" ||
		len(descs[0].Offsets) != 1 || descs[0].Offsets[0].StartOffset == nil || *descs[0].Offsets[0].StartOffset != 10 ||
		descs[0].Offsets[0].Lag == nil || *descs[0].Offsets[0].Lag != 5 || descs[0].GroupEpoch == nil {
		t.Fatalf("json: %s", jout)
	}

	reset := ResetOptions{Group: group, AllTopics: true, To: ResetTarget{Kind: ResetToEarliest}, Execute: true}
	if err := GroupResetOffsets(ctx, env, reset); err == nil || !strings.Contains(err.Error(), "NON_EMPTY_GROUP") {
		t.Fatalf("reset-offsets of a share group with a member: %v", err)
	}

	cons.Close() // leaves the group
	closed = true
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{group}, GroupStateView))
	if !regexp.MustCompile(`(?m)^` + group + ` .* Empty +\d+ +\d+ +0$`).MatchString(out.String()) {
		t.Fatalf("describe --state after leaving:\n%s", out)
	}
	out.Reset()
	must(t, GroupResetOffsets(ctx, env, ResetOptions{Group: group, Topics: []string{topic}, To: ResetTarget{Kind: ResetShiftBy, Offset: -3}}))
	if !regexp.MustCompile(`(?m)^` + group + ` +` + topic + ` +0 +10 +7$`).MatchString(out.String()) {
		t.Fatalf("reset-offsets --shift-by -3 (dry run):\n%s", out)
	}
	out.Reset()
	must(t, GroupResetOffsets(ctx, env, reset))
	if !regexp.MustCompile(`(?m)^` + group + ` +` + topic + ` +0 +10 +0$`).MatchString(out.String()) {
		t.Fatalf("reset-offsets --to-earliest:\n%s", out)
	}
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{group}, GroupOffsets))
	if !regexp.MustCompile(`(?m)^` + group + ` +` + topic + ` +0 +\S+ +0 +15 +15$`).MatchString(out.String()) {
		t.Fatalf("describe after reset:\n%s", out)
	}
	out.Reset()
	if err := GroupDeleteOffsets(ctx, env, group, []string{topic + ":0"}); !errors.Is(err, ErrUsage) {
		t.Fatalf("delete-offsets of a share group's partition: %v", err)
	}
	must(t, GroupDeleteOffsets(ctx, env, group, []string{topic}))
	if !regexp.MustCompile(`(?m)^` + topic + ` +Successful$`).MatchString(out.String()) {
		t.Fatalf("delete-offsets:\n%s", out)
	}
	out.Reset()
	must(t, GroupDescribe(ctx, env, []string{group}, GroupOffsets))
	if strings.Contains(out.String(), topic) {
		t.Fatalf("describe after delete-offsets:\n%s", out)
	}
	out.Reset()
	must(t, GroupDelete(ctx, env, []string{group}))
	if err := GroupDescribe(ctx, env, []string{group}, GroupMembers); err == nil || !strings.Contains(err.Error(), "GROUP_ID_NOT_FOUND") {
		t.Fatalf("describe after delete: %v", err)
	}
}
