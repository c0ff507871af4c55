package group

import (
	"github.com/twmb/franz-go/pkg/kerr"

	"kzero/coord/shards"
)

// The coordinator's exported methods and results report errors as Go
// errors wrapping franz-go's kerr sentinels (nil when there is none); the
// API handlers turn them into codes at the edge. The state machines below
// them keep Kafka's int16 codes where they build response fields.

// codeErr is the error of a Kafka error code: nil (untyped) for 0, else
// its kerr sentinel. Every code it gets comes from a kerr sentinel.
func codeErr(code int16) error { return kerr.ErrorForCode(code) }

// storeErr is the error a failed write gives the members or offsets
// waiting on it (shards.GroupError, Kafka's table).
func storeErr(err error) error { return shards.GroupError(err) }
