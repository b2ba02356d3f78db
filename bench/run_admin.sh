#!/usr/bin/env bash
# Metadata-path benchmark: flussd vs the reference Fluss server (0.9.1,
# tests/reference/start) in the same run, on this machine. Measures
#   - start-up: process start until the coordinator answers API_VERSIONS
#   - resident memory after start-up and after the run (sum over processes)
#   - GET_TABLE_INFO round trips through libfluss (bench_admin), one connection
# and rewrites the "admin" section of BENCHMARKS.md.
#   bench/run_admin.sh [N]      (default N=20000)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
make -s build >/dev/null
BIN=build/bench_admin
PY=python3

rss_kb() { local t=0; for p in "$@"; do t=$((t + $(awk '/VmRSS/ {print $2}' /proc/$p/status))); done; echo $t; }
wait_api() { # host port timeout_s -> ms until API_VERSIONS answered
  $PY - "$1" "$2" "$3" <<'PYEOF'
import socket, struct, sys, time
host, port, limit = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
t0 = time.monotonic()
body = b"\x0a\x05fluss\x12\x050.1.0"
while time.monotonic() - t0 < limit:
    try:
        with socket.create_connection((host, port), timeout=1) as s:
            s.sendall(struct.pack(">ihhi", 8 + len(body), 1000, 0, 0) + body)
            if len(s.recv(16)) >= 9:
                print(int((time.monotonic() - t0) * 1000)); sys.exit(0)
    except OSError:
        time.sleep(0.005)
sys.exit(1)
PYEOF
}

# --- fluss-c ---
DATA=$(mktemp -d)
t0=$(date +%s%N)
build/flussd --data-dir "$DATA" -D bind.listeners=FLUSS://127.0.0.1:29123 \
    -D tablet-server.bind.listeners=FLUSS://127.0.0.1:29124 2>/dev/null &
OURS=$!
trap 'kill $OURS 2>/dev/null || true; tests/reference/stop >/dev/null 2>&1 || true; rm -rf "$DATA"' EXIT
wait_api 127.0.0.1 29123 10 >/dev/null
ours_start_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
ours_rss0=$(rss_kb $OURS)
build/fluss --bootstrap-server 127.0.0.1:29123 table create fluss.bench \
    --schema "id INT NOT NULL, name STRING, ts TIMESTAMP(3)" --primary-key id --buckets 4 >/dev/null
ours_json=$($BIN 127.0.0.1:29123 fluss bench "$N")
ours_rss1=$(rss_kb $OURS)
kill $OURS; wait $OURS 2>/dev/null || true

# --- reference (coordinator + tablet server + ZooKeeper JVMs) ---
t0=$(date +%s%N)
tests/reference/start >/dev/null
ref_start_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
RUN=tests/reference/.run
ref_pids=$(cat $RUN/coordinator.pid $RUN/tablet.pid $RUN/zookeeper.pid)
ref_rss0=$(rss_kb $ref_pids)
build/fluss --bootstrap-server 127.0.0.1:19123 table create fluss.bench \
    --schema "id INT NOT NULL, name STRING, ts TIMESTAMP(3)" --primary-key id --buckets 4 >/dev/null
ref_json=$($BIN 127.0.0.1:19123 fluss bench "$N")
ref_rss1=$(rss_kb $ref_pids)
tests/reference/stop >/dev/null

field() { $PY -c "import json,sys; print(json.loads(sys.argv[1])['$2'])" "$1"; }
ratio() { $PY -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print(f'{a/b:.1f}x' if b else '-')" "$1" "$2"; }

section=$(cat <<EOT
## admin: start-up, memory, metadata round trips

Command: \`bench/run_admin.sh $N\` ($(date -u +%Y-%m-%d), $(nproc) cores; both servers on
loopback in the same run; reference = Apache Fluss 0.9.1-incubating coordinator +
tablet server + ZooKeeper, JVMs with -Xmx512m; client = libfluss \`bench/bench_admin.c\`,
one connection, one call in flight, GET_TABLE_INFO of a 4-bucket PK table, $N calls
after $((N / 10)) warm-up calls). Start-up is wall time from launching the process(es)
to the first API_VERSIONS answer, polled by a Python probe whose own interpreter
start (~50-80 ms) is included on both sides; flussd itself logs its start-up
(config, metadata load, listeners) at a few ms.

| metric | fluss-c | reference | fluss-c advantage |
|---|---|---|---|
| start-up until the coordinator answers (ms) | $ours_start_ms | $ref_start_ms (incl. ZooKeeper) | $(ratio $ref_start_ms $ours_start_ms) |
| resident memory after start-up (MiB) | $((ours_rss0 / 1024)) | $((ref_rss0 / 1024)) | $(ratio $ref_rss0 $ours_rss0) |
| resident memory after the run (MiB) | $((ours_rss1 / 1024)) | $((ref_rss1 / 1024)) | $(ratio $ref_rss1 $ours_rss1) |
| GET_TABLE_INFO calls/s | $(field "$ours_json" calls_per_s) | $(field "$ref_json" calls_per_s) | $(ratio $(field "$ours_json" calls_per_s) $(field "$ref_json" calls_per_s)) |
| latency p50 (µs) | $(field "$ours_json" p50_us) | $(field "$ref_json" p50_us) | $(ratio $(field "$ref_json" p50_us) $(field "$ours_json" p50_us)) |
| latency p99 (µs) | $(field "$ours_json" p99_us) | $(field "$ref_json" p99_us) | $(ratio $(field "$ref_json" p99_us) $(field "$ours_json" p99_us)) |
EOT
)
$PY - "$section" <<'PYEOF'
import sys
sys.path.insert(0, "bench")
from benchmarks_md import write_section
write_section("admin", sys.argv[1])
PYEOF
echo "$section"
