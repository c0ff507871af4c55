package group

import (
	"testing"
	"time"
)

// TestValidateGroupConfigsStreams: a group's streams configs are checked as
// Kafka's GroupConfig.validate checks them, against the broker's bounds,
// with Kafka's defaults for the keys the group does not set.
func TestValidateGroupConfigsStreams(t *testing.T) {
	broker := Config{
		StreamsMinSessionTimeout: 10 * time.Second, StreamsMaxSessionTimeout: 60 * time.Second,
		StreamsMinHeartbeatInterval: time.Second, StreamsMaxHeartbeatInterval: 15 * time.Second,
		StreamsMaxStandbyReplicas: new(2),
	}
	for _, tc := range []struct {
		set        map[string]string
		want       string        // "" valid
		maxSession time.Duration // the broker's group.streams.max.session.timeout.ms, if not 60s
	}{
		{nil, "", 0},
		{map[string]string{"streams.session.timeout.ms": "10000", "streams.heartbeat.interval.ms": "1000", "streams.num.standby.replicas": "2"}, "", 0},
		{map[string]string{"share.record.lock.duration.ms": "15000"}, "", 0}, // within the broker's share bounds
		{map[string]string{"streams.heartbeat.interval.ms": "999"}, "streams.heartbeat.interval.ms must be greater than or equal to group.streams.min.heartbeat.interval.ms", 0},
		{map[string]string{"streams.heartbeat.interval.ms": "15001"}, "streams.heartbeat.interval.ms must be less than or equal to group.streams.max.heartbeat.interval.ms", 0},
		{map[string]string{"streams.session.timeout.ms": "9999"}, "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms", 0},
		{map[string]string{"streams.session.timeout.ms": "60001"}, "streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms", 0},
		{map[string]string{"streams.num.standby.replicas": "3"}, "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas", 0},
		{map[string]string{"streams.session.timeout.ms": "12000", "streams.heartbeat.interval.ms": "12000"}, "streams.session.timeout.ms must be greater than streams.heartbeat.interval.ms", 0},
		// The unset session timeout counts at Kafka's 45s, above the max.
		{nil, "streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms", 30 * time.Second},
	} {
		b := broker
		if tc.maxSession > 0 {
			b.StreamsMaxSessionTimeout = tc.maxSession
		}
		got := ""
		if err := b.ValidateGroupConfigs(tc.set); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.set, got, tc.want)
		}
	}
}

// TestStreamsPolicyForGroup: the group's configs override the broker's.
func TestStreamsPolicyForGroup(t *testing.T) {
	broker := StreamsPolicy{InitialDelay: 3000, SessionTimeout: 45000, HeartbeatInterval: 5000, MaxSize: 10, NumStandbys: 0}
	if got := broker.forGroup(nil); got != broker {
		t.Errorf("no group configs: %+v", got)
	}
	got := broker.forGroup(map[string]string{
		"streams.session.timeout.ms": "10000", "streams.heartbeat.interval.ms": "2000",
		"streams.num.standby.replicas": "1", "streams.initial.rebalance.delay.ms": "0",
		"share.record.lock.duration.ms": "15000",
	})
	want := StreamsPolicy{InitialDelay: 0, SessionTimeout: 10000, HeartbeatInterval: 2000, MaxSize: 10, NumStandbys: 1}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
