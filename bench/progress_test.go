package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func TestFraction(t *testing.T) {
	dur := Workload{Kind: KindProduce, Duration: Duration(10 * time.Second)}
	cons := Workload{Kind: KindConsume, Records: 100}
	recs := Workload{Kind: KindProduce, Records: 200}
	for _, c := range []struct {
		w    Workload
		p    progress
		want float64
	}{
		{dur, progress{}, 0},
		{dur, progress{measuring: 2500 * time.Millisecond, produced: 99}, 0.25},
		{dur, progress{measuring: time.Minute}, 1}, // a latency run drains past its duration
		{cons, progress{produced: 100}, 0.5},       // filled, not yet read
		{cons, progress{produced: 100, consumed: 50}, 0.75},
		{recs, progress{produced: 50}, 0.25},
	} {
		if got := fraction(c.w, c.p); got != c.want {
			t.Errorf("fraction(%v, %+v) = %v, want %v", c.w.Kind, c.p, got, c.want)
		}
	}
}

func TestBarLine(t *testing.T) {
	w := Workload{Kind: KindMixed, Duration: Duration(4 * time.Second)}
	got := barLine("mixed on kzero, rep 1/2", w, progress{measuring: time.Second, producedBytes: 3 << 20, consumedBytes: 1 << 19}, 1500*time.Millisecond)
	want := "mixed on kzero, rep 1/2 [######..................]  25%   1.5s  produced 3.0 MiB  consumed 0.5 MiB"
	if got != want {
		t.Errorf("barLine =\n%q\nwant\n%q", got, want)
	}
	if strings.ContainsAny(got, "\r\n") {
		t.Error("a bar line holds a line break")
	}
}

func TestIsTerminal(t *testing.T) {
	f, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for name, out := range map[string]io.Writer{"file": f, "pipe": w, "buffer": new(bytes.Buffer)} {
		if isTerminal(out) {
			t.Errorf("%s taken for a terminal", name)
		}
	}
	if _, tty := openPTY(t); !isTerminal(tty) {
		t.Error("a pty not taken for a terminal")
	}
}

// openPTY opens a pseudo-terminal: its master, and its slave (the
// terminal a program writes to). The test skips where there is none.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	t.Cleanup(func() { master.Close() })
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlockpt: %v", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		t.Skipf("ptsname: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

// On a terminal the running workload has a bar, erased when the run
// ends; into a pipe only the line per finished run is written.
func TestRunProgress(t *testing.T) {
	ws, err := ResolveWorkloads([]string{"produce-100b-max"})
	if err != nil {
		t.Fatal(err)
	}
	run := func(progress *os.File) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if _, err := Run(ctx, ws, Options{Targets: []Target{{Label: "kfake", Start: "kfake"}}, Scale: smokeScale, Progress: progress}); err != nil {
			t.Fatal(err)
		}
		progress.Close()
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	piped := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); piped <- b }()
	run(w)
	if out := string(<-piped); strings.Contains(out, "\r") || !strings.Contains(out, "produce-100b-max on kfake, rep 1/1: ok") {
		t.Errorf("piped progress %q", out)
	}

	master, slave := openPTY(t)
	var term bytes.Buffer
	read := make(chan struct{})
	go func() { io.Copy(&term, master); close(read) }() // ends with EIO once the slave is closed
	run(slave)
	<-read
	out := term.String()
	bar := "\r\033[Kproduce-100b-max on kfake, rep 1/1 ["
	if !strings.Contains(out, bar) || !strings.Contains(out, "\r\033[Kproduce-100b-max on kfake, rep 1/1: ok") {
		t.Errorf("terminal progress %q", out)
	}
}
