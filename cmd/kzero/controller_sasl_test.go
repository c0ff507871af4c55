package main

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/node"
)

// saslControllerProps configure node id of a three-node cluster whose
// controller listener is SASL_PLAINTEXT with PLAIN (the nodes log in as
// "controller"), its client listener PLAINTEXT.
func saslControllerProps(id int, dir string, ports []int) map[string]string {
	return map[string]string{
		"node.id":                            strconv.Itoa(id),
		"log.dirs":                           dir,
		"admin.listener":                     "",
		"listeners":                          fmt.Sprintf("PLAINTEXT://127.0.0.1:0,CONTROLLER://127.0.0.1:%d", ports[id-1]),
		"listener.security.protocol.map":     "PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT",
		"controller.listener.names":          "CONTROLLER",
		"controller.quorum.voters":           loopbackVoters(ports),
		"sasl.mechanism.controller.protocol": "PLAIN",
		"listener.name.controller.sasl.enabled.mechanisms": "PLAIN",
		"listener.name.controller.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required ` +
			`username="controller" password="controller-pw" user_controller="controller-pw";`,
	}
}

// TestSaslControllerCluster: three in-process nodes configured from
// properties whose raft transport authenticates with SASL/PLAIN on a
// SASL_PLAINTEXT controller listener: the quorum forms, and a topic
// replicated on all three is created and takes acks=all produces.
func TestSaslControllerCluster(t *testing.T) {
	nodes := startPropsCluster(t, 3, saslControllerProps, func(id int, ncfg node.Config) {
		if ncfg.ControllerSASL["PLAIN"] == nil || ncfg.ControllerClientSASL == nil || ncfg.ControllerClientSASL.Name() != "PLAIN" || ncfg.ControllerTLS != nil {
			t.Fatalf("node %d: controller SASL %v/%v, TLS %v", id, ncfg.ControllerSASL, ncfg.ControllerClientSASL, ncfg.ControllerTLS)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(nodes[0].ListenerAddr("PLAINTEXT").String()), kgo.RequiredAcks(kgo.AllISRAcks()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if res, err := adm.CreateTopic(ctx, 1, 3, map[string]*string{"min.insync.replicas": new("3")}, "sasl-raft"); err != nil || res.Err != nil {
		t.Fatalf("create: %v %+v", err, res)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "sasl-raft", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce (acks=all, min.insync.replicas=3): %v", err)
	}
}

// TestControllerSaslConfig: the controller listener's SASL settings
// kzero refuses, each with a message that says why.
func TestControllerSaslConfig(t *testing.T) {
	ports := []int{19093, 19193, 19293}
	for _, tc := range []struct {
		over map[string]string
		want string
	}{
		{map[string]string{"sasl.mechanism.controller.protocol": "GSSAPI"}, "sasl.mechanism.controller.protocol: GSSAPI"},
		{map[string]string{"sasl.mechanism.controller.protocol": "SCRAM-SHA-256"}, "SCRAM credentials live in the metadata log"},
		{map[string]string{"listener.name.controller.sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-512"}, "sasl.enabled.mechanisms: SCRAM-SHA-512"},
		{map[string]string{"sasl.mechanism.controller.protocol": "OAUTHBEARER"}, "PLAIN only"},
		{map[string]string{"listener.name.controller.plain.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required user_controller="pw";`},
			"names no username and password"},
		{map[string]string{"listener.name.controller.sasl.enabled.mechanisms": "GSSAPI"}, "GSSAPI is not served by kzero"},
	} {
		props := saslControllerProps(2, t.TempDir(), ports)
		for k, v := range tc.over {
			props[k] = v
		}
		_, err := loadConfig(nil, props, slog.New(slog.DiscardHandler))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.over, err, tc.want)
		}
	}
	// A broker-only node dials the controllers with the same login but
	// has no listener to enable mechanisms on.
	props := saslControllerProps(1, t.TempDir(), ports)
	props["node.id"], props["process.roles"] = "4", "broker"
	props["listeners"] = "PLAINTEXT://127.0.0.1:0"
	cfg, err := loadConfig(nil, props, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv, client, err := cfg.controllerSASL()
	if err != nil || srv != nil || client == nil || client.Name() != "PLAIN" {
		t.Fatalf("broker-only: %v %v %v", srv, client, err)
	}
}
