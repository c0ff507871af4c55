package main

import (
	"context"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"kzero/kzerotest"
)

// The package's old names of kzerotest's client helpers, kept for the test
// files other branches are editing now (group_streams, sasl); the rest of
// the package calls kzerotest. Drop these once those have moved over.

type rawConn = kzerotest.Conn

func dialRaw(t testing.TB, addr string) *rawConn { return kzerotest.Dial(t, addr) }

func rawGroupRequest[R kmsg.Response](t *testing.T, conn *rawConn, version int16, req kmsg.Request) R {
	return kzerotest.Do[R](t, conn, version, req)
}

func findCoordinator(t *testing.T, conn *rawConn, version int16, req *kmsg.FindCoordinatorRequest) *kmsg.FindCoordinatorResponse {
	return kzerotest.FindCoordinator(t, conn, version, req)
}

func createTopic(t testing.TB, ctx context.Context, cl *kgo.Client, name string, partitions int32, configs map[string]*string) {
	kzerotest.CreateTopic(t, ctx, cl, name, partitions, configs)
}

func consumeN(t testing.TB, ctx context.Context, cl *kgo.Client, n int) []*kgo.Record {
	return kzerotest.ConsumeN(t, ctx, cl, n)
}

func wantNoErr(t *testing.T, what string, code int16) { kzerotest.WantCode(t, what, code, nil) }
