package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The list of workloads is shipped, each parses, and each is named
// after its file.
func TestShippedWorkloads(t *testing.T) {
	ws, err := ShippedWorkloads()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("workloads/*.json")
	if len(ws) != len(files) {
		t.Fatalf("%d shipped workloads, %d files", len(ws), len(files))
	}
	for _, f := range files {
		w, err := LoadWorkload(f)
		if err != nil {
			t.Error(err)
			continue
		}
		if w.Description == "" {
			t.Errorf("%s: no description", f)
		}
	}
	has := func(what string, ok func(Workload) bool) {
		for _, w := range ws {
			if ok(w) {
				return
			}
		}
		t.Errorf("no shipped workload for %s", what)
	}
	has("1 KiB max throughput", func(w Workload) bool {
		return w.Kind == KindProduce && w.RecordBytes == 1024 && w.Rate == 0 && w.Compression == "none" && w.Partitions == 8 && w.Producers == 1
	})
	has("100-byte max throughput", func(w Workload) bool { return w.Kind == KindProduce && w.RecordBytes == 100 && w.Rate == 0 })
	has("1 KiB at ~50 MB/s, latency", func(w Workload) bool {
		return w.Kind == KindLatency && w.RecordBytes == 1024 && w.Rate*1024 >= 48e6 && w.Rate*1024 <= 52e6
	})
	has("1000 partitions", func(w Workload) bool { return w.Partitions == 1000 })
	has("100 producers", func(w Workload) bool { return w.Producers == 100 })
	has("lz4", func(w Workload) bool { return w.Compression == "lz4" })
	has("zstd", func(w Workload) bool { return w.Compression == "zstd" })
	has("1 GiB catch-up from earliest", func(w Workload) bool {
		return w.Kind == KindConsume && w.total()*int64(w.RecordBytes) == 1<<30
	})
	has("mixed", func(w Workload) bool { return w.Kind == KindMixed })
	has("share-group mixed: produce while share-consuming", func(w Workload) bool {
		return w.Kind == KindMixed && w.ShareGroup && w.Consumers > 1 && w.Rate > 0
	})
	for _, n := range []int{1, 4, 16} {
		has(fmt.Sprintf("share-group consume, %d consumers on 8 partitions", n), func(w Workload) bool {
			return w.Kind == KindConsume && w.ShareGroup && w.Consumers == n && w.Partitions == 8 && w.total()*int64(w.RecordBytes) == 1<<30
		})
	}
}

func TestParseWorkloadDefaults(t *testing.T) {
	w, err := ParseWorkload([]byte(`{"name":"x","kind":"e2e-latency","record_bytes":64,"rate":10,"duration":"2s","linger":"0s"}`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Partitions != 8 || w.Producers != 1 || w.Consumers != 1 || w.Acks != "1" || w.Compression != "none" || w.Payload != "random" {
		t.Errorf("defaults: %+v", w)
	}
	if w.Duration.D() != 2*time.Second || w.Linger == nil || *w.Linger != 0 {
		t.Errorf("durations: duration %v linger %v", w.Duration.D(), w.Linger)
	}
	w, err = ParseWorkload([]byte(`{"name":"p","kind":"produce","record_bytes":1,"records":5,"acks":"-1","idempotent":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Consumers != 0 || w.Acks != "all" || w.Linger != nil {
		t.Errorf("produce defaults: %+v", w)
	}
}

func TestParseWorkloadRejects(t *testing.T) {
	for _, c := range []struct{ json, want string }{
		{`{"kind":"produce","record_bytes":1,"records":1}`, "no name"},
		{`{"name":"a b","kind":"produce","record_bytes":1,"records":1}`, "no spaces"},
		{`{"name":"x","record_bytes":1,"records":1}`, "no kind"},
		{`{"name":"x","kind":"fetch","record_bytes":1,"records":1}`, `kind "fetch"`},
		{`{"name":"x","kind":"produce","records":1}`, "record_bytes 0"},
		{`{"name":"x","kind":"e2e-latency","record_bytes":4,"rate":1,"records":1}`, "needs ≥ 8"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"acks":"2"}`, `acks "2"`},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"idempotent":true}`, "idempotent needs acks all"},
		{`{"name":"x","kind":"consume","record_bytes":1,"records":1,"acks":"0"}`, "acks 0"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"compression":"brotli"}`, "brotli"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"payload":"zeros"}`, "payload"},
		{`{"name":"x","kind":"produce","record_bytes":1}`, "give duration or records"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"duration":"1s"}`, "not both"},
		{`{"name":"x","kind":"consume","record_bytes":1,"duration":"1s"}`, "fills the topic"},
		{`{"name":"x","kind":"e2e-latency","record_bytes":8,"duration":"1s"}`, "fixed rate"},
		{`{"name":"x","kind":"e2e-latency","record_bytes":8,"rate":1,"duration":"1s","warmup":"2s"}`, "warmup"},
		{`{"name":"x","kind":"consume","record_bytes":8,"records":1,"partitions":2,"consumers":3}`, "consumers 3 > partitions 2"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"rate":-1}`, "rate -1"},
		{`{"name":"x","kind":"produce","record_bytes":1,"duration":"soon"}`, "duration"},
		{`{"name":"x","kind":"produce","record_bytes":1,"duration":30}`, "duration"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"lingr":"1ms"}`, "unknown field"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1} {}`, "more than one"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"linger":"-1ms"}`, "linger"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":1,"max_buffered":-1}`, "max_buffered"},
		{`{"name":"x","kind":"produce","record_bytes":1,"records":9,"warmup":"1s"}`, "warmup"},
		{`{"name":"x","kind":"consume","record_bytes":1,"records":9,"warmup":"1s"}`, "warmup"},
		{`{"name":"x","kind":"consume","record_bytes":8,"records":1,"share_group":true,"group":true}`, "group and share_group"},
		{`{"name":"x","kind":"produce","record_bytes":8,"records":1,"share_group":true}`, "share_group: a produce workload"},
		{`{"name":"x","kind":"consume","record_bytes":8,"records":1,"share_group":true,"client":"raw"}`, "share_group"},
		{`{"name":"x","kind":"consume","record_bytes":8,"records":1,"share_group":"yes"}`, "share_group"},
	} {
		_, err := ParseWorkload([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseWorkload(%s) = %v, want an error with %q", c.json, err, c.want)
		}
	}
	// Group consumers may outnumber partitions: the extra ones idle.
	if _, err := ParseWorkload([]byte(`{"name":"x","kind":"consume","record_bytes":8,"records":1,"partitions":2,"consumers":3,"group":true}`)); err != nil {
		t.Error(err)
	}
	// So may share-group consumers: they share partitions.
	if w, err := ParseWorkload([]byte(`{"name":"x","kind":"consume","record_bytes":8,"records":1,"partitions":2,"consumers":3,"share_group":true}`)); err != nil || !w.ShareGroup {
		t.Errorf("share_group workload: %+v, %v", w, err)
	}
}

func TestLoadWorkloadNamesFromFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(p, []byte(`{"kind":"produce","record_bytes":10,"records":3}`), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := LoadWorkload(p)
	if err != nil {
		t.Fatal(err)
	}
	if w.Name != "mine" {
		t.Errorf("name %q, want mine", w.Name)
	}
	if _, err := LoadWorkload(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("a missing file loaded")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"kind":"produce"}`), 0o644)
	if _, err := LoadWorkload(bad); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("LoadWorkload(bad) = %v, want an error naming the file", err)
	}
}

func TestScaled(t *testing.T) {
	w := Workload{Producers: 4, Records: 1000, Duration: Duration(10 * time.Second), Warmup: Duration(2 * time.Second)}
	s := w.Scaled(0.01)
	if s.Records != 10 || s.Duration.D() != 100*time.Millisecond || s.Warmup.D() != 20*time.Millisecond {
		t.Errorf("Scaled(0.01) = records %d duration %v warmup %v", s.Records, s.Duration.D(), s.Warmup.D())
	}
	s = w.Scaled(1e-9)
	if s.Records != 4 || s.Duration.D() != time.Millisecond {
		t.Errorf("Scaled(1e-9) = records %d duration %v, want one record per producer and 1ms", s.Records, s.Duration.D())
	}
	if s := w.Scaled(1); s != w {
		t.Errorf("Scaled(1) changed the workload")
	}
}

func TestResolveWorkloads(t *testing.T) {
	all, err := ResolveWorkloads([]string{"all"})
	if err != nil || len(all) < 9 {
		t.Fatalf("all: %d workloads, %v", len(all), err)
	}
	ws, err := ResolveWorkloads([]string{"produce-lz4", "workloads/produce-zstd.json"})
	if err != nil || len(ws) != 2 || ws[0].Name != "produce-lz4" || ws[1].Name != "produce-zstd" {
		t.Errorf("by name and path: %v, %v", ws, err)
	}
	if _, err := ResolveWorkloads([]string{"no-such"}); err == nil || !strings.Contains(err.Error(), "produce-1k-max") {
		t.Errorf("unknown name: %v, want the list of shipped names", err)
	}
}

// The replication workloads (bench/cluster, run against a cluster by file)
// parse and say what they compare.
func TestClusterWorkloads(t *testing.T) {
	files, err := filepath.Glob("cluster/*.json")
	if err != nil || len(files) < 5 {
		t.Fatalf("cluster workloads: %v %v", files, err)
	}
	for _, f := range files {
		w, err := LoadWorkload(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if w.Replication != 1 && w.Replication != 3 {
			t.Errorf("%s: replication %d", f, w.Replication)
		}
	}
}
