package api

// Metadata: v0-v13 (v0-v3 restored by KAFKA-18648 for kafka-python and
// aiokafka). Topics by name, or by id from v10. A null topic list (or an
// empty one in v0) asks for every topic. A missing topic named in the
// request is created when the request allows it (always before v4) and
// auto.create.topics.enable is set, as Kafka 4.x (KRaft) does it: the
// creation starts in the background and this response answers the topic
// UNKNOWN_TOPIC_OR_PARTITION, with no partitions and no id, in every
// version; the client's retry finds the topic. (Kafka's ZooKeeper-era
// LEADER_NOT_AVAILABLE went with ZooKeeper.) An invalid name is
// INVALID_TOPIC_EXCEPTION and is not created. Topics named by id are
// never created.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.Metadata.Int16(), 0, 13, (*Handler).metadata) }

// authorizedOperationsOmitted is what Kafka returns when the client did not
// ask for authorized operations.
const authorizedOperationsOmitted = -2147483648

func (h *Handler) metadata(req *server.Request) error {
	r := kmsg.NewPtrMetadataRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	img := h.cluster.Image()
	resp := kmsg.NewPtrMetadataResponse()
	for _, b := range img.Brokers() {
		if b.Fenced {
			continue // Kafka lists the live brokers only
		}
		for _, l := range b.Listeners {
			if l.Name != req.Conn().Listener() {
				continue // the client's own listener only
			}
			mb := kmsg.NewMetadataResponseBroker()
			mb.NodeID, mb.Host, mb.Port = b.ID, l.Host, l.Port
			if b.Rack != "" {
				rack := b.Rack
				mb.Rack = &rack
			}
			resp.Brokers = append(resp.Brokers, mb)
		}
	}
	cid := img.ClusterID()
	resp.ClusterID = &cid
	resp.ControllerID = h.controllerID(img)
	resp.AuthorizedOperations = authorizedOperationsOmitted
	if r.Version >= 8 && r.Version <= 10 && r.IncludeClusterAuthorizedOperations {
		resp.AuthorizedOperations = h.authorizedOps(req, resCluster, clusterName, clusterOperations)
	}

	all := r.Topics == nil || (r.Version == 0 && len(r.Topics) == 0)
	if all {
		for _, t := range img.Topics() {
			if !h.authorized(req, opDescribe, resTopic, t.Name) {
				continue // unauthorized topics are hidden, as in Kafka
			}
			resp.Topics = append(resp.Topics, h.localTopicMetadata(t, r.Version))
		}
		h.topicOps(req, r, resp)
		respond(req, resp)
		return nil
	}
	autoCreate := h.cfg.AutoCreateTopics && (r.Version < 4 || r.AllowAutoTopicCreation)
	for _, rt := range r.Topics {
		var t *metadata.Topic
		denied := false
		switch {
		case rt.Topic != nil:
			t = img.Topic(*rt.Topic)
			denied = !h.authorized(req, opDescribe, resTopic, *rt.Topic) ||
				t == nil && autoCreate && !h.authorized(req, opCreate, resCluster, clusterName) && !h.authorized(req, opCreate, resTopic, *rt.Topic)
			if t == nil && autoCreate && !denied && metadata.ValidateTopicName(*rt.Topic) == nil {
				h.startAutoCreate(*rt.Topic)
			}
		default:
			t = img.TopicByID(rt.TopicID)
			denied = t != nil && !h.authorized(req, opDescribe, resTopic, t.Name)
		}
		if denied {
			mt := kmsg.NewMetadataResponseTopic()
			mt.Topic, mt.TopicID = rt.Topic, rt.TopicID
			mt.ErrorCode, mt.AuthorizedOperations = kerr.TopicAuthorizationFailed.Code, authorizedOperationsOmitted
			resp.Topics = append(resp.Topics, mt)
			continue
		}
		if t != nil {
			resp.Topics = append(resp.Topics, h.localTopicMetadata(t, r.Version))
			continue
		}
		mt := kmsg.NewMetadataResponseTopic()
		mt.Topic, mt.TopicID = rt.Topic, rt.TopicID
		mt.ErrorCode = kerr.UnknownTopicOrPartition.Code
		if rt.Topic == nil {
			mt.ErrorCode = kerr.UnknownTopicID.Code
		} else {
			mt.IsInternal = isInternalTopic(*rt.Topic)
			if metadata.ValidateTopicName(*rt.Topic) != nil {
				mt.ErrorCode = kerr.InvalidTopicException.Code
			}
		}
		mt.AuthorizedOperations = authorizedOperationsOmitted
		resp.Topics = append(resp.Topics, mt)
	}
	h.topicOps(req, r, resp)
	respond(req, resp)
	return nil
}

// topicOps fills in each described topic's authorized operations when the
// request asks for them (v8+).
func (h *Handler) topicOps(req *server.Request, r *kmsg.MetadataRequest, resp *kmsg.MetadataResponse) {
	if r.Version < 8 || !r.IncludeTopicAuthorizedOperations {
		return
	}
	for i := range resp.Topics {
		if mt := &resp.Topics[i]; mt.ErrorCode == 0 && mt.Topic != nil {
			mt.AuthorizedOperations = h.authorizedOps(req, resTopic, *mt.Topic, topicOperations)
		}
	}
}

// localTopicMetadata is topicMetadata with this broker's offline replicas
// (a log that failed to open) answered KAFKA_STORAGE_ERROR, as Kafka
// answers for a replica on an offline log dir.
func (h *Handler) localTopicMetadata(t *metadata.Topic, version int16) kmsg.MetadataResponseTopic {
	mt := topicMetadata(t, version)
	if h.replicas == nil || h.replicas.OfflineCount() == 0 {
		return mt
	}
	for i := range mt.Partitions {
		mp := &mt.Partitions[i]
		if mp.Leader == h.cfg.NodeID && h.replicas.Offline(log.TopicPartition{Topic: t.Name, Partition: mp.Partition}) != nil {
			mp.ErrorCode = kerr.KafkaStorageError.Code
			mp.OfflineReplicas = []int32{h.cfg.NodeID}
		}
	}
	return mt
}

func topicMetadata(t *metadata.Topic, version int16) kmsg.MetadataResponseTopic {
	mt := kmsg.NewMetadataResponseTopic()
	name := t.Name
	mt.Topic = &name
	mt.TopicID = t.ID
	mt.IsInternal = t.Internal()
	mt.AuthorizedOperations = authorizedOperationsOmitted
	mt.Partitions = make([]kmsg.MetadataResponseTopicPartition, len(t.Partitions))
	for i, p := range t.Partitions {
		mp := &mt.Partitions[i]
		*mp = kmsg.NewMetadataResponseTopicPartition()
		mp.Partition = p.Partition
		mp.Leader = p.Leader
		mp.LeaderEpoch = p.LeaderEpoch
		mp.Replicas = p.Replicas
		mp.ISR = p.ISR
		mp.OfflineReplicas = []int32{}
		if p.Leader < 0 {
			mp.ErrorCode = kerr.LeaderNotAvailable.Code
		}
	}
	return mt
}

// controllerID is the controller a Metadata or DescribeCluster response
// names: the metadata quorum's leader when it is a broker too (a combined
// node), else this broker. A controller-only leader has no Kafka
// listener, so, as Kafka's KRaft brokers name an alive broker, kzero
// names one that serves what clients send the controller (any kzero
// broker does: admin requests are decided against the quorum from any
// node). -1 while no leader is known.
func (h *Handler) controllerID(img *metadata.Image) int32 {
	id := img.ControllerID()
	if _, ok := img.Broker(id); ok || id < 0 {
		return id
	}
	return h.cfg.NodeID
}
