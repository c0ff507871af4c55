package bench

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"time"
)

// PageCacheWarm is Result.PageCache for a run that began right after Warm.
const PageCacheWarm = "warm"

// WarmUp is what Warm wrote.
type WarmUp struct {
	Bytes   int64   `json:"bytes"`
	Seconds float64 `json:"seconds"`
	MiBps   float64 `json:"mib_per_s"`
}

// Warm brings the machine's memory to the state of a long-running broker:
// it appends size bytes to a new file in dir (1 MiB writes, no fsync) and
// removes it, so that the page cache has that many freshly freed pages,
// and the next appends land in recycled memory rather than memory the
// host must fault in (the file-append-cold limit; see appendLimit).
//
// It writes a file, not anonymous memory: measured here, appends after
// touching and unmapping 2 GiB of anonymous memory ran as cold as without
// (about 1,000-1,300 MiB/s), after writing and deleting a 2 GiB file as
// warm as the file-append limit (3,000-4,000 MiB/s). A file larger than
// vm.dirty_ratio of the memory is throttled to the disk's speed while it
// is written (it still warms; it takes longer).
//
// The effect does not last: on a virtual machine that reports free pages
// to its host (virtio-balloon free page reporting), freed pages go back to
// the host within seconds. Options.Warm therefore warms right before each
// run, and a result says it was measured warm; `kzctl bench warm` alone
// is for a run that follows at once. The write rate tells the state the
// memory was in: near the file-append limit it was warm already, near the
// cold one it was not.
func Warm(ctx context.Context, dir string, size int64) (WarmUp, error) {
	f, err := os.CreateTemp(dir, "kzctl-warm-")
	if err != nil {
		return WarmUp{}, err
	}
	name := f.Name()
	defer os.Remove(name)
	defer f.Close()
	buf := make([]byte, 1<<20)
	rand.Read(buf)
	var n int64
	start := time.Now()
	for n < size && ctx.Err() == nil {
		k, err := f.Write(buf[:min(int64(len(buf)), size-n)])
		n += int64(k)
		if err != nil {
			return WarmUp{}, fmt.Errorf("warm: %w", err)
		}
	}
	w := WarmUp{Bytes: n, Seconds: time.Since(start).Seconds()}
	if w.Seconds > 0 {
		w.MiBps = float64(n) / w.Seconds / (1 << 20)
	}
	if err := f.Close(); err != nil {
		return w, fmt.Errorf("warm: %w", err)
	}
	if err := os.Remove(name); err != nil {
		return w, fmt.Errorf("warm: %w", err)
	}
	return w, ctx.Err()
}
