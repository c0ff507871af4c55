package api

import (
	"testing"
	"unsafe"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestFetchSessionKeepsItsNames: a v12 request's topic names alias its
// buffer (request_decode.go), which the next request overwrites; a session
// keeps its own copy, so forgetting the partition by name later still
// finds it (TestFetchSessionEmptiedAndTopicIDs failed now and then without
// the copy, when the buffer was reused between its fetches).
func TestFetchSessionKeepsItsNames(t *testing.T) {
	buf := []byte("e")
	open := kmsg.NewFetchRequest()
	open.Version = 12
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = unsafe.String(&buf[0], len(buf))
	rt.Partitions = append(rt.Partitions, kmsg.NewFetchRequestTopicPartition())
	open.Topics = append(open.Topics, rt)
	s := newFetchSession()
	s.update(&open)
	buf[0] = 'x' // the next request's bytes
	forget := kmsg.NewFetchRequest()
	forget.Version = 12
	ft := kmsg.NewFetchRequestForgottenTopic()
	ft.Topic, ft.Partitions = "e", []int32{0}
	forget.ForgottenTopics = append(forget.ForgottenTopics, ft)
	s.update(&forget)
	if len(s.parts) != 0 || len(s.index) != 0 {
		t.Fatalf("e-0 not forgotten: %d partitions, keys %v", len(s.parts), s.index)
	}
}
