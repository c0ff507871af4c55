package nodetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/log"
	"kzero/node"
)

// stopped holds the nodes Stop stopped, so the end of the test does not
// stop them again.
var stopped sync.Map // *node.Node -> struct{}

// Start starts a node with cfg; it is stopped when the test ends unless
// Stop stopped it first.
func Start(t testing.TB, cfg node.Config) *node.Node {
	t.Helper()
	n, err := node.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		Stop(t, n)
		stopped.Delete(n)
	})
	return n
}

// Stop stops n within 10s (a second Stop of n does nothing); an error
// fails the test.
func Stop(t testing.TB, n *node.Node) {
	t.Helper()
	if _, done := stopped.LoadOrStore(n, struct{}{}); done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// Client is a kgo client of n with opts, closed when the test ends.
func Client(t testing.TB, n *node.Node, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(n.Addr().String())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// PartitionLog is n's local log of a partition.
func PartitionLog(t testing.TB, n *node.Node, topic string, partition int32) *log.Log {
	t.Helper()
	p, ok := n.Replicas().Partition(log.TopicPartition{Topic: topic, Partition: partition})
	if !ok {
		t.Fatalf("%s-%d is not local", topic, partition)
	}
	return p.Log()
}
