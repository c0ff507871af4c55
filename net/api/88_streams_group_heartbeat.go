package api

// StreamsGroupHeartbeat: v0 (KIP-1071, the streams rebalance protocol).
// The coordinator holds the application's topology (sent on joining) and
// assigns its tasks itself (a sticky task assignor: active tasks balanced
// and sticky, group.streams.num.standby.replicas standby tasks on other
// processes). A member joins with epoch 0, its topology, process id and
// user endpoint, heartbeats every group.streams.heartbeat.interval.ms with
// the tasks it owns, gets its tasks as they change (revoked before they
// move), and leaves with epoch -1. The assignment of an empty group's
// first member waits group.streams.initial.rebalance.delay.ms
// (ASSIGNMENT_DELAYED). The group configs streams.heartbeat.interval.ms,
// streams.session.timeout.ms, streams.num.standby.replicas and
// streams.initial.rebalance.delay.ms (IncrementalAlterConfigs on the
// GROUP resource) override the broker's for their group from its next
// heartbeat.
//
// As in Kafka 4.3, no warm-up task is ever assigned and no task offsets
// are kept: a member that reports a warm-up task, TaskOffsets or
// TaskEndOffsets is refused with INVALID_REQUEST ("WarmupTasks are not
// supported yet.", ...), before any other check of the request. The
// response's AcceptableRecoveryLag (10000) and TaskOffsetIntervalMs
// (60000) are Kafka's constants.
//
// The topology is checked against the cluster's topics: missing source
// topics, missing internal topics and wrongly partitioned ones are
// statuses in the response, and the coordinator's broker creates the
// missing repartition and changelog topics itself, in the background,
// with the partition counts the topology implies (CREATE on the cluster
// or on the topics is needed, else a status says so). A joining member
// needs READ on the group and DESCRIBE on every topic its topology names
// (TOPIC_AUTHORIZATION_FAILED).
//
// Errors: FENCED_MEMBER_EPOCH, UNKNOWN_MEMBER_ID, GROUP_MAX_SIZE_REACHED,
// GROUP_ID_NOT_FOUND (a group of another type), STREAMS_INVALID_TOPOLOGY,
// INVALID_REQUEST (also for static members, which Kafka supports from
// 4.4, and for source topic regular expressions and topology updates,
// which Kafka 4.3 refuses too), and the coordinator errors. v0 only, as
// Kafka 4.3 (StreamsGroupHeartbeatRequest.json validVersions "0"); v1
// (Kafka 4.4: int64 AcceptableRecoveryLag, TopologyDescriptionRequired,
// members that report task offsets and get warm-up tasks) is not served.

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord"
	"kzero/coord/group"
	"kzero/net/server"
)

func init() {
	register(kmsg.StreamsGroupHeartbeat.Int16(), 0, 0, (*Handler).streamsGroupHeartbeat)
}

func (h *Handler) streamsGroupHeartbeat(req *server.Request) error {
	r := kmsg.NewPtrStreamsGroupHeartbeatRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	if !h.authorized(req, opRead, resGroup, r.Group) {
		resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
		resp.ErrorCode = kerr.GroupAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	if r.Topology != nil {
		// The topology's topics must be DESCRIBE-able, as Kafka checks.
		if denied := h.deniedTopics(req, r.Topology); len(denied) > 0 {
			resp := kmsg.NewPtrStreamsGroupHeartbeatResponse()
			resp.ErrorCode = kerr.TopicAuthorizationFailed.Code
			msg := "Unauthorized to DESCRIBE on topics " + strings.Join(denied, ", ") + "."
			resp.ErrorMessage = &msg
			respond(req, resp)
			return nil
		}
	}
	res := h.groups.StreamsGroupHeartbeat(r, string(req.Header.ClientID), clientHost(req), h.cluster.Image().GroupConfigs(r.Group))
	res.Response.ErrorCode = errCode(res.Err)
	if len(res.Create) > 0 {
		if h.authorized(req, opCreate, resCluster, clusterName) || h.allAuthorized(req, opCreate, res.Create) {
			for _, t := range res.Create {
				h.startStreamsTopicCreate(t)
			}
		} else {
			s := kmsg.NewStreamsGroupHeartbeatResponseStatus()
			s.StatusCode = 3 // MISSING_INTERNAL_TOPICS
			s.StatusDetail = "Unauthorized to CREATE on topics " + topicNames(res.Create) + "."
			res.Response.Status = append(res.Response.Status, s)
		}
	}
	respond(req, res.Response)
	return nil
}

// deniedTopics lists the topics a topology names (sources, repartition
// and changelog topics) that the principal may not DESCRIBE, sorted.
func (h *Handler) deniedTopics(req *server.Request, t *kmsg.StreamsGroupHeartbeatRequestTopology) []string {
	seen := map[string]bool{}
	var denied []string
	check := func(name string) {
		if seen[name] {
			return
		}
		seen[name] = true
		if !h.authorized(req, opDescribe, resTopic, name) {
			denied = append(denied, name)
		}
	}
	for _, s := range t.Subtopologies {
		for _, n := range s.SourceTopics {
			check(n)
		}
		for _, n := range s.RepartitionSinkTopics {
			check(n)
		}
		for _, ti := range s.StateChangelogTopics {
			check(ti.Topic)
		}
		for _, ti := range s.RepartitionSourceTopics {
			check(ti.Topic)
		}
	}
	slices.Sort(denied)
	return denied
}

// allAuthorized reports whether the principal may op every topic named.
func (h *Handler) allAuthorized(req *server.Request, op int8, ts []group.StreamsTopic) bool {
	for _, t := range ts {
		if !h.authorized(req, op, resTopic, t.Name) {
			return false
		}
	}
	return true
}

func topicNames(ts []group.StreamsTopic) string {
	names := make([]string, len(ts))
	for i, t := range ts {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// startStreamsTopicCreate creates a streams group's internal topic in the
// background, unless its creation is in flight already, as Kafka's broker
// sends the heartbeat's creatable topics to its controller without waiting.
// A failure is only logged; the members' next heartbeat asks again.
func (h *Handler) startStreamsTopicCreate(t group.StreamsTopic) {
	c := &h.creating
	c.mu.Lock()
	if _, busy := c.inflight[t.Name]; busy {
		c.mu.Unlock()
		return
	}
	if c.inflight == nil {
		c.inflight = map[string]struct{}{}
	}
	c.inflight[t.Name] = struct{}{}
	c.mu.Unlock()
	spec := coord.TopicSpec{Name: t.Name, NumPartitions: t.Partitions, ReplicationFactor: t.ReplicationFactor, Configs: t.Configs}
	if spec.ReplicationFactor <= 0 {
		spec.ReplicationFactor = -1 // default.replication.factor
	}
	go func() {
		defer func() {
			c.mu.Lock()
			delete(c.inflight, t.Name)
			c.mu.Unlock()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), autoCreateTimeout)
		defer cancel()
		res := h.cluster.CreateTopics(ctx, []coord.TopicSpec{spec}, false)
		if err := res[0].Err; err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
			h.logger.Warn("cannot create streams group internal topic", "topic", t.Name, "err", fmt.Errorf("%s: %w", res[0].Message, err))
		}
	}()
}
