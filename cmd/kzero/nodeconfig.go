package main

import (
	"cmp"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/group"
	"kzero/coord/share"
	"kzero/coord/topicconfig"
	"kzero/coord/txn"
	"kzero/net/quota"
	"kzero/net/server"
	"kzero/node"
	"kzero/replica"
)

// nodeConfig is the node's configuration from server.properties.
func (c *brokerConfig) nodeConfig(logger *slog.Logger) (node.Config, error) {
	role, err := c.role()
	if err != nil {
		return node.Config{}, err
	}
	var listeners []node.Listener
	var limits server.ConnLimits
	var dynamicLimits func(map[string]string) (server.ConnLimits, error)
	if role != coord.ControllerOnly {
		client, err := c.clientListeners()
		if err != nil {
			return node.Config{}, err
		}
		if limits, err = c.connLimits(client); err != nil {
			return node.Config{}, err
		}
		dynamicLimits = func(dynamic map[string]string) (server.ConnLimits, error) {
			return c.with(dynamic).connLimits(client)
		}
		if listeners, err = c.security(client); err != nil {
			return node.Config{}, err
		}
	}
	bootstrap, err := c.bootstrapServers()
	if err != nil {
		return node.Config{}, err
	}
	authz, err := c.authorizer()
	if err != nil {
		return node.Config{}, err
	}
	voters, err := c.voters()
	if err != nil {
		return node.Config{}, fmt.Errorf("controller.quorum.voters: %w", err)
	}
	rackAware := false
	switch sel := c.str("replica.selector.class"); sel {
	case "":
	case rackAwareReplicaSelector:
		rackAware = true
	default:
		return node.Config{}, fmt.Errorf("replica.selector.class %q: kzero knows only %s", sel, rackAwareReplicaSelector)
	}
	ctrlAddr, err := c.controllerListener()
	if err != nil {
		return node.Config{}, err
	}
	interBroker, err := c.interBroker(listeners)
	if err != nil {
		return node.Config{}, err
	}
	ctrlTLS, ctrlClientTLS, err := c.controllerTLS()
	if err != nil {
		return node.Config{}, err
	}
	ctrlSASL, ctrlClientSASL, err := c.controllerSASL()
	if err != nil {
		return node.Config{}, err
	}
	return node.Config{
		NodeID:                       int32(c.int("node.id")),
		Role:                         role,
		Voters:                       voters,
		BootstrapServers:             bootstrap,
		BrokerSessionTimeout:         msDuration(c.long("broker.session.timeout.ms")),
		InitialRegistrationTimeout:   msDuration(c.long("initial.broker.registration.timeout.ms")),
		ControllerAddr:               ctrlAddr,
		Rack:                         c.str("broker.rack"),
		Listeners:                    listeners,
		InterBrokerListener:          c.interBrokerListener(),
		InterBroker:                  interBroker,
		ControllerTLS:                ctrlTLS,
		ControllerClientTLS:          ctrlClientTLS,
		ControllerSASL:               ctrlSASL,
		ControllerClientSASL:         ctrlClientSASL,
		Authorizer:                   authz,
		Quota:                        quota.Config{Samples: c.int("quota.window.num"), Window: time.Duration(c.int("quota.window.size.seconds")) * time.Second},
		SaslMaxReceiveBytes:          c.int("sasl.server.max.receive.size"),
		ReauthAfter:                  msDuration(c.long("connections.max.reauth.ms")),
		DelegationTokenSecret:        cmp.Or(c.str("delegation.token.secret.key"), c.str("delegation.token.master.key")),
		DelegationTokenMaxLifetime:   msDuration(c.long("delegation.token.max.lifetime.ms")),
		DelegationTokenExpiry:        msDuration(c.long("delegation.token.expiry.time.ms")),
		FailedAuthenticationDelay:    msDuration(c.long("connection.failed.authentication.delay.ms")),
		AdminAddr:                    c.str("admin.listener"),
		Logs:                         c.managerConfig(logger),
		RackAwareReads:               rackAware,
		FetchMaxBytes:                int32(c.int("fetch.max.bytes")),
		UncleanLeaderElection:        c.bool("unclean.leader.election.enable"),
		AutoLeaderRebalance:          c.bool("auto.leader.rebalance.enable"),
		LeaderImbalanceCheckInterval: time.Duration(c.long("leader.imbalance.check.interval.seconds")) * time.Second,
		Replication: replica.Config{
			LagTimeMax:     msDuration(c.long("replica.lag.time.max.ms")),
			FetchMaxBytes:  int32(c.int("replica.fetch.max.bytes")),
			FetchRespBytes: int32(c.int("replica.fetch.response.max.bytes")),
			FetchWaitMax:   msDuration(int64(c.int("replica.fetch.wait.max.ms"))),
			FetchMinBytes:  int32(c.int("replica.fetch.min.bytes")),
			FetchBackoff:   msDuration(int64(c.int("replica.fetch.backoff.ms"))),
			NumFetchers:    c.int("num.replica.fetchers"),
		},
		Server: server.Config{
			Limits:                limits,
			Loops:                 c.int("num.network.threads"),
			MaxRequestBytes:       c.int("socket.request.max.bytes"),
			IdleTimeout:           msDuration(c.long("connections.max.idle.ms")),
			QueuedMaxRequestBytes: queuedMaxBytes(c.long("queued.max.request.bytes")),
			ConnMaxQueuedRequests: c.int("queued.max.requests"),
			SocketSendBuffer:      max(c.int("socket.send.buffer.bytes"), 0),
			SocketRecvBuffer:      max(c.int("socket.receive.buffer.bytes"), 0),
		},
		Groups: c.groupConfig(),
		Shares: share.Config{
			Limits: share.Limits{
				LockDuration:  c.long("group.share.record.lock.duration.ms"),
				DeliveryLimit: c.int("group.share.delivery.count.limit"),
				MaxInFlight:   c.int("group.share.partition.max.record.locks"),
			},
			MaxSessions: c.int("group.share.max.share.sessions"),
		},
		ShareState: share.StateConfig{
			NumPartitions:     int32(c.int("share.coordinator.state.topic.num.partitions")),
			ReplicationFactor: int16(c.int("share.coordinator.state.topic.replication.factor")),
			MinISR:            c.int("share.coordinator.state.topic.min.isr"),
			SegmentBytes:      int64(c.int("share.coordinator.state.topic.segment.bytes")),
		},
		Txns:                     c.txnConfig(),
		AutoCreateTopics:         c.bool("auto.create.topics.enable"),
		TopicDeletionDisabled:    !c.bool("delete.topic.enable"),
		NumPartitions:            int32(c.int("num.partitions")),
		DefaultReplicationFactor: int16(c.int("default.replication.factor")),
		LegacyVersions:           c.bool("legacy.protocol.versions.enable"),
		StaticConfigs:            c.props,
		ValidateBrokerConfig:     validateDynamicBrokerConfig,
		ConnLimits:               dynamicLimits,
		BrokerKeys:               brokerKeys(),
		Logger:                   logger,
	}, nil
}

// validateDynamicBrokerConfig checks a broker config set at runtime
// (AlterConfigs on a BROKER resource) that is not a topic config synonym:
// it must be a dynamic key, with a valid value. Kafka refuses the others
// with this message (INVALID_REQUEST).
func validateDynamicBrokerConfig(name, value string) error {
	if l, ok := strings.CutPrefix(name, "listener.name."); ok && strings.HasSuffix(l, ".max.connections") {
		// A listener's own limit (connlimits.go), as Kafka's
		// DynamicListenerConfig takes it.
		if v, err := strconv.ParseInt(value, 10, 32); err != nil || v < 0 {
			return fmt.Errorf("Invalid value %s for configuration %s: not a count", value, name)
		}
		return nil
	}
	k, ok := keys[name]
	if !ok || !k.dynamic {
		return fmt.Errorf("Cannot update these configs dynamically: [%s]", name)
	}
	if err := k.check(value); err != nil {
		return err
	}
	if name == "max.connections.per.ip.overrides" {
		if _, err := ipOverrides(value); err != nil {
			return err
		}
	}
	return nil
}

// with is the configuration with dynamic values over the static ones.
func (c *brokerConfig) with(dynamic map[string]string) *brokerConfig {
	o := &brokerConfig{props: maps.Clone(c.props)}
	maps.Copy(o.props, dynamic)
	return o
}

// brokerKeys is the key table as DescribeConfigs lists it, with Kafka's
// defaults.
func brokerKeys() map[string]topicconfig.BrokerKey {
	types := map[kind]kmsg.ConfigType{
		kString: kmsg.ConfigTypeString, kInt: kmsg.ConfigTypeInt, kLong: kmsg.ConfigTypeLong,
		kBool: kmsg.ConfigTypeBoolean, kDouble: kmsg.ConfigTypeDouble, kList: kmsg.ConfigTypeList,
	}
	out := make(map[string]topicconfig.BrokerKey, len(keys))
	for name, k := range keys {
		out[name] = topicconfig.BrokerKey{Default: k.def, Type: types[k.kind], Dynamic: k.dynamic}
	}
	return out
}

// queuedMaxBytes maps queued.max.request.bytes to server.Config: 0 or -1,
// unbounded in Kafka, is negative there (where 0 means its default).
func queuedMaxBytes(v int64) int64 {
	if v <= 0 {
		return -1
	}
	return v
}

// rackAwareReplicaSelector is Kafka's replica.selector.class for fetching
// from the closest replica (KIP-392).
const rackAwareReplicaSelector = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// groupConfig is the group coordinator's configuration from the broker's.
func (c *brokerConfig) groupConfig() group.Config {
	return group.Config{
		NumPartitions:          int32(c.int("offsets.topic.num.partitions")),
		ReplicationFactor:      int16(c.int("offsets.topic.replication.factor")),
		InitialRebalanceDelay:  msDuration(c.long("group.initial.rebalance.delay.ms")),
		MinSessionTimeout:      msDuration(c.long("group.min.session.timeout.ms")),
		MaxSessionTimeout:      msDuration(c.long("group.max.session.timeout.ms")),
		MaxSize:                c.int("group.max.size"),
		OffsetsRetention:       time.Duration(c.long("offsets.retention.minutes")) * time.Minute,
		RetentionCheckInterval: msDuration(c.long("offsets.retention.check.interval.ms")),
		OffsetMetadataMaxBytes: c.int("offset.metadata.max.bytes"),

		ConsumerSessionTimeout:        msDuration(c.long("group.consumer.session.timeout.ms")),
		ConsumerMinSessionTimeout:     msDuration(c.long("group.consumer.min.session.timeout.ms")),
		ConsumerMaxSessionTimeout:     msDuration(c.long("group.consumer.max.session.timeout.ms")),
		ConsumerHeartbeatInterval:     msDuration(c.long("group.consumer.heartbeat.interval.ms")),
		ConsumerMinHeartbeatInterval:  msDuration(c.long("group.consumer.min.heartbeat.interval.ms")),
		ConsumerMaxHeartbeatInterval:  msDuration(c.long("group.consumer.max.heartbeat.interval.ms")),
		ConsumerMaxSize:               c.int("group.consumer.max.size"),
		ConsumerAssignors:             splitList(c.str("group.consumer.assignors")),
		ConsumerMigrationPolicy:       strings.ToLower(strings.TrimSpace(c.str("group.consumer.migration.policy"))),
		ConsumerAssignmentInterval:    msDuration(c.long("group.consumer.assignment.interval.ms")),
		ConsumerMinAssignmentInterval: msDuration(c.long("group.consumer.min.assignment.interval.ms")),
		ConsumerMaxAssignmentInterval: msDuration(c.long("group.consumer.max.assignment.interval.ms")),

		StreamsInitialRebalanceDelay: msDuration(c.long("group.streams.initial.rebalance.delay.ms")),
		StreamsSessionTimeout:        msDuration(c.long("group.streams.session.timeout.ms")),
		StreamsMinSessionTimeout:     msDuration(c.long("group.streams.min.session.timeout.ms")),
		StreamsMaxSessionTimeout:     msDuration(c.long("group.streams.max.session.timeout.ms")),
		StreamsHeartbeatInterval:     msDuration(c.long("group.streams.heartbeat.interval.ms")),
		StreamsMinHeartbeatInterval:  msDuration(c.long("group.streams.min.heartbeat.interval.ms")),
		StreamsMaxHeartbeatInterval:  msDuration(c.long("group.streams.max.heartbeat.interval.ms")),
		StreamsMaxSize:               c.int("group.streams.max.size"),
		StreamsNumStandbyReplicas:    c.int("group.streams.num.standby.replicas"),
		StreamsMaxStandbyReplicas:    new(c.int("group.streams.max.standby.replicas")),
		StreamsAssignmentInterval:    msDuration(c.long("group.streams.assignment.interval.ms")),
		StreamsMinAssignmentInterval: msDuration(c.long("group.streams.min.assignment.interval.ms")),
		StreamsMaxAssignmentInterval: msDuration(c.long("group.streams.max.assignment.interval.ms")),
		Share: group.ShareConfig{
			SessionTimeout:        msDuration(c.long("group.share.session.timeout.ms")),
			MinSessionTimeout:     msDuration(c.long("group.share.min.session.timeout.ms")),
			MaxSessionTimeout:     msDuration(c.long("group.share.max.session.timeout.ms")),
			HeartbeatInterval:     msDuration(c.long("group.share.heartbeat.interval.ms")),
			MinHeartbeatInterval:  msDuration(c.long("group.share.min.heartbeat.interval.ms")),
			MaxHeartbeatInterval:  msDuration(c.long("group.share.max.heartbeat.interval.ms")),
			MaxSize:               c.int("group.share.max.size"),
			AssignmentInterval:    msDuration(c.long("group.share.assignment.interval.ms")),
			MinAssignmentInterval: msDuration(c.long("group.share.min.assignment.interval.ms")),
			MaxAssignmentInterval: msDuration(c.long("group.share.max.assignment.interval.ms")),
			Bounds: group.ShareBounds{
				MinRecordLockDuration: msDuration(c.long("group.share.min.record.lock.duration.ms")),
				MaxRecordLockDuration: msDuration(c.long("group.share.max.record.lock.duration.ms")),
				MinDeliveryCountLimit: c.int("group.share.min.delivery.count.limit"),
				MaxDeliveryCountLimit: c.int("group.share.max.delivery.count.limit"),
			},
		},
	}
}

// splitList reads a comma-separated list config.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// txnConfig is the transaction coordinator's configuration from the
// broker's.
func (c *brokerConfig) txnConfig() txn.Config {
	return txn.Config{
		NumPartitions:       int32(c.int("transaction.state.log.num.partitions")),
		ReplicationFactor:   int16(c.int("transaction.state.log.replication.factor")),
		MinISR:              c.int("transaction.state.log.min.isr"),
		SegmentBytes:        int64(c.int("transaction.state.log.segment.bytes")),
		MaxTimeout:          msDuration(int64(c.int("transaction.max.timeout.ms"))),
		IDExpiration:        msDuration(int64(c.int("transactional.id.expiration.ms"))),
		AbortCheckInterval:  msDuration(int64(c.int("transaction.abort.timed.out.transaction.cleanup.interval.ms"))),
		ExpireCheckInterval: msDuration(int64(c.int("transaction.remove.expired.transaction.cleanup.interval.ms"))),
	}
}
