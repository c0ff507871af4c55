package main

import (
	"strings"
	"testing"

	"kzero/coord"
)

// process.roles: the split roles load into the node's config, and every
// config that cannot run is refused with one line saying why.
func TestProcessRoles(t *testing.T) {
	const voters = "1@127.0.0.1:9093,2@127.0.0.1:9193,3@127.0.0.1:9293"
	controller := map[string]string{
		"process.roles":             "controller",
		"node.id":                   "2",
		"listeners":                 "CONTROLLER://127.0.0.1:9193",
		"controller.listener.names": "CONTROLLER",
		"controller.quorum.voters":  voters,
	}
	broker := map[string]string{
		"process.roles":                       "broker",
		"node.id":                             "4",
		"listeners":                           "PLAINTEXT://127.0.0.1:9492",
		"controller.listener.names":           "CONTROLLER",
		"controller.quorum.bootstrap.servers": "127.0.0.1:9093,127.0.0.1:9193",
	}
	with := func(base map[string]string, kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	c, err := loadConfig(nil, controller, quiet)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := c.nodeConfig(quiet)
	if err != nil || nc.Role != coord.ControllerOnly || len(nc.Listeners) != 0 || nc.ControllerAddr != "127.0.0.1:9193" || len(nc.Voters) != 3 {
		t.Fatalf("controller-only: %v, role %d, listeners %v, controller %s", err, nc.Role, nc.Listeners, nc.ControllerAddr)
	}
	c, err = loadConfig(nil, broker, quiet)
	if err != nil {
		t.Fatal(err)
	}
	nc, err = c.nodeConfig(quiet)
	if err != nil || nc.Role != coord.BrokerOnly || len(nc.Listeners) != 1 || nc.ControllerAddr != "" ||
		strings.Join(nc.BootstrapServers, ",") != "127.0.0.1:9093,127.0.0.1:9193" {
		t.Fatalf("broker-only: %v, role %d, listeners %v, controller %q, bootstrap %v", err, nc.Role, nc.Listeners, nc.ControllerAddr, nc.BootstrapServers)
	}
	// A broker-only node may name the voters instead.
	if _, err := loadConfig(nil, with(broker, "controller.quorum.bootstrap.servers", "", "controller.quorum.voters", voters), quiet); err != nil {
		t.Fatalf("broker-only with voters: %v", err)
	}
	if c, err := loadConfig(nil, map[string]string{"process.roles": "controller,broker"}, quiet); err != nil {
		t.Fatalf("combined, either order: %v", err)
	} else if r, _ := c.role(); r != coord.Combined {
		t.Fatalf("role %d", r)
	}

	for _, tc := range []struct {
		cfg  map[string]string
		want string
	}{
		{with(broker, "process.roles", "broker,zookeeper"), "Unknown process role 'zookeeper'"},
		{with(broker, "process.roles", "broker,broker"), "Duplicate role names"},
		{with(broker, "process.roles", ""), "process.roles is empty"},
		{with(broker, "controller.quorum.bootstrap.servers", ""), "either controller.quorum.bootstrap.servers must contain"},
		{with(broker, "controller.quorum.bootstrap.servers", "nohost"), "controller.quorum.bootstrap.servers: \"nohost\""},
		{with(broker, "controller.quorum.voters", "4@127.0.0.1:9093"), "the node id 4 must not be included in the set of voters"},
		{with(broker, "controller.listener.names", ""), "controller.listener.names must contain at least one value when running KRaft with just the broker role"},
		{with(broker, "listeners", "PLAINTEXT://127.0.0.1:9492,CONTROLLER://127.0.0.1:9493"), "must not contain a value appearing in the 'listeners'"},
		{with(controller, "node.id", "5"), "the node id 5 must be included in the set of voters"},
		{with(controller, "listeners", "PLAINTEXT://127.0.0.1:9192,CONTROLLER://127.0.0.1:9193"), "must only contain KRaft controller listeners"},
		{with(controller, "controller.listener.names", "CTRL", "listener.security.protocol.map", "CTRL:PLAINTEXT"), "must only contain KRaft controller listeners"},
		{with(controller, "listeners", "CONTROLLER://127.0.0.1:9999"), "but its controller listener is 127.0.0.1:9999"},
		{with(controller, "controller.quorum.voters", "", "controller.quorum.bootstrap.servers", "127.0.0.1:9193"), "a controller needs the static voters"},
		{with(controller, "controller.quorum.voters", ""), "either controller.quorum.bootstrap.servers must contain"},
		{map[string]string{"controller.quorum.bootstrap.servers": "127.0.0.1:9093"}, "a controller needs the static voters"},
	} {
		_, err := loadConfig(nil, tc.cfg, quiet)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: %v, want one line with %q", tc.cfg, err, tc.want)
		}
	}
}
