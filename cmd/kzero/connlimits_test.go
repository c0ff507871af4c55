package main

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

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
