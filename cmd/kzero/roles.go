package main

import (
	"fmt"
	"net"
	"slices"

	"kzero/coord"
)

// process.roles, as Kafka's KRaft reads it: broker, controller, or both.
// The checks and their messages follow Kafka's KafkaConfig; where kzero
// differs it says so:
//   - a combined node with neither controller.quorum.voters nor
//     controller.quorum.bootstrap.servers is a single voter (kzero's
//     embedded default; Kafka requires one of them);
//   - a controller needs static controller.quorum.voters: kzero has no
//     dynamic quorum (KIP-853), so bootstrap servers alone are refused.

// role parses process.roles.
func (c *brokerConfig) role() (coord.Role, error) {
	var broker, controller bool
	raw := c.str("process.roles")
	for _, r := range splitList(raw) {
		var seen *bool
		switch r {
		case "broker":
			seen = &broker
		case "controller":
			seen = &controller
		default:
			return 0, fmt.Errorf("process.roles: Unknown process role '%s' (only 'broker' and 'controller' are allowed roles)", r)
		}
		if *seen {
			return 0, fmt.Errorf("process.roles: Duplicate role names found in `process.roles`: %s", raw)
		}
		*seen = true
	}
	switch {
	case broker && controller:
		return coord.Combined, nil
	case broker:
		return coord.BrokerOnly, nil
	case controller:
		return coord.ControllerOnly, nil
	}
	return 0, fmt.Errorf("process.roles is empty: kzero runs in KRaft mode only (broker, controller, or broker,controller)")
}

// bootstrapServers parses controller.quorum.bootstrap.servers: host:port,
// comma-separated.
func (c *brokerConfig) bootstrapServers() ([]string, error) {
	var out []string
	for _, v := range splitList(c.str("controller.quorum.bootstrap.servers")) {
		if _, _, err := net.SplitHostPort(v); err != nil {
			return nil, fmt.Errorf("controller.quorum.bootstrap.servers: %q: %w", v, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// checkRole checks the quorum settings against role: who votes, where
// the controller listener is, how a broker-only node finds the quorum.
func (c *brokerConfig) checkRole(role coord.Role) error {
	voters, err := c.voters()
	if err != nil {
		return fmt.Errorf("controller.quorum.voters: %w", err)
	}
	bootstrap, err := c.bootstrapServers()
	if err != nil {
		return err
	}
	ls, err := c.listeners()
	if err != nil {
		return fmt.Errorf("listeners: %w", err)
	}
	id := int32(c.int("node.id"))
	names := c.controllerListenerNames()
	isCtrl := func(l listener) bool { return slices.Contains(names, l.name) }
	votersText := fmt.Sprintf("controller.quorum.voters=%s", c.str("controller.quorum.voters"))

	if role == coord.BrokerOnly {
		if len(voters) == 0 && len(bootstrap) == 0 {
			return fmt.Errorf("If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.")
		}
		if _, ok := voters[id]; ok {
			return fmt.Errorf("If process.roles contains just the 'broker' role, the node id %d must not be included in the set of voters %s", id, votersText)
		}
		if len(names) == 0 {
			return fmt.Errorf("controller.listener.names must contain at least one value when running KRaft with just the broker role")
		}
		if slices.ContainsFunc(ls, isCtrl) {
			return fmt.Errorf("controller.listener.names must not contain a value appearing in the 'listeners' configuration when running KRaft with just the broker role")
		}
		return nil
	}

	// A controller (combined or alone).
	if len(voters) == 0 {
		if len(bootstrap) > 0 {
			return fmt.Errorf("controller.quorum.bootstrap.servers without controller.quorum.voters: a controller needs the static voters (kzero has no dynamic quorum, KIP-853); set controller.quorum.voters")
		}
		if role == coord.ControllerOnly {
			return fmt.Errorf("If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.")
		}
		return nil // kzero's single combined node
	}
	own, ok := voters[id]
	if !ok {
		return fmt.Errorf("If process.roles contains the 'controller' role, the node id %d must be included in the set of voters %s", id, votersText)
	}
	if role == coord.ControllerOnly && slices.ContainsFunc(ls, func(l listener) bool { return !isCtrl(l) }) {
		return fmt.Errorf("The listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller")
	}
	addr, err := c.controllerListener()
	if err != nil {
		return fmt.Errorf("listeners: %w", err)
	}
	if addr == "" {
		return fmt.Errorf("controller.listener.names must contain at least one value appearing in the 'listeners' configuration when running the KRaft controller role")
	}
	_, ownPort, _ := net.SplitHostPort(own)
	if _, port, _ := net.SplitHostPort(addr); port != ownPort {
		return fmt.Errorf("controller.quorum.voters gives node %d the address %s, but its controller listener is %s", id, own, addr)
	}
	return nil
}

// readyMessage is what the process prints once it serves: the client
// listener, or for a controller-only node its controller listener.
func readyMessage(addr, controllerAddr net.Addr) string {
	if addr == nil {
		return fmt.Sprintf("kzero controller ready on %s", controllerAddr)
	}
	return fmt.Sprintf("kzero ready on %s", addr)
}
