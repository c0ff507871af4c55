package group

import (
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// StreamsType is a streams group's type in ListGroups (KIP-1071).
const StreamsType = "streams"

// streamsProtocolType is the protocol type ListGroups shows for streams
// groups.
const streamsProtocolType = "streams"

// StreamsGroupHeartbeat handles a StreamsGroupHeartbeat (KIP-1071): a
// member joins (epoch 0, with the topology), heartbeats, or leaves (-1).
// The records of the change are written to the group's partition before
// the response, and applied once written. A join creates the group; an
// empty classic group (one holding only offsets, say) becomes a streams
// group, keeping its offsets; any other group, a consumer group among
// them, gets GROUP_ID_NOT_FOUND, as Kafka converts no other. (The other
// way, a classic JoinGroup converts an empty streams group.)
//
// configs are the group's dynamic configs (the metadata image's): its
// streams.* configs override the broker's for this heartbeat
// (streams_config.go).
func (c *Coordinator) StreamsGroupHeartbeat(r *kmsg.StreamsGroupHeartbeatRequest, clientID, clientHost string, configs map[string]string) StreamsHeartbeatResult {
	if msg, err := validateStreamsHeartbeat(r); err != nil {
		return streamsFail(err, msg)
	}
	s, err := c.lock(r.Group)
	if err != nil {
		return streamsFail(err, "")
	}
	now := c.now()
	e := s.mu.groups[r.Group]
	notFound := func(msg string) StreamsHeartbeatResult {
		s.Unlock()
		return streamsFail(kerr.GroupIDNotFound, fmt.Sprintf(msg, r.Group))
	}
	if r.MemberEpoch < 0 {
		switch {
		case e == nil:
			return notFound("Streams group %s not found.")
		case e.g.streams == nil:
			return notFound("Group %s is not a streams group.")
		}
		return s.finishStreamsLocked(e, now, e.g.streams, e.g.streams.leave(r), nil, false)
	}
	var sg *streamsGroup
	var convert []streamsConversion
	created := false
	switch {
	case e == nil:
		if r.MemberEpoch != streamsJoinEpoch {
			return notFound("Streams group %s not found.")
		}
		e, created = s.addLocked(r.Group, now), true
		sg = newStreamsGroup()
	case e.g.streams != nil:
		sg = e.g.streams
	case r.MemberEpoch == streamsJoinEpoch && e.g.classicEmpty():
		sg, convert = newStreamsGroup(), []streamsConversion{convertClassic}
	default:
		return notFound("Group %s is not a streams group.")
	}
	policy := c.policy.Streams.forGroup(configs)
	env := streamsEnv{now: now, policy: &policy, topics: c.env(now).topics,
		clientID: clientID, clientHost: clientHost, shutdownBy: s.streamsShutdownLocked(e.g.id)}
	out := sg.heartbeat(&env, r)
	if e.g.streams == nil && out.res.Err == nil {
		convert = append(convert, convertNew)
	}
	return s.finishStreamsLocked(e, now, sg, out, convert, created)
}

// streamsConversion is what a heartbeat that creates a streams group
// does to the group it replaces.
type streamsConversion int8

const (
	convertNew     streamsConversion = iota // the streams group is installed
	convertClassic                          // an empty classic group's metadata is tombstoned
)

// finishStreamsLocked writes a heartbeat's records (after the tombstones
// of the group it replaces), applies them, unlocks the shard and returns
// the response.
func (s *shard) finishStreamsLocked(e *entry, now int64, sg *streamsGroup, out streamsOutcome, convert []streamsConversion, created bool) StreamsHeartbeatResult {
	res := out.res
	if res.Err == nil && len(out.recs) > 0 {
		if err := writeConvertingLocked(s, e.g.id, out.recs, slices.Contains(convert, convertClassic), nil); err != nil {
			s.c.logger.Warn("cannot store streams group records", "group", e.g.id, "partition", s.Partition, "err", err)
			res = streamsFail(storeErr(err), "")
		} else {
			if slices.Contains(convert, convertNew) {
				e.g.streams = sg
			}
			replayRecords(&e.g.streams, out.recs, newStreamsGroup)
		}
	}
	if res.Err != nil && created {
		delete(s.mu.groups, e.g.id) // the group never was
		s.Unlock()
		return res
	}
	if res.Err == nil && e.g.streams != nil {
		e.g.streams.apply(&out)
		if out.shutdown {
			s.setStreamsShutdownLocked(e.g.id, out.member)
		}
	}
	s.finishLocked(e, now)
	return res
}

// dropStreamsLocked ends an empty streams group's streams state (a
// classic JoinGroup converts it), keeping its offsets; on a failed write
// it answers the join, unlocks and returns false.
func (s *shard) dropStreamsLocked(e *entry, now int64, done func(JoinResult), memberID string) bool {
	recs := e.g.streams.deleteRecords()
	if err := writeRecordsLocked(s, e.g.id, recs); err != nil {
		s.c.logger.Warn("cannot convert streams group to classic", "group", e.g.id, "partition", s.Partition, "err", err)
		s.finishLocked(e, now)
		done(joinError(storeErr(err), memberID))
		return false
	}
	replayRecords(&e.g.streams, recs, newStreamsGroup)
	return true
}

// expireStreamsLocked fences the members of the group whose session or
// revocation expired: one batch, one group epoch bump.
func (s *shard) expireStreamsLocked(e *entry, now int64) {
	g := e.g
	for range 8 {
		if g.streams == nil {
			return
		}
		if sg := g.streams; sg.delayUntil != 0 && now >= sg.delayUntil {
			sg.delayUntil = 0
			recs := sg.delayedAssignment(s.c.env(now).topics, now)
			if err := writeRecordsLocked(s, g.id, recs); err != nil {
				// The next heartbeat assigns instead.
				s.c.logger.Warn("cannot store a streams group's delayed assignment", "group", g.id, "partition", s.Partition, "err", err)
			} else {
				replayRecords(&g.streams, recs, newStreamsGroup)
			}
			continue
		}
		gone := g.streams.expired(now)
		if len(gone) == 0 {
			return
		}
		recs := g.streams.fenceRecords(gone...)
		if err := writeRecordsLocked(s, g.id, recs); err != nil {
			s.c.logger.Warn("cannot remove expired streams group members", "group", g.id, "partition", s.Partition, "err", err)
			for _, m := range gone {
				m.sessionDeadline, m.revokeDeadline = now+1000, 0 // try again later
			}
			return
		}
		for _, m := range gone {
			s.c.logger.Info("streams group member expired", "group", g.id, "member", m.id)
		}
		replayRecords(&g.streams, recs, newStreamsGroup)
	}
}

// streamsShutdownLocked is the member that asked group's application to
// shut down (SHUTDOWN_APPLICATION), as Kafka keeps it: in memory, the
// first to ask, until the group is empty.
func (s *shard) streamsShutdownLocked(group string) string {
	if e := s.mu.groups[group]; e != nil && e.g.streams != nil {
		return e.g.streams.shutdownBy
	}
	return ""
}

func (s *shard) setStreamsShutdownLocked(group, member string) {
	if e := s.mu.groups[group]; e != nil && e.g.streams != nil && e.g.streams.shutdownBy == "" {
		e.g.streams.shutdownBy = member
	}
}

// validateCommit checks an OffsetCommit (or TxnOffsetCommit, txn) of a
// member of a streams group, as Kafka's StreamsGroup does: a commit with
// no member (epoch -1) while the group has no members; else the member
// must exist (UNKNOWN_MEMBER_ID) and commit with its epoch, or an older
// one for partitions it held since (checked per partition by
// staleCommits); a later epoch gets STALE_MEMBER_EPOCH. A TxnOffsetCommit
// must carry the member's epoch (ILLEGAL_GENERATION).
func (sg *streamsGroup) validateCommit(memberID string, epoch int32, txn bool) error {
	if epoch < 0 && len(sg.members) == 0 {
		return nil
	}
	m := sg.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case epoch != m.current.epoch && txn:
		return kerr.IllegalGeneration
	case epoch > m.current.epoch || epoch < 0:
		return kerr.StaleMemberEpoch
	}
	return nil
}

// staleCommits marks STALE_MEMBER_EPOCH the offsets of a commit made with
// a member epoch below the member's that are not of a partition the
// member has held since that epoch: a partition of an active task's
// source topics, the task got at that epoch or before (Kafka's
// assignment epochs), so a commit racing a heartbeat that moved the
// member on is not refused for the tasks it kept.
func (sg *streamsGroup) staleCommits(r *CommitRequest, errs []error) {
	m := sg.members[r.MemberID]
	if m == nil || r.Generation < 0 || r.Generation >= m.current.epoch || sg.topology == nil {
		return
	}
	c := &m.current
	for i, o := range r.Offsets {
		held := false
		for _, st := range sg.topology.subtopologies {
			if !slices.Contains(st.sourceTopics, o.Topic) && !slices.ContainsFunc(st.repartitionSources, func(t internalTopic) bool { return t.name == o.Topic }) {
				continue
			}
			if (c.assigned.active.has(st.id, o.Partition) || c.revoking.active.has(st.id, o.Partition)) && c.epochOf(st.id, o.Partition) <= r.Generation {
				held = true
			}
		}
		if !held {
			errs[i] = kerr.StaleMemberEpoch
		}
	}
}

// validateFetch checks an OffsetFetch v9+ naming a member of the group;
// a request naming none (an admin client) is not checked.
func (sg *streamsGroup) validateFetch(memberID string, epoch int32) error {
	if memberID == "" && epoch < 0 {
		return nil
	}
	m := sg.members[memberID]
	switch {
	case m == nil:
		return kerr.UnknownMemberID
	case epoch != m.current.epoch:
		return kerr.StaleMemberEpoch
	}
	return nil
}

// DescribeStreamsGroup describes a streams group (StreamsGroupDescribe):
// GROUP_ID_NOT_FOUND for a group that does not exist or is of another
// type. The description is complete but for its ErrorCode: the handler
// sets it from the error.
func (c *Coordinator) DescribeStreamsGroup(group string) (kmsg.StreamsGroupDescribeResponseGroup, error) {
	d := kmsg.NewStreamsGroupDescribeResponseGroup()
	d.Group, d.State = group, Dead.String()
	fail := func(err error, msg string) (kmsg.StreamsGroupDescribeResponseGroup, error) {
		if msg != "" {
			d.ErrorMessage = &msg
		}
		return d, err
	}
	if group == "" {
		return fail(kerr.InvalidGroupID, "")
	}
	s, err := c.lock(group)
	if err != nil {
		return fail(err, "")
	}
	defer s.Unlock()
	e := s.mu.groups[group]
	switch {
	case e == nil:
		return fail(kerr.GroupIDNotFound, fmt.Sprintf("Group %s not found.", group))
	case e.g.streams == nil:
		return fail(kerr.GroupIDNotFound, fmt.Sprintf("Group %s is not a streams group.", group))
	}
	sg := e.g.streams
	d.State, d.Epoch, d.AssignmentEpoch = e.g.State().String(), sg.epoch, sg.assignmentEpoch
	if t := sg.topology; t != nil {
		// As configured against the topics when ready: the internal
		// topics with the partition counts the topology implies.
		cfg := sg.configure(c.env(c.now()).topics)
		dt := kmsg.NewStreamsGroupDescribeResponseGroupTopology()
		dt.Epoch = t.epoch
		subs := slices.Clone(t.subtopologies)
		slices.SortFunc(subs, func(a, b subtopology) int { return cmpString(a.id, b.id) })
		for _, st := range subs {
			ds := kmsg.NewStreamsGroupDescribeResponseGroupTopologySubtopology()
			ds.SubtopologyID = st.id
			ds.SourceTopics = slices.Clone(st.sourceTopics)
			ds.RepartitionSinkTopics = slices.Clone(st.repartitionSinks)
			ds.StateChangelogTopics = describedTopics(st.changelogs, cfg.internal)
			ds.RepartitionSourceTopics = describedTopics(st.repartitionSources, cfg.internal)
			dt.Subtopologies = append(dt.Subtopologies, ds)
		}
		d.Topology = &dt
	}
	for _, m := range sg.sortedMembers() {
		dm := kmsg.NewStreamsGroupDescribeResponseGroupMember()
		dm.MemberID, dm.MemberEpoch = m.id, m.current.epoch
		dm.InstanceID, dm.RackID = optionalString(m.instanceID), optionalString(m.rackID)
		dm.ClientID, dm.ClientHost = m.clientID, m.clientHost
		dm.TopologyEpoch, dm.ProcessID = m.topologyEpoch, m.processID
		if m.endpoint != nil {
			ep := kmsg.NewStreamsGroupDescribeResponseGroupMemberUserEndpoint()
			ep.Host, ep.Port = m.endpoint.host, m.endpoint.port
			dm.UserEndpoint = &ep
		}
		for _, t := range m.clientTags {
			ct := kmsg.NewStreamsGroupDescribeResponseGroupMemberClientTag()
			ct.Key, ct.Value = t.key, t.value
			dm.ClientTags = append(dm.ClientTags, ct)
		}
		dm.TaskOffsets, dm.TaskEndOffsets = []kmsg.TaskOffset{}, []kmsg.TaskOffset{}
		dm.Assignment = describedTasks(m.current.assigned)
		dm.TargetAssignment = describedTasks(sg.target[m.id])
		d.Members = append(d.Members, dm)
	}
	if d.Members == nil {
		d.Members = []kmsg.StreamsGroupDescribeResponseGroupMember{}
	}
	return d, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func describedTopics(ts []internalTopic, configured map[string]int32) []kmsg.TopicInfo {
	out := make([]kmsg.TopicInfo, len(ts))
	for i, t := range ts {
		ti := kmsg.NewTopicInfo()
		ti.Topic, ti.NumPartitions, ti.ReplicationFactor = t.name, t.partitions, t.replicationFactor
		if n, ok := configured[t.name]; ok {
			ti.NumPartitions = n
		}
		for _, c := range t.configs {
			cfg := kmsg.NewTopicInfoConfig()
			cfg.Key, cfg.Value = c.key, c.value
			ti.Configs = append(ti.Configs, cfg)
		}
		out[i] = ti
	}
	return out
}

func describedTasks(a taskAssignment) kmsg.StreamsAssignment {
	out := kmsg.NewStreamsAssignment()
	out.ActiveTasks, out.StandbyTasks, out.WarmupTasks = taskIDs(a.active), taskIDs(a.standby), taskIDs(a.warmup)
	return out
}
