package api

// Fetch: v4-v17. Sessionless (KIP-227 allows a broker to answer every
// fetch with session id 0; clients then send full fetches). Topic ids from
// v13. MaxBytes, per-partition MaxBytes and KIP-74 (the first batch of the
// first non-empty partition is returned whole even past the limits).
// read_committed stops at the last stable offset and lists the aborted
// transactions in range.
//
// A fetch with less than MinBytes available and MaxWaitMs > 0 waits in the
// replica purgatory, holding no goroutine, and is answered when appends
// bring enough bytes or the wait expires.

import (
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/log"
	"kzero/net/server"
	"kzero/replica"
)

func init() { register(kmsg.Fetch.Int16(), 4, 17, (*Handler).fetch) }

type fetchOp struct {
	h      *Handler
	req    *server.Request
	r      *kmsg.FetchRequest
	topics []fetchTopic
	parts  []*replica.Partition // partitions found, to wait on
}

func (h *Handler) fetch(req *server.Request) error {
	r := kmsg.NewPtrFetchRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	f := &fetchOp{h: h, req: req, r: r}
	bytes, errored := f.read()
	if bytes >= int64(r.MinBytes) || r.MaxWaitMillis <= 0 || errored || len(f.parts) == 0 {
		f.respond()
		return nil
	}
	f.release()
	replica.Wait(f.parts, int64(r.MinBytes)-bytes, time.Duration(r.MaxWaitMillis)*time.Millisecond, func() {
		f.read()
		f.respond()
	})
	return nil
}

// read fills f.topics from the replicas; it returns the bytes found and
// whether any partition failed.
func (f *fetchOp) read() (total int64, errored bool) {
	r := f.r
	committed := r.IsolationLevel == 1
	remaining := int64(r.MaxBytes)
	if remaining <= 0 {
		remaining = 1<<31 - 1
	}
	f.topics = f.topics[:0]
	f.parts = f.parts[:0]
	for i := range r.Topics {
		t := &r.Topics[i]
		ft := fetchTopic{name: t.Topic, id: t.TopicID, parts: make([]fetchPartition, len(t.Partitions))}
		name, known := t.Topic, true
		if r.Version >= 13 {
			name, known = f.h.topicName(t.TopicID)
		}
		for j := range t.Partitions {
			p := &t.Partitions[j]
			fp := &ft.parts[j]
			*fp = fetchPartition{partition: p.Partition, hw: -1, lso: -1, logStart: -1, committed: committed}
			if !known {
				fp.err = kerr.UnknownTopicID.Code
				errored = true
				continue
			}
			part, err := f.h.replicas.Get(log.TopicPartition{Topic: name, Partition: p.Partition})
			if err != nil {
				fp.err = errCode(err)
				errored = true
				continue
			}
			f.parts = append(f.parts, part)
			limit := min(int64(p.PartitionMaxBytes), remaining)
			res, err := part.Read(p.FetchOffset, int(max(limit, 0)), committed, total == 0, p.CurrentLeaderEpoch, nil)
			if err != nil {
				fp.err = errCode(err)
				errored = true
				continue
			}
			fp.hw, fp.lso, fp.logStart = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
			fp.aborted, fp.records = res.Aborted, res.Range
			total += res.Range.Len
			remaining -= res.Range.Len
		}
		f.topics = append(f.topics, ft)
	}
	return total, errored
}

// release drops the file ranges read and not sent.
func (f *fetchOp) release() {
	for i := range f.topics {
		for j := range f.topics[i].parts {
			f.topics[i].parts[j].records.Release()
			f.topics[i].parts[j].records = log.FileRange{}
		}
	}
}

func (f *fetchOp) respond() {
	resp := f.req.NewResponse()
	appendFetchResponse(resp, f.r.Version, 0, f.topics)
	f.req.Respond(resp)
}
