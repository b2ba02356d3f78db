# fluss-c — top-level commands. `make run` and `make test` work on a fresh
# machine: they install what is missing first (scripts/install-deps).

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_TSAN ?= build-tsan
DATA_DIR   ?= ./data
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all build build-asan build-tsan deps venv run test test-unit test-asan test-tsan \
        test-interop test-interop-loops test-lake test-flink-lake fuzz fuzz-build fuzz-campaign clean test-crash test-crash-mutants \
        cluster cluster-stop test-cluster test-cluster-faults test-cluster-mutants

all: build

deps:
	@scripts/install-deps

venv:
	@scripts/install-deps --python

# Configure every time (cheap): source lists are globbed (tests, fuzz targets).
build:
	@cmake -S . -B $(BUILD) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

build-asan:
	@cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DFLUSS_SANITIZE=ON >/dev/null
	@cmake --build $(BUILD_ASAN) -j $(JOBS)

build-tsan:
	@cmake -S . -B $(BUILD_TSAN) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLUSS_TSAN=ON >/dev/null
	@cmake --build $(BUILD_TSAN) -j $(JOBS)

run: deps build
	$(BUILD)/flussd --data-dir $(DATA_DIR)

# A cluster on this machine, each server its own process (scripts/cluster):
# ZooKeeper, a coordinator on 127.0.0.1:9123, three tablet servers on
# 9124-9126 (internal listeners 9200-9203); PIDs and logs in cluster/.
# CLUSTER_RF sets default.replication.factor (3).
cluster: deps build
	scripts/cluster start cluster

cluster-stop:
	scripts/cluster stop cluster

# The interop suite against a cluster of processes (FLUSS_SERVER=cluster:
# tests that control a single process, or address one tablet server raw,
# are skipped). CLUSTER_FLUSSD: the binary of every server.
# Then tests/cluster: processes killed, stopped and started one at a time
# (a tablet server's restart, coordinator failover to a standby).
CLUSTER_FLUSSD ?= $(BUILD)/flussd
test-cluster: build venv
	FLUSS_SERVER=cluster FLUSSD=$(CLUSTER_FLUSSD) \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan_zookeeper.supp \
	    .venv/bin/python -m pytest tests/interop -q --ignore=$(FAULT_TESTS)
	FLUSSD=$(CLUSTER_FLUSSD) LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan_zookeeper.supp \
	    .venv/bin/python -m pytest tests/cluster -q

# The cluster fault suites at their gate size (make test runs their CI
# tier inside tests/cluster): D1 with D1_KILLS leader kills, D3, D8 with
# D8_ROUNDS rolling restarts of every tablet server, F5 with F5_KILLS
# primary-key leader kills, D7 with D7_KILLS coordinator kills 30 s apart
# and ZooKeeper paused D7_ZK_PAUSE seconds; figures appended to
# tests/fault/RESULTS.jsonl.
D1_KILLS ?= 50
D8_ROUNDS ?= 10
F5_KILLS ?= 20
D7_KILLS ?= 10
D7_ZK_PAUSE ?= 10
test-cluster-faults: build venv
	FLUSSD=$(CLUSTER_FLUSSD) FLUSS_D1_KILLS=$(D1_KILLS) FLUSS_D8_ROUNDS=$(D8_ROUNDS) \
	    FLUSS_F5_KILLS=$(F5_KILLS) FLUSS_D7_KILLS=$(D7_KILLS) FLUSS_D7_INTERVAL=30 \
	    FLUSS_D7_ZK_PAUSE=$(D7_ZK_PAUSE) \
	    FLUSS_FAULT_LEDGER=$(CURDIR)/tests/fault/RESULTS.jsonl \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan_zookeeper.supp \
	    .venv/bin/python -m pytest tests/cluster/test_fault_*.py -q -s

# Each cluster mutant (one replication rule removed: FL_MUTATION_<name>)
# built on its own and run MUTANT_RUNS times against the fault test that
# guards the rule (<name>:<test>): it must be caught in all runs but at
# most one. A line per mutant goes to tests/fault/RESULTS.jsonl.
# ACK_BEFORE_REPLICATE goes to D3: D1's kill finds an acknowledged batch
# not yet on a follower only by chance (3 of 10 runs at 3 kills; the
# window is one follower fetch), D3's frozen followers every time.
# TRUNCATE_TO_HW (a new follower cut at its own high watermark, the rule
# before KIP-101) goes to D9, whose first script makes its loss happen.
CLUSTER_MUTANTS ?= ACK_BEFORE_REPLICATE:test_fault_d3.py ACKS_BELOW_MIN_ISR:test_fault_d3.py \
                   TRUNCATE_TO_HW:test_fault_d9.py
MUTANT_RUNS ?= 10
test-cluster-mutants: venv
	@for mt in $(CLUSTER_MUTANTS); do \
	  m=$${mt%%:*}; t=$${mt#*:}; d=build-mut-$$m; \
	  cmake -S . -B $$d -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS=-DFL_MUTATION_$$m >/dev/null && \
	  cmake --build $$d -j $(JOBS) --target flussd >/dev/null || exit 1; \
	  caught=0; \
	  for r in $$(seq $(MUTANT_RUNS)); do \
	    if FLUSSD=$$d/flussd FLUSS_D1_KILLS=3 .venv/bin/python -m pytest \
	         tests/cluster/$$t -q -x >$$d/run-$$r.log 2>&1; then \
	      echo "$$m run $$r: NOT caught"; else caught=$$((caught + 1)); echo "$$m run $$r: caught"; fi; \
	  done; \
	  line="{\"date\": \"$$(date -u +%Y-%m-%dT%H:%M:%SZ)\", \"suite\": \"mutant\", \"mutant\": \"$$m\", \"test\": \"$$t\", \"runs\": $(MUTANT_RUNS), \"caught\": $$caught}"; \
	  echo "$$line"; echo "$$line" >> tests/fault/RESULTS.jsonl; \
	  [ $$caught -ge $$(($(MUTANT_RUNS) - 1)) ] || exit 1; \
	done

# Unit tests and fuzz-corpus replays, in the release build and under
# AddressSanitizer + UBSan.
test-unit: build venv
	cd $(BUILD) && ctest --output-on-failure

test-asan: build-asan venv
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure

# Our Parquet writer and reader (src/lake) against pyarrow, and our Avro
# object container writer and reader against fastavro, both ways; the
# tiering writer's data files (src/tier) read by pyarrow
# (tests/lake: a few seconds; the helpers lake_*_sample are built with
# everything else).
test-lake: build venv
	LAKE_SAMPLE=$(BUILD)/lake_parquet_sample LAKE_AVRO_SAMPLE=$(BUILD)/lake_avro_sample \
	    LAKE_ICEBERG_MANIFEST_SAMPLE=$(BUILD)/lake_iceberg_manifest_sample \
	    LAKE_TIER_SAMPLE=$(BUILD)/lake_tier_sample \
	    LAKE_ICEBERG_TABLE_SAMPLE=$(BUILD)/lake_iceberg_table_sample \
	    .venv/bin/python -m pytest tests/lake -q

# Code shared between threads under ThreadSanitizer: the core's stress
# test, then flussd itself (2 network loops, 2 workers) under the
# streaming, bucket, idempotence, partition, PK, snapshot, auto-partition,
# core, producer offsets, ALTER, tiered, filter pushdown (statistics
# sidecars, connection flags), log-gap (writer expiry) and storage-fault
# (fail-stop under injected I/O errors, disk full) interop tests; the
# fault-injecting seam and the replica's offline latch by their unit tests.
TSAN_INTEROP = tests/interop/test_core.py tests/interop/test_replication.py tests/interop/test_log_streaming.py \
               tests/interop/test_log_buckets.py tests/interop/test_log_idempotence.py \
               tests/interop/test_partition_data.py tests/interop/test_powerloss.py \
               tests/interop/test_pk_tables.py tests/interop/test_kv_snapshots.py \
               tests/interop/test_table_stats_raw.py \
               tests/interop/test_producer_offsets_raw.py tests/interop/test_java_producer_offsets.py \
               tests/interop/test_auto_partition.py tests/interop/test_alter_table.py \
               tests/interop/test_tiered_log.py tests/interop/test_filter_pushdown.py \
               tests/interop/test_log_gaps.py tests/interop/test_storage_faults.py \
               tests/interop/test_lake_tables.py tests/interop/test_lake_tiering.py \
               tests/interop/test_lake_cli.py tests/interop/test_lake_expire.py \
               tests/interop/test_lake_pk.py tests/interop/test_lake_external.py \
               tests/interop/test_security_sasl.py
test-tsan: build-tsan venv
	cd $(BUILD_TSAN) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$(CURDIR)/tests/tsan.supp" \
	    ctest --output-on-failure -R 'rpc_client|rpc_gate|rpc_tls|server_authz|server_scram|replica_concurrency|replica_offline|replica_kv|common_vfs_fault|common_workq|kv_tablet|kv_lease|kv_row_count|producer_offsets|server_auto_partition|server_push|metadata_cache'
	TSAN_OPTIONS="suppressions=$(CURDIR)/tests/tsan.supp" FLUSSD=$(BUILD_TSAN)/flussd \
	    FLUSSD_ARGS="-D netty.server.num-network-threads=2 -D netty.server.num-worker-threads=2" \
	    .venv/bin/python -m pytest $(TSAN_INTEROP) -q

# The official clients against a real flussd (pyfluss; the Java client
# smoke test runs inside the suite). INTEROP_ARGS go to the session server.
# The storage-fault tests start flussd processes of their own (fault hook,
# small file systems) and run once, in test-faults-ci, not with every loop
# count.
INTEROP_FLUSSD ?= $(BUILD)/flussd
INTEROP_ARGS ?=
INTEROP_MARK ?=
FAULT_TESTS = tests/interop/test_storage_faults.py
test-interop: build venv
	FLUSSD=$(INTEROP_FLUSSD) FLUSSD_ARGS="$(INTEROP_ARGS)" .venv/bin/python -m pytest tests/interop -q \
	    --ignore=$(FAULT_TESTS) $(if $(INTEROP_MARK),-m "$(INTEROP_MARK)")

# Storage faults (reliability.md F3 disk full, F4 I/O errors; DESIGN.md
# "Fault tests"): each prints one JSON line of figures. CI size against the
# ASan+UBSan flussd in `make test`; `make test-faults` is the gate size and
# appends its lines (with commit and date) to tests/fault/RESULTS.jsonl.
# PYTHON: another interpreter with tests/interop/requirements.txt.
PYTHON ?= .venv/bin/python
FAULTS_FLUSSD ?= $(BUILD_ASAN)/flussd
FAULT_RUNS ?= 15
FAULT_SECONDS ?= 10
FAULT_PY_DEPS = $(if $(filter .venv/bin/python,$(PYTHON)),venv)
.PHONY: test-faults-ci test-faults
test-faults-ci: build build-asan $(FAULT_PY_DEPS)
	FLUSSD=$(FAULTS_FLUSSD) $(PYTHON) -m pytest $(FAULT_TESTS) -q -s
test-faults: build build-asan $(FAULT_PY_DEPS)
	FLUSSD=$(FAULTS_FLUSSD) FLUSS_FAULT_RUNS=$(FAULT_RUNS) FLUSS_FAULT_SECONDS=$(FAULT_SECONDS) \
	    FLUSS_FAULT_LEDGER=$(CURDIR)/tests/fault/RESULTS.jsonl \
	    $(PYTHON) -m pytest $(FAULT_TESTS) -q -s

# The lake's crash gate (issue 21): 200 random SIGKILLs under continuous
# produce into a log and a PK lake table (make test runs 4 inside the
# interop suite). FLUSS_LAKE_KILL_SEED picks another sequence.
LAKE_KILLS ?= 200
.PHONY: test-lake-kills
test-lake-kills: build venv
	FLUSSD=$(BUILD)/flussd FLUSS_LAKE_KILLS=$(LAKE_KILLS) .venv/bin/python -m pytest \
	    tests/interop/test_lake_kills.py -q -s

# The whole suite with 1 and 2 network loops on the release build (make
# test runs 4 under ASan before these; the TSan tier runs 2 again), but
# the tests marked restarts (kill -9 and restart cycles, which the ASan
# pass runs): the loop count does not change what they prove.
test-interop-loops: build venv
	$(MAKE) --no-print-directory test-interop INTEROP_MARK="not restarts" \
	    INTEROP_ARGS="-D netty.server.num-network-threads=1"
	$(MAKE) --no-print-directory test-interop INTEROP_MARK="not restarts" \
	    INTEROP_ARGS="-D netty.server.num-network-threads=2"

test: deps build build-asan build-tsan venv
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory test-lake
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory test-interop INTEROP_FLUSSD=$(BUILD_ASAN)/flussd \
	    INTEROP_ARGS="-D netty.server.num-network-threads=4 -D netty.server.num-worker-threads=3"
	$(MAKE) --no-print-directory test-faults-ci
	$(MAKE) --no-print-directory test-cluster CLUSTER_FLUSSD=$(BUILD_ASAN)/flussd
	$(MAKE) --no-print-directory test-interop-loops
	$(MAKE) --no-print-directory test-flink-core
	$(MAKE) --no-print-directory test-flink-lake
	$(MAKE) --no-print-directory test-flink-cluster-core
	$(MAKE) --no-print-directory test-tsan

# libFuzzer binaries (clang, or FUZZ_CC=clang-14; installed when missing):
# make fuzz FUZZ_SECONDS=60 runs each target over its committed corpus.
FUZZ_SECONDS ?= 30
FUZZ_CC ?= $(shell command -v clang || command -v clang-14 || echo clang)
FUZZ_TARGETS = $(basename $(notdir $(wildcard fuzz/fuzz_*.c)))
fuzz-build:
	@FUZZ_CC=$(FUZZ_CC) scripts/install-deps --fuzz
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=$(FUZZ_CC) -DFLUSS_FUZZ=ON -DFLUSS_SANITIZE=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target $(FUZZ_TARGETS) >/dev/null

fuzz: fuzz-build
	@for n in $(FUZZ_TARGETS); do \
	  echo "== $$n"; build-fuzz/$$n -max_total_time=$(FUZZ_SECONDS) fuzz/corpus/$$n || exit 1; done

# A campaign (scripts/fuzz-campaign): the targets with the least CPU time
# in fuzz/LEDGER.tsv first, FUZZ_CAMPAIGN_SECONDS each (one process at a
# time), within FUZZ_CAMPAIGN_MINUTES of wall time in all (0: no limit);
# new coverage is merged into fuzz/corpus, crashes saved to fuzz/regressions.
FUZZ_CAMPAIGN_SECONDS ?=
FUZZ_CAMPAIGN_MINUTES ?= 30
fuzz-campaign: fuzz-build
	scripts/fuzz-campaign --build build-fuzz --minutes $(FUZZ_CAMPAIGN_MINUTES) \
	    $(if $(FUZZ_CAMPAIGN_SECONDS),--seconds $(FUZZ_CAMPAIGN_SECONDS))

# Storage faults, gate tier. Crash-state enumeration (F1): >= 10,000 crash
# states per run, both directory models; corruption at rest (F2): 3,000
# damaged data directories; figures appended to the results ledger; then
# the mutants, each of which the enumeration must catch.
CRASH_SEED ?= 1
RESULTS_LEDGER ?= tests/fault/RESULTS.jsonl
test-crash: build
	@c=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown); \
	for m in "" --unordered; do \
	  $(BUILD)/crash_enum --size gate --seed $(CRASH_SEED) $$m > $(BUILD)/crash.json; rc=$$?; \
	  cat $(BUILD)/crash.json; \
	  sed "s/^{/{\"commit\":\"$$c\",\"date\":\"$$(date -u +%FT%TZ)\",/" $(BUILD)/crash.json >> $(RESULTS_LEDGER); \
	  [ $$rc -eq 0 ] || exit 1; done
	@c=$$(git rev-parse --short HEAD 2>/dev/null || echo unknown); \
	  $(BUILD)/corrupt_enum --cases 3000 --seed $(CRASH_SEED) > $(BUILD)/corrupt.json; rc=$$?; \
	  cat $(BUILD)/corrupt.json; \
	  sed "s/^{/{\"commit\":\"$$c\",\"date\":\"$$(date -u +%FT%TZ)\",/" $(BUILD)/corrupt.json >> $(RESULTS_LEDGER); \
	  [ $$rc -eq 0 ]
	@$(MAKE) --no-print-directory test-crash-mutants

# Each mutant build (one safety rule removed) must make the enumeration fail.
test-crash-mutants: build
	@for t in "crash_enum --mutation nodirsync" crash_enum_mut_trust_tail crash_enum_mut_ack_before_fsync; do \
	  if $(BUILD)/$$t > $(BUILD)/mutant.json 2>/dev/null; then \
	    echo "mutant $$t was NOT caught"; cat $(BUILD)/mutant.json; exit 1; fi; \
	  echo "caught: $$(cat $(BUILD)/mutant.json)"; done

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_TSAN) build-fuzz build-mut-*

include mk/reference.mk
include mk/flink.mk
