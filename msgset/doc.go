// Package msgset converts between the message sets of Kafka's message
// formats v0 and v1 (magic 0 and 1, Kafka 0.8 to 0.10) and RecordBatch v2,
// for the clients Kafka 4 dropped (KIP-896): Produce v0-v2 carry message
// sets, which are up-converted into one v2 batch before the log sees them,
// and Fetch v0-v3 read message sets, into which the log's v2 batches are
// down-converted. kzero stores v2 only; this package is the one place that
// knows the older formats. It follows Kafka 3.9's LogValidator (old magic on
// the way in) and RecordsUtil.downConvert / LazyDownConversionRecords (on
// the way out).
//
// A message set is a sequence of entries, each a log entry header and one
// message; there is no batch header:
//
//	entry     offset int64  size int32  message (size bytes)
//
//	message v0 (magic 0, Kafka 0.8-0.9):
//	  crc        uint32   CRC-32 (IEEE) of everything after it
//	  magic      int8     0
//	  attributes int8     bits 0-2 codec: 0 none, 1 gzip, 2 snappy, 3 lz4
//	  key        int32 length (-1 null) + bytes
//	  value      int32 length (-1 null) + bytes
//
//	message v1 (magic 1, Kafka 0.10, KIP-32):
//	  crc        uint32
//	  magic      int8     1
//	  attributes int8     bits 0-2 codec, bit 3 timestamp type (1: LogAppendTime)
//	  timestamp  int64    ms since the epoch, -1 none
//	  key        int32 length (-1 null) + bytes
//	  value      int32 length (-1 null) + bytes
//
// Compression wraps: a compressed message set is one wrapper message whose
// codec bits are set, whose key is null and whose value is a whole inner
// message set, compressed. Inner messages have the wrapper's magic and no
// codec. The wrapper's offset is the last inner message's; with magic 1 the
// inner offsets are relative (0, 1, ...), with magic 0 absolute. A magic 1
// wrapper with LogAppendTime gives its timestamp to every inner message.
//
//	[offset=last][size][crc magic attrs=codec (ts) key=null value=
//	    compress([0][size][message] [1][size][message] ...)]
//
// The codecs frame their output as the Java client does (see record.Compress):
// snappy in xerial framing or raw, lz4 as an LZ4 frame. Magic 0's lz4 frame
// has a wrong header checksum (KAFKA-3160: Kafka hashed the frame's magic
// number too); it is ignored on the way in and written the same wrong way
// on the way out, as Kafka's KafkaLZ4BlockInputStream/OutputStream do. zstd
// exists only in v2.
//
// Control batches have no equivalent and are dropped on the way down;
// aborted transactional data is not (Fetch v0-v3 has no isolation level).
// Record headers are dropped too. A v2 batch becomes one message per record
// when uncompressed, and one wrapper with the batch's codec when compressed.
package msgset
