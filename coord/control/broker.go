package control

import (
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// Registration is a BrokerRegistration request.
type Registration struct {
	Broker      int32
	ClusterID   string // checked against the image's when both are set
	Incarnation [16]byte
	Rack        string
	Listeners   []metadata.Listener
	// PreviousGone says the broker knows its previous incarnation has
	// stopped (kzero: it holds the log dirs' lock), so no session of it is
	// waited out: no DUPLICATE_BROKER_REGISTRATION.
	PreviousGone bool
	// UncleanShutdown says the broker's log dirs were not closed cleanly:
	// it may have lost records it had, so with ELR it leaves every ELR
	// (Kafka tells this by the previous broker epoch of a clean shutdown).
	UncleanShutdown bool
}

// RegistrationReply answers a Registration.
type RegistrationReply struct {
	Err     error // nil: registered
	Message string
	// Epoch is the broker epoch. -1 for a new incarnation: its epoch is
	// the offset its RegisterBroker record gets, read from the image
	// (Broker(id).Epoch) once the group applied.
	Epoch int64
}

// Register decides a BrokerRegistration, as Kafka's controller does:
//
//   - the same incarnation registering again (a retry, or after a
//     controller change) amends its registration and keeps its epoch and
//     its state;
//   - a new incarnation gets a new epoch and starts fenced: Heartbeat
//     unfences it once it has caught up with the metadata log. If the
//     previous incarnation was still unfenced, the same group first takes
//     it out of every ISR and leadership, as a fencing would;
//   - DUPLICATE_BROKER_REGISTRATION while another incarnation of the id
//     still has a valid session (unfenced, and heartbeat within
//     broker.session.timeout.ms), unless the registration says that
//     incarnation is gone.
func (c *Controller) Register(img *metadata.Image, now time.Time, r Registration) ([][]metadata.Record, RegistrationReply) {
	c.sync(img, now)
	if r.Broker < 0 {
		return nil, RegistrationReply{Err: kerr.InvalidRequest, Message: fmt.Sprintf("bad broker id %d", r.Broker), Epoch: -1}
	}
	if r.ClusterID != "" && img.ClusterID() != "" && r.ClusterID != img.ClusterID() {
		return nil, RegistrationReply{Err: kerr.InconsistentClusterID, Epoch: -1,
			Message: fmt.Sprintf("Expected cluster ID %s, but got cluster ID %s", img.ClusterID(), r.ClusterID)}
	}
	v := newView(img)
	old := v.broker(r.Broker)
	rec := &metadata.RegisterBroker{ID: r.Broker, Incarnation: r.Incarnation, Rack: r.Rack, Listeners: slices.Clone(r.Listeners), Registered: -1}
	if old != nil && old.Incarnation == r.Incarnation {
		rec.Epoch, rec.Fenced, rec.InControlledShutdown = old.Epoch, old.Fenced, old.InControlledShutdown
		c.sessions[r.Broker].lastContact = now
		v.emit(v.add(nil, rec))
		return v.groups, RegistrationReply{Epoch: old.Epoch}
	}
	if old != nil && !r.PreviousGone && c.validSession(old, now) {
		return nil, RegistrationReply{Err: kerr.DuplicateBrokerRegistration, Epoch: -1, Message: "Another broker is registered with that broker id."}
	}
	var group []metadata.Record
	if old != nil && !old.Fenced {
		group = c.leave(v, r.Broker, nil)
	}
	if r.UncleanShutdown && c.cfg.ELR {
		group = append(group, c.leaveELR(v, r.Broker)...)
	}
	rec.Epoch, rec.Fenced = -1, true
	delete(c.sessions, r.Broker)
	v.emit(v.add(group, rec))
	return v.groups, RegistrationReply{Epoch: -1}
}

// Heartbeat is a BrokerHeartbeat request.
type Heartbeat struct {
	Broker       int32
	Epoch        int64
	Offset       int64 // the metadata offset the broker has applied
	WantFence    bool
	WantShutdown bool
}

// HeartbeatReply answers a Heartbeat.
type HeartbeatReply struct {
	Err            error // STALE_BROKER_EPOCH; nil otherwise
	CaughtUp       bool  // the broker has applied its own registration
	Fenced         bool
	ShouldShutDown bool
}

// brokerState is where a broker stands (Kafka's BrokerControlState).
type brokerState int8

const (
	stateFenced brokerState = iota
	stateUnfenced
	stateControlledShutdown
	stateShutdownNow
)

// Heartbeat decides a BrokerHeartbeat, Kafka's state machine:
//
//	fenced      -> unfenced when it does not want to be fenced and has
//	               applied its registration (Offset >= Broker.Registered);
//	               shutdown-now when it wants to shut down
//	unfenced    -> fenced when it asks (wantFence); shutdown-now with
//	               wantFence and wantShutdown, or with wantShutdown while it
//	               leads nothing; controlled shutdown with wantShutdown
//	               while it leads
//	controlled  -> shutdown-now once it leads nothing and every active
//	shutdown       broker has applied the metadata that moved its
//	               leaderships
//
// Entering controlled shutdown marks the broker and takes it out of every
// ISR and leadership (leaders move to other ISR members); fencing does the
// same and fences it; unfencing elects it where a partition has no
// leader. Its session is renewed either way.
func (c *Controller) Heartbeat(img *metadata.Image, now time.Time, h Heartbeat) ([][]metadata.Record, HeartbeatReply) {
	c.sync(img, now)
	v := newView(img)
	b := v.broker(h.Broker)
	if b == nil || b.Epoch != h.Epoch {
		return nil, HeartbeatReply{Err: kerr.StaleBrokerEpoch}
	}
	s := c.sessions[h.Broker]
	cur := stateUnfenced
	switch {
	case b.Fenced:
		cur = stateFenced
	case b.InControlledShutdown:
		cur = stateControlledShutdown
	}
	next := cur
	switch cur {
	case stateFenced:
		if h.WantShutdown {
			next = stateShutdownNow
		} else if !h.WantFence && h.Offset >= b.Registered {
			next = stateUnfenced
		}
	case stateUnfenced:
		switch {
		case h.WantFence && h.WantShutdown:
			next = stateShutdownNow
		case h.WantFence:
			next = stateFenced
		case h.WantShutdown && v.leads(h.Broker):
			next = stateControlledShutdown
		case h.WantShutdown:
			next = stateShutdownNow
		}
	case stateControlledShutdown:
		if !v.leads(h.Broker) && s.shutdownOffset >= 0 && s.shutdownOffset <= c.lowestActiveOffset(v) {
			next = stateShutdownNow
		}
	}
	if next != cur {
		switch next {
		case stateFenced, stateShutdownNow:
			v.emit(c.leave(v, h.Broker, &metadata.BrokerChange{ID: b.ID, Epoch: b.Epoch, Fence: metadata.Fence}))
		case stateUnfenced:
			v.emit(c.unfence(v, b))
		case stateControlledShutdown:
			v.emit(c.shutdown(v, b))
		}
	}
	s.lastContact, s.offset = now, h.Offset
	fenced := next == stateFenced || next == stateShutdownNow
	if fenced {
		s.shutdownOffset = -1
	}
	return v.groups, HeartbeatReply{CaughtUp: h.Offset >= b.Registered, Fenced: fenced, ShouldShutDown: next == stateShutdownNow}
}

// Unregister decides an UnregisterBroker request: the broker leaves every
// ISR and leadership, then its registration goes (Kafka's
// handleBrokerUnregistered). BROKER_ID_NOT_REGISTERED when it has none.
func (c *Controller) Unregister(img *metadata.Image, now time.Time, id int32) ([][]metadata.Record, error) {
	c.sync(img, now)
	v := newView(img)
	b := v.broker(id)
	if b == nil {
		return nil, kerr.BrokerIDNotRegistered
	}
	v.emit(c.leave(v, id, &metadata.UnregisterBroker{ID: id, Epoch: b.Epoch}))
	return v.groups, nil
}

// leave returns the changes that take broker id out of every ISR it is in
// and every leadership it holds (Kafka's generateLeaderAndIsrUpdates with a
// broker to remove), followed by last when it is not nil and changes
// something. The broker stays in an ISR it is the only member of; that
// partition is left without a leader unless the topic allows an unclean
// election.
func (c *Controller) leave(v *view, id int32, last metadata.Record) []metadata.Record {
	var group []metadata.Record
	mayLead := func(r int32) bool { return r != id && v.active(r) }
	v.each(func(t *metadata.Topic, p metadata.Partition) {
		if p.Leader != id && !slices.Contains(p.ISR, id) {
			return
		}
		ch := c.change(v, t, p, mayLead)
		ch.isr = without(p.ISR, []int32{id})
		if c.cfg.Unclean(v.img, t) {
			ch.election = electUnclean
		}
		if rec := ch.build(t.ID); rec != nil {
			group = v.add(group, rec)
		}
	})
	if bc, ok := last.(*metadata.BrokerChange); ok && bc.Fence == metadata.Fence && v.broker(id).Fenced {
		return group // already fenced
	}
	if last != nil {
		group = v.add(group, last)
	}
	return group
}

// leaveELR returns the changes that take broker id, back from an unclean
// shutdown, out of every ELR it is in.
func (c *Controller) leaveELR(v *view, id int32) []metadata.Record {
	var group []metadata.Record
	v.each(func(t *metadata.Topic, p metadata.Partition) {
		if !slices.Contains(p.ELR, id) {
			return
		}
		// id registers fenced in the same group: it may not lead.
		ch := c.change(v, t, p, func(r int32) bool { return r != id && v.active(r) })
		ch.uncleanShutdown = id
		if rec := ch.build(t.ID); rec != nil {
			group = v.add(group, rec)
		}
	})
	return group
}

// unfence returns the group that unfences b and elects it where a
// partition has no leader (Kafka's handleBrokerUnfenced).
func (c *Controller) unfence(v *view, b *metadata.Broker) []metadata.Record {
	group := v.add(nil, &metadata.BrokerChange{ID: b.ID, Epoch: b.Epoch, Fence: metadata.Unfence})
	return append(group, c.electLeaderless(v, false)...)
}

// shutdown returns the group that puts b in controlled shutdown and moves
// its leaderships away (Kafka's handleBrokerInControlledShutdown).
func (c *Controller) shutdown(v *view, b *metadata.Broker) []metadata.Record {
	var group []metadata.Record
	if !b.InControlledShutdown {
		group = v.add(group, &metadata.BrokerChange{ID: b.ID, Epoch: b.Epoch, ControlledShutdown: true})
	}
	return append(group, c.leave(v, b.ID, nil)...)
}

// electLeaderless elects leaders, from the ISR among active brokers, for
// the partitions without one; with uncleanOnly, only (and at most
// MaxElectionsPerTick) for topics that allow an unclean election, and then
// outside the ISR if need be. The changes are laid over v.
func (c *Controller) electLeaderless(v *view, uncleanOnly bool) []metadata.Record {
	var group []metadata.Record
	v.each(func(t *metadata.Topic, p metadata.Partition) {
		if p.Leader != metadata.NoLeader || uncleanOnly && len(group) >= MaxElectionsPerTick {
			return
		}
		unclean := c.cfg.Unclean(v.img, t)
		if uncleanOnly && !unclean {
			return
		}
		ch := c.change(v, t, p, v.active)
		if unclean {
			ch.election = electUnclean
		}
		if rec := ch.build(t.ID); rec != nil {
			group = v.add(group, rec)
		}
	})
	return group
}
