package node

import (
	"log/slog"
	"time"

	"kzero/coord/group"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/server"
	"kzero/replica"
)

// Config is one node's configuration as typed values; cmd/kzero builds it
// from server.properties. Zero values take the defaults of the parts they
// configure.
type Config struct {
	NodeID int32  // node.id
	Rack   string // broker.rack

	ListenAddr     string // the Kafka listener's host:port (port 0: any)
	AdvertisedAddr string // host:port told to clients; empty: the bound address
	AdminAddr      string // /metrics and /debug/pprof; empty: none

	// Voters are the metadata quorum's controllers, node id -> their
	// controller listener (controller.quorum.voters), this node among
	// them. Empty or only this node: a single voter, no controller
	// listener. ControllerAddr is this node's controller listener.
	Voters         map[int32]string
	ControllerAddr string
	// MetadataSnapshotEvery and MetadataSnapshotKeep tune the metadata
	// log's snapshots (coord.Config); zero: the defaults.
	MetadataSnapshotEvery uint64
	MetadataSnapshotKeep  int64
	// BrokerSessionTimeout is broker.session.timeout.ms (default 9s): the
	// quorum leader fences a node it has not heard from for longer.
	BrokerSessionTimeout time.Duration
	// UncleanLeaderElection is unclean.leader.election.enable, the default
	// for topics without their own value.
	UncleanLeaderElection bool
	// AutoLeaderRebalance is auto.leader.rebalance.enable (cmd/kzero
	// defaults it to true, as Kafka does): every
	// LeaderImbalanceCheckInterval (leader.imbalance.check.interval.seconds,
	// default 300s) the quorum leader moves leaderships back to preferred
	// replicas.
	AutoLeaderRebalance          bool
	LeaderImbalanceCheckInterval time.Duration
	// ControlledShutdownTimeout bounds how long Stop waits for this node's
	// leaderships to move (default 30s, Kafka's controlled shutdown).
	ControlledShutdownTimeout time.Duration

	Logs   log.ManagerConfig // log.dirs and the log.* settings
	Server server.Config     // the listener's settings; Addr, Inline and Logger are the node's
	Groups group.Config      // the group coordinator; Logger is the node's
	Txns   txn.Config        // the transaction coordinator; producer ids, markers and Logger are the node's
	// Replication is the replica.* settings; the hooks and Logger are the node's.
	Replication replica.Config

	AutoCreateTopics         bool  // auto.create.topics.enable
	NumPartitions            int32 // num.partitions
	DefaultReplicationFactor int16 // default.replication.factor
	LegacyVersions           bool  // legacy.protocol.versions.enable: serve versions Kafka 4 removed

	// StaticConfigs are server.properties as given: topic configs fall back
	// to them (log.retention.hours for retention.ms, ...).
	StaticConfigs map[string]string
	// ValidateBrokerConfig checks a dynamic broker config that is not a
	// topic config synonym (AlterConfigs on a BROKER resource).
	ValidateBrokerConfig func(key, value string) error

	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ControlledShutdownTimeout <= 0 {
		c.ControlledShutdownTimeout = 30 * time.Second
	}
	if c.NumPartitions <= 0 {
		c.NumPartitions = 1
	}
	if c.DefaultReplicationFactor <= 0 {
		c.DefaultReplicationFactor = 1
	}
}
