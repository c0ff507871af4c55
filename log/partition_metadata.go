package log

import (
	"encoding/base64"
	"fmt"
	"os"
	"strings"

	"kzero/vfs"
)

// PartitionMetadataFile is the file, in each partition folder, that names
// the partition's topic id (KIP-516), as Kafka writes it:
//
//	version: 0
//	topic_id: AAAAAAAAAAAAAAAAAAAAAQ
//
// The id is a UUID in URL-safe base64 without padding.
const PartitionMetadataFile = "partition.metadata"

// ReadTopicID returns the topic id in the partition folder's
// partition.metadata; ok is false when there is none.
func ReadTopicID(dir string) (id [16]byte, ok bool, err error) {
	data, err := os.ReadFile(dir + string(os.PathSeparator) + PartitionMetadataFile)
	if os.IsNotExist(err) {
		return id, false, nil
	}
	if err != nil {
		return id, false, fmt.Errorf("read partition metadata: %w", err)
	}
	id, err = parsePartitionMetadata(data)
	return id, err == nil, err
}

func parsePartitionMetadata(data []byte) ([16]byte, error) {
	var id [16]byte
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" {
		return id, fmt.Errorf("partition metadata: unknown format")
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "topic_id: ")
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimSpace(v))
	if !ok || err != nil || len(b) != 16 {
		return id, fmt.Errorf("partition metadata: bad topic id %q", v)
	}
	copy(id[:], b)
	return id, nil
}

// SetTopicID writes partition.metadata with the partition's topic id
// unless it already says so.
func (l *Log) SetTopicID(id [16]byte) error {
	if cur, ok, err := ReadTopicID(l.dir); err == nil && ok && cur == id {
		return nil
	}
	// Not fsynced: creating a partition would pay two fsyncs for it. A
	// file lost or torn by a power cut reads as absent or unreadable, and
	// the next leadership writes it again; nothing is decided on it alone.
	data := fmt.Sprintf("version: 0\ntopic_id: %s\n", base64.RawURLEncoding.EncodeToString(id[:]))
	tmp := l.path(PartitionMetadataFile + ".tmp")
	fs := l.fs()
	if err := vfs.WriteFile(fs, tmp, []byte(data), false); err != nil {
		return err
	}
	if err := fs.Rename(tmp, l.path(PartitionMetadataFile)); err != nil {
		return fmt.Errorf("write partition metadata: %w", err)
	}
	return nil
}
