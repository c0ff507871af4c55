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

// kafkaPythonScript drives kafka-python (Debian's python3-kafka) against
// the broker at sys.argv[1]: admin create and list topics, a producer per
// codec it supports without extra modules (none, gzip) with keys and
// headers at acks=all, a consumer group that reads everything and commits,
// the committed offsets against the partition ends, a second consumer of
// the group resuming after the commits, and a delete. It prints OK last.
const kafkaPythonScript = `
import sys
from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import NewTopic

boot = sys.argv[1]
topic, group = "kafka-python", "kafka-python-group"
admin = KafkaAdminClient(bootstrap_servers=boot, request_timeout_ms=30000)
admin.create_topics([NewTopic(name=topic, num_partitions=3, replication_factor=1)])
assert topic in admin.list_topics(), admin.list_topics()

want = {}
for codec in (None, "gzip"):
    p = KafkaProducer(bootstrap_servers=boot, acks="all", compression_type=codec, linger_ms=2)
    for i in range(100):
        k = "%s-%d" % (codec, i)
        want[k] = "value of " + k
        p.send(topic, key=k.encode(), value=want[k].encode(), headers=[("codec", str(codec).encode())])
    p.flush()
    p.close()

def consume(n):
    c = KafkaConsumer(topic, bootstrap_servers=boot, group_id=group, auto_offset_reset="earliest",
                      enable_auto_commit=False, consumer_timeout_ms=60000)
    got = {}
    for m in c:
        k = m.key.decode()
        assert k not in got, "read twice: " + k
        got[k] = m
        if len(got) == n:
            break
    c.commit()
    c.close()
    return got

got = consume(len(want))
for k, v in want.items():
    m = got[k]
    assert m.value.decode() == v, (k, m.value)
    assert m.headers and m.headers[0][0] == "codec", m.headers

c = KafkaConsumer(bootstrap_servers=boot, group_id=group)
parts = [TopicPartition(topic, p) for p in range(3)]
ends = c.end_offsets(parts)
assert sum(ends.values()) == len(want), ends
for tp in parts:
    assert c.committed(tp) == ends[tp], (tp, c.committed(tp), ends[tp])
c.close()

p = KafkaProducer(bootstrap_servers=boot, acks="all")
p.send(topic, key=b"after", value=b"the commits")
p.flush()
p.close()
later = consume(1)
assert later["after"].value == b"the commits", later

admin.delete_topics([topic])
admin.close()
print("OK")
`

// TestKafkaPython runs kafkaPythonScript with kafka-python 2.0.2 (Debian's
// python3-kafka, installed by .ci/run): an old client that negotiates its
// API versions from ApiVersions, in a third language.
func TestKafkaPython(t *testing.T) {
	python := ""
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import kafka").Run() == nil {
			python = p
			break
		}
	}
	if python == "" {
		t.Skip("kafka-python not installed (apt-get install python3-kafka; .ci/run installs it)")
	}
	b := startTestBroker(t, t.TempDir(), "group.initial.rebalance.delay.ms", "0")
	defer stopBroker(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := filepath.Join(t.TempDir(), "client.py")
	if err := os.WriteFile(script, []byte(kafkaPythonScript), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(ctx, python, script, b.Addr().String()).CombinedOutput()
	if err != nil || !strings.HasSuffix(strings.TrimSpace(string(out)), "OK") {
		t.Fatalf("kafka-python: %v\n%s", err, out)
	}
}
