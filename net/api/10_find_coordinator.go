package api

// FindCoordinator: v0-v6. Key type GROUP (0): the broker leading the
// group's __consumer_offsets partition (Kafka's hash of the group id, see
// group.PartitionFor). The topic is created on first use with
// offsets.topic.num.partitions partitions, replication factor
// min(offsets.topic.replication.factor, registered brokers), compacted.
// Batched keys from v4 (KIP-699).
//
// Kafka never makes FindCoordinator wait: while the internal topic does
// not exist (its creation is started in the background, one at a time,
// as for Metadata auto-creation), or the key's partition has no leader,
// or its leader is fenced or has no listener, the answer is
// COORDINATOR_NOT_AVAILABLE at once and the client retries. So it is when
// this broker leads the partition but its coordinator has not taken it up
// yet (the image that made it leader is being applied): naming it would
// only earn the client a NOT_COORDINATOR and another round trip. A
// coordinator still loading the partition's state is named, as Kafka
// names it: the requests sent to it answer COORDINATOR_LOAD_IN_PROGRESS
// until it is done, and the client retries them there.
//
// Key type TRANSACTION (1): the broker leading the transactional id's
// __transaction_state partition (the same hash), the topic created on first
// use with transaction.state.log.num.partitions partitions. SHARE (2, v6,
// KIP-932; what brokers ask): the key is "group:topicId:partition", and
// the coordinator the broker leading its __share_group_state partition
// (the same hash of the whole key), the topic created on first use with
// share.coordinator.state.topic.num.partitions partitions; a malformed key
// is INVALID_REQUEST. Other key types are INVALID_REQUEST.

import (
	"context"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/group"
	"kzero/coord/metadata"
	"kzero/coord/share"
	"kzero/coord/txn"
	"kzero/net/server"
)

func init() { register(kmsg.FindCoordinator.Int16(), 0, 6, (*Handler).findCoordinator) }

// Coordinator key types.
const (
	keyGroup       = 0
	keyTransaction = 1
	keyShare       = 2
)

func (h *Handler) findCoordinator(req *server.Request) error {
	r := kmsg.NewPtrFindCoordinatorRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrFindCoordinatorResponse()
	keys := r.CoordinatorKeys
	if r.Version < 4 {
		keys = []string{r.CoordinatorKey}
	}
	for _, key := range keys {
		if r.CoordinatorType == keyShare && !h.authorized(req, opClusterAct, resCluster, clusterName) {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.NodeID, c.Port, c.ErrorCode = key, -1, -1, kerr.ClusterAuthorizationFailed.Code
			resp.Coordinators = append(resp.Coordinators, c)
			continue
		}
		if typ := coordinatorResource(r.CoordinatorType); typ != 0 && !h.authorized(req, opDescribe, typ, key) {
			c := kmsg.NewFindCoordinatorResponseCoordinator()
			c.Key, c.NodeID, c.Port = key, -1, -1
			c.ErrorCode = kerr.GroupAuthorizationFailed.Code
			if typ == resTxnID {
				c.ErrorCode = kerr.TransactionalIDAuthorizationFailed.Code
			}
			resp.Coordinators = append(resp.Coordinators, c)
			continue
		}
		c := h.coordinatorFor(key, r.CoordinatorType, req.Conn().Listener())
		c.Key = key
		resp.Coordinators = append(resp.Coordinators, c)
	}
	if r.Version < 4 && len(resp.Coordinators) == 1 {
		c := resp.Coordinators[0]
		resp.ErrorCode, resp.ErrorMessage = c.ErrorCode, c.ErrorMessage
		resp.NodeID, resp.Host, resp.Port = c.NodeID, c.Host, c.Port
		resp.Coordinators = nil
	}
	respond(req, resp)
	return nil
}

// coordinatorFor finds the coordinator of one key.
func (h *Handler) coordinatorFor(key string, keyType int8, listener string) kmsg.FindCoordinatorResponseCoordinator {
	c := kmsg.NewFindCoordinatorResponseCoordinator()
	c.NodeID, c.Port = -1, -1
	fail := func(code int16, msg string) kmsg.FindCoordinatorResponseCoordinator {
		c.ErrorCode, c.ErrorMessage = code, &msg
		return c
	}
	var name string
	var leading func() []int32 // the partitions this broker's coordinator has taken
	switch keyType {
	case keyGroup:
		name, leading = group.TopicName, h.groups.Leading
	case keyTransaction:
		name, leading = txn.TopicName, h.txns.Leading
	case keyShare:
		st := h.shares.Store()
		if st == nil {
			return fail(kerr.CoordinatorNotAvailable.Code, "no share coordinator")
		}
		if !share.ValidStateKey(key) {
			return fail(kerr.InvalidRequest.Code, "Invalid coordinator key: "+key)
		}
		name, leading = share.StateTopic, st.Leading
	default:
		return fail(kerr.InvalidRequest.Code, "unknown coordinator key type")
	}
	img := h.cluster.Image()
	t := img.Topic(name)
	if t == nil {
		h.startAutoCreate(name)
		return fail(kerr.CoordinatorNotAvailable.Code, "the coordinator's internal topic is being created")
	}
	if len(t.Partitions) == 0 {
		return fail(kerr.CoordinatorNotAvailable.Code, "the coordinator's internal topic is not available")
	}
	p := t.Partitions[group.PartitionFor(key, int32(len(t.Partitions)))]
	host, port, ok := endpoint(img, p.Leader, listener)
	if b, known := img.Broker(p.Leader); !ok || !known || b.Fenced {
		return fail(kerr.CoordinatorNotAvailable.Code, "the coordinator's partition has no live leader")
	}
	if p.Leader == h.cfg.NodeID && !slices.Contains(leading(), p.Partition) {
		return fail(kerr.CoordinatorNotAvailable.Code, "this broker leads the coordinator's partition but has not taken it up yet")
	}
	c.NodeID, c.Host, c.Port = p.Leader, host, port
	return c
}

// offsetsTopic returns __consumer_offsets, creating it if it does not exist
// yet; nil if it cannot be created.
func (h *Handler) offsetsTopic() (*metadata.Topic, *metadata.Image) {
	return h.internalTopic(group.TopicName, h.groups.TopicSpec)
}

// internalTopic returns a coordinator's internal topic, creating it as
// spec says if it does not exist yet; nil if it cannot be created.
func (h *Handler) internalTopic(name string, spec func(liveBrokers int) (int32, int16, map[string]string)) (*metadata.Topic, *metadata.Image) {
	img := h.cluster.Image()
	if t := img.Topic(name); t != nil {
		return t, img
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.createInternalTopic(ctx, name, spec); err != nil {
		h.logger.Warn("cannot create an internal topic", "topic", name, "err", err)
	}
	img = h.cluster.Image()
	return img.Topic(name), img
}

// endpoint is a broker's address on the listener named listener, the
// one the client connected through (Kafka answers each client with the
// addresses of its own listener).
func endpoint(img *metadata.Image, id int32, listener string) (string, int32, bool) {
	b, ok := img.Broker(id)
	if !ok {
		return "", 0, false
	}
	for _, l := range b.Listeners {
		if l.Name == listener {
			return l.Host, l.Port, true
		}
	}
	return "", 0, false
}

// coordinatorResource is the ACL resource type of a coordinator key: a
// group or a transactional id (DESCRIBE on it is needed); 0 for others.
func coordinatorResource(keyType int8) int8 {
	switch keyType {
	case keyGroup:
		return resGroup
	case keyTransaction:
		return resTxnID
	}
	return 0
}
