package control

import (
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// ReplicaOffline decides what a broker asks when one of its replicas'
// logs went offline after an I/O error (Kafka's broker reports its offline
// log dirs in its heartbeat and the controller moves their partitions):
// the replica leaves the ISR and the ELR (its data cannot be read), and a
// partition it led gets a leader from the rest of the ISR (or, where the
// topic allows, an unclean one), as a fencing would for that partition
// alone. Nothing changes when the broker is in neither.
func (c *Controller) ReplicaOffline(img *metadata.Image, broker int32, topic string, partition int32) ([][]metadata.Record, error) {
	v := newView(img)
	t := img.Topic(topic)
	if t == nil {
		return nil, metadata.Reject(kerr.UnknownTopicOrPartition, "No such topic as %s", topic)
	}
	p, ok := v.partition(t, partition)
	if !ok {
		return nil, metadata.Reject(kerr.UnknownTopicOrPartition, "No such partition as %s-%d", topic, partition)
	}
	if p.Leader != broker && !slices.Contains(p.ISR, broker) && !slices.Contains(p.ELR, broker) {
		return nil, nil
	}
	ch := c.change(v, t, p, func(r int32) bool { return r != broker && v.active(r) })
	ch.isr = without(p.ISR, []int32{broker})
	ch.uncleanShutdown = broker // out of the ELR as well
	if c.cfg.Unclean(v.img, t) {
		ch.election = electUnclean
	}
	if rec := ch.build(t.ID); rec != nil {
		v.emit(v.add(nil, rec))
	}
	return v.groups, nil
}
