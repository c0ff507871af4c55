package group

import "strconv"

// Per-group streams configs (Kafka 4.3's GroupConfig, streams.*): set
// with IncrementalAlterConfigs on a GROUP resource and kept in the
// metadata log, each overrides the broker's group.streams.* of the same
// name for its group. The coordinator reads them at each heartbeat of
// the group, so a change takes effect at the next one: the heartbeat
// interval and session timeout members get, the standby replicas of the
// next assignment (a changed count bumps the group epoch, so the group
// is assigned again), and the initial rebalance delay of a group that
// becomes non-empty, and the assignment interval (KIP-1263) of the next
// target assignment.
const (
	streamsSessionTimeoutKey    = "streams.session.timeout.ms"
	streamsHeartbeatIntervalKey = "streams.heartbeat.interval.ms"
	streamsNumStandbysKey       = "streams.num.standby.replicas"
	streamsInitialDelayKey      = "streams.initial.rebalance.delay.ms"
	streamsAssignIntervalKey    = "streams.assignment.interval.ms"
)

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
	get(streamsAssignIntervalKey, func(n int64) { p.AssignmentInterval = n })
	return p
}
