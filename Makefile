# fluss-c — top-level commands. `make run` and `make test` work on a fresh
# machine: they install what is missing first (scripts/install-deps).

BUILD      ?= build
BUILD_ASAN ?= build-asan
DATA_DIR   ?= ./data
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo

.PHONY: all build build-asan deps venv run test test-unit test-asan test-interop fuzz clean

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

run: deps build
	$(BUILD)/flussd --data-dir $(DATA_DIR)

# Unit tests and fuzz-corpus replays, in the release build and under
# AddressSanitizer + UBSan.
test-unit: build
	cd $(BUILD) && ctest --output-on-failure

test-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure

# The official clients against a real flussd (pyfluss; the Java client
# smoke test runs inside the suite).
INTEROP_FLUSSD ?= $(BUILD)/flussd
test-interop: build venv
	FLUSSD=$(INTEROP_FLUSSD) .venv/bin/python -m pytest tests/interop -q

test: deps build build-asan venv
	$(MAKE) --no-print-directory test-unit
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory test-interop INTEROP_FLUSSD=$(BUILD_ASAN)/flussd

# libFuzzer binaries (clang): make fuzz FUZZ_SECONDS=60
FUZZ_SECONDS ?= 30
fuzz:
	@cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DFLUSS_FUZZ=ON -DFLUSS_SANITIZE=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS)
	@for f in build-fuzz/fuzz_*[!y]; do \
	  [ -x "$$f" ] || continue; n=$$(basename $$f); \
	  echo "== $$n"; $$f -max_total_time=$(FUZZ_SECONDS) fuzz/corpus/$$n || exit 1; done

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-fuzz

include mk/reference.mk
