package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kafkajsScript drives kafkajs against the broker at process.argv[2]:
// admin create topics and fetch topic metadata; an idempotent producer
// with gzip, keys and headers; a transactional producer that commits one
// batch and aborts another; a consumer group (read_committed) that reads
// everything committed, never the aborted records, and commits; the
// group's offsets past what it read; delete. It prints OK last.
const kafkajsScript = `
const { Kafka, CompressionTypes, logLevel } = require('kafkajs')
const kafka = new Kafka({ clientId: 'kzero-test', brokers: [process.argv[2]], logLevel: logLevel.ERROR,
  retry: { retries: 10 } })
const topic = 'kafkajs', groupId = 'kafkajs-group'
const assert = (ok, what) => { if (!ok) throw new Error('assertion failed: ' + what) }

async function main() {
  const admin = kafka.admin()
  await admin.connect()
  assert(await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true }), 'created')
  const md = await admin.fetchTopicMetadata({ topics: [topic] })
  assert(md.topics[0].partitions.length === 3, 'three partitions')

  const want = new Map()
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
  await producer.connect()
  const messages = []
  for (let i = 0; i < 100; i++) {
    const key = 'gzip-' + i
    want.set(key, 'value of ' + key)
    messages.push({ key, value: want.get(key), headers: { codec: 'gzip' } })
  }
  await producer.send({ topic, compression: CompressionTypes.GZIP, messages })
  await producer.disconnect()

  const txp = kafka.producer({ transactionalId: 'kafkajs-txn', idempotent: true, maxInFlightRequests: 1 })
  await txp.connect()
  let tx = await txp.transaction()
  await tx.send({ topic, messages: [{ key: 'committed', value: 'in a committed transaction' }] })
  await tx.commit()
  want.set('committed', 'in a committed transaction')
  tx = await txp.transaction()
  await tx.send({ topic, messages: [{ key: 'aborted', value: 'never read' }] })
  await tx.abort()
  await txp.disconnect()

  const consumer = kafka.consumer({ groupId, readUncommitted: false })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const got = new Map()
  const read = {} // by partition: the last offset read
  let failure = null
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('timed out with ' + got.size + ' of ' + want.size)), 60000)
    consumer.run({ eachMessage: async ({ partition, message }) => {
      const key = message.key.toString()
      if (key === 'aborted') failure = 'read an aborted record'
      if (got.has(key)) failure = 'read twice: ' + key
      got.set(key, message)
      read[partition] = Math.max(read[partition] ?? -1, Number(message.offset))
      if (got.size === want.size) { clearTimeout(timer); resolve() }
    } }).catch(reject)
  })
  await consumer.disconnect() // commits what was read
  assert(failure === null, failure)
  for (const [k, v] of want) {
    const m = got.get(k)
    assert(m && m.value.toString() === v, 'record ' + k)
    if (k.startsWith('gzip-')) assert(m.headers.codec.toString() === 'gzip', 'header of ' + k)
  }

  const ends = await admin.fetchTopicOffsets(topic)
  const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] })
  // Committed: past every record read, at most the end (kafkajs also
  // commits past control batches it fetched after them).
  for (const p of committed.partitions) {
    const end = Number(ends.find(e => e.partition === p.partition).offset)
    const offset = Number(p.offset)
    assert(offset >= (read[p.partition] ?? -1) + 1 && offset <= end,
      'partition ' + p.partition + ' committed ' + offset + ', last read ' + read[p.partition] + ', end ' + end)
  }
  await admin.deleteTopics({ topics: [topic] })
  await admin.disconnect()
  console.log('OK')
}
main().catch(e => { console.error(e); process.exit(1) })
`

// kafkajsVersion is the kafkajs release the test installs with npm.
const kafkajsVersion = "2.2.4"

// TestKafkajs runs kafkajsScript with kafkajs, a JavaScript client with
// its own protocol code and older API versions (Produce v7, Fetch v11),
// including its transactions. npm installs kafkajs once into the user's
// cache; without node and npm (or the npm registry) the test skips,
// saying so.
func TestKafkajs(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not installed")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm not installed")
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "kzero-test-kafkajs-"+kafkajsVersion)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "kafkajs", "package.json")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		install := exec.CommandContext(ctx, npm, "install", "--no-audit", "--no-fund", "--prefix", dir, "kafkajs@"+kafkajsVersion)
		if out, err := install.CombinedOutput(); err != nil {
			t.Skipf("npm could not install kafkajs (no registry?): %v\n%s", err, out)
		}
	}
	b := startTestBroker(t, t.TempDir(), "group.initial.rebalance.delay.ms", "0")
	defer stopBroker(t, b)
	script := filepath.Join(dir, "kzero-client.js")
	if err := os.WriteFile(script, []byte(kafkajsScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, node, script, b.Addr().String()).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "OK") {
		t.Fatalf("kafkajs: %v\n%s", err, out)
	}
}
