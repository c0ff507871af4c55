package group

import (
	"fmt"
	"strconv"
)

// Per-group streams configs (Kafka 4.3's GroupConfig, streams.*): set
// with IncrementalAlterConfigs on a GROUP resource and kept in the
// metadata log, each overrides the broker's group.streams.* of the same
// name for its group. The coordinator reads them at each heartbeat of
// the group, so a change takes effect at the next one: the heartbeat
// interval and session timeout members get, the standby replicas of the
// next assignment (a changed count bumps the group epoch, so the group
// is assigned again), and the initial rebalance delay of a group that
// becomes non-empty.
const (
	streamsSessionTimeoutKey    = "streams.session.timeout.ms"
	streamsHeartbeatIntervalKey = "streams.heartbeat.interval.ms"
	streamsNumStandbysKey       = "streams.num.standby.replicas"
	streamsInitialDelayKey      = "streams.initial.rebalance.delay.ms"
)

// Kafka's defaults of the streams group configs, which its
// GroupConfig.validate reads for the keys a group does not set (its
// ConfigDef defaults, not the broker's values).
var streamsConfigDefaults = map[string]int64{
	streamsSessionTimeoutKey:    45000,
	streamsHeartbeatIntervalKey: 5000,
	streamsNumStandbysKey:       0,
	streamsInitialDelayKey:      3000,
}

// ValidateStreamsConfigs checks a group's dynamic configs (all of them,
// as they would be after a change) as Kafka's GroupConfig.validate checks
// its streams configs: the session timeout and heartbeat interval within
// the broker's group.streams.min/max bounds, the standby replicas at most
// group.streams.max.standby.replicas, and the session timeout above the
// heartbeat interval. A key the group does not set counts at Kafka's
// default. Other keys are not looked at.
func (c Config) ValidateStreamsConfigs(set map[string]string) error {
	c.setStreamsDefaults()
	get := func(key string) int64 {
		if n, err := strconv.ParseInt(set[key], 10, 32); err == nil {
			return n
		}
		return streamsConfigDefaults[key]
	}
	session, interval, standbys := get(streamsSessionTimeoutKey), get(streamsHeartbeatIntervalKey), get(streamsNumStandbysKey)
	checks := []struct {
		ok       bool
		key, why string
	}{
		{interval >= c.StreamsMinHeartbeatInterval.Milliseconds(), streamsHeartbeatIntervalKey, "greater than or equal to group.streams.min.heartbeat.interval.ms"},
		{interval <= c.StreamsMaxHeartbeatInterval.Milliseconds(), streamsHeartbeatIntervalKey, "less than or equal to group.streams.max.heartbeat.interval.ms"},
		{session >= c.StreamsMinSessionTimeout.Milliseconds(), streamsSessionTimeoutKey, "greater than or equal to group.streams.min.session.timeout.ms"},
		{session <= c.StreamsMaxSessionTimeout.Milliseconds(), streamsSessionTimeoutKey, "less than or equal to group.streams.max.session.timeout.ms"},
		{standbys <= int64(c.StreamsMaxStandbyReplicas), streamsNumStandbysKey, "less than or equal to group.streams.max.standby.replicas"},
		{session > interval, streamsSessionTimeoutKey, "greater than " + streamsHeartbeatIntervalKey},
	}
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("%s must be %s", ch.key, ch.why)
		}
	}
	return nil
}

// forGroup is the policy of a group with the dynamic configs set: the
// broker's, as the group's streams configs override it. A value that
// does not parse (the controller checked them) keeps the broker's.
func (p StreamsPolicy) forGroup(set map[string]string) StreamsPolicy {
	get := func(key string, into func(int64)) {
		if v, ok := set[key]; ok {
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
				into(n)
			}
		}
	}
	get(streamsSessionTimeoutKey, func(n int64) { p.SessionTimeout = int32(max(n, 1)) })
	get(streamsHeartbeatIntervalKey, func(n int64) { p.HeartbeatInterval = int32(max(n, 1)) })
	get(streamsNumStandbysKey, func(n int64) { p.NumStandbys = int32(n) })
	get(streamsInitialDelayKey, func(n int64) { p.InitialDelay = n })
	return p
}
