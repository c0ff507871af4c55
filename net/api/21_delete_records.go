package api

// DeleteRecords: v0-v2. Offset -1 means the high watermark; an offset
// above it is OFFSET_OUT_OF_RANGE. Segments wholly below the new log start
// offset are deleted.

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.DeleteRecords.Int16(), 0, 2, (*Handler).deleteRecords) }

func (h *Handler) deleteRecords(req *server.Request) error {
	r := kmsg.NewPtrDeleteRecordsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	resp := kmsg.NewPtrDeleteRecordsResponse()
	for _, t := range r.Topics {
		rt := kmsg.NewDeleteRecordsResponseTopic()
		rt.Topic = t.Topic
		for _, p := range t.Partitions {
			rp := kmsg.NewDeleteRecordsResponseTopicPartition()
			rp.Partition = p.Partition
			rp.LowWatermark = -1
			if !h.authorized(req, opDelete, resTopic, t.Topic) {
				rp.ErrorCode = kerr.TopicAuthorizationFailed.Code
				rt.Partitions = append(rt.Partitions, rp)
				continue
			}
			part, err := h.replicas.Get(log.TopicPartition{Topic: t.Topic, Partition: p.Partition})
			if err == nil {
				rp.LowWatermark, err = part.DeleteRecordsBefore(p.Offset)
			}
			rp.ErrorCode = errCode(err)
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	respond(req, resp)
	return nil
}
