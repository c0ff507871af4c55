package tools

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"kzero/log"
	"kzero/record"
)

func TestProgressRendering(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 60, "consume t", 1000, "records")
	p.set(0)
	p.add(250)
	p.add(250)
	// 60 columns: the full line at 100% takes 59, the bar 24 of them.
	want := "\rconsume t [------------------------]   0% 0/1000 records\x1b[K" +
		"\rconsume t [######------------------]  25% 250/1000 records\x1b[K" +
		"\rconsume t [############------------]  50% 500/1000 records\x1b[K"
	if buf.String() != want {
		t.Fatalf("drawn\n%q\nwant\n%q", buf.String(), want)
	}

	// Steps past the total stop at it; finish ends the line once.
	buf.Reset()
	p.add(5000)
	p.finish()
	p.finish()
	if want := "\rconsume t [########################] 100% 1000/1000 records\x1b[K\n"; buf.String() != want {
		t.Fatalf("drawn %q, want %q", buf.String(), want)
	}

	// Bytes are shown in binary units; a narrow terminal keeps 10 cells.
	buf.Reset()
	p = newProgress(&buf, 20, "dump-log", 3<<30, "bytes")
	p.set(3 << 29)
	if want := "\rdump-log [#####-----]  50% 1.5 GiB/3.0 GiB\x1b[K"; buf.String() != want {
		t.Fatalf("drawn %q, want %q", buf.String(), want)
	}
	// A wide one gives the bar 40 cells at most.
	if got := newProgress(&buf, 500, "x", 1, "records").render(nil); !bytes.Contains(got, []byte("["+strings.Repeat("-", 40)+"]")) {
		t.Fatalf("wide bar %q", got)
	}
}

// TestProgressRedraws checks the bar is redrawn only when its figure
// changes: a million steps, a thousand and one draws (0.0% to 100.0%).
func TestProgressRedraws(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, 80, "x", 1_000_000, "records")
	for range 1_000_000 {
		p.add(1)
	}
	if n := bytes.Count(buf.Bytes(), []byte("\r")); n != 1001 {
		t.Fatalf("%d draws, want 1001", n)
	}
	allocs := testing.AllocsPerRun(1000, func() { p.set(p.done) })
	if allocs != 0 {
		t.Fatalf("a step that draws nothing allocates %v times", allocs)
	}
}

func TestProgressNilAndOff(t *testing.T) {
	var p *progress
	p.add(1)
	p.set(2)
	p.finish() // no panic: commands step a nil bar

	var buf bytes.Buffer
	env := &Env{Out: &buf, Progress: &buf}
	if env.progress("x", 10, "records", false) != nil {
		t.Fatal("a bar on a buffer, which is not a terminal")
	}
	r, w, err := os.Pipe()
	must(t, err)
	defer r.Close()
	defer w.Close()
	env.Progress = w
	if env.progress("x", 10, "records", false) != nil {
		t.Fatal("a bar on a pipe")
	}
	if _, ok := terminalWidth(w); ok {
		t.Fatal("a pipe taken for a terminal")
	}
	env.forceProgress = true
	if env.progress("x", 0, "records", false) != nil {
		t.Fatal("a bar for nothing to do")
	}
	if env.progress("x", 10, "records", false) == nil {
		t.Fatal("no bar when forced")
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB",
		5 << 20: "5.0 MiB", 1 << 40: "1.0 TiB", 3 << 50: "3072.0 TiB"} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestDumpLogProgress dumps a segment with the bar forced on: it counts
// the file's bytes and reaches 100%; stdout holds only the dump.
func TestDumpLogProgress(t *testing.T) {
	dir := t.TempDir()
	var seg []byte
	for i := range 50 {
		seg = append(seg, record.AppendControlBatch(nil, int64(i), 1, 0, record.ControlCommit, 1700000000000)...)
	}
	path := dir + "/" + log.FileName(0, log.LogSuffix)
	must(t, os.WriteFile(path, seg, 0o644))
	var out, bar bytes.Buffer
	env := &Env{Out: &out, Progress: &bar, forceProgress: true}
	must(t, DumpLog(env, []string{path}, DumpOptions{}))
	total := byteSize(int64(len(seg)))
	if !strings.HasSuffix(bar.String(), "100% "+total+"/"+total+"\x1b[K\n") {
		t.Fatalf("progress %q", bar.String())
	}
	if strings.Contains(out.String(), "\r") || strings.Count(out.String(), "baseOffset:") != 50 {
		t.Fatalf("dump output:\n%s", out.String())
	}
}

// TestConsumeProgress consumes to the end with the bar forced on.
func TestConsumeProgress(t *testing.T) {
	seedConsume(t, "cons-bar")
	env, out := testEnv(t, Text)
	var bar bytes.Buffer
	env.Progress, env.forceProgress = &bar, true
	must(t, Consume(testCtx(t), env, ConsumeOptions{Topic: "cons-bar", FromBeginning: true, Timestamp: -1, ToEnd: true, ValueOnly: true}))
	if !strings.HasSuffix(bar.String(), "100% 8/8 records\x1b[K\n") {
		t.Fatalf("progress %q", bar.String())
	}
	if strings.Count(out.String(), "\n") != 8 {
		t.Fatalf("consumed:\n%s", out.String())
	}
	bar.Reset()
	must(t, Consume(testCtx(t), env, ConsumeOptions{Topic: "cons-bar", Partitions: []int32{0}, FromBeginning: true, Timestamp: -1, Count: 4}))
	if !strings.HasSuffix(bar.String(), "100% 4/4 records\x1b[K\n") {
		t.Fatalf("progress with --count %q", bar.String())
	}
}
