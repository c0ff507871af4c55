package control

import (
	"kzero/coord/metadata"
)

// view is the state one decision works on: the image with the records the
// decision has emitted so far laid over it, so that a later change in the
// same call builds on an earlier one (the next partition epoch, a broker
// just fenced), exactly as the groups will apply one after the other.
type view struct {
	img     *metadata.Image
	parts   map[tp]metadata.Partition
	brokers map[int32]*metadata.Broker // nil: unregistered by this decision
	groups  [][]metadata.Record
}

type tp struct {
	id [16]byte
	p  int32
}

func newView(img *metadata.Image) *view {
	return &view{img: img, parts: map[tp]metadata.Partition{}, brokers: map[int32]*metadata.Broker{}}
}

// broker returns a registered broker, nil if none.
func (v *view) broker(id int32) *metadata.Broker {
	if b, ok := v.brokers[id]; ok {
		return b
	}
	b, _ := v.img.Broker(id)
	return b
}

// active reports whether broker id may lead and be in an ISR.
func (v *view) active(id int32) bool {
	b := v.broker(id)
	return b != nil && b.Active()
}

// partition returns partition p of t, false if t has none.
func (v *view) partition(t *metadata.Topic, p int32) (metadata.Partition, bool) {
	if s, ok := v.parts[tp{t.ID, p}]; ok {
		return s, true
	}
	if p < 0 || int(p) >= len(t.Partitions) {
		return metadata.Partition{}, false
	}
	return t.Partitions[p], true
}

// each calls fn for every partition, topics by name, partitions in order.
func (v *view) each(fn func(t *metadata.Topic, p metadata.Partition)) {
	for _, t := range v.img.Topics() {
		for i := range t.Partitions {
			p, _ := v.partition(t, int32(i))
			fn(t, p)
		}
	}
}

// leads reports whether broker id leads any partition.
func (v *view) leads(id int32) bool {
	found := false
	v.each(func(_ *metadata.Topic, p metadata.Partition) { found = found || p.Leader == id })
	return found
}

// add lays rec over the view and appends it to group: every record a
// decision makes is laid as it is made, so the next one sees it.
func (v *view) add(group []metadata.Record, rec metadata.Record) []metadata.Record {
	v.lay(rec)
	return append(group, rec)
}

// emit adds a group (of records already laid) to propose and returns its
// index; an empty group is not emitted: -1.
func (v *view) emit(group []metadata.Record) int {
	if len(group) == 0 {
		return -1
	}
	v.groups = append(v.groups, group)
	return len(v.groups) - 1
}

// lay applies one record to the view the way metadata.Builder applies it.
func (v *view) lay(rec metadata.Record) {
	switch r := rec.(type) {
	case *metadata.PartitionChange:
		t := v.img.TopicByID(r.TopicID)
		if t == nil {
			return
		}
		if p, ok := v.partition(t, r.Partition); ok {
			v.parts[tp{r.TopicID, r.Partition}] = p.With(r)
		}
	case *metadata.BrokerChange:
		cur := v.broker(r.ID)
		if cur == nil {
			return
		}
		b := *cur
		switch r.Fence {
		case metadata.Fence:
			b.Fenced = true
		case metadata.Unfence:
			b.Fenced = false
		}
		b.InControlledShutdown = b.InControlledShutdown || r.ControlledShutdown
		v.brokers[r.ID] = &b
	case *metadata.RegisterBroker:
		v.brokers[r.ID] = &metadata.Broker{ID: r.ID, Incarnation: r.Incarnation, Epoch: r.Epoch, Rack: r.Rack,
			Listeners: r.Listeners, Fenced: r.Fenced, InControlledShutdown: r.InControlledShutdown, Registered: r.Registered}
	case *metadata.UnregisterBroker:
		v.brokers[r.ID] = nil
	}
}
