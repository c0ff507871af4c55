package api_test

// The behaviour tests of the handlers, API by API, against a whole broker
// in this process (nodetest) driven by real clients (kgo, kadm, sarama)
// and raw requests (kzerotest.Conn). They live in package api_test: they
// import node, which imports this package.

import (
	"testing"
	"time"

	"kzero/node"
	"kzero/node/nodetest"
)

// startBroker starts nodetest's broker with its data in dir, each of set
// changing its configuration first; it stops when the test ends.
func startBroker(t *testing.T, dir string, set ...func(*node.Config)) *node.Node {
	t.Helper()
	cfg := nodetest.Config(dir)
	for _, f := range set {
		f(&cfg)
	}
	return nodetest.Start(t, cfg)
}

// fastGroups has groups rebalance at once (no initial delay), accept short
// sessions, and spread over 5 __consumer_offsets partitions, so group
// tests run fast (cmd/kzero's startGroupBroker).
func fastGroups(c *node.Config) {
	c.Groups.InitialRebalanceDelay, c.StaticConfigs["group.initial.rebalance.delay.ms"] = 0, "0"
	c.Groups.MinSessionTimeout, c.StaticConfigs["group.min.session.timeout.ms"] = 500*time.Millisecond, "500"
	c.Groups.NumPartitions, c.StaticConfigs["offsets.topic.num.partitions"] = 5, "5"
}
