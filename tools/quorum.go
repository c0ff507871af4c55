package tools

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// quorumInfo is `cluster quorum -o json`, the figures
// kafka-metadata-quorum.sh describe --status and --replication print.
type quorumInfo struct {
	LeaderID      int32         `json:"leader_id"`
	LeaderEpoch   int32         `json:"leader_epoch"`
	HighWatermark int64         `json:"high_watermark"`
	MaxLag        int64         `json:"max_follower_lag"` // of the voters, as kafka-metadata-quorum.sh reports it
	Voters        []quorumVoter `json:"voters"`
	// Observers are the broker-only nodes, which follow the metadata log
	// without voting (Status "Observer").
	Observers []quorumVoter `json:"observers"`
}

type quorumVoter struct {
	ID            int32  `json:"id"`
	LogEndOffset  int64  `json:"log_end_offset"`
	Lag           int64  `json:"lag"`
	LastFetchMs   int64  `json:"last_fetch_timestamp"`
	LastCaughtUp  int64  `json:"last_caught_up_timestamp"`
	Status        string `json:"status"`
	ControllerURL string `json:"endpoint,omitempty"`
}

// ClusterQuorum prints the metadata quorum: its leader, epoch and high
// watermark, and each voter's and observer's log end offset, lag and last
// contact, from DescribeQuorum (sent to the controller Metadata names,
// which answers with the quorum leader's view).
func ClusterQuorum(ctx context.Context, env *Env) error {
	cl, err := env.client()
	if err != nil {
		return err
	}
	defer cl.Close()
	ctx, cancel := env.withTimeout(ctx)
	defer cancel()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return deadline(ctx, "cluster quorum", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return kafkaErr(err, deref(resp.ErrorMessage))
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return fmt.Errorf("cluster quorum: the broker answered for %d topics", len(resp.Topics))
	}
	p := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
		return kafkaErr(err, deref(p.ErrorMessage))
	}
	endpoints := map[int32]string{}
	for _, n := range resp.Nodes {
		for _, l := range n.Listeners {
			endpoints[n.NodeID] = fmt.Sprintf("%s://%s:%d", l.Name, l.Host, l.Port)
		}
	}
	info := quorumInfo{LeaderID: p.LeaderID, LeaderEpoch: p.LeaderEpoch, HighWatermark: p.HighWatermark,
		Voters: []quorumVoter{}, Observers: []quorumVoter{}}
	replica := func(v kmsg.DescribeQuorumResponseTopicPartitionReplicaState, status string) quorumVoter {
		return quorumVoter{ID: v.ReplicaID, LogEndOffset: v.LogEndOffset, Lag: max(p.HighWatermark-v.LogEndOffset, 0),
			LastFetchMs: v.LastFetchTimestamp, LastCaughtUp: v.LastCaughtUpTimestamp, Status: status,
			ControllerURL: endpoints[v.ReplicaID]}
	}
	for _, v := range p.CurrentVoters {
		status := "Follower"
		if v.ReplicaID == p.LeaderID {
			status = "Leader"
		}
		qv := replica(v, status)
		info.MaxLag = max(info.MaxLag, qv.Lag)
		info.Voters = append(info.Voters, qv)
	}
	for _, v := range p.Observers {
		info.Observers = append(info.Observers, replica(v, "Observer"))
	}
	if env.Format == JSON {
		return writeJSON(env.Out, info)
	}
	head := newTable(env.Out)
	head.row("LEADER", info.LeaderID)
	head.row("EPOCH", info.LeaderEpoch)
	head.row("HIGH WATERMARK", info.HighWatermark)
	head.row("MAX FOLLOWER LAG", info.MaxLag)
	if err := head.flush(); err != nil {
		return err
	}
	fmt.Fprintln(env.Out)
	t := newTable(env.Out, "ID", "STATUS", "LOG END", "LAG", "LAST FETCH", "LAST CAUGHT UP", "ENDPOINT")
	for _, v := range slices.Concat(info.Voters, info.Observers) {
		t.row(v.ID, v.Status, v.LogEndOffset, v.Lag, ago(v.LastFetchMs), ago(v.LastCaughtUp), v.ControllerURL)
	}
	return t.flush()
}

// ago renders a millisecond timestamp as how long ago it was.
func ago(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return time.Since(time.UnixMilli(ms)).Round(time.Millisecond).String() + " ago"
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
