package group

import (
	"fmt"
	"strconv"
	"time"
)

// Per-group dynamic configs (Kafka's GroupConfig), set with
// IncrementalAlterConfigs on a GROUP resource and kept in the metadata
// log. Each overrides, for its group, the broker's config of the same
// name with the "group." prefix (consumer.session.timeout.ms overrides
// group.consumer.session.timeout.ms).
const (
	consumerSessionTimeoutKey    = "consumer.session.timeout.ms"
	consumerHeartbeatIntervalKey = "consumer.heartbeat.interval.ms"
	shareSessionTimeoutKey       = "share.session.timeout.ms"
	shareHeartbeatIntervalKey    = "share.heartbeat.interval.ms"
	shareRecordLockDurationKey   = "share.record.lock.duration.ms"
	shareDeliveryCountLimitKey   = "share.delivery.count.limit"
	consumerAssignIntervalKey    = "consumer.assignment.interval.ms"
	shareAssignIntervalKey       = "share.assignment.interval.ms"
)

// groupConfigDefaults are Kafka's GroupConfig defaults of the int group
// configs whose values GroupConfig.validate checks together. Kafka reads
// them (its ConfigDef defaults, not the broker's values) for the keys a
// group does not set.
var groupConfigDefaults = map[string]int64{
	consumerSessionTimeoutKey:    45000,
	consumerHeartbeatIntervalKey: 5000,
	shareSessionTimeoutKey:       45000,
	shareHeartbeatIntervalKey:    5000,
	shareRecordLockDurationKey:   30000,
	shareDeliveryCountLimitKey:   5,
	streamsSessionTimeoutKey:     45000,
	streamsHeartbeatIntervalKey:  5000,
	streamsNumStandbysKey:        0,
	streamsInitialDelayKey:       3000,
	streamsAssignIntervalKey:     1000,
	consumerAssignIntervalKey:    1000,
	shareAssignIntervalKey:       1000,
}

// ValidateGroupConfigs checks a group's dynamic configs (all of them, as
// they would be after a change) as Kafka's GroupConfig.validate does,
// after each value passed its own range: the session timeouts and
// heartbeat intervals and assignment intervals of consumer, share and
// streams groups within the broker's group.<type>.min/max bounds, the share record lock duration
// and delivery count limit within group.share.min/max.*, the streams
// standby replicas at most group.streams.max.standby.replicas, then each
// session timeout above its heartbeat interval. A key the group does not
// set counts at Kafka's default. The first failure is the error, with
// Kafka's message.
func (c Config) ValidateGroupConfigs(set map[string]string) error {
	c.setDefaults()
	sb := c.Share.bounds()
	get := func(key string) int64 {
		if n, err := strconv.ParseInt(set[key], 10, 32); err == nil {
			return n
		}
		return groupConfigDefaults[key]
	}
	ms := func(d time.Duration) int64 { return d.Milliseconds() }
	type check struct {
		ok       bool
		key, why string
	}
	within := func(key string, lo, hi int64, loName, hiName string) []check {
		v := get(key)
		return []check{
			{v >= lo, key, "greater than or equal to " + loName},
			{v <= hi, key, "less than or equal to " + hiName},
		}
	}
	var checks []check
	checks = append(checks, within(consumerHeartbeatIntervalKey, ms(c.ConsumerMinHeartbeatInterval), ms(c.ConsumerMaxHeartbeatInterval),
		"group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms")...)
	checks = append(checks, within(consumerSessionTimeoutKey, ms(c.ConsumerMinSessionTimeout), ms(c.ConsumerMaxSessionTimeout),
		"group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms")...)
	checks = append(checks, within(consumerAssignIntervalKey, ms(c.ConsumerMinAssignmentInterval), ms(c.ConsumerMaxAssignmentInterval),
		"group.consumer.min.assignment.interval.ms", "group.consumer.max.assignment.interval.ms")...)
	checks = append(checks, within(shareHeartbeatIntervalKey, ms(c.Share.MinHeartbeatInterval), ms(c.Share.MaxHeartbeatInterval),
		"group.share.min.heartbeat.interval.ms", "group.share.max.heartbeat.interval.ms")...)
	checks = append(checks, within(shareSessionTimeoutKey, ms(c.Share.MinSessionTimeout), ms(c.Share.MaxSessionTimeout),
		"group.share.min.session.timeout.ms", "group.share.max.session.timeout.ms")...)
	checks = append(checks, within(shareAssignIntervalKey, ms(c.Share.MinAssignmentInterval), ms(c.Share.MaxAssignmentInterval),
		"group.share.min.assignment.interval.ms", "group.share.max.assignment.interval.ms")...)
	checks = append(checks, within(shareRecordLockDurationKey, ms(sb.MinRecordLockDuration), ms(sb.MaxRecordLockDuration),
		"group.share.min.record.lock.duration.ms", "group.share.max.record.lock.duration.ms")...)
	checks = append(checks, within(shareDeliveryCountLimitKey, int64(sb.MinDeliveryCountLimit), int64(sb.MaxDeliveryCountLimit),
		"group.share.min.delivery.count.limit", "group.share.max.delivery.count.limit")...)
	checks = append(checks, within(streamsHeartbeatIntervalKey, ms(c.StreamsMinHeartbeatInterval), ms(c.StreamsMaxHeartbeatInterval),
		"group.streams.min.heartbeat.interval.ms", "group.streams.max.heartbeat.interval.ms")...)
	checks = append(checks, within(streamsSessionTimeoutKey, ms(c.StreamsMinSessionTimeout), ms(c.StreamsMaxSessionTimeout),
		"group.streams.min.session.timeout.ms", "group.streams.max.session.timeout.ms")...)
	checks = append(checks, within(streamsAssignIntervalKey, ms(c.StreamsMinAssignmentInterval), ms(c.StreamsMaxAssignmentInterval),
		"group.streams.min.assignment.interval.ms", "group.streams.max.assignment.interval.ms")...)
	checks = append(checks,
		check{get(streamsNumStandbysKey) <= int64(*c.StreamsMaxStandbyReplicas), streamsNumStandbysKey, "less than or equal to group.streams.max.standby.replicas"},
		check{get(consumerSessionTimeoutKey) > get(consumerHeartbeatIntervalKey), consumerSessionTimeoutKey, "greater than " + consumerHeartbeatIntervalKey},
		check{get(shareSessionTimeoutKey) > get(shareHeartbeatIntervalKey), shareSessionTimeoutKey, "greater than " + shareHeartbeatIntervalKey},
		check{get(streamsSessionTimeoutKey) > get(streamsHeartbeatIntervalKey), streamsSessionTimeoutKey, "greater than " + streamsHeartbeatIntervalKey},
	)
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("%s must be %s", ch.key, ch.why)
		}
	}
	return nil
}

// ShareBounds are the broker's bounds of the share group configs that
// are not the coordinator's (the share partitions enforce them):
// group.share.min/max.record.lock.duration.ms (15s, 60s) and
// group.share.min/max.delivery.count.limit (2, 10). Zero is Kafka's
// default.
type ShareBounds struct {
	MinRecordLockDuration time.Duration
	MaxRecordLockDuration time.Duration
	MinDeliveryCountLimit int
	MaxDeliveryCountLimit int
}

// bounds returns the share bounds with Kafka's defaults for unset ones.
func (c *ShareConfig) bounds() ShareBounds {
	b := c.Bounds
	if b.MinRecordLockDuration <= 0 {
		b.MinRecordLockDuration = 15 * time.Second
	}
	if b.MaxRecordLockDuration <= 0 {
		b.MaxRecordLockDuration = 60 * time.Second
	}
	if b.MinDeliveryCountLimit <= 0 {
		b.MinDeliveryCountLimit = 2
	}
	if b.MaxDeliveryCountLimit <= 0 {
		b.MaxDeliveryCountLimit = 10
	}
	return b
}

// withGroupConfigs is the policy of a group with the dynamic configs
// set: the broker's, with the group's session timeouts, heartbeat
// intervals and assignment intervals (consumer.*, share.*) and streams
// configs (streams.*) in place of the broker's group.<type>.* ones, as
// Kafka's GroupMetadataManager reads them from its GroupConfigManager.
// Only the keys of the group's type matter to it. A value that does not
// parse (the controller checked them) keeps the broker's.
func (p *Policy) withGroupConfigs(set map[string]string) *Policy {
	if len(set) == 0 {
		return p
	}
	q := *p
	for key, into := range map[string]*int32{
		consumerSessionTimeoutKey:    &q.ConsumerSessionTimeout,
		consumerHeartbeatIntervalKey: &q.ConsumerHeartbeatInterval,
		shareSessionTimeoutKey:       &q.Share.SessionTimeout,
		shareHeartbeatIntervalKey:    &q.Share.HeartbeatInterval,
	} {
		if n, ok := positiveInt32(set[key]); ok {
			*into = n
		}
	}
	for key, into := range map[string]*int64{
		consumerAssignIntervalKey: &q.ConsumerAssignmentInterval,
		shareAssignIntervalKey:    &q.Share.AssignmentInterval,
	} {
		if n, err := strconv.ParseInt(set[key], 10, 32); err == nil && n >= 0 {
			*into = n
		}
	}
	q.Streams = p.Streams.forGroup(set)
	return &q
}

// positiveInt32 parses a group config int that must be at least 1.
func positiveInt32(v string) (int32, bool) {
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 1 {
		return 0, false
	}
	return int32(n), true
}

// assignmentIntervals applies the defaults of a group type's
// group.<type>.{,min.,max.}assignment.interval.ms (KIP-1263): a max of 0
// is 15s, a min below 0 is 0, and the interval is kept within them. It
// returns the min and the interval.
func assignmentIntervals(interval, lo time.Duration, hi *time.Duration) (time.Duration, time.Duration) {
	if *hi <= 0 {
		*hi = 15 * time.Second
	}
	lo = max(lo, 0)
	return lo, min(max(interval, lo), *hi)
}

// assignable reports whether a group whose target assignment was last
// computed at assignedAt (ms; 0 unknown: none yet, or written before
// KIP-1263) may compute the next one at now, with the group's
// assignment interval (ms; 0 none): Kafka's assignment batching.
func assignable(assignedAt, now, interval int64) bool {
	return assignedAt == 0 || interval <= 0 || now >= assignedAt+interval
}
