package coord

import (
	"errors"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"kzero/coord/wal"
)

// walFaults is the operating system's file system for the metadata log,
// with a write or fsync of the WAL that fails once armed.
type walFaults struct {
	mu       sync.Mutex
	writeErr error
	syncErr  error
}

func (fs *walFaults) arm(write, sync error) {
	fs.mu.Lock()
	fs.writeErr, fs.syncErr = write, sync
	fs.mu.Unlock()
}

func (fs *walFaults) OpenFile(name string, flag int, perm os.FileMode) (wal.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &walFaultFile{File: f, fs: fs}, nil
}

func (fs *walFaults) Rename(from, to string) error { return os.Rename(from, to) }

type walFaultFile struct {
	*os.File
	fs *walFaults
}

func (f *walFaultFile) fault(write bool) error {
	if !strings.HasSuffix(f.Name(), "raft.wal") {
		return nil
	}
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if write {
		return f.fs.writeErr
	}
	return f.fs.syncErr
}

func (f *walFaultFile) Write(p []byte) (int, error) {
	if err := f.fault(true); err != nil {
		return 0, &os.PathError{Op: "write", Path: f.Name(), Err: err}
	}
	return f.File.Write(p)
}

func (f *walFaultFile) Sync() error {
	if err := f.fault(false); err != nil {
		return &os.PathError{Op: "sync", Path: f.Name(), Err: err}
	}
	return f.File.Sync()
}

// A metadata log write or fsync that fails stops the controller cleanly
// (coord/doc.go): the proposal waiting on it fails, Err says why, every
// later call fails with ErrClosed, Close returns, and nothing panics. The
// folder reopens with what was committed before.
func TestWALFailureStopsController(t *testing.T) {
	for _, tc := range []struct {
		name        string
		write, sync error
	}{{"write", unix.EIO, nil}, {"write out of space", unix.ENOSPC, nil}, {"fsync", nil, unix.EIO}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := &walFaults{}
			cfg := testConfig(dir)
			cfg.WALFS = fs
			c := open(t, cfg)
			mustCreate(t, c, TopicSpec{Name: "before", NumPartitions: 1, ReplicationFactor: 1})

			fs.arm(tc.write, tc.sync)
			res := c.CreateTopics(ctx(t), []TopicSpec{{Name: "during", NumPartitions: 1, ReplicationFactor: 1}}, false)
			if res[0].Err == nil {
				t.Fatal("a topic was created with a failing metadata log")
			}
			err := c.Err()
			if want := cmpErr(tc.write, tc.sync); !errors.Is(err, want) {
				t.Fatalf("Err() = %v, want one wrapping %v", err, want)
			}
			fs.arm(nil, nil) // the disk works again: the controller stays stopped
			if _, _, err := c.AllocateProducerIDs(ctx(t), 1); !errors.Is(err, ErrClosed) || !errors.Is(err, cmpErr(tc.write, tc.sync)) {
				t.Fatalf("AllocateProducerIDs after the failure: %v, want ErrClosed and the cause", err)
			}
			res = c.CreateTopics(ctx(t), []TopicSpec{{Name: "after", NumPartitions: 1, ReplicationFactor: 1}}, false)
			if res[0].Err == nil {
				t.Fatal("a topic was created by a stopped controller")
			}
			if err := c.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}

			cfg.WALFS = nil
			cfg.Bootstrap = false
			r := open(t, cfg)
			if r.Image().Topic("before") == nil {
				t.Fatal("a topic committed before the failure is gone")
			}
			if r.Image().Topic("after") != nil {
				t.Fatal("a topic proposed after the failure exists")
			}
		})
	}
}

func cmpErr(write, sync error) error {
	if write != nil {
		return write
	}
	return sync
}
