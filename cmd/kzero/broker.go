package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"strconv"
	"sync/atomic"

	"kzero/coord"
	"kzero/coord/group"
	"kzero/coord/metadata"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/api"
	"kzero/net/server"
	"kzero/replica"
)

// broker is the running process: the log dirs, the metadata controller,
// the replicas, the Kafka listener and the admin HTTP listener.
type broker struct {
	cfg      *brokerConfig
	logger   *slog.Logger
	logs     *log.Manager
	ctrl     *coord.Controller
	replicas *replica.Manager
	groups   *group.Coordinator
	txns     *txn.Coordinator
	srv      *server.Server
	admin    *http.Server
	nodeID   int32
}

// readyHandler answers nothing until the broker is wired: the listener
// starts first so its bound port can be registered.
type readyHandler struct{ h atomic.Pointer[api.Handler] }

var errStarting = errors.New("broker is starting")

func (r *readyHandler) Serve(req *server.Request) {
	if h := r.h.Load(); h != nil {
		h.Serve(req)
		return
	}
	req.Fail(errStarting)
}

func startBroker(cfg *brokerConfig, logger *slog.Logger) (_ *broker, err error) {
	b := &broker{cfg: cfg, logger: logger, nodeID: int32(cfg.int("node.id"))}
	defer func() {
		if err != nil {
			b.Stop(context.Background())
		}
	}()
	if b.logs, err = log.OpenManager(cfg.managerConfig(logger)); err != nil {
		return nil, err
	}
	b.logs.Start()

	addr, _ := cfg.listener()
	ready := &readyHandler{}
	b.srv = server.New(server.Config{
		Addr:             addr,
		Loops:            cfg.int("num.network.threads"),
		MaxRequestBytes:  cfg.int("socket.request.max.bytes"),
		IdleTimeout:      msDuration(cfg.long("connections.max.idle.ms")),
		SocketSendBuffer: max(cfg.int("socket.send.buffer.bytes"), 0),
		SocketRecvBuffer: max(cfg.int("socket.receive.buffer.bytes"), 0),
		Inline:           api.Inline,
		Logger:           logger,
	}, ready)
	if err = b.srv.Start(); err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	host, port, err := cfg.advertised(b.srv.Addr())
	if err != nil {
		return nil, err
	}

	b.ctrl, err = coord.Open(coord.Config{
		NodeID:                   b.nodeID,
		Dir:                      filepath.Join(cfg.logDirs()[0], "__cluster_metadata-0"),
		Listeners:                []metadata.Listener{{Name: "PLAINTEXT", Host: host, Port: port}},
		Rack:                     cfg.str("broker.rack"),
		DefaultPartitions:        int32(cfg.int("num.partitions")),
		DefaultReplicationFactor: int16(cfg.int("default.replication.factor")),
		ValidateBrokerConfig:     validateDynamicBrokerConfig,
		Logger:                   logger,
	})
	if err != nil {
		return nil, fmt.Errorf("open metadata: %w", err)
	}
	b.replicas = replica.NewManager(b.nodeID, b.logs)
	b.groups = group.New(cfg.groupConfig(logger))
	pids := coord.NewProducerIDs(func(ctx context.Context) (int64, int32, error) {
		return b.ctrl.AllocateProducerIDs(ctx, b.nodeID)
	})
	markers := txn.LocalMarkers{
		Replicas:    b.replicas,
		Offsets:     b.groups,
		TopicExists: func(topic string) bool { return b.ctrl.Image().Topic(topic) != nil },
	}
	b.txns = txn.New(cfg.txnConfig(logger, pids, markers))
	b.ctrl.Subscribe(b.applyImage) // called at once with the current image

	ready.h.Store(api.New(api.Config{
		NodeID:                   b.nodeID,
		AdvertisedHost:           host,
		AdvertisedPort:           port,
		Rack:                     cfg.str("broker.rack"),
		AutoCreateTopics:         cfg.bool("auto.create.topics.enable"),
		NumPartitions:            int32(cfg.int("num.partitions")),
		DefaultReplicationFactor: int16(cfg.int("default.replication.factor")),
		Logger:                   logger,
	}, api.Services{
		Cluster:     clusterView{b.ctrl, b},
		Replicas:    b.replicas,
		Groups:      b.groups,
		Txns:        b.txns,
		ProducerIDs: pids,
		Markers:     markers,
	}))

	if err = b.startAdmin(); err != nil {
		return nil, err
	}
	return b, nil
}

// Addr is the Kafka listener's bound address.
func (b *broker) Addr() net.Addr { return b.srv.Addr() }

// applyImage makes the local replicas follow the metadata: partitions this
// broker leads are opened and led, deleted topics' logs removed.
func (b *broker) applyImage(prev, next *metadata.Image) {
	// Once the partitions are opened and removed: the group coordinator
	// loads the __consumer_offsets partitions led here.
	defer b.applyTxnImage(next)
	defer b.applyGroupImage(next)
	// A change of dynamic broker configs may change every topic's log config.
	brokerChanged := prev == nil || !sameConfigs(prev.BrokerConfigs(""), next.BrokerConfigs("")) ||
		!sameConfigs(prev.BrokerConfigs(strconv.Itoa(int(b.nodeID))), next.BrokerConfigs(strconv.Itoa(int(b.nodeID))))
	for _, t := range next.Topics() {
		var old *metadata.Topic
		if prev != nil {
			old = prev.Topic(t.Name)
		}
		logCfg := b.topicLogConfig(t, next)
		for _, p := range t.Partitions {
			if p.Leader != b.nodeID {
				continue
			}
			if !brokerChanged && old != nil && old.ID == t.ID && int(p.Partition) < len(old.Partitions) &&
				old.Partitions[p.Partition].LeaderEpoch == p.LeaderEpoch && sameConfigs(old.Configs, t.Configs) {
				continue
			}
			if _, err := b.replicas.MakeLeader(replica.LeaderSpec{
				TP:                log.TopicPartition{Topic: t.Name, Partition: p.Partition},
				TopicID:           t.ID,
				LeaderEpoch:       p.LeaderEpoch,
				ISR:               p.ISR,
				MinInsyncReplicas: b.minInsync(t, next),
				Config:            logCfg,
			}); err != nil {
				// The replica is offline: Metadata, Produce and Fetch answer
				// KAFKA_STORAGE_ERROR for it (replica.Manager.Offline).
				b.logger.Error("cannot open partition; it is offline", "topic", t.Name, "partition", p.Partition, "err", err)
			}
		}
	}
	if prev == nil {
		return
	}
	for _, t := range prev.Topics() {
		nt := next.Topic(t.Name)
		keep := nt != nil && nt.ID == t.ID
		for _, p := range t.Partitions {
			if keep && int(p.Partition) < len(nt.Partitions) && nt.Partitions[p.Partition].Leader == b.nodeID {
				continue
			}
			if err := b.replicas.Remove(log.TopicPartition{Topic: t.Name, Partition: p.Partition}, !keep); err != nil {
				b.logger.Error("cannot remove partition", "topic", t.Name, "partition", p.Partition, "err", err)
			}
		}
	}
}

func sameConfigs(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// Stop closes the listener, then the group coordinator, the controller,
// and the logs (flushing them and writing their checkpoints).
func (b *broker) Stop(ctx context.Context) error {
	var errs []error
	if b.admin != nil {
		errs = append(errs, b.admin.Shutdown(ctx))
	}
	if b.srv != nil {
		errs = append(errs, b.srv.Stop(ctx))
	}
	if b.txns != nil {
		b.txns.Close()
	}
	if b.groups != nil {
		b.groups.Close()
	}
	if b.ctrl != nil {
		errs = append(errs, b.ctrl.Close())
	}
	if b.logs != nil {
		errs = append(errs, b.logs.Close())
	}
	return errors.Join(errs...)
}

func (b *broker) startAdmin() error {
	addr := b.cfg.str("admin.listener")
	if addr == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/metrics", b.metricsHandler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("admin listener %s: %w", addr, err)
	}
	b.admin = &http.Server{Handler: mux}
	go b.admin.Serve(ln)
	b.logger.Info("admin listener", "addr", ln.Addr().String())
	return nil
}
