package topicconfig

import (
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Def describes one topic config as Apache Kafka 4.1 defines it.
type Def struct {
	Name    string
	Type    kmsg.ConfigType
	Default string // the value when neither topic nor broker sets it
	Valid   string // the valid values, in Kafka's documentation notation
	Doc     string
	// Synonyms are the broker configs that give this config its value when
	// the topic does not set it, highest priority first (log.retention.ms,
	// then log.retention.minutes, then log.retention.hours).
	Synonyms []Synonym

	check func(v string) error // value check after the type parsed
}

// Synonym is a broker config standing in for a topic config.
type Synonym struct {
	Name       string
	Type       kmsg.ConfigType
	Default    string // the broker config's own default; meaningful when HasDefault
	HasDefault bool
	// Scale converts the broker value to the topic config's unit: the topic
	// value is the broker value times Scale (3600000 for log.retention.hours
	// standing in for retention.ms). 1 when the units agree.
	Scale int64
}

const (
	maxLong    = "9223372036854775807" // Long.MAX_VALUE
	hourMs     = 3600 * 1000
	minuteMs   = 60 * 1000
	weekMs     = 7 * 24 * hourMs
	defaultMsg = "1048588" // 1 MiB + the 12-byte log overhead
)

func syn(name string, typ kmsg.ConfigType, def string) Synonym {
	return Synonym{Name: name, Type: typ, Default: def, HasDefault: true, Scale: 1}
}

func synNoDefault(name string, typ kmsg.ConfigType) Synonym {
	return Synonym{Name: name, Type: typ, Scale: 1}
}

func scaled(s Synonym, scale int64) Synonym {
	s.Scale = scale
	return s
}

var (
	tBool   = kmsg.ConfigTypeBoolean
	tString = kmsg.ConfigTypeString
	tInt    = kmsg.ConfigTypeInt
	tLong   = kmsg.ConfigTypeLong
	tDouble = kmsg.ConfigTypeDouble
	tList   = kmsg.ConfigTypeList
)

// defs is the registry, sorted by name. The docs are short summaries; the
// names, types, defaults, ranges and synonyms are Kafka 4.1's.
var defs = []*Def{
	{Name: "cleanup.policy", Type: tList, Default: "delete", Valid: "[compact, delete]",
		Doc:      "What to do with old segments: delete them (retention), compact them (keep the last value per key), or both.",
		Synonyms: []Synonym{syn("log.cleanup.policy", tList, "delete")}, check: listIn("compact", "delete")},
	{Name: "compression.gzip.level", Type: tInt, Default: "-1", Valid: "[1,...,9] or -1",
		Doc:      "The gzip level used when compression.type is gzip.",
		Synonyms: []Synonym{syn("compression.gzip.level", tInt, "-1")}, check: gzipLevel},
	{Name: "compression.lz4.level", Type: tInt, Default: "9", Valid: "[1,...,17]",
		Doc:      "The lz4 level used when compression.type is lz4.",
		Synonyms: []Synonym{syn("compression.lz4.level", tInt, "9")}, check: intBetween(1, 17)},
	{Name: "compression.type", Type: tString, Default: "producer", Valid: "[uncompressed, zstd, lz4, snappy, gzip, producer]",
		Doc:      "The codec of stored batches; producer keeps what the producer sent.",
		Synonyms: []Synonym{syn("compression.type", tString, "producer")}, check: stringIn("uncompressed", "zstd", "lz4", "snappy", "gzip", "producer")},
	{Name: "compression.zstd.level", Type: tInt, Default: "3", Valid: "[-131072,...,22]",
		Doc:      "The zstd level used when compression.type is zstd.",
		Synonyms: []Synonym{syn("compression.zstd.level", tInt, "3")}, check: intBetween(-131072, 22)},
	{Name: "delete.retention.ms", Type: tLong, Default: "86400000", Valid: "[0,...]",
		Doc:      "How long tombstones stay in a compacted topic after cleaning reaches them.",
		Synonyms: []Synonym{syn("log.cleaner.delete.retention.ms", tLong, "86400000")}, check: atLeast(0)},
	{Name: "file.delete.delay.ms", Type: tLong, Default: "60000", Valid: "[0,...]",
		Doc:      "How long a deleted segment's files wait before they are removed.",
		Synonyms: []Synonym{syn("log.segment.delete.delay.ms", tLong, "60000")}, check: atLeast(0)},
	{Name: "flush.messages", Type: tLong, Default: maxLong, Valid: "[1,...]",
		Doc:      "Fsync the log after this many records.",
		Synonyms: []Synonym{syn("log.flush.interval.messages", tLong, maxLong)}, check: atLeast(1)},
	{Name: "flush.ms", Type: tLong, Default: maxLong, Valid: "[0,...]",
		Doc: "Fsync the log when its oldest unflushed record is this old.",
		Synonyms: []Synonym{synNoDefault("log.flush.interval.ms", tLong),
			syn("log.flush.scheduler.interval.ms", tLong, maxLong)}, check: atLeast(0)},
	{Name: "follower.replication.throttled.replicas", Type: tList, Default: "", Valid: "[partitionId]:[brokerId],[partitionId]:[brokerId],... or *",
		Doc: "Replicas whose follower-side replication is throttled.", check: throttledReplicas},
	{Name: "index.interval.bytes", Type: tInt, Default: "4096", Valid: "[0,...]",
		Doc:      "Bytes of records between two offset index entries.",
		Synonyms: []Synonym{syn("log.index.interval.bytes", tInt, "4096")}, check: atLeast(0)},
	{Name: "leader.replication.throttled.replicas", Type: tList, Default: "", Valid: "[partitionId]:[brokerId],[partitionId]:[brokerId],... or *",
		Doc: "Replicas whose leader-side replication is throttled.", check: throttledReplicas},
	{Name: "local.retention.bytes", Type: tLong, Default: "-2", Valid: "[-2,...]",
		Doc:      "With tiered storage, the local size limit; -2 uses retention.bytes.",
		Synonyms: []Synonym{syn("log.local.retention.bytes", tLong, "-2")}, check: atLeast(-2)},
	{Name: "local.retention.ms", Type: tLong, Default: "-2", Valid: "[-2,...]",
		Doc:      "With tiered storage, the local time limit; -2 uses retention.ms.",
		Synonyms: []Synonym{syn("log.local.retention.ms", tLong, "-2")}, check: atLeast(-2)},
	{Name: "max.compaction.lag.ms", Type: tLong, Default: maxLong, Valid: "[1,...]",
		Doc:      "The longest a record may stay uncompacted.",
		Synonyms: []Synonym{syn("log.cleaner.max.compaction.lag.ms", tLong, maxLong)}, check: atLeast(1)},
	{Name: "max.message.bytes", Type: tInt, Default: defaultMsg, Valid: "[0,...]",
		Doc:      "The largest record batch the topic accepts, after compression.",
		Synonyms: []Synonym{syn("message.max.bytes", tInt, defaultMsg)}, check: atLeast(0)},
	{Name: "message.timestamp.after.max.ms", Type: tLong, Default: "3600000", Valid: "[0,...]",
		Doc:      "How far ahead of the broker's clock a CreateTime timestamp may be.",
		Synonyms: []Synonym{syn("log.message.timestamp.after.max.ms", tLong, "3600000")}, check: atLeast(0)},
	{Name: "message.timestamp.before.max.ms", Type: tLong, Default: maxLong, Valid: "[0,...]",
		Doc:      "How far behind the broker's clock a CreateTime timestamp may be.",
		Synonyms: []Synonym{syn("log.message.timestamp.before.max.ms", tLong, maxLong)}, check: atLeast(0)},
	{Name: "message.timestamp.type", Type: tString, Default: "CreateTime", Valid: "[CreateTime, LogAppendTime]",
		Doc:      "Whether record timestamps are the producer's (CreateTime) or the broker's (LogAppendTime).",
		Synonyms: []Synonym{syn("log.message.timestamp.type", tString, "CreateTime")}, check: stringIn("CreateTime", "LogAppendTime")},
	{Name: "min.cleanable.dirty.ratio", Type: tDouble, Default: "0.5", Valid: "[0,...,1]",
		Doc:      "The share of uncompacted log that makes the cleaner compact it.",
		Synonyms: []Synonym{syn("log.cleaner.min.cleanable.ratio", tDouble, "0.5")}, check: doubleBetween(0, 1)},
	{Name: "min.compaction.lag.ms", Type: tLong, Default: "0", Valid: "[0,...]",
		Doc:      "The shortest a record stays uncompacted.",
		Synonyms: []Synonym{syn("log.cleaner.min.compaction.lag.ms", tLong, "0")}, check: atLeast(0)},
	{Name: "min.insync.replicas", Type: tInt, Default: "1", Valid: "[1,...]",
		Doc:      "The in-sync replicas an acks=all produce needs.",
		Synonyms: []Synonym{syn("min.insync.replicas", tInt, "1")}, check: atLeast(1)},
	{Name: "preallocate", Type: tBool, Default: "false", Valid: "",
		Doc:      "Preallocate segment files on disk.",
		Synonyms: []Synonym{syn("log.preallocate", tBool, "false")}},
	{Name: "remote.log.copy.disable", Type: tBool, Default: "false", Valid: "",
		Doc: "With tiered storage, stop copying segments to remote storage."},
	{Name: "remote.log.delete.on.disable", Type: tBool, Default: "false", Valid: "",
		Doc: "With tiered storage, delete remote data when tiering is turned off."},
	{Name: "remote.storage.enable", Type: tBool, Default: "false", Valid: "",
		Doc: "Tier the topic's old segments to remote storage (not supported by kzero)."},
	{Name: "retention.bytes", Type: tLong, Default: "-1", Valid: "",
		Doc:      "The size a partition may reach before old segments are deleted; -1 for no limit.",
		Synonyms: []Synonym{syn("log.retention.bytes", tLong, "-1")}},
	{Name: "retention.ms", Type: tLong, Default: strconv.Itoa(weekMs), Valid: "[-1,...]",
		Doc: "How long segments are kept before deletion; -1 for no limit.",
		Synonyms: []Synonym{synNoDefault("log.retention.ms", tLong),
			scaled(synNoDefault("log.retention.minutes", tInt), minuteMs),
			scaled(syn("log.retention.hours", tInt, "168"), hourMs)}, check: atLeast(-1)},
	{Name: "segment.bytes", Type: tInt, Default: "1073741824", Valid: "[1048576,...]",
		Doc:      "The size at which a segment file is rolled.",
		Synonyms: []Synonym{syn("log.segment.bytes", tInt, "1073741824")}, check: atLeast(1 << 20)},
	{Name: "segment.index.bytes", Type: tInt, Default: "10485760", Valid: "[4,...]",
		Doc:      "The size of a segment's offset and time index files.",
		Synonyms: []Synonym{syn("log.index.size.max.bytes", tInt, "10485760")}, check: atLeast(4)},
	{Name: "segment.jitter.ms", Type: tLong, Default: "0", Valid: "[0,...]",
		Doc: "The most subtracted at random from segment.ms, to spread rolls.",
		Synonyms: []Synonym{synNoDefault("log.roll.jitter.ms", tLong),
			scaled(syn("log.roll.jitter.hours", tInt, "0"), hourMs)}, check: atLeast(0)},
	{Name: "segment.ms", Type: tLong, Default: strconv.Itoa(weekMs), Valid: "[1,...]",
		Doc: "The age at which a segment is rolled even if not full.",
		Synonyms: []Synonym{synNoDefault("log.roll.ms", tLong),
			scaled(syn("log.roll.hours", tInt, "168"), hourMs)}, check: atLeast(1)},
	{Name: "unclean.leader.election.enable", Type: tBool, Default: "false", Valid: "",
		Doc:      "Allow a replica outside the ISR to become leader, at the cost of lost records.",
		Synonyms: []Synonym{syn("unclean.leader.election.enable", tBool, "false")}},
}

var (
	byName    = map[string]*Def{}
	bySynonym = map[string]synonymOf{}
)

type synonymOf struct {
	def *Def
	syn Synonym
}

func init() {
	for _, d := range defs {
		byName[d.Name] = d
		for _, s := range d.Synonyms {
			bySynonym[s.Name] = synonymOf{d, s}
		}
	}
	slices.SortFunc(defs, func(a, b *Def) int { return strings.Compare(a.Name, b.Name) })
}

// Lookup returns the definition of a topic config.
func Lookup(name string) (*Def, bool) {
	d, ok := byName[name]
	return d, ok
}

// Defs returns every topic config, sorted by name. Read only.
func Defs() []*Def { return defs }

// BrokerSynonym returns the topic config that the broker config name stands
// in for (log.retention.hours -> retention.ms), and the synonym.
func BrokerSynonym(name string) (*Def, Synonym, bool) {
	s, ok := bySynonym[name]
	return s.def, s.syn, ok
}
