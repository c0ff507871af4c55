package control

import (
	"math"
	"strconv"
	"time"

	"kzero/coord/metadata"
)

// Kafka's defaults for the configs the controller reads.
const (
	DefaultSessionTimeout         = 9 * time.Second   // broker.session.timeout.ms
	DefaultImbalanceCheckInterval = 300 * time.Second // leader.imbalance.check.interval.seconds
	// MaxElectionsPerTick bounds the partitions one Tick moves by a
	// rebalance or an unclean election, as Kafka's controller bounds one
	// run (it reschedules at once when it hit the bound; so does the next
	// Tick).
	MaxElectionsPerTick = 1000
)

// UncleanLeaderElectionConfig is the topic config (and broker default)
// that allows electing a leader from outside the ISR.
const UncleanLeaderElectionConfig = "unclean.leader.election.enable"

// Config configures a Controller. The zero value is Kafka's defaults with
// auto.leader.rebalance.enable=false.
type Config struct {
	// SessionTimeout is broker.session.timeout.ms: a broker that has not
	// heartbeaten for longer is fenced by Tick. Default 9s.
	SessionTimeout time.Duration

	// Unclean reports whether unclean.leader.election.enable is true for a
	// topic, resolving the topic's override against the broker defaults.
	// Nil: UncleanFromImage(false).
	Unclean func(img *metadata.Image, topic *metadata.Topic) bool

	// ELR turns on eligible leader replicas (KIP-966; Kafka's
	// eligible.leader.replicas.version=1, change.go), with MinInsync
	// resolving min.insync.replicas per topic. Nil MinInsync:
	// MinInsyncFromImage(1).
	ELR       bool
	MinInsync func(img *metadata.Image, topic *metadata.Topic) int

	// AutoLeaderRebalance is auto.leader.rebalance.enable: every
	// ImbalanceCheckInterval (leader.imbalance.check.interval.seconds,
	// default 300s) Tick moves leadership back to preferred replicas.
	AutoLeaderRebalance    bool
	ImbalanceCheckInterval time.Duration
	// ImbalancePercentage is leader.imbalance.per.broker.percentage. Kafka
	// 4.x's KRaft controller defines that config but does not read it: it
	// rebalances every partition whose leader is not its preferred replica.
	// Zero does that. A positive value restores the ZooKeeper controller's
	// rule: only the partitions of a preferred broker whose share of
	// partitions led by others is above the percentage.
	ImbalancePercentage int
}

// UncleanFromImage resolves unclean.leader.election.enable as Kafka does
// for a topic: the topic's dynamic config, else the cluster-wide dynamic
// broker default, else def (the static server.properties value).
func UncleanFromImage(def bool) func(*metadata.Image, *metadata.Topic) bool {
	return func(img *metadata.Image, t *metadata.Topic) bool {
		if v, ok := t.Configs[UncleanLeaderElectionConfig]; ok {
			return parseBool(v, def)
		}
		if v, ok := img.BrokerConfigs("")[UncleanLeaderElectionConfig]; ok {
			return parseBool(v, def)
		}
		return def
	}
}

// MinInsyncConfig is the topic config (and broker default) that bounds
// the ISR an acks=all write needs, and with ELR the ISR the HW moves with.
const MinInsyncConfig = "min.insync.replicas"

// MinInsyncFromImage resolves min.insync.replicas for a topic as
// UncleanFromImage resolves its config, def being the static value.
func MinInsyncFromImage(def int) func(*metadata.Image, *metadata.Topic) int {
	return func(img *metadata.Image, t *metadata.Topic) int {
		v, ok := t.Configs[MinInsyncConfig]
		if !ok {
			v, ok = img.BrokerConfigs("")[MinInsyncConfig]
		}
		if n, err := strconv.Atoi(v); ok && err == nil {
			return n
		}
		return def
	}
}

func parseBool(s string, def bool) bool {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return def
	}
	return b
}

// Controller is the active controller's decisions. It holds what Kafka's
// BrokerHeartbeatManager holds, soft state that is not in the metadata log
// (when each broker last heartbeat, the metadata offset it reported), and
// nothing else: every call gets the current image.
//
// A Controller belongs to one goroutine (the raft loop on the quorum
// leader). A new quorum leader starts a new Controller: every broker then
// gets a whole session timeout to heartbeat, as in Kafka.
type Controller struct {
	cfg           Config
	sessions      map[int32]*session
	nextRebalance time.Time
}

// session is one broker's heartbeat state, for its current epoch.
type session struct {
	epoch       int64
	lastContact time.Time
	offset      int64 // the metadata offset it last reported; -1 none yet
	// shutdownOffset is, for a broker in controlled shutdown, the offset
	// of the image that first showed it so: it may stop once it leads
	// nothing and every active broker has applied that offset. -1 otherwise.
	shutdownOffset int64
}

// New returns a Controller.
func New(cfg Config) *Controller {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = DefaultSessionTimeout
	}
	if cfg.ImbalanceCheckInterval <= 0 {
		cfg.ImbalanceCheckInterval = DefaultImbalanceCheckInterval
	}
	if cfg.Unclean == nil {
		cfg.Unclean = UncleanFromImage(false)
	}
	if cfg.MinInsync == nil {
		cfg.MinInsync = MinInsyncFromImage(1)
	}
	return &Controller{cfg: cfg, sessions: map[int32]*session{}}
}

// sync brings the sessions in line with img: a session for each registered
// broker (a new one, starting now, for a broker first seen or seen with a
// new epoch), none for the others.
func (c *Controller) sync(img *metadata.Image, now time.Time) {
	for id := range c.sessions {
		if _, ok := img.Broker(id); !ok {
			delete(c.sessions, id)
		}
	}
	for _, b := range img.Brokers() {
		s := c.sessions[b.ID]
		if s == nil || s.epoch != b.Epoch {
			s = &session{epoch: b.Epoch, lastContact: now, offset: -1, shutdownOffset: -1}
			c.sessions[b.ID] = s
		}
		switch {
		case b.Fenced || !b.InControlledShutdown:
			s.shutdownOffset = -1
		case s.shutdownOffset < 0:
			s.shutdownOffset = img.Offset()
		}
	}
}

// validSession reports whether b has an unexpired session: it is
// unfenced and heartbeat within the session timeout.
func (c *Controller) validSession(b *metadata.Broker, now time.Time) bool {
	s := c.sessions[b.ID]
	return !b.Fenced && s != nil && s.epoch == b.Epoch && !now.After(s.lastContact.Add(c.cfg.SessionTimeout))
}

// lowestActiveOffset is the smallest metadata offset an active broker
// reported (math.MaxInt64 when there is none).
func (c *Controller) lowestActiveOffset(v *view) int64 {
	low := int64(math.MaxInt64)
	for _, b := range v.img.Brokers() {
		b = v.broker(b.ID)
		if b == nil || !b.Active() {
			continue
		}
		off := int64(-1)
		if s := c.sessions[b.ID]; s != nil {
			off = s.offset
		}
		low = min(low, off)
	}
	return low
}
