package main

import (
	_ "embed"
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"kzero/coord"
	"kzero/coord/topicconfig"
	"kzero/log"
)

//go:embed default.properties
var defaultProperties string

// kind is a config value's type, as Kafka's ConfigDef types them.
type kind int

const (
	kString kind = iota
	kInt
	kLong
	kBool
	kDouble
	kList
)

// key is a broker config key: Kafka's name, default and type. inert keys
// are Kafka keys kzero accepts without acting on them yet; setting one is
// logged. dynamic keys may be set at runtime (AlterConfigs on a BROKER
// resource), and the broker applies them (node.applyDynamicBrokerConfigs);
// the topic config synonyms (log.retention.ms, ...) are dynamic through
// coord/topicconfig instead.
type key struct {
	name    string
	def     string
	kind    kind
	min     float64
	inert   bool
	dynamic bool
}

var keys = func() map[string]key {
	m := map[string]key{}
	add := func(k key) { m[k.name] = k }
	i := func(name, def string, min float64) { add(key{name: name, def: def, kind: kInt, min: min}) }
	l := func(name, def string, min float64) { add(key{name: name, def: def, kind: kLong, min: min}) }
	s := func(name, def string) { add(key{name: name, def: def, kind: kString}) }
	b := func(name, def string) { add(key{name: name, def: def, kind: kBool}) }

	s("process.roles", "broker,controller")
	i("node.id", "1", 0)
	s("listeners", "PLAINTEXT://127.0.0.1:9092")
	s("advertised.listeners", "")
	s("log.dirs", "")
	s("log.dir", "./data")
	s("broker.rack", "")
	s("admin.listener", "127.0.0.1:9644") // kzero: /metrics and /debug/pprof

	i("num.partitions", "1", 1)
	i("default.replication.factor", "1", 1)
	b("auto.create.topics.enable", "true")
	b("delete.topic.enable", "true")
	b("legacy.protocol.versions.enable", "true") // kzero: serve the versions Kafka 4 removed (KIP-896)
	i("min.insync.replicas", "1", 1)
	i("num.network.threads", "0", 0) // kzero: event loops; 0 = one per core
	i("socket.request.max.bytes", "104857600", 1)
	i("socket.send.buffer.bytes", "-1", -1)
	i("socket.receive.buffer.bytes", "-1", -1)
	l("connections.max.idle.ms", "600000", -1)
	l("queued.max.request.bytes", "268435456", -1) // kzero's default; Kafka's, -1, is unbounded
	i("queued.max.requests", "500", 1)             // kzero: per connection (net/server inflight.go)

	l("log.segment.bytes", "1073741824", 14)
	l("log.roll.ms", "", 1)
	i("log.roll.hours", "168", 1)
	l("log.roll.jitter.ms", "", 0)
	i("log.roll.jitter.hours", "0", 0)
	l("log.retention.ms", "", -1)
	i("log.retention.minutes", "", -1)
	i("log.retention.hours", "168", -1)
	l("log.retention.bytes", "-1", -1)
	i("log.index.size.max.bytes", "10485760", 4)
	i("log.index.interval.bytes", "4096", 0)
	add(key{name: "log.cleanup.policy", def: "delete", kind: kList})
	l("log.flush.interval.messages", strconv.FormatInt(math.MaxInt64, 10), 1)
	l("log.flush.interval.ms", "", 0)
	l("log.flush.scheduler.interval.ms", strconv.FormatInt(math.MaxInt64, 10), 0)
	l("log.flush.offset.checkpoint.interval.ms", "60000", 0)
	l("log.retention.check.interval.ms", "300000", 1)
	l("log.segment.delete.delay.ms", "60000", 0)
	i("message.max.bytes", "1048588", 0)
	s("log.message.timestamp.type", "CreateTime")
	l("log.message.timestamp.before.max.ms", strconv.FormatInt(math.MaxInt64, 10), 0)
	l("log.message.timestamp.after.max.ms", "3600000", 0)
	add(key{name: "log.cleaner.min.cleanable.ratio", def: "0.5", kind: kDouble})
	l("log.cleaner.delete.retention.ms", "86400000", 0)
	l("log.cleaner.min.compaction.lag.ms", "0", 0)
	l("log.cleaner.max.compaction.lag.ms", strconv.FormatInt(math.MaxInt64, 10), 1)
	b("log.cleaner.enable", "true")
	add(key{name: "log.cleaner.backoff.ms", def: "15000", kind: kLong, dynamic: true})
	l("log.cleaner.dedupe.buffer.size", "134217728", 0)
	i("log.segment.open.files.max", "0", 0) // kzero: idle open files of sealed segments; 0 = a quarter of RLIMIT_NOFILE
	l("producer.id.expiration.ms", "86400000", 1)
	l("producer.id.expiration.check.interval.ms", "600000", 1)

	// The group coordinator (coord/group).
	i("offsets.topic.num.partitions", "50", 1)
	i("offsets.topic.replication.factor", "3", 1)
	i("group.initial.rebalance.delay.ms", "3000", 0)
	i("group.min.session.timeout.ms", "6000", 0)
	i("group.max.session.timeout.ms", "1800000", 0)
	i("group.max.size", strconv.Itoa(math.MaxInt32), 1)
	i("offsets.retention.minutes", "10080", 1)
	l("offsets.retention.check.interval.ms", "600000", 1)
	i("offset.metadata.max.bytes", "4096", 0)
	// KIP-848 consumer groups.
	i("group.consumer.session.timeout.ms", "45000", 1)
	i("group.consumer.min.session.timeout.ms", "45000", 1)
	i("group.consumer.max.session.timeout.ms", "60000", 1)
	i("group.consumer.heartbeat.interval.ms", "5000", 1)
	i("group.consumer.min.heartbeat.interval.ms", "5000", 1)
	i("group.consumer.max.heartbeat.interval.ms", "15000", 1)
	i("group.consumer.max.size", strconv.Itoa(math.MaxInt32), 1)
	add(key{name: "group.consumer.assignors", def: "uniform,range", kind: kList})
	s("group.consumer.migration.policy", "bidirectional")
	i("group.consumer.assignment.interval.ms", "1000", 0)
	i("group.consumer.min.assignment.interval.ms", "0", 0)
	i("group.consumer.max.assignment.interval.ms", "15000", 0)
	// KIP-1071 streams groups.
	i("group.streams.initial.rebalance.delay.ms", "3000", 0)
	i("group.streams.session.timeout.ms", "45000", 1)
	i("group.streams.min.session.timeout.ms", "45000", 1)
	i("group.streams.max.session.timeout.ms", "60000", 1)
	i("group.streams.heartbeat.interval.ms", "5000", 1)
	i("group.streams.min.heartbeat.interval.ms", "5000", 1)
	i("group.streams.max.heartbeat.interval.ms", "15000", 1)
	i("group.streams.max.size", strconv.Itoa(math.MaxInt32), 1)
	i("group.streams.num.standby.replicas", "0", 0)
	i("group.streams.max.standby.replicas", "2", 0)
	i("group.streams.assignment.interval.ms", "1000", 0)
	i("group.streams.min.assignment.interval.ms", "0", 0)
	i("group.streams.max.assignment.interval.ms", "15000", 0)
	// KIP-932 share groups.
	i("group.share.session.timeout.ms", "45000", 1)
	i("group.share.min.session.timeout.ms", "45000", 1)
	i("group.share.max.session.timeout.ms", "60000", 1)
	i("group.share.heartbeat.interval.ms", "5000", 1)
	i("group.share.min.heartbeat.interval.ms", "5000", 1)
	i("group.share.max.heartbeat.interval.ms", "15000", 1)
	i("group.share.max.size", "200", 1)
	i("group.share.assignment.interval.ms", "1000", 0)
	i("group.share.min.assignment.interval.ms", "0", 0)
	i("group.share.max.assignment.interval.ms", "15000", 0)
	l("group.share.record.lock.duration.ms", "30000", 1000)
	i("group.share.delivery.count.limit", "5", 2)
	i("group.share.min.record.lock.duration.ms", "15000", 1000)
	i("group.share.max.record.lock.duration.ms", "60000", 30000)
	i("group.share.min.delivery.count.limit", "2", 2)
	i("group.share.max.delivery.count.limit", "10", 5)
	i("group.share.partition.max.record.locks", "2000", 100)
	i("group.share.max.share.sessions", "2000", 1)
	// The share coordinator (coord/share): __share_group_state.
	i("share.coordinator.state.topic.num.partitions", "50", 1)
	i("share.coordinator.state.topic.replication.factor", "3", 1)
	i("share.coordinator.state.topic.min.isr", "2", 1)
	i("share.coordinator.state.topic.segment.bytes", "104857600", 1)

	// The transaction coordinator (coord/txn).
	i("transaction.state.log.num.partitions", "50", 1)
	i("transaction.state.log.replication.factor", "3", 1)
	i("transaction.state.log.min.isr", "2", 1)
	i("transaction.state.log.segment.bytes", "104857600", 1)
	i("transaction.max.timeout.ms", "900000", 1)
	i("transactional.id.expiration.ms", "604800000", 1)
	i("transaction.abort.timed.out.transaction.cleanup.interval.ms", "10000", 1)
	i("transaction.remove.expired.transaction.cleanup.interval.ms", "3600000", 1)

	i("fetch.max.bytes", "57671680", 1024)

	// Replication: followers fetch from leaders (one fetcher per leader).
	l("replica.lag.time.max.ms", "30000", 1)
	i("replica.fetch.max.bytes", "1048576", 1)
	i("replica.fetch.response.max.bytes", "10485760", 1)
	i("replica.fetch.wait.max.ms", "500", 1)
	i("replica.fetch.min.bytes", "1", 1)
	i("replica.fetch.backoff.ms", "1000", 1)
	i("num.replica.fetchers", "1", 1)
	s("replica.selector.class", "") // RackAwareReplicaSelector: consumers fetch in their rack (KIP-392)

	// The metadata quorum (static voters, KIP-595).
	s("controller.quorum.voters", "")
	s("controller.quorum.bootstrap.servers", "") // broker-only nodes: controllers to learn the voters from
	i("broker.session.timeout.ms", "9000", 1)
	l("initial.broker.registration.timeout.ms", "60000", 1)
	i("broker.heartbeat.interval.ms", "2000", 1) // kzero: liveness comes from the quorum's own traffic
	s("controller.listener.names", "")
	s("listener.security.protocol.map", "")

	// The controller's leader elections (coord/control).
	b("unclean.leader.election.enable", "false")
	b("auto.leader.rebalance.enable", "true")
	l("leader.imbalance.check.interval.seconds", "300", 1)
	// Read by Kafka's ZooKeeper controller only; Kafka 4.x's KRaft
	// controller, and kzero, rebalance every partition whose preferred
	// replica can lead.
	i("leader.imbalance.per.broker.percentage", "10", 0)
	// Listeners and SASL (listener.name.<listener>.* keys: security.go).
	s("inter.broker.listener.name", "")
	s("security.inter.broker.protocol", "") // Kafka's default PLAINTEXT: kzero's is the first PLAINTEXT listener
	s("sasl.mechanism.inter.broker.protocol", "GSSAPI")
	s("sasl.mechanism.controller.protocol", "GSSAPI") // kzero: PLAIN only (controllerSASL)
	add(key{name: "sasl.enabled.mechanisms", def: "GSSAPI", kind: kList})
	s("sasl.jaas.config", "")
	l("connections.max.reauth.ms", "0", 0)
	i("connection.failed.authentication.delay.ms", "100", 0)
	i("sasl.server.max.receive.size", "524288", 1)
	// OAUTHBEARER's signed-token validator (KIP-768; security.go reads
	// them per listener).
	s("sasl.oauthbearer.jwks.endpoint.url", "")
	l("sasl.oauthbearer.jwks.endpoint.refresh.ms", "3600000", 1)
	l("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", "100", 0)
	l("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "10000", 0)
	add(key{name: "sasl.oauthbearer.expected.audience", kind: kList})
	s("sasl.oauthbearer.expected.issuer", "")
	s("sasl.oauthbearer.scope.claim.name", "scope")
	s("sasl.oauthbearer.sub.claim.name", "sub")
	i("sasl.oauthbearer.clock.skew.seconds", "30", 0)
	// Delegation tokens (KIP-48): the secret turns them on.
	// delegation.token.master.key is its pre-3.0 name; the expiry check
	// runs on every tick of the active controller, so its interval is
	// accepted and not needed.
	s("delegation.token.secret.key", "")
	s("delegation.token.master.key", "")
	l("delegation.token.max.lifetime.ms", "604800000", 1)
	l("delegation.token.expiry.time.ms", "86400000", 1)
	l("delegation.token.expiry.check.interval.ms", "3600000", 1)
	s("authorizer.class.name", "")
	s("super.users", "")
	b("allow.everyone.if.no.acl.found", "false")
	// Connection limits (connlimits.go; Int.MaxValue: none), which Kafka
	// updates at runtime (DynamicConnectionQuota): node applies them.
	maxInt := strconv.Itoa(math.MaxInt32)
	add(key{name: "max.connections", def: maxInt, kind: kInt, dynamic: true})
	add(key{name: "max.connections.per.ip", def: maxInt, kind: kInt, dynamic: true})
	add(key{name: "max.connections.per.ip.overrides", kind: kString, dynamic: true})
	add(key{name: "max.connection.creation.rate", def: maxInt, kind: kInt, dynamic: true})
	// Client quotas (net/quota; the quotas are metadata records).
	i("quota.window.num", "11", 1)
	i("quota.window.size.seconds", "1", 1)

	// Kafka keys with no effect in kzero (no request handler pool, no
	// Kerberos), with Kafka's defaults. Kafka updates them at runtime
	// (DynamicThreadPool, DynamicListenerConfig), so AlterConfigs stores
	// them as Kafka does rather than fail a tool that sets one.
	for _, k := range []key{
		{name: "num.io.threads", def: "8", kind: kInt, min: 1},
		{name: "num.recovery.threads.per.data.dir", def: "2", kind: kInt, min: 1},
		{name: "sasl.kerberos.service.name", kind: kString},
		{name: "sasl.kerberos.kinit.cmd", def: "/usr/bin/kinit", kind: kString},
		{name: "sasl.kerberos.min.time.before.relogin", def: "60000", kind: kLong},
		{name: "sasl.kerberos.ticket.renew.window.factor", def: "0.8", kind: kDouble},
		{name: "sasl.kerberos.ticket.renew.jitter", def: "0.05", kind: kDouble},
		{name: "sasl.kerberos.principal.to.local.rules", def: "DEFAULT", kind: kList},
	} {
		k.inert, k.dynamic = true, true
		add(k)
	}
	return m
}()

// brokerConfig is the broker's configuration: the embedded defaults, then
// the --config file, then --override flags, each checked against keys.
type brokerConfig struct {
	props map[string]string
}

// loadConfig layers the sources and validates every value. Unknown keys
// are warned about; a bad value is an error.
func loadConfig(file map[string]string, overrides map[string]string, logger *slog.Logger) (*brokerConfig, error) {
	c := &brokerConfig{props: map[string]string{}}
	base, _, err := parseProperties(strings.NewReader(defaultProperties))
	if err != nil {
		return nil, fmt.Errorf("embedded default config: %w", err)
	}
	for _, src := range []map[string]string{base, file, overrides} {
		for k, v := range src {
			c.props[k] = v
		}
	}
	names := make([]string, 0, len(c.props))
	for k := range c.props {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		v := c.props[name]
		k, ok := keys[name]
		switch {
		case !ok && listenerKey(name):
			continue // checked with the listeners (security.go)
		case !ok:
			logger.Warn("unknown config key ignored", "key", name)
			continue
		case k.inert:
			logger.Info("config key accepted but has no effect in kzero", "key", name)
		}
		if err := k.check(v); err != nil {
			return nil, fmt.Errorf("invalid value %q for %s: %w", v, name, err)
		}
	}
	if err := c.checkCombined(); err != nil {
		return nil, err
	}
	return c, nil
}

func (k key) check(v string) error {
	var n float64
	switch k.kind {
	case kInt:
		x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
		if err != nil {
			return fmt.Errorf("not an int")
		}
		n = float64(x)
	case kLong:
		x, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return fmt.Errorf("not a long")
		}
		n = float64(x)
	case kDouble:
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return fmt.Errorf("not a number")
		}
		n = x
	case kBool:
		if _, err := strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return fmt.Errorf("not true or false")
		}
		return nil
	default:
		return nil
	}
	if n < k.min {
		return fmt.Errorf("below the minimum %v", k.min)
	}
	return nil
}

// has reports whether a key was set to a non-empty value.
func (c *brokerConfig) has(name string) bool { return strings.TrimSpace(c.props[name]) != "" }

func (c *brokerConfig) str(name string) string {
	if v, ok := c.props[name]; ok {
		return strings.TrimSpace(v)
	}
	return keys[name].def
}

func (c *brokerConfig) long(name string) int64 {
	v, _ := strconv.ParseInt(c.str(name), 10, 64)
	return v
}

func (c *brokerConfig) int(name string) int { return int(c.long(name)) }

func (c *brokerConfig) bool(name string) bool {
	v, _ := strconv.ParseBool(c.str(name))
	return v
}

// ms reads a duration key in Kafka's style: the .ms key wins over
// .minutes over .hours; with none set, the .hours default.
func (c *brokerConfig) ms(prefix string) int64 {
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{".ms", 1}, {".minutes", 60000}, {".hours", 3600000}} {
		if c.has(prefix + u.suffix) {
			v := c.long(prefix + u.suffix)
			if v < 0 {
				return -1
			}
			return v * u.scale
		}
	}
	h, _ := strconv.ParseInt(keys[prefix+".hours"].def, 10, 64)
	return h * 3600000
}

func (c *brokerConfig) logDirs() []string {
	v := c.str("log.dirs")
	if v == "" {
		v = c.str("log.dir")
	}
	var dirs []string
	for _, d := range strings.Split(v, ",") {
		if d = strings.TrimSpace(d); d != "" {
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// clientListeners are the listeners not named in
// controller.listener.names: the Kafka listeners clients use. At least one.
func (c *brokerConfig) clientListeners() ([]listener, error) {
	ls, err := c.listeners()
	if err != nil {
		return nil, err
	}
	ctrl := c.controllerListenerNames()
	var out []listener
	for _, l := range ls {
		if !slices.Contains(ctrl, l.name) {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no client listener besides the controller's")
	}
	return out, nil
}

// controllerListener is host:port of the listener named first in
// controller.listener.names, "" when there is none.
func (c *brokerConfig) controllerListener() (string, error) {
	ls, err := c.listeners()
	if err != nil {
		return "", err
	}
	names := c.controllerListenerNames()
	for _, l := range ls {
		if len(names) > 0 && l.name == names[0] {
			return l.addr, nil
		}
	}
	return "", nil
}

func (c *brokerConfig) controllerListenerNames() []string {
	return splitList(c.str("controller.listener.names"))
}

// listener is one entry of `listeners`: its name, address and security
// protocol.
type listener struct{ name, addr, protocol string }

// listeners parses `listeners`: NAME://host:port, comma-separated. Every
// name's security protocol comes from listener.security.protocol.map (a
// name that is a protocol maps to itself, CONTROLLER to PLAINTEXT): one of
// PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL.
func (c *brokerConfig) listeners() ([]listener, error) {
	protocols := map[string]string{"PLAINTEXT": "PLAINTEXT", "SSL": "SSL", "SASL_PLAINTEXT": "SASL_PLAINTEXT",
		"SASL_SSL": "SASL_SSL", "CONTROLLER": "PLAINTEXT"}
	for _, kv := range splitList(c.str("listener.security.protocol.map")) {
		name, proto, ok := strings.Cut(kv, ":")
		if !ok {
			return nil, fmt.Errorf("listener.security.protocol.map: %q is not NAME:PROTOCOL", kv)
		}
		protocols[strings.TrimSpace(name)] = strings.TrimSpace(proto)
	}
	var out []listener
	for _, v := range splitList(c.str("listeners")) {
		name, addr, ok := strings.Cut(v, "://")
		if !ok {
			return nil, fmt.Errorf("listener %q is not NAME://host:port", v)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("listener %q: %w", v, err)
		}
		p := protocols[name]
		switch p {
		case "PLAINTEXT", "SASL_PLAINTEXT", "SSL", "SASL_SSL":
		case "":
			return nil, fmt.Errorf("listener %s: no security protocol for it in listener.security.protocol.map", name)
		default:
			return nil, fmt.Errorf("listener %s: %s is not a security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)", name, p)
		}
		for _, l := range out {
			if l.name == name {
				return nil, fmt.Errorf("listener %s is named twice", name)
			}
		}
		out = append(out, listener{name, addr, p})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no listener")
	}
	return out, nil
}

// advertisedListeners parses advertised.listeners: NAME://host:port for
// some of the client listeners; a listener not named advertises its bound
// address.
func (c *brokerConfig) advertisedListeners(client []listener) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range splitList(c.str("advertised.listeners")) {
		name, addr, ok := strings.Cut(v, "://")
		if !ok {
			return nil, fmt.Errorf("listener %q is not NAME://host:port", v)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("listener %q: %w", v, err)
		}
		if !slices.ContainsFunc(client, func(l listener) bool { return l.name == name }) {
			return nil, fmt.Errorf("%s is not a client listener of listeners", name)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("listener %s is named twice", name)
		}
		out[name] = addr
	}
	return out, nil
}

// voters parses controller.quorum.voters: id@host:port, comma-separated
// (Kafka's static quorum). Empty: this node is the only voter.
func (c *brokerConfig) voters() (map[int32]string, error) {
	out := map[int32]string{}
	for _, v := range splitList(c.str("controller.quorum.voters")) {
		id, addr, ok := strings.Cut(v, "@")
		n, err := strconv.ParseInt(id, 10, 32)
		if !ok || err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not id@host:port", v)
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("%q: %w", v, err)
		}
		if _, dup := out[int32(n)]; dup {
			return nil, fmt.Errorf("voter %d is named twice", n)
		}
		out[int32(n)] = addr
	}
	return out, nil
}

func (c *brokerConfig) checkCombined() error {
	role, err := c.role()
	if err != nil {
		return err
	}
	if err := c.checkRole(role); err != nil {
		return err
	}
	if role != coord.ControllerOnly {
		client, err := c.clientListeners()
		if err != nil {
			return fmt.Errorf("listeners: %w", err)
		}
		if _, err := c.advertisedListeners(client); err != nil {
			return fmt.Errorf("advertised.listeners: %w", err)
		}
		if _, err := c.security(client); err != nil {
			return err
		}
	}
	if _, err := c.authorizer(); err != nil {
		return err
	}
	if len(c.logDirs()) == 0 {
		return fmt.Errorf("log.dirs is empty")
	}
	for _, p := range strings.Split(c.str("log.cleanup.policy"), ",") {
		if p = strings.TrimSpace(p); p != "delete" && p != "compact" {
			return fmt.Errorf("log.cleanup.policy: unknown policy %q", p)
		}
	}
	if t := c.str("log.message.timestamp.type"); t != "CreateTime" && t != "LogAppendTime" {
		return fmt.Errorf("log.message.timestamp.type: %q is not CreateTime or LogAppendTime", t)
	}
	switch p := strings.ToLower(strings.TrimSpace(c.str("group.consumer.migration.policy"))); p {
	case "bidirectional", "upgrade", "downgrade", "disabled":
	default:
		return fmt.Errorf("group.consumer.migration.policy: %q is not bidirectional, upgrade, downgrade or disabled", p)
	}
	return nil
}

// managerConfig is the log manager's configuration.
func (c *brokerConfig) managerConfig(logger *slog.Logger) log.ManagerConfig {
	m := log.DefaultManagerConfig(c.logDirs()...)
	// Logs opened at start take the broker's topic config defaults until
	// the metadata image gives each its own.
	m.Defaults = topicconfig.LogConfig(nil, topicconfig.BrokerConfigs{Static: c.props})
	m.RetentionCheckInterval = time.Duration(c.long("log.retention.check.interval.ms")) * time.Millisecond
	m.CheckpointInterval = time.Duration(c.long("log.flush.offset.checkpoint.interval.ms")) * time.Millisecond
	m.ProducerIDExpiration = time.Duration(c.long("producer.id.expiration.ms")) * time.Millisecond
	m.ProducerIDExpirationScan = time.Duration(c.long("producer.id.expiration.check.interval.ms")) * time.Millisecond
	m.CleanerEnable = c.bool("log.cleaner.enable")
	m.CleanerBackoff = time.Duration(c.long("log.cleaner.backoff.ms")) * time.Millisecond
	m.CleanerDedupeBufferSize = c.long("log.cleaner.dedupe.buffer.size")
	m.MaxSegmentFiles = c.int("log.segment.open.files.max")
	m.Logger = logger
	return m
}
