package topicconfig

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ErrUnknown is wrapped by the errors for a config name that is not a topic
// config. Both it and an invalid value map to Kafka's INVALID_CONFIG.
var ErrUnknown = errors.New("unknown topic config")

// Validate checks one topic config's value: the name is known, the value
// parses as the config's type and lies in its valid range.
func Validate(name, value string) error {
	d, ok := byName[name]
	if !ok {
		return fmt.Errorf("%w name: %s", ErrUnknown, name)
	}
	return d.Validate(value)
}

// Validate checks a value for this config.
func (d *Def) Validate(value string) error {
	if err := checkType(d.Type, value); err != nil {
		return fmt.Errorf("Invalid value %s for configuration %s: %w", value, d.Name, err)
	}
	if d.check != nil {
		if err := d.check(value); err != nil {
			return fmt.Errorf("Invalid value %s for configuration %s: %w", value, d.Name, err)
		}
	}
	return nil
}

// ValidateAll checks a topic's whole set of dynamic configs: each value, and
// the rules across configs Kafka applies (min.compaction.lag.ms not above
// max.compaction.lag.ms; no remote storage, which kzero does not have).
func ValidateAll(configs map[string]string) error {
	for _, name := range slices.Sorted(maps.Keys(configs)) {
		if err := Validate(name, configs[name]); err != nil {
			return err
		}
	}
	minLag, maxLag := longOr(configs, "min.compaction.lag.ms", 0), longOr(configs, "max.compaction.lag.ms", math.MaxInt64)
	if minLag > maxLag {
		return fmt.Errorf("conflict topic config setting min.compaction.lag.ms (%d) > max.compaction.lag.ms (%d)", minLag, maxLag)
	}
	if v, ok := configs["remote.storage.enable"]; ok && strings.EqualFold(strings.TrimSpace(v), "true") {
		return errors.New("Tiered Storage functionality is disabled in the broker. Topic cannot be configured with remote log storage.")
	}
	return nil
}

// ValidateBroker checks the value of a broker config that stands in for a
// topic config (log.retention.hours, message.max.bytes, ...): it parses as
// the broker config's type, and once converted, is a valid value of the
// topic config. known is false for broker configs that are no synonym.
func ValidateBroker(name, value string) (known bool, err error) {
	s, ok := bySynonym[name]
	if !ok {
		return false, nil
	}
	if err := checkType(s.syn.Type, value); err != nil {
		return true, fmt.Errorf("Invalid value %s for configuration %s: %w", value, name, err)
	}
	v, ok := convert(s.syn, value)
	if !ok {
		return true, fmt.Errorf("Invalid value %s for configuration %s: out of range", value, name)
	}
	if s.def.check != nil {
		if err := s.def.check(v); err != nil {
			return true, fmt.Errorf("Invalid value %s for configuration %s: %w", value, name, err)
		}
	}
	return true, nil
}

func longOr(m map[string]string, name string, def int64) int64 {
	if v, ok := m[name]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return n
		}
	}
	return def
}

// checkType parses v as Kafka's ConfigDef parses a type: numbers and
// booleans trimmed, booleans case-insensitive, lists comma-separated.
func checkType(t kmsg.ConfigType, v string) error {
	v = strings.TrimSpace(v)
	var err error
	switch t {
	case kmsg.ConfigTypeBoolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			err = errors.New("Expected value to be either true or false")
		}
	case kmsg.ConfigTypeInt:
		_, err = strconv.ParseInt(v, 10, 32)
	case kmsg.ConfigTypeShort:
		_, err = strconv.ParseInt(v, 10, 16)
	case kmsg.ConfigTypeLong:
		_, err = strconv.ParseInt(v, 10, 64)
	case kmsg.ConfigTypeDouble:
		var f float64
		f, err = strconv.ParseFloat(v, 64)
		if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			err = errors.New("Not a number")
		}
	}
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) {
			return fmt.Errorf("Not a number of type %s", typeName(t))
		}
	}
	return err
}

func typeName(t kmsg.ConfigType) string {
	switch t {
	case kmsg.ConfigTypeInt:
		return "INT"
	case kmsg.ConfigTypeShort:
		return "SHORT"
	case kmsg.ConfigTypeLong:
		return "LONG"
	case kmsg.ConfigTypeDouble:
		return "DOUBLE"
	}
	return t.String()
}

// splitList splits a LIST value: comma-separated, each item trimmed, the
// empty string an empty list.
func splitList(v string) []string {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	items := strings.Split(v, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items
}

func atLeast(min int64) func(string) error {
	return func(v string) error {
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if n < min {
			return fmt.Errorf("Value must be at least %d", min)
		}
		return nil
	}
}

func intBetween(lo, hi int64) func(string) error {
	return func(v string) error {
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if n < lo || n > hi {
			return fmt.Errorf("Value must be in range [%d, %d]", lo, hi)
		}
		return nil
	}
}

func gzipLevel(v string) error {
	n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if n != -1 && (n < 1 || n > 9) {
		return errors.New("Value must be in range [1, 9] or -1")
	}
	return nil
}

func doubleBetween(lo, hi float64) func(string) error {
	return func(v string) error {
		f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if f < lo || f > hi {
			return fmt.Errorf("Value must be in range [%g, %g]", lo, hi)
		}
		return nil
	}
}

func stringIn(valid ...string) func(string) error {
	return func(v string) error {
		if !slices.Contains(valid, strings.TrimSpace(v)) {
			return fmt.Errorf("String must be one of: %s", strings.Join(valid, ", "))
		}
		return nil
	}
}

func listIn(valid ...string) func(string) error {
	return func(v string) error {
		for _, item := range splitList(v) {
			if !slices.Contains(valid, item) {
				return fmt.Errorf("Invalid value %s, valid values are: %s", item, strings.Join(valid, ", "))
			}
		}
		return nil
	}
}

// throttledReplicas accepts "*" or "partition:broker" pairs of integers.
func throttledReplicas(v string) error {
	items := splitList(v)
	if len(items) == 1 && items[0] == "*" {
		return nil
	}
	for _, item := range items {
		p, b, ok := strings.Cut(item, ":")
		if !ok {
			return errors.New("must be the literal '*' or a list of replicas in the format [partitionId]:[brokerId],[partitionId]:[brokerId],...")
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32); err != nil {
			return errors.New("must be the literal '*' or a list of replicas in the format [partitionId]:[brokerId],[partitionId]:[brokerId],...")
		}
		if _, err := strconv.ParseInt(strings.TrimSpace(b), 10, 32); err != nil {
			return errors.New("must be the literal '*' or a list of replicas in the format [partitionId]:[brokerId],[partitionId]:[brokerId],...")
		}
	}
	return nil
}

// convert turns a broker synonym's value into the topic config's unit.
func convert(s Synonym, v string) (string, bool) {
	if s.Scale <= 1 {
		return strings.TrimSpace(v), true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return "", false
	}
	if n > math.MaxInt64/s.Scale || n < math.MinInt64/s.Scale {
		return "", false
	}
	return strconv.FormatInt(n*s.Scale, 10), true
}
