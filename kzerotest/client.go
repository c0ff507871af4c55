package kzerotest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// CreateTopic creates a topic of replication factor 1 through kadm and
// fails the test on error.
func CreateTopic(t testing.TB, ctx context.Context, cl *kgo.Client, name string, partitions int32, configs map[string]*string) {
	t.Helper()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, partitions, 1, configs, name)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		t.Fatalf("create topic %s: %v", name, err)
	}
}

// ConsumeN polls cl until n records arrived or ctx ends; any fetch error
// fails the test.
func ConsumeN(t testing.TB, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d of %d records before %v", len(out), n, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s[%d]: %v", topic, p, err)
		})
		out = append(out, fs.Records()...)
	}
	if len(out) > n {
		t.Fatalf("consumed %d records, want %d", len(out), n)
	}
	return out
}

// ConsumeThrough polls cl until a record at offset last arrived (cl
// consumes one partition) or ctx ends, and returns every record polled.
func ConsumeThrough(t testing.TB, ctx context.Context, cl *kgo.Client, last int64) []*kgo.Record {
	t.Helper()
	var out []*kgo.Record
	for len(out) == 0 || out[len(out)-1].Offset < last {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("consumed %d records, not through offset %d, before %v", len(out), last, ctx.Err())
		}
		fs.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s[%d]: %v", topic, p, err)
		})
		out = append(out, fs.Records()...)
	}
	return out
}

// FindCoordinator asks until the coordinator is available: a request for
// a key type whose internal topic does not exist yet starts creating it
// and is answered COORDINATOR_NOT_AVAILABLE, as Kafka does; clients retry.
// For a group it then waits until the coordinator has loaded the group's
// partition (COORDINATOR_LOAD_IN_PROGRESS until then), as a client's
// first group request would.
func FindCoordinator(t testing.TB, conn *Conn, version int16, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp := Do[*kmsg.FindCoordinatorResponse](t, conn, version, req)
		code := resp.ErrorCode
		if version >= 4 && len(resp.Coordinators) > 0 {
			code = resp.Coordinators[0].ErrorCode
		}
		if code != kerr.CoordinatorNotAvailable.Code || time.Now().After(deadline) {
			if code == 0 && req.CoordinatorType == 0 {
				waitGroupLoaded(t, conn, req.CoordinatorKey, deadline)
			}
			return resp
		}
		time.Sleep(20 * time.Millisecond) // a client's retry backoff
	}
}

// waitGroupLoaded asks DescribeGroups v0 about group until its coordinator
// no longer answers COORDINATOR_LOAD_IN_PROGRESS.
func waitGroupLoaded(t testing.TB, conn *Conn, group string, deadline time.Time) {
	t.Helper()
	req := kmsg.NewPtrDescribeGroupsRequest()
	req.Groups = []string{group}
	for {
		g := Do[*kmsg.DescribeGroupsResponse](t, conn, 0, req).Groups[0]
		if g.ErrorCode != kerr.CoordinatorLoadInProgress.Code || time.Now().After(deadline) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// WantCode fails the test unless an answer's error code is want's (nil:
// no error).
func WantCode(t testing.TB, what string, got int16, want *kerr.Error) {
	t.Helper()
	switch {
	case want == nil && got != 0:
		t.Fatalf("%s: %v", what, kerr.ErrorForCode(got))
	case want != nil && got != want.Code:
		t.Fatalf("%s: error code %d (%v), want %s", what, got, kerr.ErrorForCode(got), want.Message)
	}
}

// BrokerRequest sends req to broker 1 through cl, which must know it
// already (from an earlier metadata request), and returns its response as
// R; kgo picks the version, the highest both sides serve.
func BrokerRequest[R kmsg.Response](t testing.TB, ctx context.Context, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.Broker(1).Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp.(R)
}

// WantErr fails the test unless got is want (nil: no error).
func WantErr(t testing.TB, what string, got error, want *kerr.Error) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Fatalf("%s: %v", what, got)
		}
		return
	}
	if !errors.Is(got, want) {
		t.Fatalf("%s: error %v, want %s", what, got, want.Message)
	}
}
