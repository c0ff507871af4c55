package metadata

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
)

// Builder makes the next Image from a base one, copy on write: a map or a
// topic is copied the first time a batch changes it, so an apply batch costs
// what it changes, plus one copy of each map it touches.
//
// Applying a log entry is Check, then Apply, per group (ApplyProposal):
// Check decides from the Builder's state alone (so every voter decides the
// same) whether the whole group applies, and Apply then cannot fail on it.
// Loading a snapshot applies records without Check.
//
// A Builder is used by one goroutine; the Image it finishes is immutable.
type Builder struct {
	img   *Image
	owned struct {
		features, brokers, topics, topicIDs, collisions, brokerConfigs, groupConfigs, scram, acls, tokens, quotas bool
	}
	ownedTopics       map[*Topic]bool
	ownedConfigs      map[string]bool // broker config maps copied in this batch
	ownedGroupConfigs map[string]bool // group config maps copied in this batch
}

// NewBuilder starts the image that follows base.
func NewBuilder(base *Image) *Builder {
	return &Builder{img: base.WithController(base.controllerID), ownedTopics: map[*Topic]bool{}, ownedConfigs: map[string]bool{}, ownedGroupConfigs: map[string]bool{}}
}

// ApplyProposal applies an entry's groups at offset (the entry's raft
// index): each group that passes Check applies whole. It returns one result
// per group, nil where the group applied.
func (b *Builder) ApplyProposal(p *Proposal, offset int64) []error {
	results := make([]error, len(p.Groups))
	for gi, g := range p.Groups {
		if rej := b.Check(g); rej != nil {
			results[gi] = rej
			continue
		}
		for _, rec := range g {
			if err := b.Apply(rec, offset); err != nil {
				// Check and Apply disagree: a bug, reported, not hidden.
				results[gi] = Reject(kerr.UnknownServerError, "record %T passed its check but did not apply: %v", rec, err)
			}
		}
	}
	return results
}

// Finish returns the built image at offset; the Builder is spent.
func (b *Builder) Finish(offset int64) *Image {
	img := b.img
	img.offset = offset
	b.img = nil
	return img
}

func own[K comparable, V any](owned *bool, m *map[K]V) {
	if !*owned {
		*m = maps.Clone(*m)
		if *m == nil {
			*m = map[K]V{}
		}
		*owned = true
	}
}

// mutTopic returns a copy of t that this batch may change, and puts it in
// the image in t's place.
func (b *Builder) mutTopic(t *Topic) *Topic {
	if b.ownedTopics[t] {
		return t
	}
	c := &Topic{Name: t.Name, ID: t.ID, Partitions: slices.Clone(t.Partitions), Configs: maps.Clone(t.Configs)}
	if c.Configs == nil {
		c.Configs = map[string]string{}
	}
	own(&b.owned.topics, &b.img.topics)
	own(&b.owned.topicIDs, &b.img.topicIDs)
	b.img.topics[c.Name] = c
	b.img.topicIDs[c.ID] = c
	b.ownedTopics[c] = true
	return c
}

// Apply applies one record, unchecked. It returns an error only for a record that
// cannot apply to this image at all (from a damaged snapshot, or a check
// that let it through): the image is then unchanged by it.
func (b *Builder) Apply(rec Record, offset int64) error {
	img := b.img
	switch r := rec.(type) {
	case *ClusterRecord:
		if img.clusterID == "" {
			img.clusterID = r.ID
		}
	case *FeatureLevel:
		own(&b.owned.features, &img.features)
		if r.Level <= 0 {
			delete(img.features, r.Name)
		} else {
			img.features[r.Name] = r.Level
		}
	case *RegisterBroker:
		if r.ID < 0 {
			return fmt.Errorf("broker id %d", r.ID)
		}
		br := &Broker{ID: r.ID, Incarnation: r.Incarnation, Epoch: r.Epoch, Rack: r.Rack, Listeners: slices.Clone(r.Listeners),
			Fenced: r.Fenced, InControlledShutdown: r.InControlledShutdown, Registered: r.Registered}
		if br.Epoch < 0 {
			br.Epoch = offset
		}
		if br.Registered <= 0 { // offsets start at 1: 0 is a proposal that left it unset
			br.Registered = offset
		}
		own(&b.owned.brokers, &img.brokers)
		img.brokers[r.ID] = br
	case *BrokerChange:
		cur := img.brokers[r.ID]
		if cur == nil || cur.Epoch != r.Epoch {
			return fmt.Errorf("change of broker %d epoch %d: not registered with that epoch", r.ID, r.Epoch)
		}
		br := *cur
		switch r.Fence {
		case Fence:
			br.Fenced = true
		case Unfence:
			br.Fenced = false
		}
		if r.ControlledShutdown {
			br.InControlledShutdown = true
		}
		own(&b.owned.brokers, &img.brokers)
		img.brokers[r.ID] = &br
	case *UnregisterBroker:
		cur := img.brokers[r.ID]
		if cur == nil || cur.Epoch != r.Epoch {
			return fmt.Errorf("unregister of broker %d epoch %d: not registered with that epoch", r.ID, r.Epoch)
		}
		own(&b.owned.brokers, &img.brokers)
		delete(img.brokers, r.ID)
	case *TopicRecord:
		if img.topics[r.Name] != nil || img.topicIDs[r.ID] != nil || r.ID == ([16]byte{}) || r.Name == "" {
			return fmt.Errorf("topic %q (id %s) exists or is invalid", r.Name, TopicIDString(r.ID))
		}
		t := &Topic{Name: r.Name, ID: r.ID, Configs: map[string]string{}}
		own(&b.owned.topics, &img.topics)
		own(&b.owned.topicIDs, &img.topicIDs)
		own(&b.owned.collisions, &img.collisions)
		img.topics[t.Name] = t
		img.topicIDs[t.ID] = t
		img.collisions[collisionKey(t.Name)] = t.Name
		b.ownedTopics[t] = true
	case *PartitionRecord:
		t := img.topicIDs[r.TopicID]
		if t == nil {
			return fmt.Errorf("partition %d of unknown topic id %s", r.Partition, TopicIDString(r.TopicID))
		}
		if r.Partition < 0 || int(r.Partition) > len(t.Partitions) {
			return fmt.Errorf("partition %d of topic %q with %d partitions", r.Partition, t.Name, len(t.Partitions))
		}
		t = b.mutTopic(t)
		p := r.partition()
		p.Replicas, p.ISR = slices.Clone(p.Replicas), slices.Clone(p.ISR)
		p.AddingReplicas, p.RemovingReplicas = slices.Clone(p.AddingReplicas), slices.Clone(p.RemovingReplicas)
		p.ELR, p.LastKnownELR = slices.Clone(p.ELR), slices.Clone(p.LastKnownELR)
		if int(r.Partition) == len(t.Partitions) {
			t.Partitions = append(t.Partitions, p)
		} else {
			t.Partitions[r.Partition] = p
		}
	case *PartitionChange:
		t := img.topicIDs[r.TopicID]
		if t == nil || r.Partition < 0 || int(r.Partition) >= len(t.Partitions) {
			return fmt.Errorf("change of unknown partition %s-%d", TopicIDString(r.TopicID), r.Partition)
		}
		t = b.mutTopic(t)
		t.Partitions[r.Partition] = t.Partitions[r.Partition].With(r)
	case *RemoveTopic:
		t := img.topicIDs[r.ID]
		if t == nil {
			return fmt.Errorf("remove of unknown topic id %s", TopicIDString(r.ID))
		}
		own(&b.owned.topics, &img.topics)
		own(&b.owned.topicIDs, &img.topicIDs)
		own(&b.owned.collisions, &img.collisions)
		delete(img.topics, t.Name)
		delete(img.topicIDs, t.ID)
		delete(img.collisions, collisionKey(t.Name))
	case *ConfigRecord:
		switch r.ResourceType {
		case ResourceTopic:
			t := img.topics[r.Name]
			if t == nil {
				return fmt.Errorf("config of unknown topic %q", r.Name)
			}
			t = b.mutTopic(t)
			if r.Delete {
				delete(t.Configs, r.Key)
			} else {
				t.Configs[r.Key] = r.Value
			}
		case ResourceBroker:
			if !ValidBrokerResource(r.Name) {
				return fmt.Errorf("config of broker %q", r.Name)
			}
			own(&b.owned.brokerConfigs, &img.brokerConfigs)
			if !b.ownedConfigs[r.Name] {
				img.brokerConfigs[r.Name] = maps.Clone(img.brokerConfigs[r.Name])
				if img.brokerConfigs[r.Name] == nil {
					img.brokerConfigs[r.Name] = map[string]string{}
				}
				b.ownedConfigs[r.Name] = true
			}
			if r.Delete {
				delete(img.brokerConfigs[r.Name], r.Key)
				if len(img.brokerConfigs[r.Name]) == 0 {
					delete(img.brokerConfigs, r.Name)
					delete(b.ownedConfigs, r.Name)
				}
			} else {
				img.brokerConfigs[r.Name][r.Key] = r.Value
			}
		case ResourceGroup:
			if r.Name == "" {
				return fmt.Errorf("config of an unnamed group")
			}
			own(&b.owned.groupConfigs, &img.groupConfigs)
			if !b.ownedGroupConfigs[r.Name] {
				img.groupConfigs[r.Name] = maps.Clone(img.groupConfigs[r.Name])
				if img.groupConfigs[r.Name] == nil {
					img.groupConfigs[r.Name] = map[string]string{}
				}
				b.ownedGroupConfigs[r.Name] = true
			}
			if r.Delete {
				delete(img.groupConfigs[r.Name], r.Key)
				if len(img.groupConfigs[r.Name]) == 0 {
					delete(img.groupConfigs, r.Name)
					delete(b.ownedGroupConfigs, r.Name)
				}
			} else {
				img.groupConfigs[r.Name][r.Key] = r.Value
			}
		default:
			return fmt.Errorf("config resource type %d", r.ResourceType)
		}
	case *ProducerIDBlock:
		if r.First < 0 || r.Size <= 0 || r.First > 1<<62 {
			return fmt.Errorf("producer id block [%d, +%d)", r.First, r.Size)
		}
		if end := r.First + int64(r.Size); end >= img.nextProducerID {
			img.nextProducerID = end
			img.lastPIDBlock = *r // a snapshot keeps the block that ends at next
		}
	case *ScramCredential:
		if !validScramMechanism(r.Mechanism) || r.User == "" {
			return fmt.Errorf("scram credential of %q mechanism %d", r.User, r.Mechanism)
		}
		own(&b.owned.scram, &img.scram)
		img.scram[ScramKey{r.User, r.Mechanism}] = *r
	case *RemoveScramCredential:
		k := ScramKey{r.User, r.Mechanism}
		if _, ok := img.scram[k]; !ok {
			return fmt.Errorf("remove of unknown scram credential of %q mechanism %d", r.User, r.Mechanism)
		}
		own(&b.owned.scram, &img.scram)
		delete(img.scram, k)
	case *ACL:
		if !r.Valid() {
			return fmt.Errorf("invalid acl %+v", *r)
		}
		own(&b.owned.acls, &img.acls)
		a := *r
		img.acls[r.ID] = &a
	case *RemoveACL:
		if img.acls[r.ID] == nil {
			return fmt.Errorf("remove of unknown acl %s", TopicIDString(r.ID))
		}
		own(&b.owned.acls, &img.acls)
		delete(img.acls, r.ID)
	case *DelegationToken:
		if !r.valid() {
			return fmt.Errorf("invalid delegation token %q", r.TokenID)
		}
		own(&b.owned.tokens, &img.tokens)
		t := *r
		img.tokens[r.TokenID] = t
	case *RemoveDelegationToken:
		if _, ok := img.tokens[r.TokenID]; !ok {
			return fmt.Errorf("remove of unknown delegation token %q", r.TokenID)
		}
		own(&b.owned.tokens, &img.tokens)
		delete(img.tokens, r.TokenID)
	case *ClientQuota:
		if r.Entity.Empty() {
			return fmt.Errorf("client quota %q of an empty entity", r.Key)
		}
		own(&b.owned.quotas, &img.quotas)
		vals := maps.Clone(img.quotas[r.Entity])
		if vals == nil {
			vals = map[string]float64{}
		}
		if r.Remove {
			delete(vals, r.Key)
		} else {
			vals[r.Key] = r.Value
		}
		if len(vals) == 0 {
			delete(img.quotas, r.Entity)
		} else {
			img.quotas[r.Entity] = vals
		}
	default:
		return fmt.Errorf("record type %T", rec)
	}
	return nil
}

// ValidBrokerResource reports whether name names a broker config resource:
// "" (the cluster default) or a broker id.
func ValidBrokerResource(name string) bool {
	if name == "" {
		return true
	}
	id, err := strconv.ParseInt(name, 10, 32)
	return err == nil && id >= 0 && strconv.FormatInt(id, 10) == name
}

// Rejection is why a group of records did not apply: an error that wraps
// the kerr sentinel of its Kafka error code (errors.Is, errors.As) and
// whose text is the message for the response.
type Rejection struct {
	code error // a kerr sentinel
	msg  string
}

func (r *Rejection) Error() string { return r.msg }
func (r *Rejection) Unwrap() error { return r.code }

// Reject makes a Rejection of code, a kerr sentinel, with a message.
func Reject(code error, format string, args ...any) error {
	return &Rejection{code: code, msg: fmt.Sprintf(format, args...)}
}

// Split parts a non-nil error for results that carry a code and a message
// apart (a response's error code and error message): a Rejection's kerr
// sentinel and message, any other error itself and its text.
func Split(err error) (code error, msg string) {
	var r *Rejection
	if errors.As(err, &r) {
		return r.code, r.msg
	}
	return err, err.Error()
}

// brokerState is what Check tracks of a broker the group registered or
// unregistered (a nil *brokerState in its map).
type brokerState struct {
	epoch       int64 // -1: registered by this group, epoch known when it applies
	incarnation [16]byte
}

// Check decides whether group applies as a whole to the Builder's current
// state: the conditions the proposer saw may no longer hold when the entry
// commits (a concurrent create of the same topic, a producer id block
// handed out meanwhile). Records earlier in the group count: a group may
// create a topic and then its partitions and configs.
func (b *Builder) Check(group []Record) error {
	img := b.img
	type topicState struct {
		name  string
		parts int32
	}
	created := map[[16]byte]*topicState{} // topics the group created or grew so far
	removed := map[[16]byte]bool{}
	type tp struct {
		id [16]byte
		p  int32
	}
	parts := map[tp]Partition{}         // partition states the group set so far
	brokers := map[int32]*brokerState{} // broker states the group set so far
	brokerNow := func(id int32) *brokerState {
		if s, ok := brokers[id]; ok {
			return s
		}
		if br := img.brokers[id]; br != nil {
			return &brokerState{epoch: br.Epoch, incarnation: br.Incarnation}
		}
		return nil
	}
	partitionNow := func(id [16]byte, p int32) (Partition, bool) {
		if s, ok := parts[tp{id, p}]; ok {
			return s, true
		}
		if t := img.topicIDs[id]; t != nil && !removed[id] && p >= 0 && int(p) < len(t.Partitions) {
			return t.Partitions[p], true
		}
		return Partition{}, false
	}
	nextPID := img.nextProducerID
	scram := map[ScramKey]bool{} // credentials the group set (true) or removed (false)
	acls := map[[16]byte]bool{}  // ACLs the group created (true) or removed (false)
	tokens := map[string]bool{}  // delegation tokens the group set (true) or removed (false)
	clusterSet := img.clusterID != ""

	topicByID := func(id [16]byte) (*topicState, bool) {
		if ts := created[id]; ts != nil {
			return ts, true
		}
		if t := img.topicIDs[id]; t != nil && !removed[id] {
			return &topicState{name: t.Name, parts: int32(len(t.Partitions))}, true
		}
		return nil, false
	}
	nameTaken := func(name string) error {
		for id, ts := range created {
			if ts.name == name && !removed[id] {
				return Reject(kerr.TopicAlreadyExists, "Topic '%s' already exists.", name)
			}
			if collisionKey(ts.name) == collisionKey(name) {
				return Reject(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", name, ts.name)
			}
		}
		if t := img.topics[name]; t != nil && !removed[t.ID] {
			return Reject(kerr.TopicAlreadyExists, "Topic '%s' already exists.", name)
		}
		if other, ok := img.collisions[collisionKey(name)]; ok {
			if t := img.topics[other]; t != nil && !removed[t.ID] {
				return Reject(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", name, other)
			}
		}
		return nil
	}

	for _, rec := range group {
		switch r := rec.(type) {
		case *ClusterRecord:
			if clusterSet || r.ID == "" {
				return Reject(kerr.InconsistentClusterID, "the cluster id is already set")
			}
			clusterSet = true
		case *FeatureLevel:
			if r.Name == "" || r.Level < 0 {
				return Reject(kerr.InvalidRequest, "bad feature level %q=%d", r.Name, r.Level)
			}
		case *RegisterBroker:
			if r.ID < 0 {
				return Reject(kerr.InvalidRequest, "bad broker id %d", r.ID)
			}
			if r.Epoch >= 0 { // amends the current registration
				if cur := brokerNow(r.ID); cur == nil || cur.epoch != r.Epoch || cur.incarnation != r.Incarnation {
					return Reject(kerr.StaleBrokerEpoch, "broker %d is not registered with epoch %d and this incarnation", r.ID, r.Epoch)
				}
			}
			brokers[r.ID] = &brokerState{epoch: r.Epoch, incarnation: r.Incarnation} // -1: a new epoch, unknown until applied
		case *BrokerChange:
			if cur := brokerNow(r.ID); cur == nil || cur.epoch != r.Epoch || r.Epoch < 0 {
				return Reject(kerr.StaleBrokerEpoch, "broker %d is not registered with epoch %d", r.ID, r.Epoch)
			}
			if r.Fence < Unfence || r.Fence > Fence {
				return Reject(kerr.InvalidRequest, "bad fence change %d", r.Fence)
			}
		case *UnregisterBroker:
			cur := brokerNow(r.ID)
			if cur == nil {
				return Reject(kerr.BrokerIDNotRegistered, "Broker ID %d is not currently registered", r.ID)
			}
			if cur.epoch != r.Epoch || r.Epoch < 0 {
				return Reject(kerr.StaleBrokerEpoch, "broker %d is not registered with epoch %d", r.ID, r.Epoch)
			}
			brokers[r.ID] = nil
		case *TopicRecord:
			if err := ValidateTopicName(r.Name); err != nil {
				return Reject(kerr.InvalidTopicException, "%v", err)
			}
			if err := nameTaken(r.Name); err != nil {
				return err
			}
			if _, ok := topicByID(r.ID); ok || r.ID == ([16]byte{}) || img.topicIDs[r.ID] != nil {
				return Reject(kerr.InvalidRequest, "topic id %s is taken", TopicIDString(r.ID))
			}
			created[r.ID] = &topicState{name: r.Name}
		case *PartitionRecord:
			ts, ok := topicByID(r.TopicID)
			if !ok {
				return Reject(kerr.UnknownTopicID, "unknown topic id %s", TopicIDString(r.TopicID))
			}
			if len(r.Replicas) == 0 || len(r.Replicas) > 1<<15 {
				return Reject(kerr.InvalidReplicaAssignment, "partition %d has %d replicas", r.Partition, len(r.Replicas))
			}
			if r.PartitionEpoch == 0 { // a new partition: the topic's next
				if r.Partition != ts.parts {
					return Reject(kerr.InvalidPartitions, "Topic '%s' has %d partitions, not %d.", ts.name, ts.parts, r.Partition)
				}
				ts.parts++
				if c := created[r.TopicID]; c != nil {
					c.parts = ts.parts
				} else {
					created[r.TopicID] = ts // track the count for later records
				}
				parts[tp{r.TopicID, r.Partition}] = r.partition()
				break
			}
			if r.Partition < 0 || r.Partition >= ts.parts {
				return Reject(kerr.UnknownTopicOrPartition, "topic '%s' has no partition %d", ts.name, r.Partition)
			}
			cur, _ := partitionNow(r.TopicID, r.Partition)
			if r.PartitionEpoch != cur.PartitionEpoch+1 {
				return Reject(kerr.InvalidUpdateVersion, "partition %s-%d is at epoch %d, not %d", ts.name, r.Partition, cur.PartitionEpoch, r.PartitionEpoch-1)
			}
			parts[tp{r.TopicID, r.Partition}] = r.partition()
		case *PartitionChange:
			ts, ok := topicByID(r.TopicID)
			if !ok {
				return Reject(kerr.UnknownTopicID, "unknown topic id %s", TopicIDString(r.TopicID))
			}
			cur, ok := partitionNow(r.TopicID, r.Partition)
			if !ok {
				return Reject(kerr.UnknownTopicOrPartition, "topic '%s' has no partition %d", ts.name, r.Partition)
			}
			if r.PartitionEpoch != cur.PartitionEpoch+1 {
				return Reject(kerr.InvalidUpdateVersion, "partition %s-%d is at epoch %d, not %d", ts.name, r.Partition, cur.PartitionEpoch, r.PartitionEpoch-1)
			}
			if r.Leader < NoLeaderChange || r.LeaderRecovery < RecoveryNoChange || r.LeaderRecovery > Recovering ||
				len(r.Replicas) == 0 && (len(r.AddingReplicas) > 0 || len(r.RemovingReplicas) > 0) {
				return Reject(kerr.InvalidRequest, "bad change of partition %s-%d", ts.name, r.Partition)
			}
			next := cur.With(r)
			if msg := next.problem(); msg != "" {
				return Reject(kerr.InvalidRequest, "partition %s-%d after the change: %s", ts.name, r.Partition, msg)
			}
			parts[tp{r.TopicID, r.Partition}] = next
		case *RemoveTopic:
			if _, ok := topicByID(r.ID); !ok {
				return Reject(kerr.UnknownTopicID, "unknown topic id %s", TopicIDString(r.ID))
			}
			removed[r.ID] = true
			delete(created, r.ID)
			for k := range parts {
				if k.id == r.ID {
					delete(parts, k)
				}
			}
		case *ConfigRecord:
			switch r.ResourceType {
			case ResourceTopic:
				found := false
				for id, ts := range created {
					if ts.name == r.Name && !removed[id] {
						found = true
					}
				}
				if t := img.topics[r.Name]; t != nil && !removed[t.ID] {
					found = true
				}
				if !found {
					return Reject(kerr.UnknownTopicOrPartition, "Topic '%s' does not exist.", r.Name)
				}
			case ResourceBroker:
				if !ValidBrokerResource(r.Name) {
					return Reject(kerr.InvalidRequest, "bad broker config resource %q", r.Name)
				}
			case ResourceGroup:
				if r.Name == "" {
					return Reject(kerr.InvalidRequest, "config of an unnamed group")
				}
			default:
				return Reject(kerr.InvalidRequest, "config resource type %d", r.ResourceType)
			}
		case *ProducerIDBlock:
			if r.First != nextPID || r.Size <= 0 {
				return Reject(kerr.InvalidUpdateVersion, "producer id block at %d, next is %d", r.First, nextPID)
			}
			nextPID += int64(r.Size)
		case *ScramCredential:
			if r.User == "" {
				return Reject(kerr.UnacceptableCredential, "Username must not be empty")
			}
			if !validScramMechanism(r.Mechanism) {
				return Reject(kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
			}
			scram[ScramKey{r.User, r.Mechanism}] = true
		case *RemoveScramCredential:
			k := ScramKey{r.User, r.Mechanism}
			exists, seen := scram[k]
			if !seen {
				_, exists = img.scram[k]
			}
			if !exists {
				return Reject(kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
			}
			scram[k] = false
		case *ACL:
			if !r.Valid() {
				return Reject(kerr.InvalidRequest, "invalid ACL")
			}
			if _, taken := img.acls[r.ID]; taken || acls[r.ID] {
				return Reject(kerr.InvalidRequest, "ACL id %s is taken", TopicIDString(r.ID))
			}
			acls[r.ID] = true
		case *RemoveACL:
			exists, seen := acls[r.ID]
			if !seen {
				exists = img.acls[r.ID] != nil
			}
			if !exists {
				return Reject(kerr.ResourceNotFound, "ACL %s does not exist", TopicIDString(r.ID))
			}
			acls[r.ID] = false
		case *DelegationToken:
			if !r.valid() {
				return Reject(kerr.InvalidRequest, "invalid delegation token")
			}
			tokens[r.TokenID] = true
		case *RemoveDelegationToken:
			exists, seen := tokens[r.TokenID]
			if !seen {
				_, exists = img.tokens[r.TokenID]
			}
			if !exists {
				return Reject(kerr.DelegationTokenNotFound, "Delegation token %s does not exist", r.TokenID)
			}
			tokens[r.TokenID] = false
		case *ClientQuota:
			if r.Entity.Empty() {
				return Reject(kerr.InvalidRequest, "Invalid empty client quota entity")
			}
		default:
			return Reject(kerr.InvalidRequest, "record type %T", rec)
		}
	}
	return nil
}
