package node

import (
	"crypto/tls"
	"log/slog"
	"time"

	"kzero/coord"
	"kzero/coord/group"
	"kzero/coord/raftnet"
	"kzero/coord/share"
	"kzero/coord/topicconfig"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/api"
	"kzero/net/quota"
	"kzero/net/sasl"
	"kzero/net/server"
	"kzero/net/wire"
	"kzero/replica"
)

// Config is one node's configuration as typed values; cmd/kzero builds it
// from server.properties. Zero values take the defaults of the parts they
// configure.
type Config struct {
	NodeID int32  // node.id
	Rack   string // broker.rack

	ListenAddr     string // the Kafka listener's host:port (port 0: any), when Listeners is empty
	AdvertisedAddr string // host:port told to clients; empty: the bound address
	// Listeners are the named client listeners (listeners,
	// listener.security.protocol.map, advertised.listeners); empty: one
	// PLAINTEXT listener on ListenAddr, advertised as AdvertisedAddr. All
	// are registered in the metadata log; clients are told the addresses
	// of the listener they connected through.
	Listeners []Listener
	// InterBrokerListener is inter.broker.listener.name: the listener
	// other brokers reach this one through; InterBroker is how this
	// node's clients of the others (replica fetchers, peer requests)
	// connect to it: its TLS (SSL, SASL_SSL: the listener's truststore
	// and keystore) and SASL (sasl.mechanism.inter.broker.protocol); nil:
	// PLAINTEXT.
	InterBrokerListener string
	InterBroker         *wire.Dialer
	// ReauthAfter is connections.max.reauth.ms (0: authentications never
	// expire); FailedAuthenticationDelay is
	// connection.failed.authentication.delay.ms.
	ReauthAfter               time.Duration
	FailedAuthenticationDelay time.Duration
	// DelegationTokenSecret is delegation.token.secret.key (empty: no
	// delegation tokens); DelegationTokenMaxLifetime and
	// DelegationTokenExpiry are delegation.token.max.lifetime.ms and
	// delegation.token.expiry.time.ms (zero: Kafka's defaults).
	DelegationTokenSecret      string
	DelegationTokenMaxLifetime time.Duration
	DelegationTokenExpiry      time.Duration
	// SaslMaxReceiveBytes is sasl.server.max.receive.size: the largest
	// frame a SASL listener reads before the connection is authenticated
	// (default 524288, Kafka's).
	SaslMaxReceiveBytes int
	// Authorizer turns ACL authorization on (authorizer.class.name); nil:
	// none.
	Authorizer *api.AuthorizerConfig
	// Quota is the client quota window (quota.window.num,
	// quota.window.size.seconds); zero: Kafka's 11 samples of 1 s.
	Quota     quota.Config
	AdminAddr string // /metrics and /debug/pprof; empty: none

	// Role is process.roles: coord.Combined (broker,controller, the
	// default), coord.BrokerOnly (broker: a learner of the metadata
	// quorum) or coord.ControllerOnly (controller: a voter that runs no
	// broker: no Kafka listener, no replicas, no coordinators).
	Role coord.Role
	// Voters are the metadata quorum's controllers, node id -> their
	// controller listener (controller.quorum.voters), this node among
	// them unless it is broker-only. Empty or only this node: a single
	// voter. ControllerAddr is this node's controller listener (none on a
	// broker-only node): with it, a transport listens there, for the
	// other voters and for broker-only nodes.
	Voters         map[int32]string
	ControllerAddr string
	// ControllerTLS is the controller listener's TLS when its protocol is
	// SSL (served to the other voters and to learners);
	// ControllerClientTLS is what this node dials controllers with. nil:
	// plain TCP.
	ControllerTLS       *server.TLS
	ControllerClientTLS *tls.Config
	// ControllerSASL, when set, makes the controller listener
	// SASL_PLAINTEXT or SASL_SSL: mechanism -> a new server exchange
	// (raftnet.Config.SASL). ControllerClientSASL is the mechanism this
	// node authenticates with to the controllers
	// (sasl.mechanism.controller.protocol); nil: none.
	ControllerSASL       map[string]func() sasl.Exchange
	ControllerClientSASL raftnet.ClientMechanism
	// BootstrapServers are controller.quorum.bootstrap.servers: the
	// host:port of controllers a broker-only node dials first (it learns
	// the voters from them); empty: the addresses of Voters.
	BootstrapServers []string
	// MetadataSnapshotEvery and MetadataSnapshotKeep tune the metadata
	// log's snapshots (coord.Config); zero: the defaults.
	MetadataSnapshotEvery uint64
	MetadataSnapshotKeep  int64
	// InitialRegistrationTimeout is initial.broker.registration.timeout.ms:
	// how long Start waits for the metadata quorum to take this node's
	// registration before it fails (default 60s, as Kafka's).
	InitialRegistrationTimeout time.Duration
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
	Shares share.Config      // share partitions and share sessions (KIP-932)
	// ShareState is the share coordinator (__share_group_state); Leader
	// and Logger are the node's.
	ShareState share.StateConfig
	Txns       txn.Config // the transaction coordinator; producer ids, markers and Logger are the node's
	// Replication is the replica.* settings; the hooks and Logger are the node's.
	Replication replica.Config

	AutoCreateTopics         bool  // auto.create.topics.enable
	TopicDeletionDisabled    bool  // delete.topic.enable=false
	NumPartitions            int32 // num.partitions
	DefaultReplicationFactor int16 // default.replication.factor
	LegacyVersions           bool  // legacy.protocol.versions.enable: serve versions Kafka 4 removed
	RackAwareReads           bool  // replica.selector.class=RackAwareReplicaSelector (KIP-392)
	FetchMaxBytes            int32 // fetch.max.bytes: the most a consumer's fetch answers

	// StaticConfigs are server.properties as given: topic configs fall back
	// to them (log.retention.hours for retention.ms, ...).
	StaticConfigs map[string]string
	// ValidateBrokerConfig checks a dynamic broker config that is not a
	// topic config synonym (AlterConfigs on a BROKER resource).
	ValidateBrokerConfig func(key, value string) error
	// ConnLimits computes the connection limits with the dynamic broker
	// configs (cluster-wide defaults, then this broker's) over the static
	// ones; nil on a controller-only node.
	ConnLimits func(dynamic map[string]string) (server.ConnLimits, error)
	// BrokerKeys are the broker configs known besides the topic config
	// synonyms, for DescribeConfigs (cmd/kzero's key table).
	BrokerKeys map[string]topicconfig.BrokerKey

	Logger *slog.Logger
}

// Listener is one client listener: its name, security protocol and SASL
// settings (api.Listener), where it binds and what it advertises.
type Listener struct {
	api.Listener
	Addr       string // host:port to bind (port 0: any)
	Advertised string // host:port told to clients; empty: the bound address
	// TLS is an SSL or SASL_SSL listener's TLS (nil: none); its Reload
	// serves new certificates to new connections.
	TLS *server.TLS
	// JWKS, when set, is where OAUTHBEARER's signed tokens' keys come
	// from (Kafka's OAuthBearerValidatorCallbackHandler): Start opens the
	// key set (a set that cannot be read stops the start, as in Kafka)
	// and hands it to the validator as OAuth.Keys; Stop closes it.
	JWKS *sasl.JWKSConfig
}

func (c *Config) setDefaults() {
	if c.SaslMaxReceiveBytes <= 0 {
		c.SaslMaxReceiveBytes = 524288
	}
	if len(c.Listeners) == 0 {
		c.Listeners = []Listener{{Listener: api.Listener{Name: "PLAINTEXT"}, Addr: c.ListenAddr, Advertised: c.AdvertisedAddr}}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.ControlledShutdownTimeout <= 0 {
		c.ControlledShutdownTimeout = 30 * time.Second
	}
	if c.InitialRegistrationTimeout <= 0 {
		c.InitialRegistrationTimeout = 60 * time.Second
	}
	if c.NumPartitions <= 0 {
		c.NumPartitions = 1
	}
	if c.DefaultReplicationFactor <= 0 {
		c.DefaultReplicationFactor = 1
	}
}
