package main

// A broker on a full file system (issue 12, point 5): it refuses writes
// with KAFKA_STORAGE_ERROR and serves reads, exits 0 on SIGTERM, starts
// again while the disk is still full, and takes writes again once space is
// freed, with every acknowledged record present exactly once.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"golang.org/x/sys/unix"

	"kzero/kzerotest"
)

// smallFS mounts a fresh ext4 image of size bytes (1 KiB blocks, so an
// index page spans several blocks) and returns its mount point. It skips
// the test when it cannot (not root, no loop devices); Cleanup unmounts it.
func smallFS(t *testing.T, size int64) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small file system needs root")
	}
	dir := t.TempDir()
	img, mnt := filepath.Join(dir, "fs.img"), filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, size); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-m", "0", "-b", "1024", img).CombinedOutput(); err != nil {
		t.Skipf("mkfs.ext4: %v: %s", err, out)
	}
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		t.Skipf("mount -o loop: %v: %s", err, out)
	}
	t.Cleanup(func() {
		// Cleanups run last first: a broker started later is gone by now.
		if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", mnt, err, out)
		}
	})
	return mnt
}

// freeBytes is what the file system at path has left for root.
func freeBytes(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		t.Fatal(err)
	}
	return int64(st.Bfree) * st.Bsize
}

// topUp writes a file at path until the file system has no block left.
// ext4 reserves blocks for delayed allocation conservatively, so it says
// ENOSPC early and frees some of them on fsync: fill again until a round
// writes nothing.
func topUp(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for wrote := true; wrote; {
		wrote = false
		for n := len(buf); n > 0; {
			m, err := f.Write(buf[:n])
			wrote = wrote || m > 0
			if err != nil {
				if !errors.Is(err, unix.ENOSPC) {
					t.Fatal(err)
				}
				n /= 2
			}
		}
		if err := f.Sync(); err != nil && !errors.Is(err, unix.ENOSPC) {
			t.Fatal(err)
		}
	}
}

func TestBinaryFullDisk(t *testing.T) {
	mnt := smallFS(t, 32<<20)
	logs := filepath.Join(mnt, "logs")
	// The filler leaves room once deleted: the broker must take writes
	// again then.
	filler := filepath.Join(mnt, "filler")
	if err := os.WriteFile(filler, make([]byte, 4<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	args := binaryArgs(logs, "log.segment.bytes=1048576", "num.partitions=2")
	p := startBinary(t, args...)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const topic = "full"
	acked := map[string]string{} // key -> value of every acknowledged record
	seq := 0
	// produce sends batches of 64 KiB records until one is refused with
	// KAFKA_STORAGE_ERROR (it returns true) or max batches went through.
	produce := func(addr string, max int) bool {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DisableIdempotentWrite(), kgo.RecordRetries(0),
			kgo.ProducerBatchMaxBytes(1<<20), kgo.ProducerLinger(0), kgo.ProducerBatchCompression(kgo.NoCompression()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for range max {
			var rs []*kgo.Record
			for range 8 {
				seq++
				k := fmt.Sprintf("k%06d", seq)
				v := strings.Repeat(fmt.Sprintf("%-16s", k), 4096) // 64 KiB
				rs = append(rs, &kgo.Record{Topic: topic, Partition: int32(seq % 2), Key: []byte(k), Value: []byte(v)})
			}
			full := false
			for _, r := range cl.ProduceSync(ctx, rs...) {
				switch {
				case r.Err == nil:
					acked[string(r.Record.Key)] = string(r.Record.Value)
				case errors.Is(r.Err, kerr.KafkaStorageError):
					full = true
				default:
					t.Fatalf("produce %s: %v", r.Record.Key, r.Err)
				}
			}
			if full {
				return true
			}
		}
		return false
	}
	// checkAll reads the topic from the start and requires every acked
	// record exactly once.
	checkAll := func(addr string) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.ConsumeTopics(topic),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.FetchMaxBytes(4<<20))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		seen := map[string]int{}
		for missing := len(acked); missing > 0; {
			fs := cl.PollFetches(ctx)
			if ctx.Err() != nil {
				t.Fatalf("%d of %d acknowledged records not read back: %v", missing, len(acked), ctx.Err())
			}
			fs.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s[%d]: %v", topic, p, err) })
			for _, r := range fs.Records() {
				k := string(r.Key)
				seen[k]++
				if v, ok := acked[k]; ok {
					if v != string(r.Value) {
						t.Fatalf("record %s has a different value", k)
					}
					if seen[k] == 1 {
						missing--
					}
				}
			}
		}
		for k, n := range seen {
			if n > 1 {
				t.Fatalf("record %s read %d times", k, n)
			}
		}
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(p.Addr))
	if err != nil {
		t.Fatal(err)
	}
	kzerotest.CreateTopic(t, ctx, cl, topic, 2, nil)
	cl.Close()
	if !produce(p.Addr, 1000) {
		t.Fatalf("the file system never filled up (%d bytes free)", freeBytes(t, mnt))
	}
	// A batch no longer fits; take the last blocks too, so that every
	// write the broker tries from here on (checkpoints, index pages,
	// snapshots) fails.
	topUp(t, filepath.Join(mnt, "top-up"))
	t.Logf("full after %d acknowledged records, %d bytes free", len(acked), freeBytes(t, mnt))
	checkAll(p.Addr)
	p.Stop(t) // exit 0 on SIGTERM with the disk full

	// Start again with the disk still full: reads are served, writes
	// refused. Then the same after a kill, which makes the start recover
	// the active segments (rebuilding their indexes) on the full disk.
	p = startBinary(t, args...)
	checkAll(p.Addr)
	if !produce(p.Addr, 4) {
		t.Fatalf("a full disk took writes after a restart (%d bytes free)", freeBytes(t, mnt))
	}
	topUp(t, filepath.Join(mnt, "top-up"))
	if err := p.Cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	p = startBinary(t, args...)
	checkAll(p.Addr)
	if !produce(p.Addr, 4) {
		t.Fatalf("a full disk took writes after a kill and a restart (%d bytes free)", freeBytes(t, mnt))
	}

	// Free space: writes are accepted again, with no restart.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	before := len(acked)
	if produce(p.Addr, 4) {
		t.Fatalf("writes refused after space was freed (%d bytes free); stderr:\n%s", freeBytes(t, mnt), p.Stderr)
	}
	if len(acked) != before+32 {
		t.Fatalf("%d records acknowledged after space was freed, want 32", len(acked)-before)
	}
	checkAll(p.Addr)
	p.Stop(t)
}
