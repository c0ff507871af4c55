package control

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/metadata"
)

// cluster is the world around a Controller in tests: the metadata log
// (an image and its offset) that the controller's groups are applied to,
// one entry per decision, as the raft loop would.
type cluster struct {
	c       *Controller
	img     *metadata.Image
	names   map[[16]byte]string // incarnation -> its name in scripts
	applied int                 // groups applied so far
	now     time.Time           // scripts: the last now given
}

func newCluster(cfg Config) *cluster {
	b := metadata.NewBuilder(metadata.EmptyImage())
	b.ApplyProposal(&metadata.Proposal{Groups: [][]metadata.Record{{&metadata.ClusterRecord{ID: "kzero-test"}}}}, 1)
	return &cluster{c: New(cfg), img: b.Finish(1), names: map[[16]byte]string{}, now: epoch0}
}

// apply appends groups to the log as one entry and returns what did not
// apply.
func (cl *cluster) apply(groups [][]metadata.Record) []error {
	if len(groups) == 0 {
		return nil
	}
	off := cl.img.Offset() + 1
	b := metadata.NewBuilder(cl.img)
	rej := b.ApplyProposal(&metadata.Proposal{Groups: groups}, off)
	cl.img = b.Finish(off)
	cl.applied += len(groups)
	return rej
}

// topicID is a topic's id, made from its name so scripts print the same
// every run.
func topicID(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	id[15] = 0xff
	return id
}

func (cl *cluster) incarnation(name string) [16]byte {
	var id [16]byte
	copy(id[:], name)
	id[14] = 0xee
	cl.names[id] = name
	return id
}

// createTopic creates a topic as CreateTopics does: placement over the
// active brokers (or a manual assignment), the ISR the active replicas.
func (cl *cluster) createTopic(name string, parts, rf int, assign [][]int32, rng *rand.Rand) (string, error) {
	id := topicID(name)
	if assign == nil {
		pl, rej := NewPlacer(cl.img, rf, rng)
		if rej != nil {
			return "", fmt.Errorf("%s: %s", errName(rej), rej)
		}
		for p := range parts {
			assign = append(assign, pl.Replicas(int32(p)))
		}
	}
	group := []metadata.Record{&metadata.TopicRecord{Name: name, ID: id}}
	for p, replicas := range assign {
		rec, rej := NewPartition(cl.img, id, int32(p), replicas)
		if rej != nil {
			return "", fmt.Errorf("%s: %s", errName(rej), rej)
		}
		group = append(group, rec)
	}
	if rej := cl.apply([][]metadata.Record{group}); rej[0] != nil {
		return "", fmt.Errorf("%s: %s", errName(rej[0]), rej[0])
	}
	return cl.formatGroups([][]metadata.Record{group}), nil
}

// errName is the Kafka name of the code err wraps, NONE for nil.
func errName(err error) string {
	if err == nil {
		return "NONE"
	}
	var ke *kerr.Error
	if !errors.As(err, &ke) {
		return "NOT A KAFKA ERROR: " + err.Error()
	}
	return ke.Message
}

func ints(a []int32) string {
	s := make([]string, len(a))
	for i, x := range a {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ",") + "]"
}

func (cl *cluster) topicName(id [16]byte) string {
	if t := cl.img.TopicByID(id); t != nil {
		return t.Name
	}
	return metadata.TopicIDString(id)
}

func recovery(r metadata.LeaderRecovery) string {
	switch r {
	case metadata.Recovered:
		return "recovered"
	case metadata.Recovering:
		return "recovering"
	}
	return fmt.Sprint(int8(r))
}

// formatRecord prints a record for scripts, the way a Kafka person reads
// metadata records.
func (cl *cluster) formatRecord(rec metadata.Record) string {
	var b strings.Builder
	switch r := rec.(type) {
	case *metadata.RegisterBroker:
		fmt.Fprintf(&b, "RegisterBroker id=%d incarnation=%s epoch=%d", r.ID, cl.names[r.Incarnation], r.Epoch)
		if r.Rack != "" {
			fmt.Fprintf(&b, " rack=%s", r.Rack)
		}
		if r.Fenced {
			b.WriteString(" fenced")
		}
		if r.InControlledShutdown {
			b.WriteString(" in-controlled-shutdown")
		}
	case *metadata.BrokerChange:
		fmt.Fprintf(&b, "BrokerChange id=%d epoch=%d", r.ID, r.Epoch)
		switch r.Fence {
		case metadata.Fence:
			b.WriteString(" fence")
		case metadata.Unfence:
			b.WriteString(" unfence")
		}
		if r.ControlledShutdown {
			b.WriteString(" controlled-shutdown")
		}
	case *metadata.UnregisterBroker:
		fmt.Fprintf(&b, "UnregisterBroker id=%d epoch=%d", r.ID, r.Epoch)
	case *metadata.TopicRecord:
		fmt.Fprintf(&b, "Topic %s", r.Name)
	case *metadata.PartitionRecord:
		fmt.Fprintf(&b, "Partition %s-%d replicas=%s isr=%s leader=%d", cl.topicName(r.TopicID), r.Partition, ints(r.Replicas), ints(r.ISR), r.Leader)
	case *metadata.PartitionChange:
		fmt.Fprintf(&b, "PartitionChange %s-%d epoch=%d", cl.topicName(r.TopicID), r.Partition, r.PartitionEpoch)
		if r.Leader != metadata.NoLeaderChange {
			fmt.Fprintf(&b, " leader=%d", r.Leader)
		}
		if r.ISR != nil || r.EmptyISR {
			fmt.Fprintf(&b, " isr=%s", ints(r.ISR))
		}
		if r.SetELR {
			fmt.Fprintf(&b, " elr=%s", ints(r.ELR))
		}
		if r.SetLastKnownELR {
			fmt.Fprintf(&b, " last-known-elr=%s", ints(r.LastKnownELR))
		}
		if r.Replicas != nil {
			fmt.Fprintf(&b, " replicas=%s adding=%s removing=%s", ints(r.Replicas), ints(r.AddingReplicas), ints(r.RemovingReplicas))
		}
		if r.LeaderRecovery != metadata.RecoveryNoChange {
			fmt.Fprintf(&b, " recovery=%s", recovery(r.LeaderRecovery))
		}
	case *metadata.ConfigRecord:
		fmt.Fprintf(&b, "Config %s %s=%s", r.Name, r.Key, r.Value)
	default:
		fmt.Fprintf(&b, "%T %+v", rec, rec)
	}
	return b.String()
}

func (cl *cluster) formatGroups(groups [][]metadata.Record) string {
	var b strings.Builder
	for i, g := range groups {
		for j, rec := range g {
			if len(groups) > 1 && j == 0 {
				fmt.Fprintf(&b, "group %d: ", i)
			} else if len(groups) > 1 {
				b.WriteString("         ")
			}
			b.WriteString(cl.formatRecord(rec))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// decide prints a decision's groups, applies them, and prints what did not
// apply.
func (cl *cluster) decide(groups [][]metadata.Record) (string, []error) {
	var b strings.Builder
	if len(groups) == 0 {
		b.WriteString("no records\n")
	}
	// Groups are printed before they apply: topic names resolve against the
	// image they were decided on.
	b.WriteString(cl.formatGroups(groups))
	rej := cl.apply(groups)
	for i, r := range rej {
		if r != nil {
			fmt.Fprintf(&b, "group %d rejected: %s: %s\n", i, errName(r), r)
		}
	}
	return b.String(), rej
}

// state prints the brokers and partitions.
func (cl *cluster) state() string {
	var b strings.Builder
	fmt.Fprintf(&b, "metadata offset %d\n", cl.img.Offset())
	for _, br := range cl.img.Brokers() {
		st := "active"
		switch {
		case br.Fenced && br.InControlledShutdown:
			st = "fenced (was shutting down)"
		case br.Fenced:
			st = "fenced"
		case br.InControlledShutdown:
			st = "shutting-down"
		}
		fmt.Fprintf(&b, "broker %d epoch=%d %s", br.ID, br.Epoch, st)
		if br.Rack != "" {
			fmt.Fprintf(&b, " rack=%s", br.Rack)
		}
		b.WriteByte('\n')
	}
	for _, t := range cl.img.Topics() {
		for _, p := range t.Partitions {
			fmt.Fprintf(&b, "%s-%d leader=%d leader-epoch=%d epoch=%d isr=%s replicas=%s", t.Name, p.Partition, p.Leader,
				p.LeaderEpoch, p.PartitionEpoch, ints(p.ISR), ints(p.Replicas))
			if p.Reassigning() {
				fmt.Fprintf(&b, " adding=%s removing=%s", ints(p.AddingReplicas), ints(p.RemovingReplicas))
			}
			if p.LeaderRecovery != metadata.Recovered {
				fmt.Fprintf(&b, " recovery=%s", recovery(p.LeaderRecovery))
			}
			if len(p.ELR) > 0 || len(p.LastKnownELR) > 0 {
				fmt.Fprintf(&b, " elr=%s last-known-elr=%s", ints(p.ELR), ints(p.LastKnownELR))
			}
			b.WriteByte('\n')
		}
	}
	return b.String()
}

var epoch0 = time.Unix(0, 0)

// checkInvariants checks what must hold in every image the controller's
// records build: a leader is in its ISR and is an active broker; the ISR is
// empty only without a leader and with ELR on; every ISR member is a
// replica; no replica is both in the ISR and eligible.
func checkInvariants(img *metadata.Image, elr bool) error {
	for _, t := range img.Topics() {
		for _, p := range t.Partitions {
			if len(p.ISR) == 0 && (!elr || p.Leader != metadata.NoLeader) {
				return fmt.Errorf("%s-%d has an empty ISR", t.Name, p.Partition)
			}
			if !elr && (len(p.ELR) > 0 || len(p.LastKnownELR) > 0) {
				return fmt.Errorf("%s-%d has eligible leader replicas with ELR off", t.Name, p.Partition)
			}
			for _, r := range p.ELR {
				if slices.Contains(p.ISR, r) || !slices.Contains(p.Replicas, r) {
					return fmt.Errorf("%s-%d: eligible replica %d is in the ISR %v or no replica of %v", t.Name, p.Partition, r, p.ISR, p.Replicas)
				}
			}
			for _, r := range p.ISR {
				if !slices.Contains(p.Replicas, r) {
					return fmt.Errorf("%s-%d: ISR member %d is no replica of %v", t.Name, p.Partition, r, p.Replicas)
				}
			}
			if p.Leader == metadata.NoLeader {
				continue
			}
			if !slices.Contains(p.ISR, p.Leader) {
				return fmt.Errorf("%s-%d: leader %d not in ISR %v", t.Name, p.Partition, p.Leader, p.ISR)
			}
			if b, ok := img.Broker(p.Leader); !ok || !b.Active() {
				return fmt.Errorf("%s-%d: leader %d is not an active broker", t.Name, p.Partition, p.Leader)
			}
		}
	}
	return nil
}
