package control

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"kzero/coord/metadata"
)

// TestScripts runs the scripts in testdata: each feeds events to a
// Controller, applies the groups it returns to the metadata log, and
// prints the records, the replies and, on request, the state. Rewrite the
// expected output with -rewrite after a deliberate change.
//
// Commands (times are since the script's start):
//
// now=D is sticky: a command without it happens at the last time given.
//
//	config [session-timeout=9s] [unclean] [elr] [rebalance] [imbalance-interval=300s] [imbalance-pct=N]
//	register broker=N incarnation=NAME [rack=R] [cluster=ID] [previous-gone] [unclean-shutdown] [now=D]
//	heartbeat broker=N epoch=E offset=O [want-fence] [want-shutdown] [now=D]
//	tick now=D
//	unregister broker=N
//	create-topic name=T [partitions=N rf=N] [assign=((1,2),(2,3))] [seed=N]
//	set-config topic=T|broker-default key=K value=V
//	alter-partition broker=N epoch=E topic=T partition=P leader-epoch=L partition-epoch=E isr=(1,2) [isr-epochs=(e1,e2)] [recovering]
//	elect type=preferred|unclean [partitions=(t-0,t-1)]
//	reassign topic=T partition=P replicas=(1,2,3)|cancel
//	list-reassignments
//	replica-offline broker=N topic=T partition=P
//	state
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var cl *cluster
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if cl == nil && d.Cmd != "config" {
				cl = newCluster(Config{})
			}
			out := runCommand(t, d, &cl)
			if cl != nil {
				if err := checkInvariants(cl.img, cl.c.cfg.ELR); err != nil {
					t.Fatalf("%s: %v", d.Pos, err)
				}
			}
			return out
		})
	})
}

func runCommand(t *testing.T, d *datadriven.TestData, clp **cluster) string {
	cl := *clp
	var now time.Time
	if cl != nil {
		if arg, ok := d.Arg("now"); ok {
			dur, err := time.ParseDuration(arg.SingleVal(t))
			if err != nil {
				t.Fatalf("%s: now: %v", d.Pos, err)
			}
			cl.now = epoch0.Add(dur)
		}
		now = cl.now
	}
	dur := func(key string, def time.Duration) time.Duration {
		if arg, ok := d.Arg(key); ok {
			v, err := time.ParseDuration(arg.SingleVal(t))
			if err != nil {
				t.Fatalf("%s: %s: %v", d.Pos, key, err)
			}
			return v
		}
		return def
	}
	num := func(key string) int64 {
		var s string
		d.ScanArgs(t, key, &s)
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("%s: %s: %v", d.Pos, key, err)
		}
		return v
	}
	str := func(key string) string {
		var s string
		d.MaybeScanArgs(t, key, &s)
		return s
	}
	list := func(key string) []int32 {
		arg, ok := d.Arg(key)
		if !ok {
			return nil
		}
		out := []int32{}
		for _, v := range arg.Vals {
			for _, f := range strings.Split(v, ",") {
				if f = strings.Trim(strings.TrimSpace(f), "()"); f == "" {
					continue
				}
				n, err := strconv.ParseInt(f, 10, 32)
				if err != nil {
					t.Fatalf("%s: %s: %v", d.Pos, key, err)
				}
				out = append(out, int32(n))
			}
		}
		return out
	}

	switch d.Cmd {
	case "config":
		cfg := Config{SessionTimeout: dur("session-timeout", 0), AutoLeaderRebalance: d.HasArg("rebalance"),
			ImbalanceCheckInterval: dur("imbalance-interval", 0), ELR: d.HasArg("elr")}
		if d.HasArg("unclean") {
			cfg.Unclean = UncleanFromImage(true)
		}
		if d.HasArg("imbalance-pct") {
			cfg.ImbalancePercentage = int(num("imbalance-pct"))
		}
		*clp = newCluster(cfg)
		return "ok"

	case "register":
		groups, reply := cl.c.Register(cl.img, now, Registration{Broker: int32(num("broker")), ClusterID: str("cluster"),
			Incarnation: cl.incarnation(str("incarnation")), Rack: str("rack"), PreviousGone: d.HasArg("previous-gone"), UncleanShutdown: d.HasArg("unclean-shutdown"),
			Listeners: []metadata.Listener{{Name: "PLAINTEXT", Host: "localhost", Port: 9092}}})
		out, rej := cl.decide(groups)
		epoch := reply.Epoch
		if reply.Err == nil && epoch < 0 && len(rej) > 0 && rej[0] == nil {
			b, _ := cl.img.Broker(int32(num("broker")))
			epoch = b.Epoch // the lead reads it from the image once the group applied
		}
		return out + fmt.Sprintf("reply: error=%s epoch=%d\n", errName(reply.Err), epoch)

	case "heartbeat":
		groups, reply := cl.c.Heartbeat(cl.img, now, Heartbeat{Broker: int32(num("broker")), Epoch: num("epoch"), Offset: num("offset"),
			WantFence: d.HasArg("want-fence"), WantShutdown: d.HasArg("want-shutdown")})
		out, _ := cl.decide(groups)
		if reply.Err != nil {
			return out + fmt.Sprintf("reply: error=%s\n", errName(reply.Err))
		}
		return out + fmt.Sprintf("reply: error=NONE caught-up=%t fenced=%t should-shut-down=%t\n",
			reply.CaughtUp, reply.Fenced, reply.ShouldShutDown)

	case "tick":
		out, _ := cl.decide(cl.c.Tick(cl.img, now))
		return out

	case "unregister":
		groups, err := cl.c.Unregister(cl.img, now, int32(num("broker")))
		out, _ := cl.decide(groups)
		return out + fmt.Sprintf("reply: error=%s\n", errName(err))

	case "create-topic":
		var assign [][]int32
		if arg, ok := d.Arg("assign"); ok {
			for _, v := range arg.Vals {
				var replicas []int32
				for _, f := range strings.Split(strings.Trim(v, "()"), ",") {
					n, _ := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
					replicas = append(replicas, int32(n))
				}
				assign = append(assign, replicas)
			}
		}
		seed := uint64(1)
		if d.HasArg("seed") {
			seed = uint64(num("seed"))
		}
		parts, rf := 0, 0
		if assign == nil {
			parts, rf = int(num("partitions")), int(num("rf"))
		}
		out, err := cl.createTopic(str("name"), parts, rf, assign, rand.New(rand.NewPCG(seed, seed)))
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return out

	case "set-config":
		rec := &metadata.ConfigRecord{ResourceType: metadata.ResourceTopic, Name: str("topic"), Key: str("key"), Value: str("value")}
		if d.HasArg("broker-default") {
			rec.ResourceType, rec.Name = metadata.ResourceBroker, ""
		}
		out, _ := cl.decide([][]metadata.Record{{rec}})
		return out

	case "alter-partition":
		id := topicID(str("topic"))
		isr := list("isr")
		epochs := list("isr-epochs")
		members := make([]ISRMember, len(isr))
		for i, b := range isr {
			members[i] = ISRMember{Broker: b, Epoch: -1}
			if i < len(epochs) {
				members[i].Epoch = int64(epochs[i])
			}
		}
		rec := metadata.Recovered
		if d.HasArg("recovering") {
			rec = metadata.Recovering
		}
		groups, reply := cl.c.AlterPartition(cl.img, AlterPartition{Broker: int32(num("broker")), BrokerEpoch: num("epoch"),
			Topics: []AlterPartitionTopic{{TopicID: id, Partitions: []ISRChange{{Partition: int32(num("partition")),
				LeaderEpoch: int32(num("leader-epoch")), PartitionEpoch: int32(num("partition-epoch")), NewISR: members, LeaderRecovery: rec}}}}})
		out, _ := cl.decide(groups)
		if reply.Err != nil {
			return out + fmt.Sprintf("reply: error=%s\n", errName(reply.Err))
		}
		r := reply.Topics[0].Partitions[0]
		if r.Err != nil {
			out += fmt.Sprintf("reply: error=%s", errName(r.Err))
			if r.Message != "" {
				out += " (" + r.Message + ")"
			}
			return out + "\n"
		}
		return out + fmt.Sprintf("reply: error=NONE leader=%d leader-epoch=%d isr=%s partition-epoch=%d recovery=%s\n",
			r.Leader, r.LeaderEpoch, ints(r.ISR), r.PartitionEpoch, recovery(r.LeaderRecovery))

	case "elect":
		typ := Preferred
		if str("type") == "unclean" {
			typ = Unclean
		}
		var tps []TopicPartitions
		if arg, ok := d.Arg("partitions"); ok {
			tps = []TopicPartitions{}
			for _, v := range arg.Vals {
				i := strings.LastIndexByte(v, '-')
				p, _ := strconv.ParseInt(v[i+1:], 10, 32)
				tps = append(tps, TopicPartitions{Topic: v[:i], Partitions: []int32{int32(p)}})
			}
		}
		groups, results, err := cl.c.ElectLeaders(cl.img, typ, tps)
		out, _ := cl.decide(groups)
		if err != nil {
			return out + fmt.Sprintf("reply: error=%s\n", errName(err))
		}
		for _, r := range results {
			out += fmt.Sprintf("%s-%d: %s\n", r.Topic, r.Partition, errName(r.Err))
		}
		return out

	case "reassign":
		r := Reassignment{Topic: str("topic"), Partition: int32(num("partition")), KeepReplicationFactor: d.HasArg("keep-rf")}
		if arg, _ := d.Arg("replicas"); len(arg.Vals) != 1 || arg.Vals[0] != "cancel" {
			r.Replicas = list("replicas")
		}
		groups, results := cl.c.AlterReassignments(cl.img, []Reassignment{r})
		out, _ := cl.decide(groups)
		out += fmt.Sprintf("reply: error=%s", errName(results[0].Err))
		if results[0].Message != "" {
			out += " (" + results[0].Message + ")"
		}
		return out + "\n"

	case "replica-offline":
		groups, err := cl.c.ReplicaOffline(cl.img, int32(num("broker")), str("topic"), int32(num("partition")))
		out, _ := cl.decide(groups)
		if err != nil {
			return out + fmt.Sprintf("reply: error=%s %s\n", errName(err), err)
		}
		return out

	case "list-reassignments":
		var b strings.Builder
		for _, o := range ListReassignments(cl.img, nil) {
			fmt.Fprintf(&b, "%s-%d replicas=%s adding=%s removing=%s\n", o.Topic, o.Partition, ints(o.Replicas), ints(o.AddingReplicas), ints(o.RemovingReplicas))
		}
		if b.Len() == 0 {
			return "none\n"
		}
		return b.String()

	case "state":
		return cl.state()
	}
	t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	return ""
}
