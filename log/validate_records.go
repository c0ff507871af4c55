package log

import (
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
)

var readerPool = sync.Pool{New: func() any { return new(RecordReader) }}

// checkKeys rejects a batch for a compacted log that holds a record without
// a key, as Kafka does: compaction could never remove it.
func checkKeys(b Batch) error {
	r := readerPool.Get().(*RecordReader)
	defer func() {
		r.Release()
		readerPool.Put(r)
	}()
	if err := r.Reset(b, decompressLimit); err != nil {
		return err
	}
	for r.Next() {
		if r.Record().Key == nil {
			return fmt.Errorf("compacted topic cannot accept a record without a key: %w", kerr.InvalidRecord)
		}
	}
	return r.Err()
}

// decompressLimit bounds what one batch may inflate to.
const decompressLimit = 256 << 20
