package main

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"

	"kzero/net/wire"
	"kzero/node"
)

// secureClusterProps configure node id of a three-node cluster whose
// only client listener, SASL_SSL with PLAIN, is also the inter-broker
// listener (the brokers log in as "broker" over TLS), and whose
// controller listener is SSL.
func secureClusterProps(c *testCerts, id int, dir string, ports []int) map[string]string {
	return map[string]string{
		"node.id":                              strconv.Itoa(id),
		"log.dirs":                             dir,
		"admin.listener":                       "",
		"listeners":                            fmt.Sprintf("SASL_SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:%d", ports[id-1]),
		"listener.security.protocol.map":       "SASL_SSL:SASL_SSL,CONTROLLER:SSL",
		"controller.listener.names":            "CONTROLLER",
		"controller.quorum.voters":             loopbackVoters(ports),
		"inter.broker.listener.name":           "SASL_SSL",
		"sasl.enabled.mechanisms":              "PLAIN",
		"sasl.mechanism.inter.broker.protocol": "PLAIN",
		"listener.name.sasl_ssl.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`username="broker" password="broker-pw" user_broker="broker-pw" user_alice="alice-pw";`,
		"ssl.keystore.location":                     c.brokerK,
		"ssl.truststore.location":                   c.caFile,
		"connection.failed.authentication.delay.ms": "0",
	}
}

// loopbackVoters is controller.quorum.voters for nodes 1..n whose
// controller listeners are on ports.
func loopbackVoters(ports []int) string {
	var voters []string
	for i, p := range ports {
		voters = append(voters, fmt.Sprintf("%d@127.0.0.1:%d", i+1, p))
	}
	return strings.Join(voters, ",")
}

// startPropsCluster starts n in-process nodes configured from
// props(id, dir, controller ports), once check has seen each node's
// configuration, and stops them when the test ends.
func startPropsCluster(t *testing.T, n int, props func(id int, dir string, ports []int) map[string]string, check func(id int, ncfg node.Config)) []*node.Node {
	t.Helper()
	ports, err := freeLoopbackPorts(n)
	if err != nil {
		t.Skip(err)
	}
	logger := slog.New(slog.DiscardHandler)
	nodes := make([]*node.Node, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		cfg, err := loadConfig(nil, props(i+1, t.TempDir(), ports), logger)
		if err != nil {
			t.Fatal(err)
		}
		ncfg, err := cfg.nodeConfig(logger)
		if err != nil {
			t.Fatal(err)
		}
		check(i+1, ncfg)
		wg.Go(func() { nodes[i], errs[i] = node.Start(ncfg) })
	}
	wg.Wait()
	for i, n := range nodes {
		if n != nil {
			t.Cleanup(func() { stopBroker(t, n) })
		}
		if errs[i] != nil {
			t.Fatalf("node %d: %v", i+1, errs[i])
		}
	}
	return nodes
}

// TestSecureInterBrokerCluster: three in-process nodes configured from
// properties: clients, replica fetchers and peer requests on SASL_SSL
// (PLAIN), raft on an SSL controller listener. A topic with
// min.insync.replicas=3 takes acks=all produces, so every follower
// fetched over TLS with SASL.
func TestSecureInterBrokerCluster(t *testing.T) {
	certs := newTestCerts(t)
	nodes := startPropsCluster(t, 3, func(id int, dir string, ports []int) map[string]string {
		return secureClusterProps(certs, id, dir, ports)
	}, func(id int, ncfg node.Config) {
		if ncfg.InterBroker == nil || ncfg.InterBroker.TLS == nil || ncfg.InterBroker.SASL == nil || ncfg.InterBroker.SASL.Name() != "PLAIN" ||
			ncfg.ControllerTLS == nil || ncfg.ControllerClientTLS == nil {
			t.Fatalf("node %d: inter-broker %+v, controller TLS %v/%v", id, ncfg.InterBroker, ncfg.ControllerTLS, ncfg.ControllerClientTLS)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(nodes[0].ListenerAddr("SASL_SSL").String()), kgo.DialTLSConfig(certs.client("")),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if res, err := adm.CreateTopic(ctx, 2, 3, map[string]*string{"min.insync.replicas": new("3")}, "secure"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %+v", err, res)
	}
	for i := range 20 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "secure", Partition: int32(i % 2), Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce %d (acks=all, min.insync.replicas=3): %v", i, err)
		}
	}
	md, err := adm.Metadata(ctx, "secure")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range md.Topics["secure"].Partitions {
		if isr := slices.Sorted(slices.Values(p.ISR)); !slices.Equal(isr, []int32{1, 2, 3}) {
			t.Errorf("partition %d ISR %v", p.Partition, p.ISR)
		}
	}
}

// TestInterBrokerClientReauthenticates (KIP-368): kzero's inter-broker
// client, logged in with PLAIN on a listener with
// connections.max.reauth.ms, logs in again on the same connection before
// its session ends, so the broker keeps serving it; a client that did
// not would be closed at its first request after the session's end.
func TestInterBrokerClientReauthenticates(t *testing.T) {
	props := append(saslProps(),
		"sasl.enabled.mechanisms", "PLAIN",
		"listener.name.sasl_plaintext.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="alice-pw" user_alice="alice-pw";`,
		"sasl.mechanism.inter.broker.protocol", "PLAIN",
		"connections.max.reauth.ms", "300")
	b := startTestBroker(t, t.TempDir(), props...)
	defer stopBroker(t, b)
	d := &wire.Dialer{SASL: franzMechanism{plain.Auth{User: "alice", Pass: "alice-pw"}.AsMechanism()}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := d.Dial(ctx, saslAddr(b), "reauth-test", 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	for i := 0; time.Since(start) < 4*300*time.Millisecond; i++ {
		req := kmsg.NewPtrMetadataRequest()
		req.Version = 12
		if err := c.Do(req, kmsg.NewPtrMetadataResponse(), time.Now().Add(10*time.Second)); err != nil {
			t.Fatalf("request %d, %s after the login: %v", i, time.Since(start), err)
		}
		// The session's end is a time: wait past it between requests.
		time.Sleep(100 * time.Millisecond) // pacing: the requests span the session's end
	}
}

// TestInterBrokerConfig: security.inter.broker.protocol names the
// inter-broker listener as Kafka's older key did; an SSL one gets a TLS
// client trusting the listener's truststore, presenting its keystore;
// a PLAINTEXT one none.
func TestInterBrokerConfig(t *testing.T) {
	certs := newTestCerts(t)
	logger := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		over    map[string]string
		name    string
		withTLS bool
	}{
		{map[string]string{"security.inter.broker.protocol": "SSL"}, "SSL", true},
		{map[string]string{"inter.broker.listener.name": "SSL", "ssl.endpoint.identification.algorithm": ""}, "SSL", true},
		{map[string]string{}, "", false},
	} {
		over := map[string]string{"log.dirs": t.TempDir(), "listeners": "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
			"ssl.keystore.location": certs.brokerK, "ssl.truststore.location": certs.caFile}
		for k, v := range tc.over {
			over[k] = v
		}
		cfg, err := loadConfig(nil, over, logger)
		if err != nil {
			t.Fatalf("%v: %v", tc.over, err)
		}
		ncfg, err := cfg.nodeConfig(logger)
		if err != nil {
			t.Fatalf("%v: %v", tc.over, err)
		}
		if ncfg.InterBrokerListener != tc.name || (ncfg.InterBroker != nil) != tc.withTLS {
			t.Errorf("%v: listener %q, dialer %+v", tc.over, ncfg.InterBrokerListener, ncfg.InterBroker)
			continue
		}
		if tc.withTLS && (ncfg.InterBroker.TLS.RootCAs == nil || len(ncfg.InterBroker.TLS.Certificates) != 1) {
			t.Errorf("%v: client TLS without the truststore or the keystore", tc.over)
		}
	}
}
