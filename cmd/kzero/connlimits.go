package main

import (
	"fmt"
	"math"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"kzero/net/server"
)

// connLimits reads Kafka's connection limits (ConnectionQuotas):
// max.connections, listener.name.<listener>.max.connections,
// max.connections.per.ip, max.connections.per.ip.overrides (host:count,
// comma-separated; host names are resolved now, as Kafka resolves them
// when the config is set) and max.connection.creation.rate. Kafka's
// defaults, Int.MaxValue, mean no limit.
func (c *brokerConfig) connLimits(client []listener) (server.ConnLimits, error) {
	limit := func(name string) int {
		v := c.long(name)
		if v <= 0 || v >= math.MaxInt32 {
			return 0
		}
		return int(v)
	}
	lim := server.ConnLimits{
		MaxConnections:      limit("max.connections"),
		MaxConnectionsPerIP: limit("max.connections.per.ip"),
	}
	// The inter-broker listener: inter.broker.listener.name, or the
	// first PLAINTEXT one (Kafka's security.inter.broker.protocol default).
	lim.InterBroker = c.interBrokerListener()
	for _, l := range client {
		if lim.InterBroker == "" && l.protocol == "PLAINTEXT" {
			lim.InterBroker = l.name
		}
	}
	if r := c.long("max.connection.creation.rate"); r > 0 && r < math.MaxInt32 {
		lim.CreationRate = float64(r)
	}
	for _, l := range client {
		key := "listener.name." + strings.ToLower(l.name) + ".max.connections"
		if !c.has(key) {
			continue
		}
		v, err := strconv.ParseInt(c.str(key), 10, 32)
		if err != nil || v < 0 {
			return lim, fmt.Errorf("%s: %q is not a count", key, c.str(key))
		}
		if v > 0 && v < math.MaxInt32 {
			if lim.PerListener == nil {
				lim.PerListener = map[string]int{}
			}
			lim.PerListener[l.name] = int(v)
		}
	}
	var err error
	if lim.PerIPOverrides, err = ipOverrides(c.str("max.connections.per.ip.overrides")); err != nil {
		return lim, err
	}
	// 0 is allowed with overrides: only their addresses may connect.
	if c.long("max.connections.per.ip") == 0 {
		if len(lim.PerIPOverrides) == 0 {
			return lim, fmt.Errorf("max.connections.per.ip may be 0 only with max.connections.per.ip.overrides")
		}
		lim.NoConnectionsPerIP = true
	}
	return lim, nil
}

// ipOverrides parses max.connections.per.ip.overrides, resolving host
// names; nil when empty.
func ipOverrides(v string) (map[netip.Addr]int, error) {
	var out map[netip.Addr]int
	for _, e := range splitList(v) {
		i := strings.LastIndexByte(e, ':') // an IPv6 address has colons too
		host, count, ok := e[:max(i, 0)], e[i+1:], i > 0
		n, err := strconv.Atoi(strings.TrimSpace(count))
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("max.connections.per.ip.overrides: %q is not host:count", e)
		}
		addrs, err := hostAddrs(strings.TrimSpace(host))
		if err != nil {
			return nil, fmt.Errorf("max.connections.per.ip.overrides: %w", err)
		}
		if out == nil {
			out = map[netip.Addr]int{}
		}
		for _, a := range addrs {
			out[a] = n
		}
	}
	return out, nil
}

// hostAddrs is an override's addresses: the IP it is, or what the host
// name resolves to.
func hostAddrs(host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a.Unmap()}, nil
	}
	ips, err := net.LookupIP(host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	var out []netip.Addr
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, a.Unmap())
		}
	}
	return out, nil
}
