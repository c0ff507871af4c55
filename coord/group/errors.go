package group

import "kzero/coord/shards"

// The coordinator's exported methods and results report errors as Go
// errors wrapping franz-go's kerr sentinels (an untyped nil when there is
// none: no variable of type *kerr.Error is ever returned as an error); the
// API handlers turn them into codes at the edge.

// storeErr is the error a failed write gives the members or offsets
// waiting on it (shards.GroupError, Kafka's table), with the write's
// error's text.
func storeErr(err error) error { return shards.GroupError(err) }
