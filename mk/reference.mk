# Reference-server targets; included by the top-level Makefile.
#
#   make reference-start   fetch (first time, from Maven Central) and start the
#                          reference Fluss 0.9.1 cluster: coordinator
#                          127.0.0.1:19123, tablet server 127.0.0.1:19124
#   make reference-stop    stop exactly the processes reference-start started
#   make test-reference    run tests/interop against the reference cluster
#                          (starts it, always stops it, exits with pytest's status)
#   make test-java-smoke-reference
#                          run the Java-client smoke test (tests/java) against it
#
# Requires Java 17 and Maven 3 (the download step), python3, and the `venv`
# target of the top-level Makefile (.venv with pyfluss + pytest).

REFERENCE_DIR       ?= tests/reference
REFERENCE_BOOTSTRAP ?= 127.0.0.1:19123
REFERENCE_PYTEST_ARGS ?=
REFERENCE_PYTHON    ?= .venv/bin/python

.PHONY: reference-start reference-stop test-reference test-java-smoke-reference

reference-start:
	$(REFERENCE_DIR)/start

reference-stop:
	$(REFERENCE_DIR)/stop

# KV snapshots every second, one retained: the Java snapshot-path test
# (test_java_kv.py) waits for new ones and checks retention against a lease.
test-reference: venv
	@trap '$(REFERENCE_DIR)/stop' EXIT; trap 'exit 130' INT TERM; \
	REF_EXTRA_CONFIG="$$(printf 'kv.snapshot.interval: 1s\nkv.snapshot.num-retained: 1')" \
	    $(REFERENCE_DIR)/start || exit 1; \
	FLUSS_SERVER=reference FLUSS_BOOTSTRAP=$(REFERENCE_BOOTSTRAP) \
	    $(REFERENCE_PYTHON) -m pytest tests/interop $(REFERENCE_PYTEST_ARGS)

test-java-smoke-reference:
	@trap '$(REFERENCE_DIR)/stop' EXIT; trap 'exit 130' INT TERM; \
	$(REFERENCE_DIR)/start || exit 1; \
	tests/java/run $(REFERENCE_BOOTSTRAP)
