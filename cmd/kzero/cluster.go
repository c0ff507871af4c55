package main

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
	"kzero/log"
)

// clusterView is the controller as the API handlers see it, with topic
// auto-creation by the broker's defaults and the broker's configs.
type clusterView struct {
	*coord.Controller
	b *broker
}

func (c clusterView) BrokerConfigs() topicconfig.BrokerConfigs {
	return c.b.brokerConfigs(c.Image())
}

func (c clusterView) AutoCreateTopic(ctx context.Context, name string) error {
	res := c.CreateTopics(ctx, []coord.TopicSpec{{Name: name, NumPartitions: -1, ReplicationFactor: -1}}, false)
	if err := res[0].Err; err != nil && err.Code != kerr.TopicAlreadyExists.Code {
		return fmt.Errorf("%s: %w", res[0].Message, err)
	}
	return nil
}

// brokerConfigs are the places a topic config falls back to.
func (b *broker) brokerConfigs(img *metadata.Image) topicconfig.BrokerConfigs {
	return topicconfig.BrokerConfigs{
		Dynamic:        img.BrokerConfigs(strconv.Itoa(int(b.nodeID))),
		ClusterDefault: img.BrokerConfigs(""),
		Static:         b.cfg.props,
	}
}

// topicLogConfig is the log configuration of a topic: its own configs,
// else the broker's.
func (b *broker) topicLogConfig(t *metadata.Topic, img *metadata.Image) log.Config {
	return topicconfig.LogConfig(t.Configs, b.brokerConfigs(img))
}

func (b *broker) minInsync(t *metadata.Topic, img *metadata.Image) int {
	v, _ := topicconfig.Value("min.insync.replicas", t.Configs, b.brokerConfigs(img))
	n, err := strconv.Atoi(v)
	if err != nil {
		return 1
	}
	return n
}

func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// validateDynamicBrokerConfig checks a broker config set at runtime
// (AlterConfigs on a BROKER resource) that is not a topic config synonym:
// it must be a key kzero knows, with a valid value.
func validateDynamicBrokerConfig(name, value string) error {
	k, ok := keys[name]
	if !ok || k.inert {
		return fmt.Errorf("%s cannot be set dynamically", name)
	}
	return k.check(value)
}
