package api

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/group"
	"kzero/coord/shards"
	"kzero/coord/share"
	"kzero/coord/txn"
	"kzero/log"
	"kzero/net/quota"
	"kzero/net/server"
	"kzero/replica"
)

// Config is what the handlers need to know about this broker.
type Config struct {
	NodeID         int32
	AdvertisedHost string
	AdvertisedPort int32
	Rack           string
	// RackAwareReads points v11+ consumers with a client.rack at an
	// in-sync replica in their rack (KIP-392; replica.selector.class =
	// org.apache.kafka.common.replica.RackAwareReplicaSelector).
	RackAwareReads bool
	// FetchMaxBytes is fetch.max.bytes (55 MiB): the most a consumer's
	// fetch answers, whatever its max bytes; ReplicaFetchResponseMaxBytes
	// is replica.fetch.response.max.bytes (10 MiB), the same for a
	// follower's. 0: Kafka's default.
	FetchMaxBytes                int32
	ReplicaFetchResponseMaxBytes int32

	AutoCreateTopics         bool  // auto.create.topics.enable
	TopicDeletionDisabled    bool  // delete.topic.enable=false: DeleteTopics is refused
	NumPartitions            int32 // num.partitions
	DefaultReplicationFactor int16 // default.replication.factor

	// LegacyVersions serves the protocol versions Kafka 4.0 removed
	// (KIP-896) but Kafka 3.9 still served, for the clients that still
	// use them (legacy.protocol.versions.enable, default true). Off,
	// kzero serves Kafka 4's minimum versions only.
	LegacyVersions bool

	// Listeners are the client listeners, by the names server.Conn.Listener
	// gives; a connection of a listener not listed is PLAINTEXT.
	Listeners []Listener
	// ReauthAfter is connections.max.reauth.ms: a SASL authentication
	// expires after it, and the client must re-authenticate (KIP-368); 0
	// never expires.
	ReauthAfter time.Duration
	// DelegationTokenSecret is delegation.token.secret.key: it keys the
	// tokens' HMACs; empty turns delegation tokens off
	// (DELEGATION_TOKEN_AUTH_DISABLED). DelegationTokenMaxLifetime is
	// delegation.token.max.lifetime.ms (7 days), DelegationTokenExpiry
	// delegation.token.expiry.time.ms (1 day): how long a token lives at
	// most, and between renewals.
	DelegationTokenSecret      string
	DelegationTokenMaxLifetime time.Duration
	DelegationTokenExpiry      time.Duration
	// FailedAuthenticationDelay is connection.failed.authentication.delay.ms:
	// how long a failed authentication's answer and close are held back.
	FailedAuthenticationDelay time.Duration
	// Authorizer turns ACL authorization on; nil: everything is allowed
	// and the ACL APIs answer SECURITY_DISABLED.
	Authorizer *AuthorizerConfig
	// Quota is the client quota window (quota.window.num,
	// quota.window.size.seconds); the quotas themselves are metadata
	// records (AlterClientQuotas).
	Quota quota.Config

	Logger *slog.Logger
}

// Services are the parts of the broker the handlers serve from.
type Services struct {
	Cluster     Cluster            // cluster metadata and admin changes
	Replicas    *replica.Manager   // partition data
	Groups      *group.Coordinator // consumer groups and offsets
	Txns        *txn.Coordinator   // transactional ids
	ProducerIDs *coord.ProducerIDs // ids for idempotent producers
	Markers     txn.MarkerWriter   // writes markers for WriteTxnMarkers
	// TxnRouter sends a transactional write's check to its coordinator
	// on another broker; nil: every coordinator is this broker's.
	TxnRouter TxnRouter
	// Shares holds the share partitions and share sessions (KIP-932);
	// nil: a manager with Kafka's defaults.
	Shares *share.Manager
}

// TxnRouter checks a transactional write of a partition led here with the
// transactional id's coordinator when another broker runs it (KIP-890:
// AddPartitionsToTxn v4+ from the partition leader).
type TxnRouter interface {
	// AddToTxn verifies tp is in the transaction (or, with add, adds it)
	// and returns the coordinator's error code; local is true when the
	// coordinator is this broker's, which the caller then asks itself.
	AddToTxn(transactionalID string, producerID int64, epoch int16, tp log.TopicPartition, add bool) (code int16, local bool)
}

// Handler serves every API this broker advertises.
type Handler struct {
	cfg         Config
	cluster     Cluster
	replicas    *replica.Manager
	groups      *group.Coordinator
	txns        *txn.Coordinator
	producerIDs *coord.ProducerIDs
	markers     txn.MarkerWriter
	txnRouter   TxnRouter
	sessions    fetchSessions
	shares      *share.Manager
	// shareInit serializes the initializations of a share partition's
	// state made here (91_alter_share_group_offsets.go).
	shareInit shareInitLocks
	creating  autoCreator
	logger    *slog.Logger

	listeners map[string]*Listener
	authz     *authorizer // nil: no authorization
	tokens    tokenCredentials
	quotas    *quotas
}

// New returns a Handler serving from svc.
func New(cfg Config, svc Services) *Handler {
	if cfg.FetchMaxBytes <= 0 {
		cfg.FetchMaxBytes = 55 << 20
	}
	if cfg.ReplicaFetchResponseMaxBytes <= 0 {
		cfg.ReplicaFetchResponseMaxBytes = 10 << 20
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	h := &Handler{
		cfg: cfg, cluster: svc.Cluster, replicas: svc.Replicas, groups: svc.Groups, txns: svc.Txns,
		producerIDs: svc.ProducerIDs, markers: svc.Markers, txnRouter: svc.TxnRouter, logger: cfg.Logger,
		listeners: map[string]*Listener{}, shares: svc.Shares,
	}
	if h.shares == nil {
		h.shares = share.NewManager(share.Config{}, nil)
	}
	for i := range cfg.Listeners {
		l := &cfg.Listeners[i]
		h.listeners[l.Name] = l
	}
	if cfg.Authorizer != nil {
		h.authz = &authorizer{cfg: *cfg.Authorizer}
	}
	h.quotas = newQuotas(cfg.Quota)
	return h
}

// api is one served API key: the versions it serves and its handler.
type api struct {
	min, max int16
	// advertiseMin, when not -1, is the lowest version ApiVersions lists
	// even when it is not served, with or without legacy versions, as
	// Kafka 4 lists it (Produce lists v0 and rejects v0-v2; see
	// KAFKA-18659).
	advertiseMin int16
	// kafka4Min is Kafka 4's lowest version of the key when kzero serves
	// older ones (min) for legacy clients; without LegacyVersions it is
	// the lowest served and listed.
	kafka4Min int16
	serve     func(h *Handler, req *server.Request) error
}

// since4 marks versions below v as the legacy ones Kafka 4 removed.
func (a *api) since4(v int16) *api {
	a.kafka4Min = v
	return a
}

// versions is the range of a this handler serves and the lowest version
// it lists in ApiVersions.
func (h *Handler) versions(a *api) (lowest, highest, listed int16) {
	lowest = a.min
	if !h.cfg.LegacyVersions {
		lowest = max(a.min, a.kafka4Min)
	}
	listed = lowest
	if a.advertiseMin >= 0 {
		listed = min(listed, a.advertiseMin)
	}
	return lowest, a.max, listed
}

// apis is filled by the per-key files' init functions.
var apis = map[int16]*api{}

func register(key int16, min, max int16, serve func(*Handler, *server.Request) error) *api {
	a := &api{min: min, max: max, advertiseMin: -1, kafka4Min: min, serve: serve}
	apis[key] = a
	return a
}

// errUnsupportedVersion closes the connection: Kafka cannot parse a
// request of a version it does not serve and drops the connection.
var errUnsupportedVersion = errors.New("unsupported api version")

// Serve dispatches a request to its API's handler, once the connection
// is authenticated (session.go).
func (h *Handler) Serve(req *server.Request) {
	if s := h.session(req.Conn()); s.state != stateDone || !s.expires.IsZero() && time.Now().After(s.expires) {
		if !h.admit(s, req) {
			return
		}
	}
	key, v := req.Header.APIKey, req.Header.APIVersion
	a, ok := apis[key]
	if key == kmsg.ApiVersions.Int16() && (!ok || v > a.max) {
		h.unsupportedAPIVersions(req)
		return
	}
	if !ok {
		req.Fail(fmt.Errorf("api key %d: %w", key, errUnsupportedVersion))
		return
	}
	if min, max, _ := h.versions(a); v < min || v > max {
		req.Fail(fmt.Errorf("api key %d version %d: %w", key, v, errUnsupportedVersion))
		return
	}
	if rq := h.quotas.request; !exemptFromRequestQuota(key) && rq.Enabled() {
		// The request quota charges the handler's time: respond claims
		// the charge and puts the throttle time in the response; a
		// response written otherwise, or later, is charged here when Serve
		// returns (what it needs of req is read first: req is recycled
		// once it completes).
		s, conn, c := h.session(req.Conn()), req.Conn(), h.quotaClient(req)
		s.charge.Store(time.Now().UnixNano())
		if err := a.serve(h, req); err != nil {
			req.Fail(err)
		}
		if began := s.charge.Swap(0); began != 0 {
			h.requestTime(conn, c, began)
		}
		return
	}
	if err := a.serve(h, req); err != nil {
		req.Fail(err)
	}
}

// decode reads the request body into r at the request's version. Record
// bytes alias the request buffer (no copy).
func decode(req *server.Request, r kmsg.Request) error {
	r.SetVersion(req.Header.APIVersion)
	if err := r.(interface{ UnsafeReadFrom([]byte) error }).UnsafeReadFrom(req.Body); err != nil {
		return fmt.Errorf("decode %s v%d: %w", kmsg.NameForKey(req.Header.APIKey), req.Header.APIVersion, err)
	}
	return nil
}

// respond encodes m at the request's version and sends it, with the
// request quota's throttle time when the request is charged to one.
func respond(req *server.Request, m kmsg.Response) {
	if s, ok := req.Conn().Value().(*session); ok && s.charge.Load() != 0 {
		if began := s.charge.Swap(0); began != 0 {
			d := s.h.requestTime(req.Conn(), s.h.quotaClient(req), began)
			if t, ok := m.(kmsg.ThrottleResponse); ok {
				if cur, _ := t.Throttle(); throttleMillis(d) > cur {
					m.(kmsg.SetThrottleResponse).SetThrottle(throttleMillis(d))
				}
			}
		}
	}
	m.SetVersion(req.Header.APIVersion)
	resp := req.NewResponse()
	resp.AppendMessage(m)
	req.Respond(resp)
}

// errCode maps an error to its Kafka error code: 0 for nil, the code of a
// wrapped kerr error, UNKNOWN_SERVER_ERROR otherwise.
func errCode(err error) int16 { return shards.Code(err) }

// kerrOf is the kerr sentinel err wraps, for its name and default message
// (Description): UNKNOWN_SERVER_ERROR when it wraps none, nil for nil.
func kerrOf(err error) *kerr.Error {
	if err == nil {
		return nil
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke
	}
	return kerr.UnknownServerError
}

// errCodes is the code of each of a coordinator's per-item errors.
func errCodes(errs []error) []int16 {
	codes := make([]int16, len(errs))
	for i, err := range errs {
		codes[i] = errCode(err)
	}
	return codes
}

// errMessage is the text for a response's ErrorMessage field.
func errMessage(err error) *string {
	if err == nil {
		return nil
	}
	s := err.Error()
	return &s
}

// Inline reports whether requests of an API key and version are served without
// blocking on anything but local I/O (server.Config.Inline): the hot
// paths, so that they run on the event loop with no goroutine hand-off.
// Produce appends to the page cache and answers at once, or with acks=all
// waits in the purgatory for the ISR with a callback; Fetch either answers
// at once or waits in the purgatory. (A transaction's first write to a
// partition, which its coordinator verifies, goes on a goroutine:
// appendPartition.) Produce v0-v2 and Fetch v0-v3 are not: they
// convert message formats, seconds of CPU per GiB, which would hold up the
// loop's other connections.
func Inline(apiKey, apiVersion int16) bool {
	switch {
	case apiKey == kmsg.Produce.Int16() && apiVersion < 3, apiKey == kmsg.Fetch.Int16() && apiVersion < 4:
		return false
	}
	switch apiKey {
	case kmsg.Produce.Int16(), kmsg.Fetch.Int16(), kmsg.ListOffsets.Int16(), kmsg.ApiVersions.Int16():
		return true
	}
	return false
}
