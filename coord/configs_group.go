package coord

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
)

// GroupConfig is one dynamic group config (Kafka's GroupConfig): its key,
// its default, and how a value is checked.
type GroupConfig struct {
	Key      string
	Default  string
	Type     kmsg.ConfigType
	validate func(v string) error
}

func intIn(lo, hi int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("must be an int in [%d, %d]", lo, hi)
		}
		return nil
	}
}

// atLeast checks an int config as Kafka's ConfigDef.Range.atLeast does.
func atLeast(lo int64) func(string) error {
	return func(v string) error {
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return fmt.Errorf("Not a number of type INT")
		}
		if n < lo {
			return fmt.Errorf("Value must be at least %d", lo)
		}
		return nil
	}
}

func oneOf(vals ...string) func(string) error {
	return func(v string) error {
		if !slices.Contains(vals, v) {
			return fmt.Errorf("must be one of %s", strings.Join(vals, ", "))
		}
		return nil
	}
}

// isBool checks a boolean config as Kafka's ConfigDef parses one:
// true or false, any case, spaces trimmed.
func isBool(v string) error {
	v = strings.TrimSpace(v)
	if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return fmt.Errorf("Expected value to be either true or false")
	}
	return nil
}

// GroupConfigs are the group configs kzero knows and honours, with Kafka's
// defaults (where Kafka's default is the broker's config of the same
// name, the broker default). The group coordinator applies the session
// timeouts, heartbeat intervals and assignment intervals (consumer.*,
// share.*, streams.*) at a group's next heartbeat, as it does the other
// streams configs.
var GroupConfigs = []GroupConfig{
	{"consumer.assignment.interval.ms", "1000", kmsg.ConfigTypeInt, atLeast(0)},
	{"consumer.heartbeat.interval.ms", "5000", kmsg.ConfigTypeInt, atLeast(1)},
	{"consumer.session.timeout.ms", "45000", kmsg.ConfigTypeInt, atLeast(1)},
	{"share.assignment.interval.ms", "1000", kmsg.ConfigTypeInt, atLeast(0)},
	{"share.heartbeat.interval.ms", "5000", kmsg.ConfigTypeInt, atLeast(1)},
	{"share.session.timeout.ms", "45000", kmsg.ConfigTypeInt, atLeast(1)},
	{"share.record.lock.duration.ms", "30000", kmsg.ConfigTypeInt, intIn(1000, 3600000)},
	{"share.delivery.count.limit", "5", kmsg.ConfigTypeInt, intIn(2, 10)},
	{"share.partition.max.record.locks", "2000", kmsg.ConfigTypeInt, intIn(100, 10000)},
	{"share.auto.offset.reset", "latest", kmsg.ConfigTypeString, validShareReset},
	{"share.isolation.level", "read_uncommitted", kmsg.ConfigTypeString, oneOf("read_committed", "read_uncommitted")},
	// KIP-1222 / KIP-1240: whether the group's members may RENEW their
	// acquisition locks (Kafka 4.3: group config only, no broker key).
	{"share.renew.acknowledge.enable", "true", kmsg.ConfigTypeBoolean, isBool},
	{"streams.assignment.interval.ms", "1000", kmsg.ConfigTypeInt, atLeast(0)},
	{"streams.heartbeat.interval.ms", "5000", kmsg.ConfigTypeInt, atLeast(1)},
	{"streams.initial.rebalance.delay.ms", "3000", kmsg.ConfigTypeInt, atLeast(0)},
	{"streams.num.standby.replicas", "0", kmsg.ConfigTypeInt, atLeast(0)},
	{"streams.session.timeout.ms", "45000", kmsg.ConfigTypeInt, atLeast(1)},
}

// BrokerKey is the broker config a group config overrides, whose value a
// group that does not set the key runs with (its synonym in
// DescribeConfigs): the key with the "group." prefix
// (group.consumer.session.timeout.ms), "" for the keys only groups have
// (share.auto.offset.reset, share.isolation.level,
// share.renew.acknowledge.enable).
func (c GroupConfig) BrokerKey() string {
	switch c.Key {
	case "share.auto.offset.reset", "share.isolation.level", "share.renew.acknowledge.enable":
		return ""
	}
	return "group." + c.Key
}

// validShareReset checks share.auto.offset.reset: latest, earliest, or
// by_duration:<ISO-8601 duration>.
func validShareReset(v string) error {
	if v == "latest" || v == "earliest" {
		return nil
	}
	if d, ok := strings.CutPrefix(v, "by_duration:"); ok && strings.HasPrefix(d, "P") && len(d) > 1 {
		return nil
	}
	return fmt.Errorf("must be latest, earliest or by_duration:<ISO-8601 duration>")
}

// LookupGroupConfig finds a group config by key.
func LookupGroupConfig(key string) (GroupConfig, bool) {
	for _, c := range GroupConfigs {
		if c.Key == key {
			return c, true
		}
	}
	return GroupConfig{}, false
}

// planGroupConfigs computes the records of a group's config change
// (IncrementalAlterConfigs on a GROUP resource): each value in its own
// range, then the group's configs together against the broker's bounds
// (bounds, when not nil).
func planGroupConfigs(img *metadata.Image, a ConfigAlter, bounds func(map[string]string) error) ([]metadata.Record, error) {
	if a.Name == "" {
		return nil, metadata.Reject(kerr.InvalidRequest, "Group name must not be empty.")
	}
	for _, ch := range a.Changes {
		if _, ok := LookupGroupConfig(ch.Key); !ok && ch.Op != OpDelete {
			return nil, metadata.Reject(kerr.InvalidConfig, "Unknown group config name: %s", ch.Key)
		}
	}
	cur := img.GroupConfigs(a.Name)
	next, rej := applyChanges(cur, a, func(string) bool { return false }, func(string) string { return "" })
	if rej != nil {
		return nil, rej
	}
	for _, k := range slices.Sorted(maps.Keys(next)) {
		c, _ := LookupGroupConfig(k)
		if err := c.validate(next[k]); err != nil {
			return nil, metadata.Reject(kerr.InvalidConfig, "Invalid value %s for configuration %s: %v", next[k], k, err)
		}
	}
	if bounds != nil {
		if err := bounds(next); err != nil {
			return nil, metadata.Reject(kerr.InvalidConfig, "%v", err)
		}
	}
	return configDiff(metadata.ResourceGroup, a.Name, cur, next), nil
}
