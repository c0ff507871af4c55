package txn

import (
	"context"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"kzero/coord/shards"
	"kzero/log"
	"kzero/replica"
)

// Config is the broker's transaction coordinator configuration, with
// Kafka's keys and defaults.
type Config struct {
	NumPartitions       int32         // transaction.state.log.num.partitions (50)
	ReplicationFactor   int16         // transaction.state.log.replication.factor (3), capped by the live brokers
	MinISR              int           // transaction.state.log.min.isr (2), capped by the replication factor
	SegmentBytes        int64         // transaction.state.log.segment.bytes (100 MiB)
	MaxTimeout          time.Duration // transaction.max.timeout.ms (15 min)
	IDExpiration        time.Duration // transactional.id.expiration.ms (7 days)
	AbortCheckInterval  time.Duration // transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s)
	ExpireCheckInterval time.Duration // transaction.remove.expired.transaction.cleanup.interval.ms (1 h)

	// AllocateProducerID hands out a producer id never used before.
	AllocateProducerID func(ctx context.Context) (int64, error)
	// Markers writes the transaction markers.
	Markers MarkerWriter
	Logger  *slog.Logger
}

func (c *Config) setDefaults() {
	if c.NumPartitions <= 0 {
		c.NumPartitions = 50
	}
	if c.ReplicationFactor <= 0 {
		c.ReplicationFactor = 3
	}
	if c.MinISR <= 0 {
		c.MinISR = 2
	}
	if c.SegmentBytes <= 0 {
		c.SegmentBytes = 100 << 20
	}
	if c.MaxTimeout <= 0 {
		c.MaxTimeout = 15 * time.Minute
	}
	if c.IDExpiration <= 0 {
		c.IDExpiration = 7 * 24 * time.Hour
	}
	if c.AbortCheckInterval <= 0 {
		c.AbortCheckInterval = 10 * time.Second
	}
	if c.ExpireCheckInterval <= 0 {
		c.ExpireCheckInterval = time.Hour
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// MarkerWriter writes a transaction's COMMIT or ABORT marker to one of its
// partitions, wherever that partition's leader is. It returns nil once the
// marker is written, or when the partition no longer exists (a deleted
// topic needs none); an error makes the coordinator retry later.
type MarkerWriter interface {
	WriteMarker(tp log.TopicPartition, producerID int64, epoch int16, coordinatorEpoch int32, commit bool, txnVersion int16) error
}

// Coordinator is this broker's transaction coordinator: the shards of the
// __transaction_state partitions it leads. Its methods are safe for
// concurrent use and block only on local appends (and, for
// InitProducerID, on a producer id allocation).
type Coordinator struct {
	cfg    Config
	logger *slog.Logger
	now    func() int64 // ms

	// table is the shards of the partitions this broker leads.
	table *shards.Table[*shard]

	mu     sync.Mutex // orders the timers' re-arming and Close
	timers []*time.Timer
	wg     sync.WaitGroup // marker writers
}

// New returns a coordinator leading no partition yet.
func New(cfg Config) *Coordinator {
	cfg.setDefaults()
	c := &Coordinator{
		cfg:    cfg,
		logger: cfg.Logger,
		now:    func() int64 { return time.Now().UnixMilli() },
	}
	c.table = shards.NewTable(shards.Config{Topic: TopicName, Partitions: cfg.NumPartitions, CommitTimeout: commitTimeout, ReloadOnNewEpoch: true},
		func(rt *shards.Shard) *shard { return newShard(c, rt) })
	c.every(cfg.AbortCheckInterval, c.abortTimedOut)
	c.every(cfg.ExpireCheckInterval, c.expireIDs)
	return c
}

// every runs f every d until Close.
func (c *Coordinator) every(d time.Duration, f func()) {
	// t is set under c.mu, which the callback takes before reading it.
	c.mu.Lock()
	defer c.mu.Unlock()
	var t *time.Timer
	t = time.AfterFunc(d, func() {
		f()
		c.mu.Lock()
		if !c.table.Closed() {
			t.Reset(d)
		}
		c.mu.Unlock()
	})
	c.timers = append(c.timers, t)
}

// MaxTimeout is transaction.max.timeout.ms.
func (c *Coordinator) MaxTimeout() time.Duration { return c.cfg.MaxTimeout }

// TopicSpec is how __transaction_state is created: its partition count,
// its replication factor for this many live brokers, and its configs.
func (c *Coordinator) TopicSpec(liveBrokers int) (partitions int32, replicationFactor int16, configs map[string]string) {
	rf := c.cfg.ReplicationFactor
	if liveBrokers > 0 && int(rf) > liveBrokers {
		rf = int16(liveBrokers)
	}
	return c.cfg.NumPartitions, rf, map[string]string{
		"cleanup.policy":                 "compact",
		"compression.type":               "uncompressed",
		"segment.bytes":                  strconv.FormatInt(c.cfg.SegmentBytes, 10),
		"min.insync.replicas":            strconv.Itoa(min(c.cfg.MinISR, int(rf))),
		"unclean.leader.election.enable": "false",
	}
}

// SetPartitionCount tells the coordinator how many partitions
// __transaction_state has, once it exists.
func (c *Coordinator) SetPartitionCount(n int32) { c.table.SetPartitionCount(n) }

// PartitionFor is the __transaction_state partition of a transactional id.
func (c *Coordinator) PartitionFor(id string) int32 {
	return c.table.PartitionFor(id)
}

// Lead makes this broker the coordinator of the transactional ids of p, a
// __transaction_state partition it now leads: their state is read from p
// in the background (COORDINATOR_LOAD_IN_PROGRESS meanwhile), and
// transactions found preparing are finished. A new leader epoch of a
// partition led already reloads it (the epoch is stamped on markers). It
// returns a channel closed once the load ended.
func (c *Coordinator) Lead(p *replica.Partition) <-chan struct{} { return c.table.Lead(p) }

// Resign drops the transactional ids of a partition this broker no longer
// leads.
func (c *Coordinator) Resign(partition int32) { c.table.Resign(partition) }

// Leading lists the partitions this broker coordinates.
func (c *Coordinator) Leading() []int32 { return c.table.Leading() }

// Close stops the timers, drops every shard and waits for marker writers.
func (c *Coordinator) Close() {
	c.table.Close()
	c.mu.Lock() // after the table closed, the timers re-arm no more
	for _, t := range c.timers {
		t.Stop()
	}
	c.mu.Unlock()
	c.wg.Wait()
}

// shardFor finds the loaded shard of a transactional id and locks it; the
// error wraps kerr.NotCoordinator or kerr.CoordinatorLoadInProgress.
func (c *Coordinator) shardFor(id string) (*shard, error) {
	return c.table.Lock(c.PartitionFor(id))
}
