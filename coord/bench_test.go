package coord

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
)

// TestImageReadsAllocateNothing: handlers read the image on every request.
func TestImageReadsAllocateNothing(t *testing.T) {
	c := open(t, testConfig(t.TempDir()))
	res := mustCreate(t, c, TopicSpec{Name: "t", NumPartitions: 4, ReplicationFactor: 1})
	id := res[0].ID
	c.Image().Topics() // build the sorted view once
	var n int
	allocs := testing.AllocsPerRun(1000, func() {
		img := c.Image()
		if tp := img.Topic("t"); tp != nil {
			n += len(tp.Partitions)
		}
		if img.TopicByID(id) != nil {
			n++
		}
		n += len(img.Topics())
		if _, ok := img.Broker(1); ok {
			n++
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per read", allocs)
	}
}

// BenchmarkCreateTopic creates one topic per call, one caller: each is a
// raft entry with its own fsync.
func BenchmarkCreateTopic(b *testing.B) {
	c, err := Open(testConfig(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ResetTimer()
	for i := range b.N {
		res := c.CreateTopics(context.Background(), []TopicSpec{{Name: fmt.Sprintf("t%d", i), NumPartitions: 3, ReplicationFactor: 1}}, false)
		if res[0].Err != nil {
			b.Fatal(res[0].Message)
		}
	}
}

// BenchmarkCreateTopicParallel: concurrent callers share Readys and fsyncs.
func BenchmarkCreateTopicParallel(b *testing.B) {
	c, err := Open(testConfig(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	var n atomic.Int64
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res := c.CreateTopics(context.Background(), []TopicSpec{{Name: fmt.Sprintf("t%d", n.Add(1)), NumPartitions: 3, ReplicationFactor: 1}}, false)
			if res[0].Err != nil {
				b.Error(res[0].Message)
				return
			}
		}
	})
}

func BenchmarkImageTopic(b *testing.B) {
	c, err := Open(testConfig(b.TempDir()))
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	for i := range 1000 {
		c.CreateTopics(context.Background(), []TopicSpec{{Name: fmt.Sprintf("t%d", i), NumPartitions: 1, ReplicationFactor: 1}}, false)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if c.Image().Topic("t500") == nil {
				b.Error("missing")
				return
			}
		}
	})
}
