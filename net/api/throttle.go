package api

import (
	"math"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/coord/metadata"
	"kzero/net/quota"
	"kzero/net/server"
)

// Client quota enforcement (KIP-13, KIP-124, KIP-219): Produce records
// its request size, a consumer's Fetch its response size, and every
// request but the exempt ones its handling time, each in its quota type's
// net/quota.Manager under the client's (user, client-id). Over the quota,
// the response carries throttle_time_ms and the connection is muted for
// that long (server.Conn.Throttle). Followers' fetches are not counted
// (they have replication quotas in Kafka, not client quotas).

// quotas are the handler's managers, one per quota key.
type quotas struct {
	produce, fetch, request *quota.Manager
	mutations               *quota.Mutations
}

func newQuotas(cfg quota.Config) *quotas {
	return &quotas{
		produce: quota.NewManager("producer_byte_rate", cfg, 0),
		fetch:   quota.NewManager("consumer_byte_rate", cfg, 0),
		// Kafka's ClientRequestQuotaManager bounds its throttle time by
		// one quota window.
		request:   quota.NewManager("request_percentage", cfg, max(cfg.Window, time.Second)),
		mutations: quota.NewMutations(cfg),
	}
}

// ApplyQuotas takes the client quotas of a new metadata image. The
// metadata publisher calls it once per image, as Kafka's quota managers
// are updated by the metadata publisher, not per request; the request
// path reads what it left with atomic loads and takes no lock unless a
// quota applies to the client.
func (h *Handler) ApplyQuotas(img *metadata.Image) {
	q := h.quotas
	q.produce.Update(img)
	q.fetch.Update(img)
	q.request.Update(img)
	q.mutations.Update(img)
}

// QuotaStats are the throttle counters per quota key, for the metrics.
func (h *Handler) QuotaStats() map[string]quota.Stats {
	return map[string]quota.Stats{
		h.quotas.produce.Key():     h.quotas.produce.Stats(),
		h.quotas.fetch.Key():       h.quotas.fetch.Stats(),
		h.quotas.request.Key():     h.quotas.request.Stats(),
		"controller_mutation_rate": h.quotas.mutations.Stats(),
	}
}

// quotaClient is who a request counts for: the principal's name (Kafka
// counts User:ANONYMOUS as user ANONYMOUS) and the client id.
func (h *Handler) quotaClient(req *server.Request) quota.Client {
	p := h.session(req.Conn()).principal
	return quota.Client{User: strings.TrimPrefix(p, "User:"), ClientID: string(req.Header.ClientID)}
}

// record adds v to the client's use of m's quota and returns the
// throttle time it earns.
func (h *Handler) record(m *quota.Manager, req *server.Request, v float64) time.Duration {
	if !m.Enabled() {
		return 0
	}
	return m.Record(h.quotaClient(req), v, time.Now().UnixNano())
}

// throttle mutes the connection for d and counts it under m.
func throttle(m *quota.Manager, req *server.Request, d time.Duration) {
	if d > 0 {
		m.Throttled(d)
		req.Conn().Throttle(d)
	}
}

// throttleMillis is d in the int32 milliseconds of throttle_time_ms.
func throttleMillis(d time.Duration) int32 {
	return int32(min(d.Milliseconds(), 1<<31-1))
}

// produceThrottle records a produce's request bytes and returns the
// throttle time for its response, muting the connection for it.
func (h *Handler) produceThrottle(req *server.Request) int32 {
	d := h.record(h.quotas.produce, req, float64(req.Size()))
	throttle(h.quotas.produce, req, d)
	return throttleMillis(d)
}

// fetchCap is the most a consumer's fetch may return under its quota
// (Kafka's getMaxValueInQuotaWindow, as an int: more would be throttled
// even from an idle start; 0 with quota.window.num=1), or -1 without a
// quota.
func (h *Handler) fetchCap(req *server.Request) int64 {
	m := h.quotas.fetch
	if !m.Enabled() {
		return -1
	}
	v, ok := m.MaxValueInWindow(h.quotaClient(req))
	if !ok {
		return -1
	}
	return int64(max(min(v, math.MaxInt32), 0))
}

// exemptFromRequestQuota lists the keys Kafka never throttles for request
// time (ApiKeys with clusterAction, and ApiVersions and the SASL ones).
func exemptFromRequestQuota(key int16) bool {
	switch key {
	case kmsg.ApiVersions.Int16(), kmsg.SASLHandshake.Int16(), kmsg.SASLAuthenticate.Int16(),
		kmsg.LeaderAndISR.Int16(), kmsg.StopReplica.Int16(), kmsg.UpdateMetadata.Int16(),
		kmsg.ControlledShutdown.Int16(), kmsg.WriteTxnMarkers.Int16(), kmsg.AlterPartition.Int16(),
		kmsg.BrokerRegistration.Int16(), kmsg.BrokerHeartbeat.Int16(), kmsg.UnregisterBroker.Int16(),
		kmsg.ReadShareGroupState.Int16(), kmsg.WriteShareGroupState.Int16(), kmsg.DeleteShareGroupState.Int16(),
		server.RawFrame:
		return true
	}
	return false
}

// requestTime records the time a request's handler ran, from began
// (unix ns) until its response or until Serve returned (a request that
// waits in a purgatory is not charged its wait), as a share of one
// second, as Kafka's request_percentage counts it; over the quota it
// mutes the connection and returns the throttle time for the response.
func (h *Handler) requestTime(conn *server.Conn, c quota.Client, began int64) time.Duration {
	now := time.Now().UnixNano()
	d := h.requestThrottle(c, now-began, now)
	if d > 0 {
		h.quotas.request.Throttled(d)
		conn.Throttle(d)
	}
	return d
}

// requestThrottle records ns of handler time for c at now and returns
// the throttle time it earns; it mutes nothing.
func (h *Handler) requestThrottle(c quota.Client, ns, now int64) time.Duration {
	return h.quotas.request.Record(c, float64(ns)*100/1e9, now)
}

// takeCharge claims the request quota's charge of req's handler (see
// Handler.Serve), so that neither respond nor Serve's return records it:
// the handler's time so far in ns, and whether there was a charge.
func (h *Handler) takeCharge(req *server.Request) (ns int64, ok bool) {
	s, _ := req.Conn().Value().(*session)
	if s == nil || s.charge.Load() == 0 {
		return 0, false
	}
	began := s.charge.Swap(0)
	if began == 0 {
		return 0, false
	}
	return max(time.Now().UnixNano()-began, 0), true
}

// mutationQuota is one request's use of controller_mutation_rate
// (KIP-599): CreateTopics, CreatePartitions and DeleteTopics take one
// token per partition created or deleted. Strict (CreateTopics v6+,
// CreatePartitions v3+, DeleteTopics v5+): a topic asked for while the
// client's bucket is below zero is refused THROTTLING_QUOTA_EXCEEDED,
// and the response carries the time until it is back at zero.
// Permissive (older versions, which do not know the error): every topic
// goes ahead, and the response is throttled by the debt it leaves.
type mutationQuota struct {
	h         *Handler
	req       *server.Request
	c         quota.Client
	strict    bool
	enabled   bool
	throttled time.Duration
}

func (h *Handler) mutationQuota(req *server.Request, strictSince int16) *mutationQuota {
	m := h.quotas.mutations
	q := &mutationQuota{h: h, req: req, strict: req.Header.APIVersion >= strictSince}
	q.c = h.quotaClient(req)
	q.enabled = m.Applies(q.c)
	return q
}

// take asks for n mutations; false: refuse the topic with
// THROTTLING_QUOTA_EXCEEDED.
func (q *mutationQuota) take(n int) bool {
	if !q.enabled || n <= 0 {
		return true
	}
	m, now := q.h.quotas.mutations, time.Now().UnixNano()
	if q.strict {
		if d, over := m.Exceeded(q.c, now); over {
			q.throttled = max(q.throttled, d)
			return false
		}
		m.Record(q.c, float64(n), now)
		return true
	}
	q.throttled = max(q.throttled, m.Record(q.c, float64(n), now))
	return true
}

// finish mutes the connection for the throttle time and returns it for
// the response.
func (q *mutationQuota) finish() int32 {
	if q.throttled > 0 {
		q.h.quotas.mutations.Throttled(q.throttled)
		q.req.Conn().Throttle(q.throttled)
	}
	return throttleMillis(q.throttled)
}

// throttlingMessage is Kafka's ThrottlingQuotaExceededException message.
const throttlingMessage = "The throttling quota has been exceeded."

// quotaSize is what a consumer's fetch response counts against its
// consumer_byte_rate: Kafka counts the response's size
// (FetchContext.getResponseSize: 4 bytes of correlation id and the body,
// records and all), with, for an incremental session, only the partitions
// the response will carry; an empty response counts its few bytes too.
// The caller (respond) holds the session's lock.
func (f *fetchOp) quotaSize() int64 {
	incremental := f.session != nil && !f.full
	return fetchResponseSize(f.r.Version, f.topics, incremental)
}

// fetchResponseSize is 4 plus the size of the body appendFetchResponse
// writes for topics at version v (v4+); incremental counts only the
// partitions trimToChanges keeps (the caller holds the session's lock).
func fetchResponseSize(v int16, topics []fetchTopic, incremental bool) int64 {
	flexible := v >= 12
	arrayLen := func(n int) int64 {
		if flexible {
			return int64(uvarintLen(uint64(n + 1)))
		}
		return 4
	}
	var tags int64
	if flexible {
		tags = 1
	}
	size := int64(4 + 4) // correlation id, throttle_time_ms
	if v >= 7 {
		size += 2 + 4 // error_code, session_id
	}
	ntopics := 0
	var body int64
	for i := range topics {
		t := &topics[i]
		nparts := 0
		var parts int64
		for j := range t.parts {
			p := &t.parts[j]
			if incremental && !p.changed() {
				continue
			}
			nparts++
			parts += 4 + 2 + 8 + 8 // partition, error_code, high_watermark, last_stable_offset
			if v >= 5 {
				parts += 8 // log_start_offset
			}
			if p.committed {
				parts += arrayLen(len(p.aborted)) + int64(len(p.aborted))*(8+8+tags)
			} else {
				parts += arrayLen(-1)
			}
			if v >= 11 {
				parts += 4 // preferred_read_replica
			}
			n := p.records.Len
			if p.records.Empty() {
				n = 0
			}
			if flexible {
				parts += int64(uvarintLen(uint64(n+1))) + n
			} else {
				parts += 4 + n
			}
			parts += tags
		}
		if incremental && nparts == 0 {
			continue
		}
		ntopics++
		if v >= 13 {
			body += 16
		} else if flexible {
			body += int64(uvarintLen(uint64(len(t.name)+1))) + int64(len(t.name))
		} else {
			body += 2 + int64(len(t.name))
		}
		body += arrayLen(nparts) + parts + tags
	}
	return size + arrayLen(ntopics) + body + tags
}

// changed reports whether an incremental response carries p: records,
// an error, or news the session has not told (trimToChanges' test).
// Caller holds the session's lock.
func (p *fetchPartition) changed() bool {
	sp := p.session
	return sp == nil || !sp.sent || !p.records.Empty() || p.err != 0 || p.hw != sp.hw || p.lso != sp.lso || p.logStart != sp.logStart
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
