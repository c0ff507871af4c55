package log

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"kzero/vfs"
)

// MetaPropertiesFile names a log dir's identity, as Kafka (KRaft, version 1)
// writes it when the storage is formatted:
//
//	#
//	#Thu Dec 03 09:19:19 UTC 2026
//	cluster.id=Qm9va2tlZXBpbmcgaXMgZnVu
//	directory.id=8n0-MhRvRk2v2Y0a3H3lVA
//	node.id=1
//	version=1
//
// Every log dir of a node carries one, with the same cluster and node ids
// and a directory id of its own. A node refuses to start on dirs that
// disagree with each other, with its node.id, or with its metadata log.
const MetaPropertiesFile = "meta.properties"

// MetaProperties is one log dir's meta.properties.
type MetaProperties struct {
	ClusterID   string
	NodeID      int32
	DirectoryID [16]byte
}

// ReadMetaProperties reads dir's meta.properties; ok is false when the dir
// has none.
func ReadMetaProperties(dir string) (mp MetaProperties, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, MetaPropertiesFile))
	if errors.Is(err, os.ErrNotExist) {
		return mp, false, nil
	}
	if err != nil {
		return mp, false, err
	}
	mp, err = ParseMetaProperties(data)
	if err != nil {
		return mp, false, fmt.Errorf("%s: %w", filepath.Join(dir, MetaPropertiesFile), err)
	}
	return mp, true, nil
}

// ParseMetaProperties decodes a meta.properties file: Java properties
// lines (key=value, # comments), version 1 with cluster.id and node.id.
func ParseMetaProperties(data []byte) (MetaProperties, error) {
	var mp MetaProperties
	kv := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return mp, fmt.Errorf("line %q is not key=value", line)
		}
		kv[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if v := kv["version"]; v != "1" {
		return mp, fmt.Errorf("version %q: only version 1 (KRaft) is known", v)
	}
	mp.ClusterID = kv["cluster.id"]
	if mp.ClusterID == "" {
		return mp, errors.New("no cluster.id")
	}
	id, err := strconv.ParseInt(kv["node.id"], 10, 32)
	if err != nil || id < 0 {
		return mp, fmt.Errorf("node.id %q", kv["node.id"])
	}
	mp.NodeID = int32(id)
	if s, ok := kv["directory.id"]; ok {
		b, err := base64.RawURLEncoding.DecodeString(s)
		if err != nil || len(b) != 16 {
			return mp, fmt.Errorf("directory.id %q", s)
		}
		copy(mp.DirectoryID[:], b)
	}
	return mp, nil
}

// Encode returns the file's bytes, keys sorted as Kafka writes them.
func (mp MetaProperties) Encode(now time.Time) []byte {
	return fmt.Appendf(nil, "#\n#%s\ncluster.id=%s\ndirectory.id=%s\nnode.id=%d\nversion=1\n",
		now.UTC().Format("Mon Jan 02 15:04:05 MST 2006"), mp.ClusterID,
		base64.RawURLEncoding.EncodeToString(mp.DirectoryID[:]), mp.NodeID)
}

// writeMetaProperties makes dir's meta.properties durable: a .tmp file,
// fsynced, renamed, the dir fsynced.
func writeMetaProperties(fs FS, dir string, mp MetaProperties) error {
	tmp := filepath.Join(dir, MetaPropertiesFile+".tmp")
	if err := vfs.WriteFile(fs, tmp, mp.Encode(time.Now()), true); err != nil {
		return fmt.Errorf("write %s: %w", tmp, err)
	}
	if err := fs.Rename(tmp, filepath.Join(dir, MetaPropertiesFile)); err != nil {
		return fmt.Errorf("write meta.properties: %w", err)
	}
	return vfs.Fsync(fs, dir)
}

// newDirectoryID is a random directory id that is not one of Kafka's
// reserved ones (the first 100 UUIDs with zero high bits).
func newDirectoryID() [16]byte {
	for {
		var id [16]byte
		rand.Read(id[:])
		id[6] = id[6]&0x0f | 0x40 // version 4
		id[8] = id[8]&0x3f | 0x80 // IETF variant
		if id != ([16]byte{}) {
			return id
		}
	}
}

// checkIdentity checks the meta.properties the dirs hold against each
// other and against nodeID. It returns the cluster id they name ("" when
// no dir has one yet).
func checkIdentity(nodeID int32, dirs []string, props map[string]MetaProperties) (string, error) {
	var clusterID, first string
	seen := map[[16]byte]string{}
	for _, d := range dirs {
		mp, ok := props[d]
		if !ok {
			continue
		}
		if mp.NodeID != nodeID {
			return "", fmt.Errorf("log dir %s belongs to node %d (its meta.properties), but this node is node.id=%d; refusing to start", d, mp.NodeID, nodeID)
		}
		if clusterID == "" {
			clusterID, first = mp.ClusterID, d
		} else if mp.ClusterID != clusterID {
			return "", fmt.Errorf("log dir %s belongs to cluster %s but log dir %s to cluster %s (their meta.properties); refusing to start", d, mp.ClusterID, first, clusterID)
		}
		if mp.DirectoryID != ([16]byte{}) {
			if other, dup := seen[mp.DirectoryID]; dup {
				return "", fmt.Errorf("log dirs %s and %s have the same directory.id in their meta.properties; refusing to start", other, d)
			}
			seen[mp.DirectoryID] = d
		}
	}
	return clusterID, nil
}
