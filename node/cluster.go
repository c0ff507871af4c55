package node

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
	"kzero/log"
)

// clusterView is the controller as the API handlers see it, with topic
// auto-creation by the broker's defaults and the broker's configs.
type clusterView struct {
	*coord.Controller
	n *Node
}

func (c clusterView) BrokerConfigs() topicconfig.BrokerConfigs {
	return c.n.brokerConfigs(c.Image())
}

func (c clusterView) AutoCreateTopic(ctx context.Context, name string) error {
	res := c.CreateTopics(ctx, []coord.TopicSpec{{Name: name, NumPartitions: -1, ReplicationFactor: -1}}, false)
	if err := res[0].Err; err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return fmt.Errorf("%s: %w", res[0].Message, err)
	}
	return nil
}

// brokerConfigs are the places a topic config falls back to.
func (n *Node) brokerConfigs(img *metadata.Image) topicconfig.BrokerConfigs {
	return topicconfig.BrokerConfigs{
		Dynamic:        img.BrokerConfigs(strconv.Itoa(int(n.nodeID))),
		ClusterDefault: img.BrokerConfigs(""),
		Static:         n.cfg.StaticConfigs,
		Keys:           n.cfg.BrokerKeys,
	}
}

// applyDynamicBrokerConfigs applies the dynamic broker configs that are
// not topic config synonyms (those reach the logs with their topics):
// log.cleaner.backoff.ms and the connection limits. A value removed falls
// back to the static one.
func (n *Node) applyDynamicBrokerConfigs(img *metadata.Image) {
	n.applyConnLimits(img)
	backoff := n.cfg.Logs.CleanerBackoff
	for _, s := range n.brokerConfigs(img).Synonyms("log.cleaner.backoff.ms") {
		if s.Source == kmsg.ConfigSourceStaticBrokerConfig {
			break
		}
		if ms, err := strconv.ParseInt(s.Value, 10, 64); err == nil && ms > 0 {
			backoff = time.Duration(ms) * time.Millisecond
			break
		}
	}
	n.logs.SetCleanerBackoff(backoff)
}

// topicLogConfig is the log configuration of a topic: its own configs,
// else the broker's.
func (n *Node) topicLogConfig(t *metadata.Topic, img *metadata.Image) log.Config {
	return topicconfig.LogConfig(t.Configs, n.brokerConfigs(img))
}

func (n *Node) minInsync(t *metadata.Topic, img *metadata.Image) int {
	v, _ := topicconfig.Value("min.insync.replicas", t.Configs, n.brokerConfigs(img))
	min, err := strconv.Atoi(v)
	if err != nil {
		return 1
	}
	return min
}

// staticMinInsync is min.insync.replicas in server.properties, 1 when
// unset or not a number (the controller's fallback for topics without
// their own value or a cluster-wide dynamic one).
func staticMinInsync(static map[string]string) int {
	n, err := strconv.Atoi(static["min.insync.replicas"])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// applyConnLimits gives the listener the connection limits with the
// dynamic configs; limits that cannot be computed (an override's host
// that no longer resolves) leave the current ones.
func (n *Node) applyConnLimits(img *metadata.Image) {
	if n.cfg.ConnLimits == nil || n.srv == nil {
		return
	}
	dynamic := maps.Clone(img.BrokerConfigs(""))
	if dynamic == nil {
		dynamic = map[string]string{}
	}
	maps.Copy(dynamic, img.BrokerConfigs(strconv.Itoa(int(n.nodeID))))
	lim, err := n.cfg.ConnLimits(dynamic)
	if err != nil {
		n.logger.Warn("connection limits not updated", "err", err)
		return
	}
	lim.IPRate = n.ipConnectionRate
	n.srv.SetConnLimits(lim)
}
