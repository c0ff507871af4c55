package main

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest/await"
	"kzero/node"
)

// KIP-932 share consumption end to end: franz-go's share consumer
// (kgo.ShareGroup) against a real broker.

// shareTopic creates a topic for share tests and initializes the share
// partitions of group on it before anything is produced: a share
// partition starts where share.auto.offset.reset (latest) puts it when
// first fetched, so an initial ShareFetch (its session closed at once)
// makes every record produced afterwards the group's.
func shareTopic(t *testing.T, ctx context.Context, b *node.Node, group, topic string, partitions int32) *kgo.Client {
	t.Helper()
	cl := newClient(t, b, kgo.DefaultProduceTopic(topic), kgo.ProducerLinger(0))
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, partitions, 1, nil, topic); err != nil {
		t.Fatal(err)
	}
	var id [16]byte
	await.TrueCtx(t, ctx, func() bool {
		md, err := adm.Metadata(ctx, topic)
		if err != nil {
			t.Fatal(err)
		}
		td, ok := md.Topics[topic]
		id = td.ID
		return ok && td.Err == nil && len(td.Partitions) == int(partitions)
	}, "the topic's partitions in Metadata")
	fetch := func(epoch int32) *kmsg.ShareFetchResponse {
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = 2
		req.GroupID, req.MemberID = kmsg.StringPtr(group), kmsg.StringPtr("share-test-init")
		req.ShareSessionEpoch, req.MaxRecords, req.BatchSize = epoch, 1, 1
		if epoch == 0 {
			rt := kmsg.NewShareFetchRequestTopic()
			rt.TopicID = id
			for p := range partitions {
				rp := kmsg.NewShareFetchRequestTopicPartition()
				rp.Partition = p
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = append(req.Topics, rt)
		}
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Fatalf("share fetch: %v", err)
		}
		if resp.ErrorCode != 0 {
			t.Fatalf("share fetch: %v", kerr.ErrorForCode(resp.ErrorCode))
		}
		return resp
	}
	// The first share fetch creates __share_group_state; its partitions
	// load meanwhile (COORDINATOR_LOAD_IN_PROGRESS, retriable).
	await.TrueCtx(t, ctx, func() bool {
		ready := true
		for _, tr := range fetch(0).Topics {
			for _, p := range tr.Partitions {
				err := kerr.ErrorForCode(p.ErrorCode)
				if err != nil && kerr.IsRetriable(err) {
					ready = false
					continue
				}
				if err != nil || len(p.AcquiredRecords) > 0 {
					t.Fatalf("initial share fetch: partition %d: %v, %d acquired", p.Partition, err, len(p.AcquiredRecords))
				}
			}
		}
		return ready
	}, "an initial share fetch without a retriable error")
	fetch(-1)
	return cl
}

// produceBatches writes n records as batches of size records each, values
// "0".."n-1".
func produceBatches(t *testing.T, ctx context.Context, cl *kgo.Client, from, n, size int) {
	t.Helper()
	for i := from; i < from+n; i += size {
		var rs []*kgo.Record
		for j := i; j < min(i+size, from+n); j++ {
			rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, "%d", j)})
		}
		if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func shareClient(t *testing.T, b *node.Node, group, topic string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	return newClient(t, b, append([]kgo.Opt{kgo.ShareGroup(group), kgo.ConsumeTopics(topic), kgo.FetchMaxWait(500 * time.Millisecond)}, opts...)...)
}

// pollShare polls until it gets records or ctx ends.
func pollShare(t *testing.T, ctx context.Context, cl *kgo.Client) []*kgo.Record {
	t.Helper()
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("no records: %v", ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) { t.Logf("poll %s-%d: %v", topic, p, err) })
		if rs := fs.Records(); len(rs) > 0 {
			return rs
		}
	}
}

// Two share consumers on one partition split its records: what one holds
// the other does not get; together they consume every record once.
func TestShareConsumersSplitRecords(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	prod := shareTopic(t, ctx, b, "split", "sq", 1)
	const total = 200
	produceBatches(t, ctx, prod, 0, total, 10)

	a := shareClient(t, b, "split", "sq", kgo.ShareMaxRecords(10))
	c := shareClient(t, b, "split", "sq", kgo.ShareMaxRecords(10))
	seen := map[string]string{}
	take := func(who string, rs []*kgo.Record) {
		for _, r := range rs {
			if prev, dup := seen[string(r.Value)]; dup {
				t.Fatalf("record %s delivered to %s and %s", r.Value, prev, who)
			}
			seen[string(r.Value)] = who
		}
	}
	// a holds its first records (unacknowledged until its next poll):
	// c gets others.
	ra := pollShare(t, ctx, a)
	rc := pollShare(t, ctx, c)
	take("a", ra)
	take("c", rc)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, cl := range map[string]*kgo.Client{"a": a, "c": c} {
		wg.Go(func() {
			for {
				mu.Lock()
				done := len(seen) == total
				mu.Unlock()
				if done {
					cl.FlushAcks(ctx)
					return
				}
				pctx, pcancel := context.WithTimeout(ctx, time.Second)
				rs := cl.PollFetches(pctx).Records()
				pcancel()
				mu.Lock()
				take(name, rs)
				mu.Unlock()
				if ctx.Err() != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(seen) != total {
		t.Fatalf("consumed %d of %d records", len(seen), total)
	}
	by := map[string]int{}
	for _, who := range seen {
		by[who]++
	}
	t.Logf("records by consumer: %v", by)
}

// A released record comes back (delivery count 2); a rejected one never
// does.
func TestShareReleaseAndReject(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	prod := shareTopic(t, ctx, b, "rr", "sq", 1)
	produceBatches(t, ctx, prod, 0, 4, 4)

	cl := shareClient(t, b, "rr", "sq")
	rs := pollShare(t, ctx, cl)
	if len(rs) != 4 {
		t.Fatalf("got %d records, want 4", len(rs))
	}
	for i, r := range rs {
		if r.DeliveryCount() != 1 {
			t.Fatalf("record %s: delivery count %d", r.Value, r.DeliveryCount())
		}
		if i < 2 {
			r.Ack(kgo.AckRelease) // 0, 1
		} else {
			r.Ack(kgo.AckReject) // 2, 3
		}
	}
	if err := cl.FlushAcks(ctx); err != nil {
		t.Fatal(err)
	}
	produceBatches(t, ctx, prod, 4, 1, 1)
	got := map[string]int32{}
	for len(got) < 3 {
		for _, r := range pollShare(t, ctx, cl) {
			got[string(r.Value)] = r.DeliveryCount()
		}
	}
	want := map[string]int32{"0": 2, "1": 2, "4": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after release/reject got %v (value: delivery count), want %v", got, want)
	}
}

// A consumer that holds records past group.share.record.lock.duration.ms
// loses them to another member.
func TestShareLockTimeoutRedelivers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir(), "group.share.record.lock.duration.ms", "1000")
	defer stopBroker(t, b)
	prod := shareTopic(t, ctx, b, "lock", "sq", 1)
	produceBatches(t, ctx, prod, 0, 3, 3)

	stuck := shareClient(t, b, "lock", "sq", kgo.FetchMaxWait(100*time.Millisecond))
	held := pollShare(t, ctx, stuck)
	if len(held) != 3 {
		t.Fatalf("got %d records, want 3", len(held))
	}
	if d := time.Until(held[0].AcquisitionDeadline()); d > 2*time.Second {
		t.Fatalf("acquisition deadline %v away, the lock is 1s", d)
	}
	// The stuck member fetches no more (else it would take the records
	// back itself once their locks end), but stays in the group.
	stuck.PauseFetchTopics("sq")
	other := shareClient(t, b, "lock", "sq")
	got := map[string]int32{}
	for len(got) < 3 {
		for _, r := range pollShare(t, ctx, other) {
			got[string(r.Value)] = r.DeliveryCount()
		}
	}
	for v, n := range got {
		// 2 unless the stuck member's last fetch, in flight when it
		// paused, came back after the locks ended (then 3).
		if n < 2 {
			t.Fatalf("record %s redelivered with delivery count %d, want 2", v, n)
		}
	}
}

// A record released on every delivery is archived at
// group.share.delivery.count.limit: it stops coming back.
func TestShareDeliveryLimitArchivesPoison(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir(), "group.share.delivery.count.limit", "3")
	defer stopBroker(t, b)
	prod := shareTopic(t, ctx, b, "poison", "sq", 1)
	produceBatches(t, ctx, prod, 0, 1, 1)

	cl := shareClient(t, b, "poison", "sq")
	deliveries := 0
	for deliveries < 3 {
		for _, r := range pollShare(t, ctx, cl) {
			if string(r.Value) != "0" {
				t.Fatalf("unexpected record %s", r.Value)
			}
			deliveries++
			if r.DeliveryCount() != int32(deliveries) {
				t.Fatalf("delivery %d has count %d", deliveries, r.DeliveryCount())
			}
			r.Ack(kgo.AckRelease)
		}
		if err := cl.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	produceBatches(t, ctx, prod, 1, 1, 1)
	for _, r := range pollShare(t, ctx, cl) {
		if string(r.Value) != "1" {
			t.Fatalf("after %d deliveries got %s (count %d) again, want it archived", deliveries, r.Value, r.DeliveryCount())
		}
	}
}

// Acknowledged progress survives a broker restart: the share partition's
// state is on __share_group_state, read back by the restarted broker.
func TestShareRestartKeepsAcknowledged(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	b := startGroupBroker(t, dir)
	prod := shareTopic(t, ctx, b, "durable", "sq", 1)
	produceBatches(t, ctx, prod, 0, 10, 1)

	cl := newClient(t, b, kgo.ShareGroup("durable"), kgo.ConsumeTopics("sq"), kgo.FetchMaxWait(500*time.Millisecond))
	seen := map[string]bool{}
	for len(seen) < 10 {
		for _, r := range pollShare(t, ctx, cl) {
			seen[string(r.Value)] = true
			if v := string(r.Value); v < "5" && len(v) == 1 {
				r.Ack(kgo.AckAccept) // 0-4
			} else {
				r.Ack(kgo.AckRelease) // 5-9: not done
			}
		}
		if err := cl.FlushAcks(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cl.Close()
	prod.Close()
	stopBroker(t, b)

	b = startGroupBroker(t, dir)
	defer stopBroker(t, b)
	prod = newClient(t, b, kgo.DefaultProduceTopic("sq"), kgo.ProducerLinger(0))
	produceBatches(t, ctx, prod, 10, 2, 1)
	cl = newClient(t, b, kgo.ShareGroup("durable"), kgo.ConsumeTopics("sq"), kgo.FetchMaxWait(500*time.Millisecond))
	got := map[string]bool{}
	for len(got) < 7 {
		for _, r := range pollShare(t, ctx, cl) {
			v := string(r.Value)
			if len(v) == 1 && v < "5" {
				t.Fatalf("record %s, acknowledged before the restart, delivered again (count %d)", v, r.DeliveryCount())
			}
			got[v] = true
		}
	}
	for _, v := range []string{"5", "6", "7", "8", "9", "10", "11"} {
		if !got[v] {
			t.Fatalf("after the restart got %v, want 5-11", got)
		}
	}
}

// setGroupConfigs sets a group's dynamic configs (IncrementalAlterConfigs
// on a GROUP resource) and checks DescribeConfigs shows them.
func setGroupConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, group string, kvs ...string) {
	t.Helper()
	if r := alterGroupConfigs(t, ctx, cl, group, kvs...); r.ErrorCode != 0 {
		t.Fatalf("set group configs: %v %v", kerr.ErrorForCode(r.ErrorCode), r.ErrorMessage)
	}
	got := map[string]string{}
	for _, c := range describeGroupConfigs(t, ctx, cl, group) {
		if c.Value != nil && c.Source == kmsg.ConfigSourceGroupConfig {
			got[c.Name] = *c.Value
		}
	}
	for i := 0; i+1 < len(kvs); i += 2 {
		if got[kvs[i]] != kvs[i+1] {
			t.Fatalf("described group configs %v, want %s=%s", got, kvs[i], kvs[i+1])
		}
	}
}

// alterGroupConfigs sets a group's configs, given as key, value pairs,
// and returns the resource's result.
func alterGroupConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, group string, kvs ...string) *kmsg.IncrementalAlterConfigsResponseResource {
	t.Helper()
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	for i := 0; i+1 < len(kvs); i += 2 {
		c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
		c.Name, c.Value = kvs[i], kmsg.StringPtr(kvs[i+1])
		res.Configs = append(res.Configs, c)
	}
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatalf("alter group configs: %v", err)
	}
	return &resp.Resources[0]
}

// describeGroupConfigs describes a group's configs (DescribeConfigs on a
// GROUP resource).
func describeGroupConfigs(t *testing.T, ctx context.Context, cl *kgo.Client, group string) []kmsg.DescribeConfigsResponseResourceConfig {
	t.Helper()
	req := kmsg.NewPtrDescribeConfigsRequest()
	res := kmsg.NewDescribeConfigsRequestResource()
	res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeGroupConfig, group
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil || resp.Resources[0].ErrorCode != 0 {
		t.Fatalf("describe group configs: %v %+v", err, resp)
	}
	return resp.Resources[0].Configs
}

// topicID is a topic's id, from Metadata.
func topicID(t *testing.T, ctx context.Context, cl *kgo.Client, topic string) [16]byte {
	t.Helper()
	md, err := kadm.NewClient(cl).Metadata(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	return md.Topics[topic].ID
}

// share.auto.offset.reset=earliest starts a new share partition at the
// log start; share.isolation.level=read_committed delivers committed
// transactions only (aborted ones are archived unseen);
// share.record.lock.duration.ms sets the group's acquisition lock.
func TestShareGroupConfigs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	adm := newClient(t, b)
	if _, err := kadm.NewClient(adm).CreateTopic(ctx, 1, 1, nil, "sq"); err != nil {
		t.Fatal(err)
	}
	if code := alterGroupConfigs(t, ctx, adm, "cfg", "share.auto.offset.reset", "sometimes").ErrorCode; code != kerr.InvalidConfig.Code {
		t.Fatalf("a bad share.auto.offset.reset: %v", kerr.ErrorForCode(code))
	}
	setGroupConfigs(t, ctx, adm, "cfg", "share.auto.offset.reset", "earliest", "share.isolation.level", "read_committed",
		"share.record.lock.duration.ms", "15000")

	plain := newClient(t, b, kgo.DefaultProduceTopic("sq"), kgo.ProducerLinger(0))
	produceBatches(t, ctx, plain, 0, 2, 1) // before the group ever fetches: earliest gets them
	txn := func(id string, commit bool, vals ...string) {
		cl := newClient(t, b, kgo.DefaultProduceTopic("sq"), kgo.TransactionalID(id))
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn("t1", false, "aborted-1", "aborted-2")
	txn("t2", true, "committed-1")
	produceBatches(t, ctx, plain, 2, 1, 1)

	cl := shareClient(t, b, "cfg", "sq")
	got := map[string]bool{}
	for len(got) < 4 {
		for _, r := range pollShare(t, ctx, cl) {
			got[string(r.Value)] = true
			if d := time.Until(r.AcquisitionDeadline()); d > 16*time.Second {
				t.Fatalf("acquisition lock %v, the group's share.record.lock.duration.ms is 15s", d)
			}
		}
	}
	want := map[string]bool{"0": true, "1": true, "committed-1": true, "2": true}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// Two members' share sessions on one connection, through raw requests:
// each acquires its own records, and the first acknowledges its records
// after the second fetched (the broker keeps its own copy of the member
// id that holds them, not the request's).
func TestShareMembersOnOneConnection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	cl := shareTopic(t, ctx, b, "conn", "sq", 1)
	produceBatches(t, ctx, cl, 0, 4, 1)
	id := topicID(t, ctx, cl, "sq")
	fetch := func(member string, epoch int32, ack *kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) *kmsg.ShareFetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = 2
		req.GroupID, req.MemberID = kmsg.StringPtr("conn"), kmsg.StringPtr(member)
		req.ShareSessionEpoch, req.MaxRecords, req.BatchSize = epoch, 2, 2
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewShareFetchRequestTopicPartition()
		if ack != nil {
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, *ack)
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 {
			t.Fatalf("share fetch of %s: %v %+v", member, err, resp)
		}
		if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			return &kmsg.ShareFetchResponseTopicPartition{}
		}
		return &resp.Topics[0].Partitions[0]
	}
	a := fetch("member-a", 0, nil)
	if len(a.AcquiredRecords) != 1 || a.AcquiredRecords[0].FirstOffset != 0 || a.AcquiredRecords[0].LastOffset != 1 {
		t.Fatalf("member-a acquired %+v", a.AcquiredRecords)
	}
	if bp := fetch("member-b", 0, nil); len(bp.AcquiredRecords) != 1 || bp.AcquiredRecords[0].FirstOffset != 2 {
		t.Fatalf("member-b acquired %+v", bp.AcquiredRecords)
	}
	ack := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
	ack.FirstOffset, ack.LastOffset, ack.AcknowledgeTypes = 0, 1, []int8{1}
	if p := fetch("member-a", 1, &ack); p.AcknowledgeErrorCode != 0 {
		t.Fatalf("member-a's acknowledgement: %v", kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
}

// share.renew.acknowledge.enable (KIP-1222 / KIP-1240): DescribeConfigs
// lists it, true by default, and a RENEW then extends the lock; set false,
// a RENEW in ShareAcknowledge or ShareFetch fails its partition with
// INVALID_RECORD_STATE and leaves the records held, so they can still be
// accepted.
func TestShareRenewAcknowledgeEnable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b := startGroupBroker(t, t.TempDir())
	defer stopBroker(t, b)
	cl := shareTopic(t, ctx, b, "renew", "sq", 1)
	produceBatches(t, ctx, cl, 0, 2, 2)
	id := topicID(t, ctx, cl, "sq")

	described := describeGroupConfigs(t, ctx, cl, "renew")
	listed := false
	for _, c := range described {
		if c.Name == "share.renew.acknowledge.enable" {
			listed = c.Value != nil && *c.Value == "true" && c.Source == kmsg.ConfigSourceDefaultConfig && c.ConfigType == kmsg.ConfigTypeBoolean
		}
	}
	if !listed {
		t.Fatalf("DescribeConfigs of the group does not list share.renew.acknowledge.enable=true (default, BOOLEAN): %+v", described)
	}

	fetch := func(epoch int32, ackType int8) *kmsg.ShareFetchResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrShareFetchRequest()
		req.Version = 2
		req.GroupID, req.MemberID = kmsg.StringPtr("renew"), kmsg.StringPtr("m")
		req.ShareSessionEpoch = epoch
		rt := kmsg.NewShareFetchRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewShareFetchRequestTopicPartition()
		if ackType != 0 {
			ack := kmsg.NewShareFetchRequestTopicPartitionAcknowledgementBatch()
			ack.FirstOffset, ack.LastOffset, ack.AcknowledgeTypes = 0, 1, []int8{ackType}
			rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ack)
			req.IsRenewAck = ackType == 4 // renewals only: MaxWaitMs, MinBytes, MaxBytes, MaxRecords stay 0
		} else {
			req.MaxRecords, req.BatchSize, req.MaxBytes = 2, 2, 1<<20
		}
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("share fetch, epoch %d: %v %+v", epoch, err, resp)
		}
		return &resp.Topics[0].Partitions[0]
	}
	acknowledge := func(epoch int32, ackType int8) int16 {
		t.Helper()
		req := kmsg.NewPtrShareAcknowledgeRequest()
		req.Version = 2
		req.GroupID, req.MemberID = kmsg.StringPtr("renew"), kmsg.StringPtr("m")
		req.ShareSessionEpoch, req.IsRenewAck = epoch, ackType == 4
		rt := kmsg.NewShareAcknowledgeRequestTopic()
		rt.TopicID = id
		rp := kmsg.NewShareAcknowledgeRequestTopicPartition()
		ack := kmsg.NewShareAcknowledgeRequestTopicPartitionAcknowledgementBatch()
		ack.FirstOffset, ack.LastOffset, ack.AcknowledgeTypes = 0, 1, []int8{ackType}
		rp.AcknowledgementBatches = append(rp.AcknowledgementBatches, ack)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp, err := req.RequestWith(ctx, cl)
		if err != nil || resp.ErrorCode != 0 || len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
			t.Fatalf("share acknowledge, epoch %d: %v %+v", epoch, err, resp)
		}
		return resp.Topics[0].Partitions[0].ErrorCode
	}

	if p := fetch(0, 0); len(p.AcquiredRecords) != 1 || p.AcquiredRecords[0].FirstOffset != 0 || p.AcquiredRecords[0].LastOffset != 1 {
		t.Fatalf("acquired %+v, want offsets 0-1", p.AcquiredRecords)
	}
	if code := acknowledge(1, 4); code != 0 {
		t.Fatalf("RENEW by default: %v", kerr.ErrorForCode(code))
	}
	if p := fetch(2, 4); p.AcknowledgeErrorCode != 0 {
		t.Fatalf("RENEW in a share fetch by default: %v", kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}

	if code := alterGroupConfigs(t, ctx, cl, "renew", "share.renew.acknowledge.enable", "sometimes").ErrorCode; code != kerr.InvalidConfig.Code {
		t.Fatalf("share.renew.acknowledge.enable=sometimes: %v, want INVALID_CONFIG", kerr.ErrorForCode(code))
	}
	setGroupConfigs(t, ctx, cl, "renew", "share.renew.acknowledge.enable", "false")
	if code := acknowledge(3, 4); code != kerr.InvalidRecordState.Code {
		t.Fatalf("RENEW with share.renew.acknowledge.enable=false: %v, want INVALID_RECORD_STATE", kerr.ErrorForCode(code))
	}
	if p := fetch(4, 4); p.AcknowledgeErrorCode != kerr.InvalidRecordState.Code {
		t.Fatalf("RENEW in a share fetch with share.renew.acknowledge.enable=false: %v, want INVALID_RECORD_STATE", kerr.ErrorForCode(p.AcknowledgeErrorCode))
	}
	if code := acknowledge(5, 1); code != 0 {
		t.Fatalf("ACCEPT of the records still held after the refused RENEWs: %v", kerr.ErrorForCode(code))
	}
}
