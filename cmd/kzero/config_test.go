package main

import (
	"io"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"kzero/node"
	"kzero/node/nodetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func TestParseProperties(t *testing.T) {
	in := `# comment
! another comment
listeners = PLAINTEXT://127.0.0.1:9092
log.dirs:/var/lib/kzero
node.id 3
long.value=a,\
    b,\
    c
escaped\=key=tab\there
unicode=caf\u00e9
empty=
`
	got, order, err := parseProperties(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"listeners":   "PLAINTEXT://127.0.0.1:9092",
		"log.dirs":    "/var/lib/kzero",
		"node.id":     "3",
		"long.value":  "a,b,c",
		"escaped=key": "tab\there",
		"unicode":     "café",
		"empty":       "",
	}
	if len(got) != len(want) || len(order) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, _, err := parseProperties(strings.NewReader("bad=\\u12")); err == nil {
		t.Error("short unicode escape accepted")
	}
}

func FuzzParseProperties(f *testing.F) {
	f.Add([]byte("a=b\nc: d\\\n e\n# x\nf\\u0041=1"))
	f.Fuzz(func(t *testing.T, data []byte) {
		props, order, err := parseProperties(strings.NewReader(string(data)))
		if err == nil && len(props) != len(order) {
			t.Fatalf("%d props, %d in order", len(props), len(order))
		}
	})
}

func TestLoadConfig(t *testing.T) {
	c, err := loadConfig(nil, nil, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if ls, _ := c.clientListeners(); len(ls) != 1 || ls[0].addr != "127.0.0.1:9092" {
		t.Errorf("default listeners %v", ls)
	}
	if d := c.logDirs(); len(d) != 1 || d[0] != "./data" {
		t.Errorf("default log dirs %v", d)
	}
	if ms := c.ms("log.retention"); ms != 168*3600000 {
		t.Errorf("default retention %d", ms)
	}
	// The controller's elections: Kafka's defaults, then set.
	nc, err := c.nodeConfig(quiet)
	if err != nil {
		t.Fatal(err)
	}
	if !nc.AutoLeaderRebalance || nc.LeaderImbalanceCheckInterval != 300*time.Second || nc.UncleanLeaderElection {
		t.Errorf("defaults: rebalance %t every %v, unclean %t", nc.AutoLeaderRebalance, nc.LeaderImbalanceCheckInterval, nc.UncleanLeaderElection)
	}
	c, err = loadConfig(nil, map[string]string{"auto.leader.rebalance.enable": "false", "leader.imbalance.check.interval.seconds": "5",
		"unclean.leader.election.enable": "true"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if nc, _ = c.nodeConfig(quiet); nc.AutoLeaderRebalance || nc.LeaderImbalanceCheckInterval != 5*time.Second || !nc.UncleanLeaderElection {
		t.Errorf("set: rebalance %t every %v, unclean %t", nc.AutoLeaderRebalance, nc.LeaderImbalanceCheckInterval, nc.UncleanLeaderElection)
	}
	c, err = loadConfig(map[string]string{"log.retention.hours": "1", "log.retention.minutes": "5"}, map[string]string{"log.dirs": "/a, /b"}, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if ms := c.ms("log.retention"); ms != 5*60000 {
		t.Errorf("minutes win over hours: %d", ms)
	}
	if d := c.logDirs(); len(d) != 2 || d[1] != "/b" {
		t.Errorf("log dirs %v", d)
	}
	for _, bad := range []map[string]string{
		{"num.partitions": "abc"},
		{"num.partitions": "0"},
		{"auto.create.topics.enable": "maybe"},
		{"listeners": "SSL://127.0.0.1:9093"},
		{"listeners": "127.0.0.1:9092"},
		{"process.roles": "broker"},
		{"log.cleanup.policy": "shred"},
		{"log.message.timestamp.type": "Now"},
		{"leader.imbalance.check.interval.seconds": "0"},
		{"auto.leader.rebalance.enable": "sometimes"},
		{"share.coordinator.state.topic.min.isr": "0"},
		{"delete.topic.enable": "nope"},
	} {
		if _, err := loadConfig(nil, bad, quiet); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
	// A static quorum: this node among the voters, on its controller
	// listener.
	quorum := map[string]string{
		"node.id":                   "2",
		"listeners":                 "PLAINTEXT://127.0.0.1:9192,CONTROLLER://127.0.0.1:9193",
		"controller.listener.names": "CONTROLLER",
		"controller.quorum.voters":  "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293",
	}
	c, err = loadConfig(nil, quorum, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if ls, _ := c.clientListeners(); len(ls) != 1 || ls[0].addr != "127.0.0.1:9192" {
		t.Errorf("client listeners %v", ls)
	}
	if addr, _ := c.controllerListener(); addr != "127.0.0.1:9193" {
		t.Errorf("controller listener %s", addr)
	}
	if v, _ := c.voters(); len(v) != 3 || v[3] != "127.0.0.1:9293" {
		t.Errorf("voters %v", v)
	}
	with := func(k, v string) map[string]string {
		m := map[string]string{k: v}
		for k, v := range quorum {
			if _, ok := m[k]; !ok {
				m[k] = v
			}
		}
		return m
	}
	for _, bad := range []map[string]string{
		with("node.id", "4"), // not a voter
		with("controller.quorum.voters", "1@127.0.0.1:9093,1@127.0.0.1:9193"), // duplicate id
		with("controller.quorum.voters", "x@127.0.0.1:9093"),
		with("controller.listener.names", ""),
		with("listeners", "PLAINTEXT://127.0.0.1:9192"),                                             // no controller listener
		with("listeners", "PLAINTEXT://127.0.0.1:9192,CONTROLLER://127.0.0.1:9999"),                 // not its voter address
		with("listeners", "PLAINTEXT://127.0.0.1:9192,CONTROLLER://127.0.0.1:9193,X://127.0.0.1:1"), // no protocol for X
	} {
		if _, err := loadConfig(nil, bad, quiet); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
	// Unknown keys are warned about, not fatal.
	if _, err := loadConfig(nil, map[string]string{"no.such.key": "1"}, quiet); err != nil {
		t.Errorf("unknown key refused: %v", err)
	}
}

// TestNodetestConfigIsTheDefault keeps nodetest.Config, the broker of the
// tests of packages below cmd/kzero (net/api's behaviour tests), equal to
// what server.properties with only a test broker's keys (testOverrides)
// gives, so a test that moves between the two keeps its broker.
func TestNodetestConfigIsTheDefault(t *testing.T) {
	dir := t.TempDir()
	c, err := loadConfig(nil, testOverrides(dir), quiet)
	if err != nil {
		t.Fatal(err)
	}
	want, err := c.nodeConfig(quiet)
	if err != nil {
		t.Fatal(err)
	}
	got := nodetest.Config(dir)
	for _, cfg := range []*node.Config{&want, &got} {
		// Not comparable, or left out on purpose (nodetest.Config's doc).
		cfg.Logger, cfg.Logs.Logger, cfg.ValidateBrokerConfig, cfg.BrokerKeys, cfg.ConnLimits = nil, nil, nil, nil, nil
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("nodetest.Config differs from server.properties' defaults:\n got %+v\nwant %+v", got, want)
	}
}
