package node

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	raftpb "go.etcd.io/raft/v3/raftpb"

	"kzero/coord"
	"kzero/coord/group"
	"kzero/coord/metadata"
	"kzero/coord/raftnet"
	"kzero/coord/share"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/api"
	"kzero/net/sasl"
	"kzero/net/server"
	"kzero/replica"
)

// Node is one running kzero node: its log dirs, its member of the metadata
// quorum, its replicas and coordinators, the Kafka listener and the admin
// HTTP listener.
type Node struct {
	cfg      Config
	logger   *slog.Logger
	logs     *log.Manager
	ctrl     *coord.Controller
	replicas *replica.Manager
	groups   *group.Coordinator
	// shareState is the share coordinator: share partitions' state on
	// __share_group_state.
	shareState *share.Store
	txns       *txn.Coordinator
	srv        *server.Server
	api        *api.Handler       // set before the admin listener starts
	raft       *raftnet.Transport // the controller listener; nil for a single voter
	peers      *peerClients       // connections to the other brokers
	admin      *http.Server
	adminLn    net.Listener
	nodeID     int32
	keySets    []*sasl.JWKS // OAUTHBEARER's key sets, closed by Stop
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

// Start opens the log dirs, starts the listener (its bound port is what
// the node registers), joins the metadata quorum, wires the replicas and
// coordinators to the metadata, and starts the admin listener. When it
// returns the node serves. On error everything started is stopped. A
// controller-only node (Config.Role) starts no Kafka listener and no
// broker parts: only the log dirs (the metadata log is in the first), the
// quorum member and the admin listener.
func Start(cfg Config) (_ *Node, err error) {
	cfg.setDefaults()
	n := &Node{cfg: cfg, logger: cfg.Logger, nodeID: cfg.NodeID}
	defer func() {
		if err != nil {
			n.Stop(context.Background())
		}
	}()
	logsCfg := cfg.Logs
	logsCfg.Logger = n.logger
	if n.logs, err = log.OpenManager(logsCfg); err != nil {
		return nil, err
	}
	n.logs.Start()

	broker := cfg.Role != coord.ControllerOnly
	if broker {
		if err = n.openKeySets(); err != nil {
			return nil, err
		}
	}
	ready := &readyHandler{}
	var registered []metadata.Listener
	if broker {
		if registered, err = n.listen(ready); err != nil {
			return nil, err
		}
	}

	// The log dirs' meta.properties say which cluster this node's data
	// belongs to. A node with data never bootstraps a new cluster: if its
	// metadata log is gone, it refuses to start.
	clusterID, err := n.logs.Identity(n.nodeID)
	if err != nil {
		return nil, err
	}
	hasData := len(n.logs.Logs()) > 0 || n.logs.Strays() > 0
	// The voters of a quorum talk raft over the controller listener, where
	// broker-only nodes (learners) connect too.
	var deliver atomic.Pointer[coord.Controller]
	var peers []coord.Peer
	for id, addr := range cfg.Voters {
		if id != n.nodeID {
			peers = append(peers, coord.Peer{ID: id, Addr: addr})
		}
	}
	var transport coord.Transport
	if cfg.Role == coord.BrokerOnly || cfg.ControllerAddr != "" && len(cfg.Voters) > 0 {
		if err = n.startTransport(&deliver, clusterID); err != nil {
			return nil, err
		}
		transport = n.raft
	}
	n.ctrl, err = coord.New(coord.Config{
		NodeID:                       n.nodeID,
		Role:                         cfg.Role,
		Peers:                        peers,
		Transport:                    transport,
		ControllerAddr:               cfg.ControllerAddr,
		SnapshotEvery:                cfg.MetadataSnapshotEvery,
		SnapshotKeep:                 cfg.MetadataSnapshotKeep,
		BrokerSessionTimeout:         cfg.BrokerSessionTimeout,
		StartTimeout:                 cfg.InitialRegistrationTimeout,
		UncleanLeaderElection:        cfg.UncleanLeaderElection,
		MinInsyncReplicas:            staticMinInsync(cfg.StaticConfigs),
		UncleanShutdown:              !n.logs.ClosedCleanly(),
		AutoLeaderRebalance:          cfg.AutoLeaderRebalance,
		LeaderImbalanceCheckInterval: cfg.LeaderImbalanceCheckInterval,
		ClusterID:                    clusterID,
		Bootstrap:                    !hasData,
		Dir:                          filepath.Join(n.logs.Dirs()[0], "__cluster_metadata-0"),
		Listeners:                    registered,
		Rack:                         cfg.Rack,
		DefaultPartitions:            cfg.NumPartitions,
		DefaultReplicationFactor:     cfg.DefaultReplicationFactor,
		ValidateBrokerConfig:         cfg.ValidateBrokerConfig,
		ValidateGroupConfigs:         cfg.Groups.ValidateGroupConfigs,
		Logger:                       n.logger,
	})
	if err != nil {
		return nil, fmt.Errorf("open metadata: %w", err)
	}
	deliver.Store(n.ctrl)
	if n.raft != nil {
		// Learners that connected before the controller could hear of them.
		for _, id := range n.raft.Learners() {
			n.ctrl.AddLearner(id)
		}
	}
	if err = n.ctrl.Register(); err != nil {
		return nil, fmt.Errorf("join metadata quorum: %w", err)
	}
	// Dirs not formatted yet (a new node, or one from before
	// meta.properties) take the metadata log's cluster id.
	if err = n.logs.Format(n.ctrl.Image().ClusterID(), n.nodeID); err != nil {
		return nil, err
	}
	if broker {
		n.startBroker(ready, registered)
	}
	if err = n.startAdmin(); err != nil {
		return nil, err
	}
	return n, nil
}

// listen starts the Kafka listener, whose requests wait until ready is
// wired, and returns the listeners to register with their advertised
// addresses.
func (n *Node) listen(ready *readyHandler) ([]metadata.Listener, error) {
	cfg := n.cfg
	srvCfg := cfg.Server
	srvCfg.Inline, srvCfg.Logger = api.Inline, n.logger
	srvCfg.DeferAccept = true // clients wait in the backlog until the handler is wired (Accept, in startBroker)
	srvCfg.Limits.IPRate = n.ipConnectionRate
	srvCfg.Listeners = nil
	for _, l := range cfg.Listeners {
		sl := server.Listener{Name: l.Name, Addr: l.Addr, TLS: l.TLS}
		if l.SecurityProtocol == api.ProtocolSaslPlaintext || l.SecurityProtocol == api.ProtocolSaslSSL {
			sl.PreAuthMaxBytes = cfg.SaslMaxReceiveBytes
		}
		srvCfg.Listeners = append(srvCfg.Listeners, sl)
	}
	n.srv = server.New(srvCfg, ready)
	if err := n.srv.Start(); err != nil {
		return nil, fmt.Errorf("listen: %w", err)
	}
	var registered []metadata.Listener
	for _, l := range cfg.Listeners {
		host, port, err := advertised(n.srv.ListenerAddr(l.Name), l.Advertised)
		if err != nil {
			return nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
		registered = append(registered, metadata.Listener{Name: l.Name, Host: host, Port: port, SecurityProtocol: l.SecurityProtocol})
	}
	return registered, nil
}

// startTransport starts the raft transport: on a voter, the controller
// listener, where the other voters and the learners connect; on a
// broker-only node, its links to the controllers (Voters' addresses, or
// BootstrapServers). Messages go to the controller in deliver once it is
// set.
// clusterID is the cluster of this node's data, "" for a new node: the
// transport refuses peers of another cluster (a new node, which learns its
// cluster from the quorum, talks to any).
func (n *Node) startTransport(deliver *atomic.Pointer[coord.Controller], clusterID string) error {
	cfg := n.cfg
	learner := cfg.Role == coord.BrokerOnly
	others := map[int32]string{}
	var bootstrap []string
	for id, addr := range cfg.Voters {
		if id != n.nodeID {
			others[id] = addr
			bootstrap = append(bootstrap, addr)
		}
	}
	slices.Sort(bootstrap)
	if len(cfg.BootstrapServers) > 0 {
		bootstrap = cfg.BootstrapServers
	}
	rcfg := raftnet.Config{
		NodeID:     n.nodeID,
		ClusterID:  clusterID,
		ListenAddr: cfg.ControllerAddr,
		Advertised: cfg.Voters[n.nodeID],
		Peers:      others,
		Learner:    learner,
		Bootstrap:  bootstrap,
		Deliver: func(ctx context.Context, m *raftpb.Message) error {
			if c := deliver.Load(); c != nil {
				return c.Step(ctx, m)
			}
			return nil // not listening yet: raft sends again
		},
		OnUnreachable: func(peer int32) {
			if c := deliver.Load(); c != nil {
				c.ReportUnreachable(peer)
			}
		},
		OnSnapshot: func(peer int32, sent bool) {
			if c := deliver.Load(); c != nil {
				c.ReportSnapshot(peer, sent)
			}
		},
		OnLearner: func(id int32) {
			if c := deliver.Load(); c != nil {
				c.AddLearner(id)
			}
		},
		DeliverQuorum: func(from int32, payload []byte) {
			if c := deliver.Load(); c != nil {
				c.ReceiveQuorum(from, payload)
			}
		},
		ClientTLS:                 cfg.ControllerClientTLS,
		SASL:                      raftSASL(cfg.ControllerSASL),
		FailedAuthenticationDelay: cfg.FailedAuthenticationDelay,
		ClientSASL:                cfg.ControllerClientSASL,
		SASLFailureMessage:        sasl.FailureMessage,
		Logger:                    n.logger,
	}
	if t := cfg.ControllerTLS; t != nil {
		// Each handshake takes the listener's current certificates, so a
		// reload (SIGHUP) reaches new controller connections too.
		rcfg.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return t.Config(), nil }}
	}
	if learner {
		rcfg.ListenAddr, rcfg.Peers, rcfg.TLS, rcfg.SASL = "", nil, nil, nil
	}
	n.raft = raftnet.New(rcfg)
	if err := n.raft.Start(); err != nil {
		if learner {
			return fmt.Errorf("metadata quorum: %w", err)
		}
		return fmt.Errorf("controller listener %s: %w", cfg.ControllerAddr, err)
	}
	return nil
}

// startBroker wires the broker's parts to the metadata (replicas,
// coordinators, the API handlers) and lets clients in.
func (n *Node) startBroker(ready *readyHandler, registered []metadata.Listener) {
	cfg := n.cfg
	host, port := registered[0].Host, registered[0].Port
	var apiListeners []api.Listener
	for _, l := range cfg.Listeners {
		apiListeners = append(apiListeners, l.Listener)
	}
	n.setAsideStrays(n.ctrl.Image())
	n.replicas = replica.NewManager(n.nodeID, n.logs)
	replCfg := cfg.Replication
	replCfg.Logger = n.logger
	replCfg.BrokerAddr = n.brokerAddr
	replCfg.Dialer = cfg.InterBroker
	replCfg.BrokerRack = func(id int32) (string, bool) {
		b, ok := n.ctrl.Image().Broker(id)
		if !ok {
			return "", false
		}
		return b.Rack, true
	}
	replCfg.AlterPartition = func(tp log.TopicPartition, topicID [16]byte, leaderEpoch, partitionEpoch int32, isr []int32) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return n.ctrl.AlterPartition(ctx, topicID, tp.Partition, leaderEpoch, partitionEpoch, isr)
	}
	replCfg.ReplicaOffline = func(tp log.TopicPartition) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return n.ctrl.ReplicaOffline(ctx, tp.Topic, tp.Partition)
	}
	n.replicas.Start(replCfg)
	groupCfg := cfg.Groups
	groupCfg.Logger = n.logger
	groupCfg.GroupConfigs = func(g string) map[string]string { return n.ctrl.Image().GroupConfigs(g) }
	groupCfg.InitializeShareState = func(group string, stateEpoch int32, topics []group.TopicPartitions) []group.TopicPartitions {
		return n.api.InitializeShareStates(group, stateEpoch, topics) // n.api is set before any heartbeat
	}
	n.groups = group.New(groupCfg)
	pids := coord.NewProducerIDs(func(ctx context.Context) (int64, int32, error) {
		return n.ctrl.AllocateProducerIDs(ctx, n.nodeID)
	})
	markers := txn.LocalMarkers{
		Replicas:    n.replicas,
		Offsets:     n.groups,
		TopicExists: func(topic string) bool { return n.ctrl.Image().Topic(topic) != nil },
	}
	txnCfg := cfg.Txns
	n.peers = &peerClients{n: n}
	txnCfg.AllocateProducerID, txnCfg.Markers, txnCfg.Logger = pids.Next, clusterMarkers{n, markers}, n.logger
	n.txns = txn.New(txnCfg)
	stateCfg := cfg.ShareState
	stateCfg.Logger = n.logger
	stateCfg.Leader = func(p int32) (local, exists bool) {
		t := n.ctrl.Image().Topic(share.StateTopic)
		if t == nil || p < 0 || int(p) >= len(t.Partitions) {
			return false, t != nil
		}
		return t.Partitions[p].Leader == n.nodeID, true
	}
	n.shareState = share.NewStore(stateCfg)
	n.ctrl.Subscribe(n.applyImage) // called at once with the current image

	shares := share.NewManager(cfg.Shares, n.shareState)
	shares.SetRemote(shareRemote{n})
	n.api = api.New(api.Config{
		NodeID:                   n.nodeID,
		AdvertisedHost:           host,
		AdvertisedPort:           port,
		Rack:                     cfg.Rack,
		AutoCreateTopics:         cfg.AutoCreateTopics,
		TopicDeletionDisabled:    cfg.TopicDeletionDisabled,
		NumPartitions:            cfg.NumPartitions,
		DefaultReplicationFactor: cfg.DefaultReplicationFactor,
		LegacyVersions:           cfg.LegacyVersions,
		RackAwareReads:           cfg.RackAwareReads,
		FetchMaxBytes:            cfg.FetchMaxBytes,
		// A follower's fetch answers at most what followers here ask for.
		ReplicaFetchResponseMaxBytes: cfg.Replication.FetchRespBytes,
		Listeners:                    apiListeners,
		ReauthAfter:                  cfg.ReauthAfter,
		DelegationTokenSecret:        cfg.DelegationTokenSecret,
		DelegationTokenMaxLifetime:   cfg.DelegationTokenMaxLifetime,
		DelegationTokenExpiry:        cfg.DelegationTokenExpiry,
		FailedAuthenticationDelay:    cfg.FailedAuthenticationDelay,
		Authorizer:                   cfg.Authorizer,
		Quota:                        cfg.Quota,
		Logger:                       n.logger,
	}, api.Services{
		Cluster:     clusterView{n.ctrl, n},
		Replicas:    n.replicas,
		Groups:      n.groups,
		Txns:        n.txns,
		ProducerIDs: pids,
		Markers:     markers,
		TxnRouter:   txnRouter{n},
		Shares:      shares,
	})
	n.ctrl.Subscribe(n.applyQuotaImage) // called at once with the current image
	ready.h.Store(n.api)

	n.srv.Accept()
}

// advertised is the host and port clients are told to connect to: the
// configured advertised address, else the bound one (a wildcard host
// becomes 127.0.0.1).
func advertised(bound net.Addr, configured string) (string, int32, error) {
	addr := bound.String()
	if configured != "" {
		addr = configured
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, err
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		return "", 0, err
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return host, int32(p), nil
}

// brokerAddr is another broker's address for this node's fetchers and
// peer requests: its inter-broker listener (inter.broker.listener.name,
// reached with Config.InterBroker's TLS and SASL), else its first
// PLAINTEXT one.
func (n *Node) brokerAddr(id int32) (string, bool) {
	b, ok := n.ctrl.Image().Broker(id)
	if !ok {
		return "", false
	}
	for _, l := range b.Listeners {
		if (n.cfg.InterBrokerListener != "" && l.Name == n.cfg.InterBrokerListener) ||
			(n.cfg.InterBrokerListener == "" && l.SecurityProtocol == 0) {
			return net.JoinHostPort(l.Host, strconv.Itoa(int(l.Port))), true
		}
	}
	return "", false
}

// Addr is the first Kafka listener's bound address; nil on a
// controller-only node, which has none.
func (n *Node) Addr() net.Addr {
	if n.srv == nil {
		return nil
	}
	return n.srv.Addr()
}

// ListenerAddr is the bound address of the Kafka listener named name, nil
// if there is none.
func (n *Node) ListenerAddr(name string) net.Addr {
	if n.srv == nil {
		return nil
	}
	return n.srv.ListenerAddr(name)
}

// ControllerAddr is the controller listener's bound address; nil on a
// broker-only node and on a single voter without one.
func (n *Node) ControllerAddr() net.Addr {
	if n.raft == nil {
		return nil
	}
	return n.raft.Addr()
}

// AdminAddr is the admin HTTP listener's bound address, nil without one.
func (n *Node) AdminAddr() net.Addr {
	if n.adminLn == nil {
		return nil
	}
	return n.adminLn.Addr()
}

// ID is the node's node.id.
func (n *Node) ID() int32 { return n.nodeID }

// Controller is the node's member of the metadata quorum.
func (n *Node) Controller() *coord.Controller { return n.ctrl }

// Replicas are the node's partition replicas.
func (n *Node) Replicas() *replica.Manager { return n.replicas }

// Logs is the node's log dir manager.
func (n *Node) Logs() *log.Manager { return n.logs }

// ServerStats are the Kafka listener's counters (zero without one).
func (n *Node) ServerStats() server.Stats {
	if n.srv == nil {
		return server.Stats{}
	}
	return n.srv.Stats()
}

// Stop closes the listener, then the group coordinator, the controller,
// and the logs (flushing them and writing their checkpoints).
func (n *Node) Stop(ctx context.Context) error {
	var errs []error
	if n.ctrl != nil && n.ctrl.Err() == nil {
		// Controlled shutdown: leaderships leave before the listener does,
		// so clients move on without errors.
		sctx, cancel := context.WithTimeout(ctx, n.cfg.ControlledShutdownTimeout)
		if err := n.ctrl.ControlledShutdown(sctx); err != nil {
			n.logger.Warn("controlled shutdown did not finish; stopping anyway", "err", err)
		}
		cancel()
	}
	if n.admin != nil {
		errs = append(errs, n.admin.Shutdown(ctx))
	}
	if n.srv != nil {
		errs = append(errs, n.srv.Stop(ctx))
	}
	if n.txns != nil {
		n.txns.Close()
	}
	if n.groups != nil {
		n.groups.Close()
	}
	if n.shareState != nil {
		n.shareState.Close()
	}
	if n.replicas != nil {
		n.replicas.Close() // the fetchers stop before the logs close
	}
	if n.peers != nil {
		n.peers.close()
	}
	if n.ctrl != nil {
		errs = append(errs, n.ctrl.Close())
	}
	if n.raft != nil {
		errs = append(errs, n.raft.Close())
	}
	if n.logs != nil {
		errs = append(errs, n.logs.Close())
	}
	for _, k := range n.keySets {
		k.Close()
	}
	return errors.Join(errs...)
}

// openKeySets opens the OAUTHBEARER key sets of the listeners that
// validate signed tokens; n.cfg.Listeners is a copy of the caller's
// slice, so the keys are set on the node's own listeners.
func (n *Node) openKeySets() error {
	n.cfg.Listeners = slices.Clone(n.cfg.Listeners)
	for i := range n.cfg.Listeners {
		l := &n.cfg.Listeners[i]
		if l.JWKS == nil {
			continue
		}
		jc := *l.JWKS
		if jc.Logger == nil {
			jc.Logger = n.logger
		}
		ctx, cancel := context.WithTimeout(context.Background(), jc.RetryBackoffMax+time.Minute)
		keys, err := sasl.OpenJWKS(ctx, jc)
		cancel()
		if err != nil {
			return fmt.Errorf("listener %s: sasl.oauthbearer.jwks.endpoint.url: %w", l.Name, err)
		}
		n.keySets = append(n.keySets, keys)
		l.OAuth.Keys = keys
	}
	return nil
}

func (n *Node) startAdmin() error {
	addr := n.cfg.AdminAddr
	if addr == "" {
		return nil
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/metrics", n.metricsHandler())
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("admin listener %s: %w", addr, err)
	}
	n.admin, n.adminLn = &http.Server{Handler: mux}, ln
	go n.admin.Serve(ln)
	n.logger.Info("admin listener", "addr", ln.Addr().String())
	return nil
}

// raftSASL gives the raft transport the controller listener's SASL
// mechanisms (net/sasl's, as the Kafka listeners use them).
func raftSASL(m map[string]func() sasl.Exchange) map[string]func() raftnet.Exchange {
	if m == nil {
		return nil
	}
	out := make(map[string]func() raftnet.Exchange, len(m))
	for name, start := range m {
		out[name] = func() raftnet.Exchange { return start() }
	}
	return out
}
