package api

// ListConfigResources: v0-v1. KIP-1000 added it as
// ListClientMetricsResources (v0: the client metrics subscriptions, by
// name); KIP-1142 renamed it in Kafka 4.1 and made v1 list any of the
// resource types DescribeConfigs knows: TOPIC, BROKER, BROKER_LOGGER,
// CLIENT_METRICS and GROUP, all of them when the request names none. A
// type outside those fails the whole request with UNSUPPORTED_VERSION,
// as Kafka answers.
//
// kzero lists every topic (internal ones too) and every live broker, by
// id. It has no client metrics subscriptions (KIP-714's telemetry is not
// served), no per-group configs and no broker loggers to configure:
// DescribeConfigs refuses those resources, so none are listed, and v0
// always answers an empty list.

import (
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/net/server"
)

func init() { register(kmsg.ListConfigResources.Int16(), 0, 1, (*Handler).listConfigResources) }

// listableTypes are the resource types ListConfigResources v1 accepts.
var listableTypes = []kmsg.ConfigResourceType{
	kmsg.ConfigResourceTypeTopic, kmsg.ConfigResourceTypeBroker, kmsg.ConfigResourceTypeBrokerLogger,
	kmsg.ConfigResourceTypeClientMetrics, kmsg.ConfigResourceTypeGroupConfig,
}

func (h *Handler) listConfigResources(req *server.Request) error {
	r := kmsg.NewPtrListConfigResourcesRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrListConfigResourcesResponse()
	if r.Version == 0 {
		respond(req, resp) // client metrics resources only: none
		return nil
	}
	want := map[kmsg.ConfigResourceType]bool{}
	for _, t := range r.ResourceTypes {
		if !slices.Contains(listableTypes, kmsg.ConfigResourceType(t)) {
			resp.ErrorCode = kerr.UnsupportedVersion.Code
			respond(req, resp)
			return nil
		}
		want[kmsg.ConfigResourceType(t)] = true
	}
	all := len(r.ResourceTypes) == 0
	add := func(name string, t kmsg.ConfigResourceType) {
		c := kmsg.NewListConfigResourcesResponseConfigResource()
		c.Name, c.Type = name, int8(t)
		resp.ConfigResources = append(resp.ConfigResources, c)
	}
	img := h.cluster.Image()
	if all || want[kmsg.ConfigResourceTypeTopic] {
		for _, t := range img.Topics() {
			add(t.Name, kmsg.ConfigResourceTypeTopic)
		}
	}
	if all || want[kmsg.ConfigResourceTypeBroker] {
		for _, b := range img.LiveBrokers() {
			add(strconv.Itoa(int(b.ID)), kmsg.ConfigResourceTypeBroker)
		}
	}
	respond(req, resp)
	return nil
}
