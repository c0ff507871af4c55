package main

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"kzero/net/server"
)

// apiVersionsOK sends ApiVersions v0 on a raw connection and reports
// whether it was answered (false: the broker closed the connection).
func apiVersionsOK(t *testing.T, c net.Conn) bool {
	t.Helper()
	req := []byte{0, 0, 0, 0, 0, 18, 0, 0, 0, 0, 0, 7, 0, 1, 'k'}
	binary.BigEndian.PutUint32(req, uint32(len(req)-4))
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(req); err != nil {
		return false
	}
	var size [4]byte
	if _, err := io.ReadFull(c, size[:]); err != nil {
		return false
	}
	_, err := io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:])))
	return err == nil
}

// TestConnectionsPerIPOverride: with max.connections.per.ip=1 and an
// override of 2 for 127.0.0.1, a third connection from 127.0.0.1 is
// closed at once while the first two are served.
func TestConnectionsPerIPOverride(t *testing.T) {
	b := startTestBroker(t, t.TempDir(), "max.connections.per.ip", "1", "max.connections.per.ip.overrides", "127.0.0.1:2")
	defer stopBroker(t, b)
	var conns []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", b.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns = append(conns, c)
	}
	if !apiVersionsOK(t, conns[0]) || !apiVersionsOK(t, conns[1]) {
		t.Fatal("a connection within the override was not served")
	}
	if apiVersionsOK(t, conns[2]) {
		t.Fatal("a third connection from 127.0.0.1 was served")
	}
}

// TestConnLimitsConfig: the keys parse, and a bad override is refused.
func TestConnLimitsConfig(t *testing.T) {
	for _, tc := range []struct {
		props []string
		ok    bool
	}{
		{[]string{"max.connections.per.ip.overrides", "127.0.0.1:5,[::1]:7,localhost:3"}, true},
		{[]string{"listener.name.plaintext.max.connections", "10"}, true},
		{[]string{"max.connections.per.ip.overrides", "127.0.0.1"}, false},
		{[]string{"max.connections.per.ip.overrides", "127.0.0.1:x"}, false},
		{[]string{"max.connections.per.ip", "0"}, false}, // 0 only with overrides
		{[]string{"max.connections.per.ip", "0", "max.connections.per.ip.overrides", "127.0.0.1:5"}, true},
	} {
		over := map[string]string{"log.dirs": t.TempDir()}
		for i := 0; i+1 < len(tc.props); i += 2 {
			over[tc.props[i]] = tc.props[i+1]
		}
		cfg, err := loadConfig(nil, over, nil)
		if err == nil {
			var cl []listener
			if cl, err = cfg.clientListeners(); err == nil {
				var lim server.ConnLimits
				lim, err = cfg.connLimits(cl)
				if err == nil && tc.props[0] == "listener.name.plaintext.max.connections" && lim.PerListener["PLAINTEXT"] != 10 {
					t.Errorf("per listener: %v", lim.PerListener)
				}
			}
		}
		if (err == nil) != tc.ok {
			t.Errorf("%v: %v", tc.props, err)
		}
	}
}

// TestIPConnectionCreationRate: a connection_creation_rate quota on the
// ip entity 127.0.0.1 (KIP-612) closes the connections made faster than
// it at accept: of 20 made back to back at 1/s, at most 1 + 1 per second
// elapsed (and one for the bucket's rounding) are served.
func TestIPConnectionCreationRate(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	adm := kadm.NewClient(newClient(t, b))
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{
		{Entity: quotaEntity("ip", "127.0.0.1"), Ops: []kadm.AlterClientQuotaOp{{Key: "connection_creation_rate", Value: 1}}},
	})
	if err != nil || res[0].Err != nil {
		t.Fatalf("set: %v %+v", err, res)
	}
	began, served := time.Now(), 0
	for range 20 {
		c, err := net.Dial("tcp", b.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if apiVersionsOK(t, c) {
			served++
		}
		c.Close()
	}
	el := time.Since(began)
	if limit := 2 + int(el.Seconds()); served > limit {
		t.Fatalf("%d of 20 connections served in %v at 1/s", served, el)
	}
	if served == 0 {
		t.Fatal("no connection served")
	}
}

// TestDynamicConnectionLimits: the connection limits change at runtime
// (AlterConfigs on the broker, as Kafka's DynamicConnectionQuota takes
// them). The admin client connects from 127.0.0.2, so that an override
// of 0 for 127.0.0.1 shuts out only the raw connections.
func TestDynamicConnectionLimits(t *testing.T) {
	b := startTestBroker(t, t.TempDir())
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	from2 := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.2")}}
	adm := kadm.NewClient(newClient(t, b, kgo.Dialer(from2.DialContext)))
	served := func() bool {
		c, err := net.Dial("tcp", b.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return apiVersionsOK(t, c)
	}
	alter := func(op kadm.IncrementalOp, value string, brokers ...int32) error {
		t.Helper()
		res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Op: op, Name: "max.connections.per.ip.overrides", Value: kadm.StringPtr(value)}}, brokers...)
		if err != nil {
			t.Fatal(err)
		}
		return res[0].Err
	}
	waitServed := func(want bool) {
		t.Helper()
		for !served() == want {
			if ctx.Err() != nil {
				t.Fatalf("connections from 127.0.0.1 still served %v", !want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !served() {
		t.Fatal("no limit yet, and not served")
	}
	for value, ok := range map[string]bool{"1000": true, "x": false} {
		res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{{Name: "listener.name.plaintext.max.connections", Value: kadm.StringPtr(value)}}, b.ID())
		if err != nil || (res[0].Err == nil) != ok {
			t.Fatalf("listener.name.plaintext.max.connections=%s: %v %v", value, err, res)
		}
	}
	if err := alter(kadm.SetConfig, "127.0.0.1", b.ID()); err == nil {
		t.Fatal("an override without a count was taken")
	}
	if err := alter(kadm.SetConfig, "127.0.0.1:0", b.ID()); err != nil {
		t.Fatal(err)
	}
	waitServed(false)
	if err := alter(kadm.DeleteConfig, "", b.ID()); err != nil {
		t.Fatal(err)
	}
	waitServed(true)
	// Cluster-wide, and max.connections.per.ip with it: the override
	// raises 127.0.0.2's limit so that the admin client goes on.
	res, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{
		{Name: "max.connections.per.ip", Value: kadm.StringPtr("0")},
		{Name: "max.connections.per.ip.overrides", Value: kadm.StringPtr("127.0.0.2:100")},
	})
	if err != nil || res[0].Err != nil {
		t.Fatalf("cluster-wide: %v %v", err, res)
	}
	waitServed(false)
}
