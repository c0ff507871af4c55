package shards

// State is a shard's lifecycle: loading from its partition, serving,
// closed (this broker no longer coordinates the partition).
type State int8

const (
	Loading State = iota
	Active
	Closed
)

func (s State) String() string {
	switch s {
	case Loading:
		return "loading"
	case Active:
		return "active"
	case Closed:
		return "closed"
	}
	return "unknown"
}
