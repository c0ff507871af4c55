package group

import (
	"testing"
	"time"
)

// TestValidateGroupConfigsBounds: consumer and share group configs are
// checked against the broker's bounds (Kafka's GroupConfig.validate),
// not fixed ranges, and a max standby replicas of 0 is kept.
func TestValidateGroupConfigsBounds(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		set  map[string]string
		want string
	}{
		{Config{}, map[string]string{"share.record.lock.duration.ms": "14999"}, "share.record.lock.duration.ms must be greater than or equal to group.share.min.record.lock.duration.ms"},
		{Config{}, map[string]string{"share.record.lock.duration.ms": "60001"}, "share.record.lock.duration.ms must be less than or equal to group.share.max.record.lock.duration.ms"},
		{Config{Share: ShareConfig{Bounds: ShareBounds{MaxRecordLockDuration: time.Hour}}}, map[string]string{"share.record.lock.duration.ms": "3600000"}, ""},
		{Config{}, map[string]string{"share.delivery.count.limit": "11"}, "share.delivery.count.limit must be less than or equal to group.share.max.delivery.count.limit"},
		{Config{Share: ShareConfig{Bounds: ShareBounds{MinDeliveryCountLimit: 3}}}, map[string]string{"share.delivery.count.limit": "2"}, "share.delivery.count.limit must be greater than or equal to group.share.min.delivery.count.limit"},
		{Config{}, map[string]string{"consumer.session.timeout.ms": "44999"}, "consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms"},
		{Config{ConsumerMinSessionTimeout: 10 * time.Second}, map[string]string{"consumer.session.timeout.ms": "10000"}, ""},
		{Config{}, map[string]string{"consumer.heartbeat.interval.ms": "15001"}, "consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms"},
		{Config{}, map[string]string{"share.heartbeat.interval.ms": "4999"}, "share.heartbeat.interval.ms must be greater than or equal to group.share.min.heartbeat.interval.ms"},
		{Config{StreamsMaxStandbyReplicas: new(0)}, map[string]string{"streams.num.standby.replicas": "1"}, "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas"},
		{Config{StreamsMaxStandbyReplicas: new(0)}, map[string]string{"streams.num.standby.replicas": "0"}, ""},
		{Config{}, map[string]string{"consumer.assignment.interval.ms": "15001"}, "consumer.assignment.interval.ms must be less than or equal to group.consumer.max.assignment.interval.ms"},
		{Config{ConsumerMaxAssignmentInterval: time.Minute}, map[string]string{"consumer.assignment.interval.ms": "60000"}, ""},
		{Config{ConsumerMinAssignmentInterval: 500 * time.Millisecond}, map[string]string{"consumer.assignment.interval.ms": "499"}, "consumer.assignment.interval.ms must be greater than or equal to group.consumer.min.assignment.interval.ms"},
		{Config{}, map[string]string{"consumer.assignment.interval.ms": "0"}, ""},
		{Config{}, map[string]string{"share.assignment.interval.ms": "15001"}, "share.assignment.interval.ms must be less than or equal to group.share.max.assignment.interval.ms"},
		{Config{Share: ShareConfig{MinAssignmentInterval: 2 * time.Second}}, map[string]string{}, "share.assignment.interval.ms must be greater than or equal to group.share.min.assignment.interval.ms"},
		{Config{Share: ShareConfig{MinAssignmentInterval: 2 * time.Second}}, map[string]string{"share.assignment.interval.ms": "2000"}, ""},
	} {
		got := ""
		if err := tc.cfg.ValidateGroupConfigs(tc.set); err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("%v: got %q, want %q", tc.set, got, tc.want)
		}
	}
}

// TestStreamsMaxStandbyZero: group.streams.max.standby.replicas=0 stays
// 0 (nil is Kafka's default, 2).
func TestStreamsMaxStandbyZero(t *testing.T) {
	c := Config{StreamsMaxStandbyReplicas: new(0), StreamsNumStandbyReplicas: 1}
	c.setStreamsDefaults()
	if *c.StreamsMaxStandbyReplicas != 0 || c.StreamsNumStandbyReplicas != 0 {
		t.Errorf("max %d num %d, want 0 0", *c.StreamsMaxStandbyReplicas, c.StreamsNumStandbyReplicas)
	}
	var d Config
	d.setStreamsDefaults()
	if *d.StreamsMaxStandbyReplicas != 2 {
		t.Errorf("unset max = %d, want 2", *d.StreamsMaxStandbyReplicas)
	}
}
