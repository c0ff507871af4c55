package main

// The listener under process death and descriptor exhaustion, on the built
// binary: a broker killed with SIGKILL comes back on its port at once, a
// second broker on a port in use still fails, and running out of
// descriptors neither stops the listener nor harms open connections.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
	"golang.org/x/sys/unix"

	"kzero/kzerotest"
)

// After kill -9, with the killed broker's connections in TIME_WAIT on its
// port, a broker restarted on the same port binds at once (SO_REUSEADDR);
// a second broker on that port while it runs fails to bind (no
// SO_REUSEPORT).
func TestBinaryRestartsOnItsPortAfterKill(t *testing.T) {
	dir := t.TempDir()
	first := startBinary(t, binaryArgs(dir)...)
	_, port, err := net.SplitHostPort(first.Addr)
	if err != nil {
		t.Fatal(err)
	}
	var conns []*kzerotest.Conn
	for range 8 {
		c := kzerotest.Dial(t, first.Addr)
		apiVersions(t, c)
		conns = append(conns, c)
	}
	if err := first.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-first.Done()
	// The dead broker's side closed first; once the clients close too, its
	// sockets are in TIME_WAIT on the port.
	for _, c := range conns {
		if _, err := io.ReadAll(c.NetConn()); err != nil {
			t.Fatalf("read until the killed broker's close: %v", err)
		}
		c.NetConn().Close()
	}
	if n := timeWaitSockets(t, port); n == 0 {
		t.Fatalf("no socket in TIME_WAIT on port %s: the test would prove nothing", port)
	}

	again := startBinary(t, binaryArgs(dir, "listeners=PLAINTEXT://"+first.Addr)...)
	if again.Addr != first.Addr {
		t.Fatalf("restarted on %s, want %s", again.Addr, first.Addr)
	}
	apiVersions(t, kzerotest.Dial(t, again.Addr))

	out, err := exec.Command(kzeroBinary(t), binaryArgs(t.TempDir(), "listeners=PLAINTEXT://"+first.Addr)...).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "address already in use") {
		t.Fatalf("a second broker on %s: %v, want a bind failure; output:\n%s", first.Addr, err, out)
	}
	apiVersions(t, kzerotest.Dial(t, again.Addr))
	again.Stop(t)
}

// timeWaitSockets counts IPv4 TCP sockets in TIME_WAIT whose local port
// is port (/proc/net/tcp: local address is field 1, state field 3, 06).
func timeWaitSockets(t *testing.T, port string) int {
	t.Helper()
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	suffix := fmt.Sprintf(":%04X", p)
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) > 3 && strings.HasSuffix(fields[1], suffix) && fields[3] == "06" {
			n++
		}
	}
	return n
}

// Under a descriptor limit the broker keeps its listener: connections
// beyond the limit are refused (or wait in the backlog), the connections
// it has keep being answered, and once some close, new connections are
// accepted again; the failures are counted in kzero_accept_errors_total.
func TestBinaryAcceptSurvivesDescriptorExhaustion(t *testing.T) {
	p := startBinary(t, binaryArgs(t.TempDir())...)
	pid := p.Cmd.Process.Pid
	var old unix.Rlimit
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, nil, &old); err != nil {
		t.Fatal(err)
	}
	const room = 12
	limit := uint64(procFDs(pid) + room)
	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &unix.Rlimit{Cur: limit, Max: old.Max}, nil); err != nil {
		t.Fatal(err)
	}

	// Open connections until one is not served.
	var held []*kzerotest.Conn
	var refusal error
	for range 4 * room {
		c := kzerotest.Dial(t, p.Addr)
		if _, err := c.Request(apiVersionsRequest()); err != nil {
			refusal = err
			c.NetConn().Close()
			break
		}
		held = append(held, c)
	}
	if refusal == nil || len(held) < room/2 {
		t.Fatalf("%d connections served under a limit of %d descriptors (%d free), then %v", len(held), limit, room, refusal)
	}
	t.Logf("%d connections served, then: %v", len(held), refusal)

	// Every connection the broker has is still answered.
	for i, c := range held {
		if _, err := c.Request(apiVersionsRequest()); err != nil {
			t.Fatalf("connection %d after exhaustion: ApiVersions: %v\nstderr:\n%s", i, err, p.Stderr)
		}
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 1
		if _, err := c.Request(md); err != nil {
			t.Fatalf("connection %d after exhaustion: Metadata: %v\nstderr:\n%s", i, err, p.Stderr)
		}
	}

	// Closing some frees descriptors: new connections are served again.
	// A connection that arrives before the broker has closed the ones the
	// client closed may still be refused; it retries.
	const freed = 4
	for _, c := range held[:freed] {
		c.NetConn().Close()
	}
	served, refused := 0, 0
	for served < freed-1 {
		c := kzerotest.Dial(t, p.Addr)
		if _, err := c.Request(apiVersionsRequest()); err != nil {
			if refused++; refused > 100 {
				t.Fatalf("no new connection served after %d connections closed: %v\nstderr:\n%s", freed, err, p.Stderr)
			}
			c.NetConn().Close()
			continue
		}
		served++
	}

	if err := unix.Prlimit(pid, unix.RLIMIT_NOFILE, &old, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.Stderr.String(), "accept failed") {
		t.Fatalf("no accept failure logged; stderr:\n%s", p.Stderr)
	}
	if n := metric(t, p, "kzero_accept_errors_total"); n < 1 {
		t.Fatalf("kzero_accept_errors_total %v, want at least 1", n)
	}
	p.Stop(t)
}

func apiVersionsRequest() *kmsg.ApiVersionsRequest {
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 0
	return req
}

var adminAddrLine = regexp.MustCompile(`msg="admin listener" addr=(\S+)`)

// metric reads one unlabelled sample from the broker's /metrics.
func metric(t *testing.T, p *process, name string) float64 {
	t.Helper()
	m := adminAddrLine.FindStringSubmatch(p.Stderr.String())
	if m == nil {
		t.Fatalf("no admin listener address in stderr:\n%s", p.Stderr)
	}
	cl := http.Client{Timeout: 30 * time.Second}
	resp, err := cl.Get("http://" + m[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
	}
	t.Fatalf("no %s in /metrics", name)
	return 0
}
