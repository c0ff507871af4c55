package server

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// consumeFetch is the size of one fetch's file range in
// BenchmarkKTLSConsume: max.partition.fetch.bytes' default.
const consumeFetch = 1 << 20

// BenchmarkKTLSConsume: a consumer fetching 1 MiB file ranges, one fetch
// in flight, over PLAINTEXT, over SSL with kernel TLS and over SSL with
// user-space TLS (the relay), side by side. The consumer is another
// process (this test binary again, TestKTLSConsumer), so the CPU time
// measured (getrusage of this process) is the server's alone; b.N counts
// fetches (-benchtime=1024x is 1 GiB). Besides throughput it reports
// server-cpu-s/GiB, client-cpu-s/GiB and sendfile-% (the share of range
// bytes sent with sendfile). The ktls case needs kernel TLS (make
// test-ktls runs it in a VM with KTLS_BENCH=1).
func BenchmarkKTLSConsume(b *testing.B) {
	pki := newTestPKI(b)
	cert, key := pki.issue(pkix.Name{CommonName: "server"}, true, false)
	seg := newSegment(b, consumeFetch)
	h := HandlerFunc(func(r *Request) {
		resp := r.NewResponse()
		resp.B = append(resp.B, "head"...)
		resp.AddFile(seg.rng(0, consumeFetch))
		r.Respond(resp)
	})
	for _, mode := range []string{"plaintext", "ktls", "usertls"} {
		b.Run(mode, func(b *testing.B) {
			var s *Server
			switch mode {
			case "plaintext":
				s = start(b, Config{Logger: discard()}, h)
			case "ktls":
				needKernelTLS(b)
				s, _ = tlsServer(b, TLSSettings{KeystoreChain: cert, KeystoreKey: key}, h)
			case "usertls":
				s, _ = tlsServer(b, TLSSettings{KeystoreChain: cert, KeystoreKey: key, DisableKernelTLS: true}, h)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestKTLSConsumer$", "-test.count=1")
			cmd.Env = append(os.Environ(), "KZERO_KTLS_CONSUMER="+s.Addr().String(),
				"KZERO_KTLS_CONSUMER_FETCHES="+strconv.Itoa(b.N), "KZERO_KTLS_CONSUMER_CA="+pki.caPEM)
			if mode == "plaintext" {
				cmd.Env = append(cmd.Env, "KZERO_KTLS_CONSUMER_CA=")
			}
			out, err := cmd.StdoutPipe()
			if err != nil {
				b.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			// The consumer says "ready" after its handshake and a first
			// fetch; the measured part starts there.
			lines := bufio.NewScanner(out)
			for lines.Scan() && lines.Text() != "ready" {
			}
			before, cpu0 := s.Stats(), cpuTime(b)
			b.ResetTimer()
			start := time.Now()
			rest, _ := io.ReadAll(out)
			if err := cmd.Wait(); err != nil {
				b.Fatalf("consumer: %v\n%s", err, rest)
			}
			elapsed, cpu := time.Since(start), cpuTime(b)-cpu0
			b.StopTimer()
			after := s.Stats()
			gib := float64(b.N) * consumeFetch / (1 << 30)
			zc, cp := after.ZeroCopyBytes-before.ZeroCopyBytes, after.CopiedBytes-before.CopiedBytes
			if zc+cp < int64(b.N)*consumeFetch {
				b.Fatalf("%d range bytes sent, want %d", zc+cp, b.N*consumeFetch)
			}
			if mode == "ktls" && after.KernelTLSConns != 1 {
				b.Fatalf("not on kernel TLS: %+v", after)
			}
			client := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			b.SetBytes(consumeFetch)
			b.ReportMetric(gib*1024/elapsed.Seconds(), "MiB/s")
			b.ReportMetric(cpu.Seconds()/gib, "server-cpu-s/GiB")
			b.ReportMetric(client.Seconds()/gib, "client-cpu-s/GiB")
			b.ReportMetric(100*float64(zc)/float64(zc+cp), "sendfile-%")
		})
	}
}

// cpuTime is this process's user and system CPU time.
func cpuTime(t testing.TB) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// TestKTLSConsumer is BenchmarkKTLSConsume's consumer process: it fetches
// KZERO_KTLS_CONSUMER_FETCHES ranges from KZERO_KTLS_CONSUMER, over TLS
// when KZERO_KTLS_CONSUMER_CA names the CA, checking each answer's size.
// Without KZERO_KTLS_CONSUMER it has nothing to do.
func TestKTLSConsumer(t *testing.T) {
	addr := os.Getenv("KZERO_KTLS_CONSUMER")
	if addr == "" {
		t.Skip("the consumer process of BenchmarkKTLSConsume")
	}
	n, err := strconv.Atoi(os.Getenv("KZERO_KTLS_CONSUMER_FETCHES"))
	if err != nil {
		t.Fatal(err)
	}
	var c net.Conn
	if ca := os.Getenv("KZERO_KTLS_CONSUMER_CA"); ca != "" {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM([]byte(ca))
		c, err = tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	req := echoFrame(0, []byte("fetch"))
	fetch := func(corr int32) {
		binary.BigEndian.PutUint32(req[8:], uint32(corr))
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		var size [8]byte
		if _, err := io.ReadFull(r, size[:]); err != nil {
			t.Fatal(err)
		}
		if got, want := binary.BigEndian.Uint32(size[:]), uint32(4+4+consumeFetch); got != want {
			t.Fatalf("answer of %d bytes, want %d", got, want)
		}
		if got := int32(binary.BigEndian.Uint32(size[4:])); got != corr {
			t.Fatalf("correlation id %d, want %d", got, corr)
		}
		if _, err := r.Discard(4 + consumeFetch); err != nil {
			t.Fatal(err)
		}
	}
	fetch(0)
	fmt.Println("ready")
	for i := range n {
		fetch(int32(i + 1))
	}
}
