package bench

import (
	"context"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// A share-group workload (share_group) reads with kgo share consumers
// (KIP-932): the broker hands each record to one member under an
// acquisition lock, and the member acknowledges it. Delivery is at least
// once, so a record may come back (its lock lapsed, its member left); the
// run counts every record once, by its offset, and reports the extra
// deliveries beside the throughput (ShareStats).

// shareStallTimeout ends a share consume phase that has received no new
// record for this long. A record whose acknowledgement was lost comes back
// only when its acquisition lock lapses (group.share.record.lock.duration.ms,
// 30 s by default), so a share run waits that long plus the ordinary
// stallTimeout before it calls a stall.
const shareStallTimeout = 30*time.Second + stallTimeout

// maxShareOffset bounds the offsets the delivery set tracks (a bit each):
// a run's topic is fresh, so its offsets stay below the records produced,
// and an offset past this is the broker's error, not a reason to allocate.
const maxShareOffset = 1 << 32

// ShareStats is what a share-group run saw of at-least-once delivery.
type ShareStats struct {
	// Redelivered counts deliveries of records the consumers had already
	// received: 0 when every record came exactly once.
	Redelivered int64 `json:"redelivered"`
	// MaxDeliveryCount is the highest delivery count the broker gave a
	// record (1 when none was redelivered).
	MaxDeliveryCount int32 `json:"max_delivery_count"`
	// AckErrors counts the partitions whose acknowledgements the broker
	// refused or the client could not deliver; FirstAckError is the first.
	AckErrors     int64  `json:"ack_errors,omitempty"`
	FirstAckError string `json:"first_ack_error,omitempty"`
}

// shareAPIs are the requests a share consumer cannot do without.
var shareAPIs = []kmsg.Key{kmsg.ShareGroupHeartbeat, kmsg.ShareFetch, kmsg.ShareAcknowledge}

// checkShareGroups fails, with an error that says so, when the broker does
// not serve share groups: kgo's share consumer would otherwise wait on it
// until the stall timeout.
func checkShareGroups(ctx context.Context, cl *kgo.Client) error {
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("api versions: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("api versions: %w", err)
	}
	has := map[int16]bool{}
	for _, k := range resp.ApiKeys {
		has[k.ApiKey] = true
	}
	var missing []string
	for _, k := range shareAPIs {
		if !has[int16(k)] {
			missing = append(missing, k.Name())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the broker does not serve share groups (KIP-932): its ApiVersions lacks %s", strings.Join(missing, ", "))
	}
	return nil
}

// setShareEarliest sets the share group's share.auto.offset.reset to
// earliest before any member joins (a group config, which Kafka keeps
// apart from the group, so it may precede it). A share group starts at the
// latest offset by default and would skip the records the run filled the
// topic with; a queue's users set earliest to work through a backlog,
// which is what a consume workload measures.
func setShareEarliest(ctx context.Context, cl *kgo.Client, group string) error {
	req := kmsg.NewPtrIncrementalAlterConfigsRequest()
	res := kmsg.NewIncrementalAlterConfigsRequestResource()
	res.ResourceType = kmsg.ConfigResourceTypeGroupConfig
	res.ResourceName = group
	c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
	c.Name = "share.auto.offset.reset"
	c.Op = kmsg.IncrementalAlterConfigOpSet
	c.Value = kmsg.StringPtr("earliest")
	res.Configs = append(res.Configs, c)
	req.Resources = append(req.Resources, res)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("set share.auto.offset.reset=earliest on group %s: %w", group, err)
	}
	if len(resp.Resources) != 1 {
		return fmt.Errorf("set share.auto.offset.reset=earliest on group %s: %d resources in the response", group, len(resp.Resources))
	}
	if r := resp.Resources[0]; r.ErrorCode != 0 {
		err := kerr.ErrorForCode(r.ErrorCode)
		if r.ErrorMessage != nil {
			err = fmt.Errorf("%w: %s", err, *r.ErrorMessage)
		}
		return fmt.Errorf("set share.auto.offset.reset=earliest on group %s: %w", group, err)
	}
	return nil
}

// shareReceipt counts what a share group delivered, each record once by
// partition and offset, and the acknowledgements that failed. Consumers
// call it concurrently.
type shareReceipt struct {
	parts       []partReceipt
	redelivered atomic.Int64
	maxCount    atomic.Int32
	ackErrors   atomic.Int64
	firstAckErr atomic.Pointer[string]
}

// partReceipt is one partition's received offsets, a bit each.
type partReceipt struct {
	mu   sync.Mutex
	seen []uint64
}

func newShareReceipt(partitions int) *shareReceipt {
	return &shareReceipt{parts: make([]partReceipt, partitions)}
}

// receive marks the records of one fetched partition as received and calls
// first for each that had not been before; it counts the others as
// redelivered. A partition or offset the topic cannot have is an error.
func (s *shareReceipt) receive(partition int32, recs []*kgo.Record, first func(*kgo.Record)) error {
	if partition < 0 || int(partition) >= len(s.parts) {
		return fmt.Errorf("share fetch: a record of partition %d of a topic of %d", partition, len(s.parts))
	}
	p := &s.parts[partition]
	var again int64
	var maxCount int32
	p.mu.Lock()
	for _, rec := range recs {
		if rec.Offset < 0 || rec.Offset >= maxShareOffset {
			p.mu.Unlock()
			return fmt.Errorf("share fetch: a record at offset %d of partition %d", rec.Offset, partition)
		}
		word, bit := int(rec.Offset/64), uint64(1)<<(rec.Offset%64)
		if word >= len(p.seen) {
			p.seen = append(p.seen, make([]uint64, word+1-len(p.seen))...)
		}
		maxCount = max(maxCount, rec.DeliveryCount())
		if p.seen[word]&bit != 0 {
			again++
			continue
		}
		p.seen[word] |= bit
		first(rec)
	}
	p.mu.Unlock()
	s.redelivered.Add(again)
	for {
		cur := s.maxCount.Load()
		if maxCount <= cur || s.maxCount.CompareAndSwap(cur, maxCount) {
			break
		}
	}
	return nil
}

// acked is kgo's ShareAckCallback: the broker's answer to each
// acknowledgement.
func (s *shareReceipt) acked(_ *kgo.Client, rs kgo.ShareAckResults) {
	for _, r := range rs {
		if r.Err == nil || errors.Is(r.Err, context.Canceled) {
			continue
		}
		s.ackErrors.Add(1)
		msg := fmt.Sprintf("%s[%d]: %v", r.Topic, r.Partition, r.Err)
		s.firstAckErr.CompareAndSwap(nil, &msg)
	}
}

// stats is what the run reports.
func (s *shareReceipt) stats() *ShareStats {
	st := &ShareStats{Redelivered: s.redelivered.Load(), MaxDeliveryCount: s.maxCount.Load(), AckErrors: s.ackErrors.Load()}
	if e := s.firstAckErr.Load(); e != nil {
		st.FirstAckError = *e
	}
	return st
}

// verify checks that the consumers received every record the topic holds:
// in a fresh topic written without transactions, the offsets below each
// partition's end offset, and no other.
func (s *shareReceipt) verify(ends kadm.ListedOffsets, topic string) error {
	var errs []error
	for p := range s.parts {
		l, ok := ends.Lookup(topic, int32(p))
		if !ok || l.Err != nil {
			errs = append(errs, fmt.Errorf("partition %d: no end offset: %v", p, l.Err))
			continue
		}
		seen := s.parts[p].seen
		var got int64
		for _, w := range seen {
			got += int64(bits.OnesCount64(w))
		}
		var below int64 // received offsets under the end offset
		for o := int64(0); o < l.Offset && o/64 < int64(len(seen)); o++ {
			if seen[o/64]&(1<<(o%64)) != 0 {
				below++
			}
		}
		if below != l.Offset || got != l.Offset {
			errs = append(errs, fmt.Errorf("partition %d: received %d of offsets 0..%d and %d past them", p, below, l.Offset-1, got-below))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("share group: not every record received once: %w", err)
	}
	return nil
}
