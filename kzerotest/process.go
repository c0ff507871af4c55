package kzerotest

import (
	"bufio"
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Build builds ./cmd/kzero of the module the test runs in into dir and
// returns the binary's path.
func Build(dir string) (string, error) {
	gomod, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	bin := filepath.Join(dir, "kzero")
	build := exec.Command("go", "build", "-o", bin, "./cmd/kzero")
	build.Dir = filepath.Dir(strings.TrimSpace(string(gomod)))
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build kzero: %v\n%s", err, out)
	}
	return bin, nil
}

// Buffer is a bytes.Buffer written by exec's copying goroutine and read by
// the test.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Process is a running kzero.
type Process struct {
	Cmd    *exec.Cmd
	Addr   string  // the client address of the ready line, once WaitReady saw it
	Stderr *Buffer // everything it logged
	Err    error   // how it exited, set before Done is closed

	first chan string   // its first stdout line, which must be the ready line
	done  chan struct{} // closed once it exited
}

// readyLine is the line kzero prints once it serves clients.
var readyLine = regexp.MustCompile(`^kzero ready on (127\.0\.0\.1:\d+)$`)

// ReadyAddr is the client address of kzero's ready line, false for another
// line.
func ReadyAddr(line string) (string, bool) {
	m := readyLine.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// Launch starts cmd, which runs (or execs) kzero, without waiting for it;
// it is killed when the test ends at the latest.
func Launch(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p, err := LaunchCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	return p
}

// LaunchCommand is Launch for a caller without a test (TestMain): it ends
// the process itself.
func LaunchCommand(cmd *exec.Cmd) (*Process, error) {
	p := &Process{Cmd: cmd, Stderr: &Buffer{}, first: make(chan string, 1), done: make(chan struct{})}
	cmd.Stderr = p.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.first <- sc.Text():
			default:
			}
		}
		p.Err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Start launches cmd and waits up to a minute for its ready line.
func Start(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := Launch(t, cmd)
	if err := p.WaitReady(time.Minute); err != nil {
		t.Fatal(err)
	}
	return p
}

// First delivers the first line the process printed on stdout.
func (p *Process) First() <-chan string { return p.first }

// Done is closed once the process exited (Err says how).
func (p *Process) Done() <-chan struct{} { return p.done }

// WaitReady waits up to d for the ready line and sets Addr from it.
func (p *Process) WaitReady(d time.Duration) error {
	select {
	case line := <-p.first:
		m := readyLine.FindStringSubmatch(line)
		if m == nil {
			return fmt.Errorf("first stdout line %q is not the ready line; stderr:\n%s", line, p.Stderr)
		}
		p.Addr = m[1]
		return nil
	case <-p.done:
		return fmt.Errorf("kzero exited before it was ready: %v\n%s", p.Err, p.Stderr)
	case <-time.After(d):
		return fmt.Errorf("kzero printed no ready line within %v; stderr:\n%s", d, p.Stderr)
	}
}

// Kill sends SIGKILL unless it exited, and waits for the exit.
func (p *Process) Kill() {
	select {
	case <-p.done:
	default:
		p.Cmd.Process.Kill()
		<-p.done
	}
}

// Stop sends SIGTERM and waits up to a minute for the exit, which must be
// clean.
func (p *Process) Stop(t testing.TB) {
	t.Helper()
	p.StopWithin(t, time.Minute)
}

// StopWithin is Stop with a wait of d.
func (p *Process) StopWithin(t testing.TB, d time.Duration) {
	t.Helper()
	if err := p.Terminate(d); err != nil {
		t.Fatal(err)
	}
}

// Terminate sends SIGTERM and waits up to d for a clean exit; past d it
// kills the process and says so.
func (p *Process) Terminate(d time.Duration) error {
	if err := p.Cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case <-p.done:
		if p.Err != nil {
			return fmt.Errorf("kzero exited with %v after SIGTERM; stderr:\n%s", p.Err, p.Stderr)
		}
		return nil
	case <-time.After(d):
		p.Kill()
		return fmt.Errorf("kzero still running %v after SIGTERM; stderr:\n%s", d, p.Stderr)
	}
}
