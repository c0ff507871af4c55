package group

// Topics is the cluster's topics as a consumer group coordinator needs them
// to resolve KIP-848 subscriptions (names and regular expressions) to topic
// ids and partition counts. A value is a snapshot (the broker's metadata
// image), given to the coordinator with SetTopics.
type Topics interface {
	// Version changes whenever topics are created, deleted or get
	// partitions (the metadata image offset).
	Version() int64
	ByName(name string) (TopicInfo, bool)
	ByID(id [16]byte) (TopicInfo, bool)
	// All lists every topic, internal ones included.
	All() []TopicInfo
}

// TopicInfo is one topic.
type TopicInfo struct {
	Name       string
	ID         [16]byte
	Partitions int32
	Internal   bool
}

// noTopics is the view of a coordinator configured without topics.
type noTopics struct{}

func (noTopics) Version() int64                  { return 0 }
func (noTopics) ByName(string) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) ByID([16]byte) (TopicInfo, bool) { return TopicInfo{}, false }
func (noTopics) All() []TopicInfo                { return nil }
