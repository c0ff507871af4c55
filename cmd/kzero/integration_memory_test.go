package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"kzero/kzerotest"
	"kzero/kzerotest/await"
)

// 128 connections each declare a 100 MiB Produce frame and send 64 KiB of
// it, and 16 of them go on to send 8 MiB: the broker holds what arrived,
// stops reading at queued.max.request.bytes instead of holding more, and
// answers a client on the side. Its RSS growth is logged, not asserted.
func TestBinarySlowFramesBoundedMemory(t *testing.T) {
	const limit = 32 << 20
	p := startBinary(t, binaryArgs(t.TempDir(), fmt.Sprintf("queued.max.request.bytes=%d", limit), "num.network.threads=2")...)
	before := rssKiB(t, p.Cmd.Process.Pid)
	var conns []*kzerotest.Conn
	for i := range 128 {
		c := kzerotest.Dial(t, p.Addr)
		frame := binary.BigEndian.AppendUint32(nil, 100<<20)
		frame = append(frame, header(0, 7)...)
		frame = append(frame, make([]byte, 64<<10)...)
		if err := c.Write(frame); err != nil {
			t.Fatal(err)
		}
		if i < 16 {
			// Blocks once the broker stops reading; fails when the test
			// closes the connection.
			go c.NetConn().Write(make([]byte, 8<<20))
		}
		conns = append(conns, c)
	}
	if !await.Poll(60*time.Second, func() bool { return metric(t, p, "kzero_read_pauses_total") > 0 }) {
		t.Fatalf("no read paused; holding %v bytes", metric(t, p, "kzero_request_bytes_held"))
	}
	apiVersions(t, kzerotest.Dial(t, p.Addr))
	held := metric(t, p, "kzero_request_bytes_held")
	// A grant is made while the total is under the limit: over by at most
	// one grant per event loop, each at most twice what arrived.
	if held > limit+2*(2*(8<<20+64<<10)) {
		t.Fatalf("holding %v bytes with queued.max.request.bytes=%d", held, limit)
	}
	t.Logf("RSS %d KiB before, %d KiB with 128 slow frames (%v bytes held, cap %d)", before, rssKiB(t, p.Cmd.Process.Pid), held, limit)
	for _, c := range conns {
		c.NetConn().Close()
	}
	// The dropped frames' buffers of 1 MiB and more are kept for reuse,
	// and the gauge says how much that is.
	if !await.Poll(30*time.Second, func() bool { return metric(t, p, "kzero_free_request_buffer_bytes") >= 1<<20 }) {
		t.Fatalf("kzero_free_request_buffer_bytes %v after the large frames were dropped", metric(t, p, "kzero_free_request_buffer_bytes"))
	}
	p.Stop(t)
}

// rssKiB is VmRSS of process pid.
func rssKiB(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var n int64
			fmt.Sscan(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), &n)
			return n
		}
	}
	t.Fatal("no VmRSS")
	return 0
}
