package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"time"
)

// profiler captures pprof profiles from a broker's /debug/pprof while a
// workload runs, into files beside the results, ready for go tool pprof.
type profiler struct {
	admin string // host:port of the broker's HTTP listener
	dir   string
}

// cpu starts a CPU profile of d (rounded up to whole seconds, the endpoint's
// unit) into dir/name and returns a function that waits for it and returns
// the file's name.
func (p profiler) cpu(ctx context.Context, d time.Duration, name string) func() (string, error) {
	secs := max(1, int(math.Ceil(d.Seconds())))
	done := make(chan error, 1)
	go func() {
		done <- p.fetch(ctx, fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs), name, time.Duration(secs)*time.Second+time.Minute)
	}()
	return func() (string, error) { return name, <-done }
}

// allocs saves the allocation profile (every allocation since the broker
// started, sampled) into dir/name.
func (p profiler) allocs(ctx context.Context, name string) (string, error) {
	return name, p.fetch(ctx, "/debug/pprof/allocs", name, time.Minute)
}

func (p profiler) fetch(ctx context.Context, path, name string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.admin+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("pprof %s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof %s: %s", path, resp.Status)
	}
	f, err := os.Create(filepath.Join(p.dir, name))
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("pprof %s: %w", path, err)
	}
	return nil
}
