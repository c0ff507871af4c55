package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Target is a broker the workloads run against: an address, or a reference
// broker the suite starts itself on loopback.
type Target struct {
	Label string // names the target in results
	Addr  string // host:port[,host:port...]; empty until started for Start
	Start string // "kzero" or "kfake": start this broker; "" for Addr
}

// ParseTarget reads a --compare element: "kzero" or "kfake" is a broker
// to start, anything else a host:port address.
func ParseTarget(s string) (Target, error) {
	s = strings.TrimSpace(s)
	switch s {
	case "kzero", "kfake":
		return Target{Label: s, Start: s}, nil
	case "":
		return Target{}, errors.New("empty target")
	}
	if !strings.Contains(s, ":") {
		return Target{}, fmt.Errorf("target %q: want host:port, kzero or kfake", s)
	}
	return Target{Label: s, Addr: s}, nil
}

// startedBroker is a broker the suite started: where it listens, its
// process when it has one of its own, and how to stop it.
type startedBroker struct {
	addr  string
	admin string // kzero's admin listener (/debug/pprof), host:port; "" if none
	proc  *Process
	stop  func() error
}

// startBroker starts a kzero or kfake on loopback, each as a process of
// its own so that its CPU seconds and peak RSS can be read. kzero runs as
// the binary bin (built from this module into dir when bin is empty) with
// its data and log in dir; kfake runs as this very executable re-executed
// with serveKfakeEnv set (see kfake_process.go).
func startBroker(ctx context.Context, kind, bin, dir string) (*startedBroker, error) {
	switch kind {
	case "kfake":
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("kfake: find this executable to re-run: %w", err)
		}
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), serveKfakeEnv+"=1")
		b, _, err := startProcess(ctx, cmd, "kfake", dir, nil)
		return b, err
	case "kzero":
		return startKzero(ctx, bin, dir)
	}
	return nil, fmt.Errorf("cannot start %q: want kzero or kfake", kind)
}

func startKzero(ctx context.Context, bin, dir string) (*startedBroker, error) {
	if bin == "" {
		bin = filepath.Join(dir, "kzero")
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, "kzero/cmd/kzero")
		if out, err := build.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("build kzero (run inside the kzero module, or pass --kzero-bin): %w: %s", err, strings.TrimSpace(string(out)))
		}
	}
	cmd := exec.Command(bin,
		"--override", "listeners=PLAINTEXT://127.0.0.1:0",
		"--override", "log.dirs="+filepath.Join(dir, "data"),
		"--override", "admin.listener=127.0.0.1:0")
	found := make(chan string, 1)
	b, admin, err := startProcess(ctx, cmd, "kzero", dir, found)
	if err != nil {
		return nil, err
	}
	// The admin listener (pprof) is logged before the broker is ready; a
	// kzero without one is benchmarked without profiles.
	select {
	case b.admin = <-admin:
	case <-time.After(2 * time.Second):
	}
	return b, nil
}

// startProcess starts a broker process whose stdout says "NAME ready on
// ADDR" once it serves, its output going to dir/NAME.log. With found, its
// stderr is watched for kzero's admin listener line (returned channel).
func startProcess(ctx context.Context, cmd *exec.Cmd, name, dir string, found chan string) (*startedBroker, <-chan string, error) {
	logf, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, nil, err
	}
	if found != nil {
		cmd.Stderr = &adminWatch{w: logf, found: found}
	} else {
		cmd.Stderr = logf
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, nil, fmt.Errorf("start %s: %w", name, err)
	}
	exited := make(chan error, 1)
	stop := func() error {
		cmd.Process.Signal(syscall.SIGTERM)
		var err error
		select {
		case err = <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			err = fmt.Errorf("%s did not stop in 30s; killed: %w", name, <-exited)
		}
		logf.Close()
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.Sys().(syscall.WaitStatus).Signal() == syscall.SIGTERM {
			err = nil
		}
		return err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), name+" ready on "); ok {
				addr <- strings.TrimSpace(a)
				break
			}
			fmt.Fprintln(logf, sc.Text())
		}
		io.Copy(logf, out) // keep draining, so the broker never blocks on stdout
		exited <- cmd.Wait()
	}()
	select {
	case a := <-addr:
		return &startedBroker{addr: a, proc: NewProcess(cmd.Process.Pid), stop: stop}, found, nil
	case <-exited:
		logf.Close()
		return nil, nil, fmt.Errorf("%s exited before it was ready; see %s", name, logf.Name())
	case <-time.After(time.Minute):
	case <-ctx.Done():
	}
	stop()
	return nil, nil, fmt.Errorf("%s not ready; see %s", name, logf.Name())
}

// adminWatch passes kzero's log through to w and finds the address of its
// admin listener in the slog line that announces it:
//
//	time=... level=INFO msg="admin listener" addr=127.0.0.1:40123
type adminWatch struct {
	w     io.Writer
	found chan string // gets the address once
	line  []byte      // an incomplete line; nil once found
	done  bool
}

func (a *adminWatch) Write(p []byte) (int, error) {
	if !a.done {
		a.line = append(a.line, p...)
		for {
			i := bytes.IndexByte(a.line, '\n')
			if i < 0 {
				break
			}
			l := string(a.line[:i])
			a.line = a.line[i+1:]
			if !strings.Contains(l, `msg="admin listener"`) {
				continue
			}
			if _, v, ok := strings.Cut(l, " addr="); ok {
				v, _, _ = strings.Cut(v, " ")
				a.found <- strings.Trim(v, `"`)
				a.done, a.line = true, nil
				break
			}
		}
		if len(a.line) > 64<<10 {
			a.line = nil // not a log line we know; give up on the address
			a.done = true
		}
	}
	return a.w.Write(p)
}
