#!/usr/bin/env bash
# run.sh runs sarama's own functional tests (its functional_*_test.go, at the
# version go.mod requires) against a five-node kzero cluster shaped like
# sarama's docker-compose.yml (`make sarama-suite`): brokers 1-5 in racks 1-5
# with the rack-aware replica selector, replication factor 2 by default and
# for the internal topics, each broker reached through a toxiproxy proxy
# (localhost:29091-29095, the addresses they advertise) that the tests cut
# and slow. The tests that stop and start brokers with `docker compose` get
# test/sarama/docker, which stops (SIGTERM) and starts kzero nodes; the ones
# that run Kafka's Java tools in a container skip themselves. They found
# DescribeConfigs leaving out broker configs at their defaults.
#
#   SARAMA_RUN      -run pattern (default: every functional test)
#   SARAMA_TIMEOUT  go test -timeout (default: 25m)
#   SARAMA_WORK     scratch folder: the module copy, toxiproxy, data dirs,
#                   node logs (default: ${TMPDIR:-/tmp}/kzero-sarama)
#
# The exit status is the tests'. toxiproxy's server is built from the Go
# module proxy. Ports: 19091-19095 (inter-broker), 39091-39095 (clients,
# behind the proxies), 19113-19153 (controllers), 19241-19245 (admin), 8474
# (toxiproxy's API).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
work=${SARAMA_WORK:-${TMPDIR:-/tmp}/kzero-sarama}
toxiproxy=github.com/Shopify/toxiproxy/v2/cmd/server@v2.12.0
say() { echo "sarama-suite: $*" >&2; }

cd "$root"
mod=$(go list -m -f '{{.Path}}@{{.Version}}' github.com/IBM/sarama)
go mod download "$mod"
src=$(go list -m -f '{{.Dir}}' github.com/IBM/sarama)
rm -rf "$work"
mkdir -p "$work/bin"
cp -r "$src" "$work/sarama"
chmod -R u+w "$work/sarama"
GOBIN="$work/bin" go install "$toxiproxy"
cp test/sarama/docker "$work/bin/docker"
export SARAMA_WORK=$work KZERO_BIN=$root/bin/kzero
say "sarama $mod, five nodes behind toxiproxy, scratch in $work"

stop() {
	pkill -f "kzero --config $work/node" 2>/dev/null || true
	[ -z "${toxi:-}" ] || kill "$toxi" 2>/dev/null || true
	wait 2>/dev/null || true
}
trap stop EXIT

"$work/bin/server" -host 127.0.0.1 -port 8474 >"$work/toxiproxy.log" 2>&1 &
toxi=$!
for _ in $(seq 50); do curl -sf http://127.0.0.1:8474/version >/dev/null && break; sleep 0.1; done

starting=()
voters=1@127.0.0.1:19113,2@127.0.0.1:19123,3@127.0.0.1:19133,4@127.0.0.1:19143,5@127.0.0.1:19153
for i in 1 2 3 4 5; do
	# Kafka's shipped server.properties sets the two min ISRs to 1; sarama's
	# compose file overrides the rest.
	cat >"$work/node$i.properties" <<EOP
process.roles=broker,controller
node.id=$i
broker.rack=$i
listeners=LISTENER_INTERNAL://127.0.0.1:1909$i,LISTENER_LOCAL://127.0.0.1:3909$i,CONTROLLER://127.0.0.1:191${i}3
advertised.listeners=LISTENER_INTERNAL://127.0.0.1:1909$i,LISTENER_LOCAL://localhost:2909$i
listener.security.protocol.map=LISTENER_INTERNAL:PLAINTEXT,LISTENER_LOCAL:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=LISTENER_INTERNAL
controller.listener.names=CONTROLLER
controller.quorum.voters=$voters
default.replication.factor=2
offsets.topic.replication.factor=2
transaction.state.log.replication.factor=2
transaction.state.log.min.isr=1
share.coordinator.state.topic.min.isr=1
replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector
delete.topic.enable=true
auto.create.topics.enable=false
group.initial.rebalance.delay.ms=0
log.dirs=$work/data-$i
admin.listener=127.0.0.1:1924$i
EOP
	curl -sf -XPOST http://127.0.0.1:8474/proxies \
		-d "{\"name\":\"kafka$i\",\"listen\":\"127.0.0.1:2909$i\",\"upstream\":\"127.0.0.1:3909$i\",\"enabled\":true}" >/dev/null
	: >"$work/node$i.log"
	# In parallel: a node is ready once the quorum has a leader.
	PATH="$work/bin:$PATH" docker compose start "kafka-$i" &
	starting+=($!)
done
wait "${starting[@]}"

# Wait until a broker answers with every node registered.
seeds=127.0.0.1:29091,127.0.0.1:29092,127.0.0.1:29093,127.0.0.1:29094,127.0.0.1:29095
for _ in $(seq 120); do
	if [ "$(./bin/kzctl --brokers "$seeds" cluster info 2>/dev/null | grep -c '^[0-9]')" = 5 ]; then
		break
	fi
	sleep 0.5
done

cd "$work/sarama"
status=0
PATH="$work/bin:$PATH" TOXIPROXY_ADDR=http://127.0.0.1:8474 KAFKA_VERSION=${SARAMA_KAFKA_VERSION:-4.3.1} \
	go test -tags functional -count=1 -v -timeout "${SARAMA_TIMEOUT:-25m}" ${SARAMA_RUN:+-run "$SARAMA_RUN"} . \
	>"$work/sarama.log" 2>&1 || status=$?
grep -E '^(--- FAIL|FAIL|ok|panic)|^\s+Error( Trace)?:' "$work/sarama.log" | head -50 >&2 || true
echo "sarama-suite: $(grep -c '^--- PASS' "$work/sarama.log") passed, $(grep -c '^--- FAIL' "$work/sarama.log") failed, $(grep -c '^--- SKIP' "$work/sarama.log") skipped" >&2
say "exit status $status; the whole output is $work/sarama.log, the brokers' logs $work/node*.log"
exit "$status"
