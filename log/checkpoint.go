package log

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"kzero/vfs"
)

// Checkpoint file names in a log dir, as Apache Kafka names them.
const (
	RecoveryPointCheckpoint  = "recovery-point-offset-checkpoint"
	LogStartOffsetCheckpoint = "log-start-offset-checkpoint"
	ReplicationCheckpoint    = "replication-offset-checkpoint"
	CleanerCheckpoint        = "cleaner-offset-checkpoint"
)

// An offset checkpoint file is text:
//
//	0                     version
//	2                     number of entries
//	orders 0 1234         topic, partition, offset
//	orders 1 998
//
// It is replaced atomically: written to a .tmp file, fsynced, renamed.

// ReadCheckpoint reads an offset checkpoint file in fs; a missing file is
// empty.
func ReadCheckpoint(fs FS, path string) (map[TopicPartition]int64, error) {
	data, err := vfs.ReadFile(fs, path)
	if os.IsNotExist(err) {
		return map[TopicPartition]int64{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read checkpoint: %w", err)
	}
	return ParseCheckpoint(data)
}

// ParseCheckpoint decodes the bytes of an offset checkpoint file.
func ParseCheckpoint(data []byte) (map[TopicPartition]int64, error) {
	bad := func(what string) error { return fmt.Errorf("malformed checkpoint: %s", what) }
	sc := bufio.NewScanner(bytes.NewReader(data))
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return sc.Text(), true
	}
	v, ok := line()
	if !ok || v != "0" {
		return nil, bad("version")
	}
	c, ok := line()
	n, err := strconv.Atoi(c)
	if !ok || err != nil || n < 0 {
		return nil, bad("entry count")
	}
	out := make(map[TopicPartition]int64, min(n, 1<<16))
	for i := 0; i < n; i++ {
		l, ok := line()
		if !ok {
			return nil, bad("missing entries")
		}
		f := strings.Fields(l)
		if len(f) != 3 {
			return nil, bad("entry " + strconv.Quote(l))
		}
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 {
			return nil, bad("entry " + strconv.Quote(l))
		}
		out[TopicPartition{f[0], int32(p)}] = o
	}
	if _, extra := line(); extra {
		return nil, bad("entries past the count")
	}
	return out, nil
}

// WriteCheckpoint replaces the checkpoint file at path in fs with offsets.
// When it fails, the old file stays as it was.
func WriteCheckpoint(fs FS, path string, offsets map[TopicPartition]int64) error {
	tps := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		tps = append(tps, tp)
	}
	slices.SortFunc(tps, func(a, b TopicPartition) int {
		if c := strings.Compare(a.Topic, b.Topic); c != 0 {
			return c
		}
		return int(a.Partition - b.Partition)
	})
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "0\n%d\n", len(tps))
	for _, tp := range tps {
		fmt.Fprintf(&buf, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	tmp := path + ".tmp"
	if err := vfs.WriteFile(fs, tmp, buf.Bytes(), true); err != nil {
		fs.Remove(tmp) // the old file stays; a full disk gets its space back
		return fmt.Errorf("write checkpoint: %w", err)
	}
	if err := fs.Rename(tmp, path); err != nil {
		fs.Remove(tmp)
		return fmt.Errorf("replace checkpoint: %w", err)
	}
	return vfs.Fsync(fs, filepath.Dir(path))
}
