package coord

import (
	"errors"
	"testing"

	"golang.org/x/sys/unix"

	"kzero/vfs/errorfs"
)

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
			fs := &errorfs.FS{}
			cfg := testConfig(dir)
			cfg.WALFS = fs
			c := open(t, cfg)
			mustCreate(t, c, TopicSpec{Name: "before", NumPartitions: 1, ReplicationFactor: 1})

			fs.FailWrites("raft.wal", 0, tc.write)
			fs.FailSyncs("raft.wal", tc.sync)
			res := c.CreateTopics(ctx(t), []TopicSpec{{Name: "during", NumPartitions: 1, ReplicationFactor: 1}}, false)
			if res[0].Err == nil {
				t.Fatal("a topic was created with a failing metadata log")
			}
			err := c.Err()
			if want := cmpErr(tc.write, tc.sync); !errors.Is(err, want) {
				t.Fatalf("Err() = %v, want one wrapping %v", err, want)
			}
			fs.Disarm() // the disk works again: the controller stays stopped
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
