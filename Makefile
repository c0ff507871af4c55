# kzero — see README.md. `make run` starts a broker, `make test` runs every test.
GO      ?= go
PKGS    ?= ./...
FUZZTIME ?= 30s

.PHONY: build run test test-invariants test-ktls vet lint unit race bench fuzz clean bench-suite bench-report scale chaos kgo-suite sarama-suite

build:
	$(GO) build -o bin/ ./cmd/...

run: build
	./bin/kzero

# test: vet, gofmt, unit tests, the storage packages again with their invariant checks, then the
# race detector over every package.
test: lint
	$(GO) test -count=1 -timeout 20m $(PKGS)
	$(MAKE) test-invariants
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

# test-invariants runs the log package's tests built with the invariants tag: expensive checks of
# the segment list and the indexes after every change (log/invariants.go) that panic on a bug.
# About as long as the package's plain run (~20 s), so `make test` runs it once.
test-invariants:
	$(GO) test -count=1 -tags invariants -timeout 10m ./log/

# test-ktls runs net/server's TLS tests in a qemu VM whose Debian kernel has kernel TLS (CONFIG_TLS),
# which the host's kernel may lack: test/ktls/run.sh takes qemu, the kernel and busybox from
# Debian's packages and boots an initramfs with the static test binary (KVM when it boots, TCG
# otherwise). KTLS_BENCH=1 adds BenchmarkKTLSConsume (kTLS, user-space TLS, plaintext) there.
# Not part of `make test`.
test-ktls:
	test/ktls/run.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=3 ./log/ ./index/

# scale runs the 10,000-partition test outside `make test`: a broker under a descriptor limit of
# 20,000 with 2,000 client connections producing to and fetching from every partition, then a
# restart under the same limit (several minutes).
scale:
	KZERO_SCALE=1 $(GO) test -count=1 -timeout 30m -v -run '^TestScaleTenThousandPartitions$$' ./cmd/kzero/

# chaos runs the durability check outside `make test`: kzero processes with replication-factor-3
# topics, idempotent acks=all producers and tailing consumers, while a seeded loop kills -9,
# freezes (SIGSTOP) and restarts random nodes; then a checker reads every partition and reports
# what was acknowledged, lost, duplicated, reordered or vanished. CHAOS_DURATION bounds it,
# CHAOS_SEED replays a fault schedule; the other CHAOS_* variables are in cmd/kzero/chaos_test.go.
CHAOS_DURATION ?= 5m
CHAOS_SEED     ?=

chaos:
	KZERO_CHAOS=1 CHAOS_DURATION=$(CHAOS_DURATION) CHAOS_SEED=$(CHAOS_SEED) \
	  $(GO) test -count=1 -timeout 24h -v -run '^TestChaos$$' ./cmd/kzero/

# kgo-suite runs franz-go's own integration tests (pkg/kgo, at the version go.mod requires)
# against kzero: the three-node cluster of config/three-nodes with replication factor 3
# topics, or one node with KGO_NODES=1; KGO_RUN narrows them (test/kgo/run.sh). About 5
# minutes; not part of `make test`.
kgo-suite: build
	test/kgo/run.sh

# sarama-suite runs sarama's own functional tests (at the version go.mod requires) against
# five kzero nodes behind toxiproxy, shaped like sarama's docker-compose.yml; the tests that
# stop brokers stop kzero nodes; SARAMA_RUN narrows them (test/sarama/run.sh). About 6
# minutes; not part of `make test`.
sarama-suite: build
	test/sarama/run.sh

# bench-suite runs every shipped workload against kzero and kfake, both started on loopback,
# alternating A B A B, with kzero's CPU profiles, after measuring the machine's limits, into
# BENCH_OUT (not committed). bench-report renders PERFORMANCE.md and its plots (docs/perf/,
# committed) from BENCH_OUT.
BENCH_OUT       ?= bench/results/latest
BENCH_WORKLOADS ?= all
BENCH_REPS      ?= 2
BENCH_SCALE     ?= 0.2
# BENCH_WARM: GiB written and deleted before each run (bench run --warm), so that runs are
# measured in a warm page cache; 0 takes the machine as it is.
BENCH_WARM      ?= 0
KZCTL           ?= ./bin/kzctl

bench-suite: build
	$(KZCTL) bench limits --out $(BENCH_OUT)
	$(KZCTL) bench run $(BENCH_WORKLOADS) --compare kzero,kfake --kzero-bin bin/kzero --pprof \
	  --reps $(BENCH_REPS) --scale $(BENCH_SCALE) --warm $(BENCH_WARM) --out $(BENCH_OUT)

bench-report: build
	$(KZCTL) bench report $(BENCH_OUT) --out docs/perf --markdown PERFORMANCE.md

# fuzz runs every fuzz target for FUZZTIME each.
fuzz:
	@for pkg in $$($(GO) list $(PKGS)); do \
	  for f in $$($(GO) test -list 'Fuzz.*' $$pkg | grep '^Fuzz'); do \
	    echo "== $$pkg $$f"; $(GO) test -run='^$$' -fuzz="^$$f$$" -fuzztime=$(FUZZTIME) $$pkg || exit 1; \
	  done; \
	done

clean:
	rm -rf bin
