package log

import (
	"testing"
	"time"
)

// meta.properties round-trips, and bad files are refused without a panic.
func FuzzParseMetaProperties(f *testing.F) {
	f.Add(MetaProperties{ClusterID: "q1Sh-9_ISia_zwGINzRvyQ", NodeID: 1, DirectoryID: newDirectoryID()}.Encode(time.Unix(0, 0)))
	f.Add([]byte("version=0\ncluster.id=x\nnode.id=1\n"))
	f.Add([]byte("version=1\nnode.id=-1\ncluster.id=x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		mp, err := ParseMetaProperties(data)
		if err != nil {
			return
		}
		again, err := ParseMetaProperties(mp.Encode(time.Unix(0, 0)))
		if err != nil || again != mp {
			t.Fatalf("%+v does not round-trip: %+v %v", mp, again, err)
		}
	})
}
