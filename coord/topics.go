package coord

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/control"
	"kzero/coord/metadata"
	"kzero/coord/topicconfig"
)

// MaxPartitionsPerRequest bounds the partitions one topic creation or one
// CreatePartitions entry may add: each is a record in one raft entry.
const MaxPartitionsPerRequest = 10000

// TopicSpec is one topic of a CreateTopics request.
type TopicSpec struct {
	Name              string
	NumPartitions     int32             // -1: num.partitions
	ReplicationFactor int16             // -1: default.replication.factor
	Assignments       map[int32][]int32 // partition -> replicas; counts must then be -1
	Configs           map[string]string // dynamic topic configs
}

// TopicResult is the outcome of one TopicSpec. Err is nil on success.
type TopicResult struct {
	Name              string
	ID                [16]byte // set when created
	Err               error
	Message           string
	NumPartitions     int32
	ReplicationFactor int16
}

// Result is the outcome of one item of a request. Err is nil on success.
type Result struct {
	Err     error
	Message string
}

func (r *Result) set(rej error) {
	if rej != nil {
		r.Err, r.Message = metadata.Split(rej)
	}
}

func newRNG() *rand.Rand { return rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())) }

// CreateTopics creates topics: each gets a random topic id, its partitions
// placed over the registered brokers (or as Assignments say), leader the
// first replica, ISR all replicas, epochs 0. With validateOnly nothing is
// created, but every check runs. Each topic succeeds or fails alone; the
// call returns once the created topics are in the Image and subscribers saw
// them.
func (c *Controller) CreateTopics(ctx context.Context, specs []TopicSpec, validateOnly bool) []TopicResult {
	img := c.Image()
	results := make([]TopicResult, len(specs))
	names := map[string]int{}
	for _, s := range specs {
		names[s.Name]++
	}
	rng := newRNG()
	var groups [][]metadata.Record
	var owners []int
	for i, s := range specs {
		r := &results[i]
		r.Name = s.Name
		if names[s.Name] > 1 {
			r.Err, r.Message = kerr.InvalidRequest, "Found multiple entries for this topic."
			continue
		}
		recs, parts, rf, rej := c.planTopic(img, s, rng)
		if rej != nil {
			r.Err, r.Message = metadata.Split(rej)
			continue
		}
		r.NumPartitions, r.ReplicationFactor = parts, rf
		if validateOnly {
			continue
		}
		r.ID = recs[0].(*metadata.TopicRecord).ID
		groups = append(groups, recs)
		owners = append(owners, i)
	}
	if len(groups) == 0 {
		return results
	}
	res, err := c.propose(ctx, groups)
	for gi, i := range owners {
		r := &results[i]
		switch {
		case err != nil:
			r.Err, r.Message = codeFor(err), err.Error()
		case res[gi] != nil:
			r.Err, r.Message = metadata.Split(res[gi])
		}
		if r.Err != nil {
			r.ID = [16]byte{}
		}
	}
	return results
}

// planTopic validates a spec against img and returns the records that
// create it.
func (c *Controller) planTopic(img *metadata.Image, s TopicSpec, rng *rand.Rand) ([]metadata.Record, int32, int16, error) {
	if err := metadata.ValidateTopicName(s.Name); err != nil {
		return nil, 0, 0, metadata.Reject(kerr.InvalidTopicException, "%v", err)
	}
	if img.Topic(s.Name) != nil {
		return nil, 0, 0, metadata.Reject(kerr.TopicAlreadyExists, "Topic '%s' already exists.", s.Name)
	}
	if other, ok := img.CollidingTopic(s.Name); ok {
		return nil, 0, 0, metadata.Reject(kerr.InvalidTopicException, "Topic '%s' collides with existing topic: %s", s.Name, other)
	}
	var assign [][]int32
	if len(s.Assignments) > 0 {
		if s.NumPartitions != -1 || s.ReplicationFactor != -1 {
			return nil, 0, 0, metadata.Reject(kerr.InvalidRequest, "Both numPartitions or replicationFactor and replicasAssignments were set. Both cannot be used at the same time.")
		}
		if len(s.Assignments) > MaxPartitionsPerRequest {
			return nil, 0, 0, metadata.Reject(kerr.InvalidPartitions, "A topic may be created with at most %d partitions.", MaxPartitionsPerRequest)
		}
		assign = make([][]int32, len(s.Assignments))
		for p, replicas := range s.Assignments {
			if p < 0 || int(p) >= len(assign) {
				return nil, 0, 0, metadata.Reject(kerr.InvalidReplicaAssignment, "Partitions should be a consecutive 0-based integer sequence, but got %v.", slices.Sorted(maps.Keys(s.Assignments)))
			}
			assign[p] = replicas
		}
		for p, replicas := range assign {
			if rej := checkAssignment(img, int32(p), replicas, len(assign[0])); rej != nil {
				return nil, 0, 0, rej
			}
		}
	} else {
		parts, rf := s.NumPartitions, s.ReplicationFactor
		if parts == -1 {
			parts = c.cfg.DefaultPartitions
		}
		if rf == -1 {
			rf = c.cfg.DefaultReplicationFactor
		}
		if parts <= 0 {
			return nil, 0, 0, metadata.Reject(kerr.InvalidPartitions, "Number of partitions was set to an invalid non-positive value.")
		}
		if parts > MaxPartitionsPerRequest {
			return nil, 0, 0, metadata.Reject(kerr.InvalidPartitions, "A topic may be created with at most %d partitions.", MaxPartitionsPerRequest)
		}
		if rf <= 0 {
			return nil, 0, 0, metadata.Reject(kerr.InvalidReplicationFactor, "Replication factor must be larger than 0, or -1 to use the default value.")
		}
		pl, rej := control.NewPlacer(img, int(rf), rng)
		if rej != nil {
			return nil, 0, 0, rej
		}
		assign = make([][]int32, parts)
		for p := range assign {
			assign[p] = pl.Replicas(int32(p))
		}
	}
	if err := topicconfig.ValidateAll(s.Configs); err != nil {
		return nil, 0, 0, metadata.Reject(kerr.InvalidConfig, "%v", err)
	}

	id := metadata.NewUUID()
	for img.TopicByID(id) != nil {
		id = metadata.NewUUID()
	}
	recs := make([]metadata.Record, 0, 1+len(assign)+len(s.Configs))
	recs = append(recs, &metadata.TopicRecord{Name: s.Name, ID: id})
	for p, replicas := range assign {
		rec, rej := newPartition(img, id, int32(p), replicas)
		if rej != nil {
			return nil, 0, 0, rej
		}
		recs = append(recs, rec)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Configs)) {
		recs = append(recs, &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, Name: s.Name, Key: k, Value: s.Configs[k]})
	}
	return recs, int32(len(assign)), int16(len(assign[0])), nil
}

// checkAssignment checks a manual replica assignment: replicas non-empty,
// as many as the other partitions', distinct, on registered brokers.
func checkAssignment(img *metadata.Image, p int32, replicas []int32, rf int) error {
	if len(replicas) == 0 {
		return metadata.Reject(kerr.InvalidReplicaAssignment, "The manual partition assignment includes an empty replica list for partition %d.", p)
	}
	if len(replicas) != rf {
		return metadata.Reject(kerr.InvalidReplicaAssignment, "The manual partition assignment includes a partition with %d replica(s), but this is not consistent with previous partitions, which have %d replica(s).", len(replicas), rf)
	}
	seen := map[int32]bool{}
	for _, b := range replicas {
		if seen[b] {
			return metadata.Reject(kerr.InvalidReplicaAssignment, "The manual partition assignment includes the broker %d more than once for partition %d.", b, p)
		}
		seen[b] = true
		if _, ok := img.Broker(b); !ok {
			return metadata.Reject(kerr.InvalidReplicaAssignment, "The manual partition assignment includes broker %d, but no such broker is registered.", b)
		}
	}
	return nil
}

// DeleteResult is the outcome of deleting one topic. Err is nil on success.
type DeleteResult struct {
	Name    string
	ID      [16]byte
	Err     error
	Message string
}

// DeleteTopics deletes topics by name and by id: the results are one per
// name, then one per id. A topic named twice is deleted once.
func (c *Controller) DeleteTopics(ctx context.Context, names []string, ids [][16]byte) []DeleteResult {
	img := c.Image()
	results := make([]DeleteResult, len(names)+len(ids))
	group := map[[16]byte]int{} // topic id -> its group
	var groups [][]metadata.Record
	owners := make([]int, len(results)) // result -> group, -1 none
	add := func(i int, t *metadata.Topic) {
		results[i].Name, results[i].ID = t.Name, t.ID
		g, ok := group[t.ID]
		if !ok {
			g = len(groups)
			group[t.ID] = g
			groups = append(groups, []metadata.Record{&metadata.RemoveTopic{ID: t.ID}})
		}
		owners[i] = g
	}
	for i, name := range names {
		owners[i] = -1
		results[i].Name = name
		t := img.Topic(name)
		if t == nil {
			results[i].Err, results[i].Message = kerr.UnknownTopicOrPartition, "This server does not host this topic-partition."
			continue
		}
		add(i, t)
	}
	for j, id := range ids {
		i := len(names) + j
		owners[i] = -1
		results[i].ID = id
		t := img.TopicByID(id)
		if t == nil {
			results[i].Err, results[i].Message = kerr.UnknownTopicID, "This server does not host this topic ID."
			continue
		}
		add(i, t)
	}
	if len(groups) == 0 {
		return results
	}
	res, err := c.propose(ctx, groups)
	for i, g := range owners {
		if g < 0 {
			continue
		}
		r := &results[i]
		switch {
		case err != nil:
			r.Err, r.Message = codeFor(err), err.Error()
		case res[g] != nil:
			// Deleted meanwhile by someone else.
			r.Err, r.Message = kerr.UnknownTopicOrPartition, res[g].Error()
			if i >= len(names) {
				r.Err = kerr.UnknownTopicID
			}
		}
	}
	return results
}

// PartitionSpec is one topic of a CreatePartitions request: grow it to
// Count partitions, the new ones placed as Assignments say (one replica
// list per new partition) or like a new topic's.
type PartitionSpec struct {
	Topic       string
	Count       int32
	Assignments [][]int32
}

// CreatePartitions adds partitions to topics. A topic named twice fails
// with INVALID_REQUEST.
func (c *Controller) CreatePartitions(ctx context.Context, specs []PartitionSpec, validateOnly bool) []Result {
	img := c.Image()
	results := make([]Result, len(specs))
	names := map[string]int{}
	for _, s := range specs {
		names[s.Topic]++
	}
	rng := newRNG()
	var groups [][]metadata.Record
	var owners []int
	for i, s := range specs {
		if names[s.Topic] > 1 {
			results[i] = Result{kerr.InvalidRequest, "Duplicate topic in request."}
			continue
		}
		recs, rej := planPartitions(img, s, rng)
		if rej != nil {
			results[i].set(rej)
			continue
		}
		if !validateOnly {
			groups = append(groups, recs)
			owners = append(owners, i)
		}
	}
	if len(groups) == 0 {
		return results
	}
	res, err := c.propose(ctx, groups)
	for gi, i := range owners {
		if err != nil {
			results[i] = Result{codeFor(err), err.Error()}
			continue
		}
		results[i].set(res[gi])
	}
	return results
}

func planPartitions(img *metadata.Image, s PartitionSpec, rng *rand.Rand) ([]metadata.Record, error) {
	t := img.Topic(s.Topic)
	if t == nil {
		return nil, metadata.Reject(kerr.UnknownTopicOrPartition, "The topic '%s' does not exist.", s.Topic)
	}
	cur := int32(len(t.Partitions))
	switch {
	case s.Count < cur:
		return nil, metadata.Reject(kerr.InvalidPartitions, "The topic %s currently has %d partition(s); %d would not be an increase.", s.Topic, cur, s.Count)
	case s.Count == cur:
		return nil, metadata.Reject(kerr.InvalidPartitions, "Topic already has %d partition(s).", cur)
	case s.Count-cur > MaxPartitionsPerRequest:
		return nil, metadata.Reject(kerr.InvalidPartitions, "At most %d partitions may be added at once.", MaxPartitionsPerRequest)
	}
	add := int(s.Count - cur)
	rf := int(t.ReplicationFactor())
	var assign [][]int32
	if s.Assignments != nil {
		if len(s.Assignments) != add {
			return nil, metadata.Reject(kerr.InvalidReplicaAssignment, "Attempted to add %d additional partition(s), but only %d assignment(s) were specified.", add, len(s.Assignments))
		}
		for i, replicas := range s.Assignments {
			if rej := checkAssignment(img, cur+int32(i), replicas, rf); rej != nil {
				return nil, rej
			}
		}
		assign = s.Assignments
	} else {
		pl, rej := control.NewPlacer(img, rf, rng)
		if rej != nil {
			return nil, rej
		}
		for p := cur; p < s.Count; p++ {
			assign = append(assign, pl.Replicas(p))
		}
	}
	recs := make([]metadata.Record, 0, add)
	for i, replicas := range assign {
		rec, rej := newPartition(img, t.ID, cur+int32(i), replicas)
		if rej != nil {
			return nil, rej
		}
		recs = append(recs, rec)
	}
	return recs, nil
}

// newPartition is a new partition's record: its replicas, its ISR (every
// live replica: all hold the empty log) and the first of them as leader.
func newPartition(img *metadata.Image, id [16]byte, p int32, replicas []int32) (*metadata.PartitionRecord, error) {
	return control.NewPartition(img, id, p, replicas)
}
