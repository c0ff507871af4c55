package api

// DescribeLogDirs: v0-v5. Every log dir with the partitions in it and
// their sizes; v3 a top-level error code, v4 the file system's total and
// usable bytes, v5 whether the dir is cordoned (KIP-1066: no new
// partitions placed in it; kzero has no cordoning, so never). A null topic
// list means every partition. v0 (KIP-896 removed it from Kafka 4.0) is
// v1 without the promise to send the response before throttling; kzero
// throttles nothing, so they answer the same. A replica moving to another
// log dir (AlterReplicaLogDirs) is listed in both, the future log with
// IsFuture and its OffsetLag behind the current one.

import (
	"path/filepath"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"kzero/log"
	"kzero/net/server"
)

func init() { register(kmsg.DescribeLogDirs.Int16(), 0, 5, (*Handler).describeLogDirs).since4(1) }

func (h *Handler) describeLogDirs(req *server.Request) error {
	r := kmsg.NewPtrDescribeLogDirsRequest()
	if err := decode(req, r); err != nil {
		return err
	}
	want := func(tp log.TopicPartition) bool {
		if r.Topics == nil {
			return true
		}
		for _, t := range r.Topics {
			if t.Topic == tp.Topic && slices.Contains(t.Partitions, tp.Partition) {
				return true
			}
		}
		return false
	}
	if !h.authorized(req, opDescribe, resCluster, clusterName) {
		resp := kmsg.NewPtrDescribeLogDirsResponse()
		resp.ErrorCode = kerr.ClusterAuthorizationFailed.Code
		respond(req, resp)
		return nil
	}
	logs := h.replicas.Logs()
	byDir := map[string]map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	for _, d := range logs.Dirs() {
		byDir[d] = map[string][]kmsg.DescribeLogDirsResponseDirTopicPartition{}
	}
	for tp, l := range logs.Logs() {
		if !want(tp) {
			continue
		}
		dir := filepath.Dir(l.Dir())
		p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		p.Partition, p.Size = tp.Partition, l.Size()
		if m, ok := byDir[dir]; ok {
			m[tp.Topic] = append(m[tp.Topic], p)
		}
	}
	// A replica moving to another dir is in both: its future log there
	// is behind the current one by OffsetLag offsets.
	current := logs.Logs()
	for tp, l := range logs.Futures() {
		if !want(tp) {
			continue
		}
		p := kmsg.NewDescribeLogDirsResponseDirTopicPartition()
		p.Partition, p.Size, p.IsFuture = tp.Partition, l.Size(), true
		if cur, ok := current[tp]; ok {
			p.OffsetLag = max(cur.LogEndOffset()-l.LogEndOffset(), 0)
		}
		if m, ok := byDir[filepath.Dir(l.Dir())]; ok {
			m[tp.Topic] = append(m[tp.Topic], p)
		}
	}
	resp := kmsg.NewPtrDescribeLogDirsResponse()
	for _, d := range logs.Dirs() {
		rd := kmsg.NewDescribeLogDirsResponseDir()
		rd.Dir = d
		var st unix.Statfs_t
		if err := unix.Statfs(d, &st); err == nil {
			rd.TotalBytes = int64(st.Blocks) * int64(st.Bsize)
			rd.UsableBytes = int64(st.Bavail) * int64(st.Bsize)
		}
		topics := byDir[d]
		names := make([]string, 0, len(topics))
		for n := range topics {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			t := kmsg.NewDescribeLogDirsResponseDirTopic()
			t.Topic = n
			t.Partitions = topics[n]
			slices.SortFunc(t.Partitions, func(a, b kmsg.DescribeLogDirsResponseDirTopicPartition) int { return int(a.Partition - b.Partition) })
			rd.Topics = append(rd.Topics, t)
		}
		resp.Dirs = append(resp.Dirs, rd)
	}
	respond(req, resp)
	return nil
}
