package log

import (
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
	var bad *RecordErrors // allocated only for a rejected batch
	for i := int32(0); r.Next(); i++ {
		if r.Record().Key == nil {
			if bad == nil {
				bad = &RecordErrors{Err: kerr.InvalidRecord}
			}
			bad.Records = append(bad.Records, RecordError{Index: i, Message: "compacted topic cannot accept a record without a key"})
		}
	}
	if err := r.Err(); err != nil {
		return err
	}
	if bad != nil {
		return bad
	}
	return nil
}

// decompressLimit bounds what one batch may inflate to.
const decompressLimit = 256 << 20
