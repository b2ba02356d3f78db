# Flink SQL through the official Fluss connector (tests/flink).
#
#   make test-flink        every script in tests/flink/sql against a fresh flussd
#                          (FLUSS_SERVER=reference: against the reference server)
#   make test-flink-core   the core subset make test runs: log and PK tables, ALTER TABLE,
#                          against the ASan+UBSan flussd
#   make test-flink-cluster every script in tests/flink/sql against a fluss-c cluster of
#                          processes (scripts/cluster: ZooKeeper, a coordinator, three tablet
#                          servers, replication factor 3); make test runs the core subset
#                          against one (ASan+UBSan servers)
#   make test-flink-lake   tests/flink/lake against a flussd tiering into Iceberg: union
#                          read through the connector's fluss-lake-iceberg plugin (make
#                          test runs it against the ASan+UBSan flussd)
#
# Needs Java 17 and Maven (the first run downloads Flink 1.20.3 and
# fluss-flink-1.20 0.9.1 from Maven Central into ~/.m2).

FLINK_CORE_SCRIPTS ?= tests/flink/sql/02_log_table.sql tests/flink/sql/03_pk_table.sql \
                      tests/flink/sql/08_alter_table.sql

.PHONY: test-flink test-flink-core test-flink-cluster test-flink-cluster-core test-flink-lake

test-flink: build
	tests/flink/suite

test-flink-core: build-asan
	FLUSSD=$(BUILD_ASAN)/flussd tests/flink/suite $(FLINK_CORE_SCRIPTS)

test-flink-cluster: build
	FLUSS_SERVER=cluster tests/flink/suite

test-flink-cluster-core: build-asan
	FLUSS_SERVER=cluster FLUSSD=$(BUILD_ASAN)/flussd \
	    LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan_zookeeper.supp tests/flink/suite $(FLINK_CORE_SCRIPTS)

test-flink-lake: build-asan
	FLUSSD=$(BUILD_ASAN)/flussd tests/flink/lake-suite
