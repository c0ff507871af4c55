package nodetest

import (
	"log/slog"
	"math"
	"os"
	"strings"
	"time"

	"kzero/coord/group"
	"kzero/coord/share"
	"kzero/coord/topicconfig"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/api"
	"kzero/net/quota"
	"kzero/net/server"
	"kzero/node"
	"kzero/replica"
)

// Logger is what the nodes of tests log to: warnings and errors, on
// stderr.
var Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

// Config is node 1 with its data in dirs (the first holds the metadata
// log), a PLAINTEXT listener and the admin listener on ephemeral loopback
// ports, and every other setting at the value `kzero` gives it with no
// server.properties: Kafka's defaults, with kzero's where it has its own
// (auto.create.topics.enable and legacy.protocol.versions.enable on).
//
// It leaves ValidateBrokerConfig, BrokerKeys and ConnLimits nil
// (cmd/kzero's key table checks dynamic broker configs and lists the
// broker's configs, and its parser computes the connection limits): a test
// of AlterConfigs or DescribeConfigs on a broker resource belongs with that
// table, in cmd/kzero.
func Config(dirs ...string) node.Config {
	static := map[string]string{
		"process.roles":              "broker,controller",
		"node.id":                    "1",
		"listeners":                  "PLAINTEXT://127.0.0.1:0",
		"log.dirs":                   strings.Join(dirs, ","),
		"admin.listener":             "127.0.0.1:0",
		"num.partitions":             "1",
		"default.replication.factor": "1",
	}
	logs := log.DefaultManagerConfig(dirs...)
	logs.Defaults = topicconfig.LogConfig(nil, topicconfig.BrokerConfigs{Static: static})
	logs.Logger = Logger
	return node.Config{
		NodeID:                       1,
		Listeners:                    []node.Listener{{Listener: api.Listener{Name: "PLAINTEXT"}, Addr: "127.0.0.1:0"}},
		AdminAddr:                    "127.0.0.1:0",
		Voters:                       map[int32]string{},
		FailedAuthenticationDelay:    100 * time.Millisecond,
		DelegationTokenMaxLifetime:   7 * 24 * time.Hour,
		DelegationTokenExpiry:        24 * time.Hour,
		SaslMaxReceiveBytes:          524288,
		Quota:                        quota.Config{Samples: 11, Window: time.Second},
		BrokerSessionTimeout:         9 * time.Second,
		InitialRegistrationTimeout:   time.Minute,
		AutoLeaderRebalance:          true,
		LeaderImbalanceCheckInterval: 5 * time.Minute,
		Logs:                         logs,
		Server: server.Config{
			MaxRequestBytes:       104857600,
			QueuedMaxRequestBytes: 268435456,
			ConnMaxQueuedRequests: 500,
			IdleTimeout:           10 * time.Minute,
			Limits:                server.ConnLimits{InterBroker: "PLAINTEXT"},
		},
		Groups: group.Config{
			NumPartitions:                 50,
			ReplicationFactor:             3,
			InitialRebalanceDelay:         3 * time.Second,
			MinSessionTimeout:             6 * time.Second,
			MaxSessionTimeout:             30 * time.Minute,
			MaxSize:                       math.MaxInt32,
			OffsetsRetention:              7 * 24 * time.Hour,
			RetentionCheckInterval:        10 * time.Minute,
			OffsetMetadataMaxBytes:        4096,
			ConsumerSessionTimeout:        45 * time.Second,
			ConsumerMinSessionTimeout:     45 * time.Second,
			ConsumerMaxSessionTimeout:     time.Minute,
			ConsumerHeartbeatInterval:     5 * time.Second,
			ConsumerMinHeartbeatInterval:  5 * time.Second,
			ConsumerMaxHeartbeatInterval:  15 * time.Second,
			ConsumerMaxSize:               math.MaxInt32,
			ConsumerAssignors:             []string{"uniform", "range"},
			ConsumerMigrationPolicy:       "bidirectional",
			ConsumerAssignmentInterval:    time.Second,
			ConsumerMaxAssignmentInterval: 15 * time.Second,
			StreamsInitialRebalanceDelay:  3 * time.Second,
			StreamsSessionTimeout:         45 * time.Second,
			StreamsMinSessionTimeout:      45 * time.Second,
			StreamsMaxSessionTimeout:      time.Minute,
			StreamsHeartbeatInterval:      5 * time.Second,
			StreamsMinHeartbeatInterval:   5 * time.Second,
			StreamsMaxHeartbeatInterval:   15 * time.Second,
			StreamsMaxSize:                math.MaxInt32,
			StreamsAssignmentInterval:     time.Second,
			StreamsMaxAssignmentInterval:  15 * time.Second,
			StreamsMaxStandbyReplicas:     new(2),
			Share: group.ShareConfig{
				SessionTimeout:        45 * time.Second,
				MinSessionTimeout:     45 * time.Second,
				MaxSessionTimeout:     time.Minute,
				HeartbeatInterval:     5 * time.Second,
				MinHeartbeatInterval:  5 * time.Second,
				MaxHeartbeatInterval:  15 * time.Second,
				MaxSize:               200,
				AssignmentInterval:    time.Second,
				MaxAssignmentInterval: 15 * time.Second,
				Bounds: group.ShareBounds{
					MinRecordLockDuration: 15 * time.Second,
					MaxRecordLockDuration: time.Minute,
					MinDeliveryCountLimit: 2,
					MaxDeliveryCountLimit: 10,
				},
			},
		},
		Shares: share.Config{
			Limits:      share.Limits{LockDuration: 30000, DeliveryLimit: 5, MaxInFlight: 2000},
			MaxSessions: 2000,
		},
		ShareState: share.StateConfig{NumPartitions: 50, ReplicationFactor: 3, MinISR: 2, SegmentBytes: 104857600},
		Txns: txn.Config{
			NumPartitions:       50,
			ReplicationFactor:   3,
			MinISR:              2,
			SegmentBytes:        104857600,
			MaxTimeout:          15 * time.Minute,
			IDExpiration:        7 * 24 * time.Hour,
			AbortCheckInterval:  10 * time.Second,
			ExpireCheckInterval: time.Hour,
		},
		Replication: replica.Config{
			LagTimeMax:     30 * time.Second,
			FetchMaxBytes:  1048576,
			FetchRespBytes: 10485760,
			FetchWaitMax:   500 * time.Millisecond,
			FetchMinBytes:  1,
			FetchBackoff:   time.Second,
			NumFetchers:    1,
		},
		AutoCreateTopics:         true,
		FetchMaxBytes:            57671680,
		NumPartitions:            1,
		DefaultReplicationFactor: 1,
		LegacyVersions:           true,
		StaticConfigs:            static,
		Logger:                   Logger,
	}
}
