package main

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
	"kzero/log"
)

// clusterView gives the API handlers the controller's image and topic
// auto-creation with the broker's defaults.
type clusterView struct {
	ctrl *coord.Controller
	cfg  *brokerConfig
}

func (c clusterView) Image() *metadata.Image { return c.ctrl.Image() }

func (c clusterView) AutoCreateTopic(ctx context.Context, name string) error {
	res := c.ctrl.CreateTopics(ctx, []coord.TopicSpec{{
		Name:              name,
		NumPartitions:     int32(c.cfg.int("num.partitions")),
		ReplicationFactor: int16(c.cfg.int("default.replication.factor")),
	}}, false)
	if err := res[0].Err; err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return err
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
