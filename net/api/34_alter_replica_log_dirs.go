package api

// AlterReplicaLogDirs: v1-v2 (KIP-113; v2 flexible), and v0 for legacy
// clients (KIP-896 removed it from Kafka 4.0; it is v1's body). Each
// partition's replica on this broker moves to the named log dir
// (replica.Manager.AlterLogDir): the answer comes once the move has
// started, and DescribeLogDirs shows the replica in the new dir, with
// IsFuture, until it has caught up and been swapped in. Per partition:
// LOG_DIR_NOT_FOUND for a dir not in log.dirs, KAFKA_STORAGE_ERROR for an
// offline replica or a future log that cannot be made,
// REPLICA_NOT_AVAILABLE for a partition this broker does not hold (the dir
// is remembered for when it creates it, as Kafka's preferred log dir),
// INVALID_TOPIC_EXCEPTION for a name too long for the future log's folder
// name. Without ALTER on the cluster every partition gets
// CLUSTER_AUTHORIZATION_FAILED. A partition named under several dirs goes
// to the last one, as Kafka's map of the request keeps it.

import (
	"errors"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
)

func init() {
	register(kmsg.AlterReplicaLogDirs.Int16(), 0, 2, (*Handler).alterReplicaLogDirs).since4(1)
}

// maxFutureNameLen is the longest folder name (a file name, 255 bytes)
// less what a future log's adds to <topic>-<partition>: a dot, 32 hex
// digits and "-future".
const maxFutureNameLen = 255 - 40

func (h *Handler) alterReplicaLogDirs(req *server.Request) error {
	r := kmsg.NewPtrAlterReplicaLogDirsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	var order []log.TopicPartition
	dirOf := map[log.TopicPartition]string{}
	for _, d := range r.Dirs {
		for _, t := range d.Topics {
			// The request's strings alias its pooled frame; the log
			// manager keeps partitions as map keys.
			topic := strings.Clone(t.Topic)
			for _, p := range t.Partitions {
				tp := log.TopicPartition{Topic: topic, Partition: p}
				if _, ok := dirOf[tp]; !ok {
					order = append(order, tp)
				}
				dirOf[tp] = strings.Clone(d.Dir)
			}
		}
	}
	allowed := h.authorized(req, opAlter, resCluster, clusterName)
	resp := kmsg.NewPtrAlterReplicaLogDirsResponse()
	index := map[string]int{}
	for _, tp := range order {
		code := kerr.ClusterAuthorizationFailed.Code
		if allowed {
			code = h.alterReplicaLogDir(tp, dirOf[tp])
		}
		i, ok := index[tp.Topic]
		if !ok {
			i = len(resp.Topics)
			index[tp.Topic] = i
			t := kmsg.NewAlterReplicaLogDirsResponseTopic()
			t.Topic = tp.Topic
			resp.Topics = append(resp.Topics, t)
		}
		p := kmsg.NewAlterReplicaLogDirsResponseTopicPartition()
		p.Partition, p.ErrorCode = tp.Partition, code
		resp.Topics[i].Partitions = append(resp.Topics[i].Partitions, p)
	}
	respond(req, resp)
	return nil
}

// alterReplicaLogDir starts one partition's move and returns its code.
func (h *Handler) alterReplicaLogDir(tp log.TopicPartition, dir string) int16 {
	if len(tp.String()) > maxFutureNameLen {
		return kerr.InvalidTopicException.Code
	}
	err := h.replicas.AlterLogDir(tp, dir)
	if err == nil {
		return 0
	}
	for _, known := range []*kerr.Error{kerr.LogDirNotFound, kerr.ReplicaNotAvailable, kerr.KafkaStorageError} {
		if errors.Is(err, known) {
			return known.Code
		}
	}
	h.logger.Error("cannot move a replica to another log dir", "partition", tp.String(), "dir", dir, "err", err)
	return kerr.KafkaStorageError.Code
}
