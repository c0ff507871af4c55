package node

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/txn"
	"kzero/kzerotest/await"
	"kzero/log"
	"kzero/record"
)

// A transaction's first write to a partition led by the broker that also
// coordinates the transaction: from Produce v12 (transactions v2) the
// coordinator adds the partition itself, a write to __transaction_state
// that waits for that partition's followers. With one event loop per
// broker, the loop that read the produce also serves the followers'
// fetches; when the produce waited on the loop, the followers could not
// fetch, and the produce failed (NOT_ENOUGH_REPLICAS) once the
// coordinator's write timed out after 5 s. franz-go's TestTxnEtl against
// three nodes found it.
func TestTxnFirstWriteLocalCoordinatorReplicated(t *testing.T) {
	c := startClusterWith(t, 3, func(cfg *Config) {
		cfg.Server.Loops = 1
		cfg.Txns.NumPartitions = 1
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	const id = "loop-txn"

	conns := map[int32]*rawConn{}
	connTo := func(node int32) *rawConn {
		if rc := conns[node]; rc != nil {
			return rc
		}
		conn, err := net.Dial("tcp", c.nodes[node-1].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conns[node] = &rawConn{c: conn, buf: make([]byte, 1<<20)}
		return conns[node]
	}
	corr := int32(0)
	call := func(node int32, req kmsg.Request, resp kmsg.Response) {
		t.Helper()
		corr++
		resp.SetVersion(req.GetVersion())
		// Every request here is flexible: a response header of a
		// correlation id and an empty tag section.
		if err := resp.ReadFrom(connTo(node).roundTrip(t, encodeRequest(req, corr))[5:]); err != nil {
			t.Fatal(err)
		}
	}

	// The coordinator: finding it creates __transaction_state (one
	// partition here, replicated three times).
	coordinator := int32(-1)
	await.TrueCtx(t, ctx, func() bool {
		req := kmsg.NewPtrFindCoordinatorRequest()
		req.SetVersion(4)
		req.CoordinatorType, req.CoordinatorKeys = 1, []string{id}
		resp := kmsg.NewPtrFindCoordinatorResponse()
		call(1, req, resp)
		if len(resp.Coordinators) != 1 || resp.Coordinators[0].ErrorCode != 0 {
			return false
		}
		coordinator = resp.Coordinators[0].NodeID
		return true
	}, "the transaction coordinator")
	state := log.TopicPartition{Topic: txn.TopicName, Partition: 0}
	if !c.awaitImages(ctx, func() bool {
		t := c.nodes[coordinator-1].Controller().Image().Topic(state.Topic)
		return t != nil && len(t.Partitions[0].ISR) == 3
	}) {
		t.Fatal("__transaction_state-0 never had three in sync replicas")
	}

	// The data partition, led by the coordinator's broker.
	replicas := []int32{coordinator}
	for n := int32(1); n <= 3; n++ {
		if n != coordinator {
			replicas = append(replicas, n)
		}
	}
	ct := kmsg.NewPtrCreateTopicsRequest()
	ct.SetVersion(7)
	ct.TimeoutMillis = 30000
	topic := kmsg.NewCreateTopicsRequestTopic()
	topic.Topic, topic.NumPartitions, topic.ReplicationFactor = "txloop", -1, -1
	a := kmsg.NewCreateTopicsRequestTopicReplicaAssignment()
	a.Partition, a.Replicas = 0, replicas
	topic.ReplicaAssignment = append(topic.ReplicaAssignment, a)
	ct.Topics = append(ct.Topics, topic)
	ctResp := kmsg.NewPtrCreateTopicsResponse()
	call(coordinator, ct, ctResp)
	if len(ctResp.Topics) != 1 || ctResp.Topics[0].ErrorCode != 0 {
		t.Fatalf("create txloop: %+v", ctResp.Topics)
	}
	if !c.awaitImages(ctx, func() bool {
		for _, n := range c.nodes {
			t := n.Controller().Image().Topic("txloop")
			if t == nil || t.Partitions[0].Leader != coordinator || len(t.Partitions[0].ISR) != 3 {
				return false
			}
		}
		return true
	}) {
		t.Fatal("txloop-0 never led by the coordinator's broker with three in sync replicas")
	}

	var pid int64
	var epoch int16
	await.TrueCtx(t, ctx, func() bool {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.SetVersion(5)
		req.TransactionalID, req.TransactionTimeoutMillis = kmsg.StringPtr(id), 60000
		req.ProducerID, req.ProducerEpoch = -1, -1
		resp := kmsg.NewPtrInitProducerIDResponse()
		call(coordinator, req, resp)
		pid, epoch = resp.ProducerID, resp.ProducerEpoch
		return resp.ErrorCode == 0
	}, "InitProducerID")

	var b record.Builder
	b.Reset(record.BatchHeader{Transactional: true, BaseTimestamp: time.Now().UnixMilli(), LastOffsetDelta: -1, ProducerID: pid, ProducerEpoch: epoch})
	b.Add(&record.Record{Value: []byte("in a transaction")})
	batch, err := b.AppendTo(nil)
	if err != nil {
		t.Fatal(err)
	}
	pr := kmsg.NewPtrProduceRequest()
	pr.SetVersion(12)
	pr.TransactionID, pr.Acks, pr.TimeoutMillis = kmsg.StringPtr(id), -1, 30000
	pt := kmsg.NewProduceRequestTopic()
	pt.Topic = "txloop"
	pp := kmsg.NewProduceRequestTopicPartition()
	pp.Records = batch
	pt.Partitions = append(pt.Partitions, pp)
	pr.Topics = append(pr.Topics, pt)
	prResp := kmsg.NewPtrProduceResponse()
	call(coordinator, pr, prResp)
	if code := prResp.Topics[0].Partitions[0].ErrorCode; code != 0 {
		t.Fatalf("the transaction's first write: %v", kerr.ErrorForCode(code))
	}

	et := kmsg.NewPtrEndTxnRequest()
	et.SetVersion(5)
	et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = id, pid, epoch, true
	etResp := kmsg.NewPtrEndTxnResponse()
	call(coordinator, et, etResp)
	if etResp.ErrorCode != 0 {
		t.Fatalf("commit: %v", kerr.ErrorForCode(etResp.ErrorCode))
	}

	cl, _ := c.client(int(coordinator-1), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{"txloop": {0: kgo.NewOffset().AtStart()}}))
	fs := cl.PollFetches(ctx)
	if err := fs.Err(); err != nil {
		t.Fatal(err)
	}
	if recs := fs.Records(); len(recs) != 1 || string(recs[0].Value) != "in a transaction" {
		t.Fatalf("read committed: %v", recs)
	}
}
