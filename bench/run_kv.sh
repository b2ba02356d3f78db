#!/usr/bin/env bash
# Primary-key (KV) benchmark: upsert throughput and lookup latency /
# throughput of flussd, side by side in the same run with
#   (a) RocksDB itself (Debian's db_bench: filluniquerandom in batches of
#       1000 / readrandom / multireadrandom, same key count, value size,
#       block cache and table options as flussd's stores, WAL off as
#       flussd runs it): the storage engine's limit without a network or
#       a changelog;
#   (b) Redis (redis-server, no persistence, + redis-benchmark SET / GET,
#       same value size and key space): an in-memory KV server on the
#       same loopback;
#   (c) the reference Fluss server (0.9.1, tests/reference/start with
#       REF_JVM_PROFILE=dist) when it starts, driven by the same fluss-perf
#       (libfluss speaks the wire protocol to either server).
# flussd and the reference run the same workloads, one server at a time, on a
# PK table "id BIGINT NOT NULL, v BYTES" (1 bucket): upsert of KEYS keys
# (1 writer, 1 MiB batches, linger 100 ms, acks=all, idempotent), then
# lookups of random keys: 1 thread one key per call (latency), 1 thread
# 128 keys per call (batched), 4 threads one key per call (throughput);
# last, the upserts again into a table whose changelog is not compressed.
# Also the raw loopback round trip (bench_rtt), the floor under a lookup.
# Server CPU = utime + stime from /proc/<pid>/stat over each run
# (reference: tablet server + coordinator JVMs; Redis: redis-server).
# Writes the "kv" section of BENCHMARKS.md.
#
#   bench/run_kv.sh [KEYS]
#     KEYS = keys upserted (default 200000); lookups: LOOKUPS (default
#     KEYS / 2) per lookup run. VALUE = value bytes (default 1024).
#   CACHE = the block cache every store gets (default 64mb, flussd's
#     kv.rocksdb.shared-block-cache.size default; the reference's
#     kv.rocksdb.block.cache-size, one bucket; db_bench --cache_size).
#   Environment: NO_REF=1 skips the reference; NO_WRITE=1 prints the
#   section without touching BENCHMARKS.md. Ports 391xx/392xx (flussd,
#   reference, ZooKeeper, Redis) keep clear of run_core.sh's.
#
# Everything lives under bench/.run-kv and is removed at the end; every
# process started here is stopped by its PID.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${1:-200000}
[[ $KEYS =~ ^[0-9]+$ && $KEYS -ge 1000 ]] || { echo "usage: bench/run_kv.sh [KEYS >= 1000]" >&2; exit 2; }
VALUE=${VALUE:-1024}
CACHE=${CACHE:-64mb}
[[ $CACHE =~ ^([0-9]+)mb$ ]] || { echo "CACHE: <N>mb" >&2; exit 2; }
CACHE_BYTES=$((BASH_REMATCH[1] << 20))
LOOKUPS=${LOOKUPS:-$((KEYS / 2))}
NO_REF=${NO_REF:-}

cmake --build build -j2 >/dev/null
PERF=build/fluss-perf
RUN=bench/.run-kv
rm -rf "$RUN"
mkdir -p "$RUN"
RES=$RUN/results.txt
: >"$RES"
OURS_B=127.0.0.1:39123
REF_PORTS=(REF_COORD_PORT=39133 REF_TABLET_PORT=39134 REF_COORD_INTERNAL_PORT=39233
  REF_TABLET_INTERNAL_PORT=39234 REF_ZK_PORT=39181 REF_RUN_DIR=$PWD/$RUN/reference)
REF_B=127.0.0.1:39133
REDIS_PORT=39379
HZ=$(getconf CLK_TCK)
OURS=""
REDIS=""
REF_UP=""

log() { echo "[run_kv] $*" >&2; }

cleanup() {
  [[ -n $OURS ]] && kill "$OURS" 2>/dev/null || true
  [[ -n $REDIS ]] && kill "$REDIS" 2>/dev/null || true
  [[ -n $REF_UP ]] && env "${REF_PORTS[@]}" tests/reference/stop >/dev/null 2>&1 || true
  rm -rf "$RUN"/flussd "$RUN"/rocksdb "$RUN"/reference/data
}
trap cleanup EXIT

cpu_ticks() { # pids... -> utime+stime ticks summed
  local t=0 p
  for p in "$@"; do
    t=$((t + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
  done
  echo "$t"
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
note() { echo "$1 $2 ${3:-"{}"}" >>"$RES"; } # KEY WHO JSON

# measure KEY WHO "PIDS" perf-args...: one fluss-perf run, its JSON summary
# plus the server's CPU seconds over it
measure() {
  local key=$1 who=$2 pids=$3 b c0 c1 out
  shift 3
  b=$([[ $who == ours ]] && echo $OURS_B || echo $REF_B)
  c0=$(cpu_ticks $pids)
  out=$("$PERF" "$@" --bootstrap-server "$b" --json --quiet)
  c1=$(cpu_ticks $pids)
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["server_cpu_s"]=int(sys.argv[2])/int(sys.argv[3]); print(sys.argv[4], sys.argv[5], json.dumps(d))' \
    "$out" $((c1 - c0)) "$HZ" "$key" "$who" >>"$RES"
  log "$key $who: $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%(records_per_s).0f rec/s p50 %(p50_ms)s ms p99 %(p99_ms)s ms, errors %(errors)s" % d)')"
}

# ---------------------------------------------------------------- fluss servers

KV=(--table perf.kv --keys "$KEYS" --value-size "$VALUE" --buckets 1)

fluss_workloads() { # WHO PIDS
  measure upsert "$1" "$2" upsert "${KV[@]}" --records "$KEYS" --threads 1
  measure lookup1 "$1" "$2" lookup "${KV[@]}" --records "$LOOKUPS" --threads 1
  measure lookup_b128 "$1" "$2" lookup "${KV[@]}" --records "$((LOOKUPS * 4))" --threads 1 --lookup-batch 128
  measure lookup_t4 "$1" "$2" lookup "${KV[@]}" --records "$((LOOKUPS * 2))" --threads 4
  # the same upserts into a table whose changelog is not compressed
  # (table.log.arrow.compression.type NONE): what the default's ZSTD costs
  measure upsert_raw "$1" "$2" upsert --table perf.kv_raw --keys "$KEYS" --value-size "$VALUE" \
    --buckets 1 --compression NONE --records "$KEYS" --threads 1
}

log "flussd"
mkdir -p "$RUN/flussd"
build/flussd --data-dir "$RUN/flussd" -D bind.listeners=FLUSS://$OURS_B \
  -D kv.rocksdb.shared-block-cache.size="$CACHE" \
  -D tablet-server.bind.listeners=FLUSS://127.0.0.1:39124 2>"$RUN/flussd.log" &
OURS=$!
for _ in $(seq 100); do port_open 39124 && break; sleep 0.05; done
port_open 39124 || { log "flussd did not start"; cat "$RUN/flussd.log" >&2; exit 1; }

# each server runs alone: flussd's workloads first, then the reference's
fluss_workloads ours "$OURS"
kill "$OURS"; wait "$OURS" 2>/dev/null || true; OURS=""

REF_PIDS=""
if [[ -z $NO_REF ]]; then
  log "starting the reference (REF_JVM_PROFILE=dist)"
  if env "${REF_PORTS[@]}" REF_JVM_PROFILE=dist REF_HEAP=default \
      REF_EXTRA_CONFIG="kv.rocksdb.block.cache-size: $CACHE" tests/reference/start \
      >"$RUN/reference-start.log" 2>&1; then
    REF_UP=1
    REF_PIDS="$(cat "$RUN/reference/tablet.pid") $(cat "$RUN/reference/coordinator.pid")"
    fluss_workloads reference "$REF_PIDS"
    env "${REF_PORTS[@]}" tests/reference/stop >/dev/null 2>&1 || true
    REF_UP=""
  else
    log "the reference did not start; its rows are skipped (see $RUN/reference-start.log)"
    note ref_skipped reference "{\"reason\": \"tests/reference/start failed\"}"
  fi
fi

# ---------------------------------------------------------------- RocksDB (db_bench)

# db_bench_run KEY args...: "<op> : X micros/op Y ops/sec" and, with
# --histogram, "Percentiles: P50: a P75: b P99: c ..." (micros)
db_bench_run() {
  local key=$1 out t0 t1
  shift
  t0=$(date +%s.%N)
  out=$(db_bench --db="$PWD/$RUN/rocksdb" --key_size=8 --value_size="$VALUE" --num="$KEYS" \
    "${DB_OPTS[@]}" --histogram=1 --statistics=0 "$@" 2>&1)
  t1=$(date +%s.%N)
  python3 - "$key" "$out" "$t0" "$t1" >>"$RES" <<'PYEOF'
import json, re, sys
key, out, t0, t1 = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
m = re.search(r"^\w+\s*:\s*([\d.]+) micros/op (\d+) ops/sec", out, re.M)
p = re.search(r"Percentiles: P50: ([\d.]+) P75: ([\d.]+) P99: ([\d.]+)", out)
if not m:
    sys.exit("db_bench printed no summary:\n" + out[-2000:])
d = {"records_per_s": float(m.group(2)), "micros_per_op": float(m.group(1)),
     "p50_ms": float(p.group(1)) / 1e3 if p else None, "p99_ms": float(p.group(3)) / 1e3 if p else None,
     "cpu_wall_s": t1 - t0}
print(key, "rocksdb", json.dumps(d))
PYEOF
  log "$key rocksdb: $(tail -1 "$RES" | cut -d' ' -f3-)"
}

# flussd's store options (kv_store.c): LZ4 (ZSTD only from level 5, which
# this size never reaches), XXH64 checksums, 10-bit bloom filters,
# partitioned index and filters in the block cache with level 0's pinned,
# a whole-key memtable bloom filter; incompressible values (our rows are
# random letters, which LZ4 does not shrink)
DB_OPTS=(--cache_size="$CACHE_BYTES" --compression_type=lz4 --compression_ratio=1
  --checksum_type=3 --bloom_bits=10 --partition_index_and_filters=1
  --cache_index_and_filter_blocks=1 --pin_l0_filter_and_index_blocks_in_cache=1
  --memtable_bloom_size_ratio=0.05 --memtable_whole_key_filtering=1)
log "RocksDB db_bench $(db_bench --version 2>/dev/null | head -1 || true)"
# every key once, in random order, 1000 to a write batch (a 1 MiB PUT_KV)
db_bench_run upsert --benchmarks=filluniquerandom --threads=1 --disable_wal=1 --batch_size=1000
db_bench_run lookup1 --benchmarks=readrandom --use_existing_db=1 --threads=1 --reads="$LOOKUPS"
db_bench_run lookup_t4 --benchmarks=readrandom --use_existing_db=1 --threads=4 \
  --reads="$((LOOKUPS * 2 / 4))"
# two threads: flussd reads a 128-key call's halves on two workers, so
# RocksDB gets both cores too (--reads is per thread)
db_bench_run lookup_b128 --benchmarks=multireadrandom --use_existing_db=1 --threads=2 \
  --reads="$((LOOKUPS * 2))" --batch_size=128
rm -rf "$RUN/rocksdb"

# ---------------------------------------------------------------- Redis

log "redis-server $(redis-server --version | awk '{print $3}')"
redis-server --port $REDIS_PORT --bind 127.0.0.1 --save "" --appendonly no \
  --dir "$PWD/$RUN" >"$RUN/redis.log" 2>&1 &
REDIS=$!
for _ in $(seq 100); do port_open $REDIS_PORT && break; sleep 0.05; done

# redis_run KEY TEST CLIENTS PIPELINE N: redis-benchmark --csv, one test
redis_run() {
  local key=$1 t=$2 c=$3 pipe=$4 n=$5 c0 c1 out
  c0=$(cpu_ticks "$REDIS")
  out=$(redis-benchmark -h 127.0.0.1 -p $REDIS_PORT -t "$t" -n "$n" -r "$KEYS" -d "$VALUE" \
    -c "$c" -P "$pipe" --csv -q 2>&1)
  c1=$(cpu_ticks "$REDIS")
  python3 - "$key" "$out" $((c1 - c0)) "$HZ" "$n" >>"$RES" <<'PYEOF'
import csv, io, json, sys
key, out, ticks, hz, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rows = [r for r in csv.reader(io.StringIO(out)) if r and r[0] not in ("test",)]
if not rows:
    sys.exit("redis-benchmark printed nothing:\n" + out)
r = rows[-1]
d = {"records_per_s": float(r[1]), "avg_ms": float(r[2]), "p50_ms": float(r[4]), "p99_ms": float(r[6]),
     "server_cpu_s": ticks / hz, "records": n}
print(key, "redis", json.dumps(d))
PYEOF
  log "$key redis: $(tail -1 "$RES" | cut -d' ' -f3-)"
}

# SET every key once in order is not what redis-benchmark does (random
# keys in -r), so the SET run writes KEYS random keys; the GETs read random
# keys of the same space (most exist after the SETs).
redis_run upsert set 1 100 "$KEYS"   # pipelined 100 deep: the closest to batched upserts
redis_run upsert_c1 set 1 1 "$((KEYS / 4))"
redis_run lookup1 get 1 1 "$LOOKUPS"
redis_run lookup_b128 get 1 128 "$((LOOKUPS * 4))"
redis_run lookup_t4 get 4 1 "$((LOOKUPS * 2))"
kill "$REDIS"; wait "$REDIS" 2>/dev/null || true; REDIS=""

# ---------------------------------------------------------------- loopback
# The raw TCP round trip on this machine (bench_rtt: an echo thread, one
# connection, 64 bytes one at a time): the floor under a 1-key lookup.
cmake --build build -j2 --target bench_rtt >/dev/null
note rtt loopback "$(build/bench_rtt 20000 64)"
log "loopback round trip: $(tail -1 "$RES")"

# ---------------------------------------------------------------- report

python3 - "$RES" "$KEYS" "$VALUE" "$LOOKUPS" "$CACHE" <<'PYEOF'
import collections, datetime, json, os, pathlib, re, sys
res, keys, value, lookups = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cache = sys.argv[5].replace("mb", " MiB")
R = collections.defaultdict(dict)
for line in pathlib.Path(res).read_text().splitlines():
    key, who, js = line.split(" ", 2)
    R[key][who] = json.loads(js)
g = lambda k, who, f: R.get(k, {}).get(who, {}).get(f)
def fmt(v):
    if v is None: return "-"
    if isinstance(v, str): return v
    return f"{v:,.0f}" if abs(v) >= 1000 else (f"{v:,.2f}" if abs(v) >= 0.1 else f"{v:,.3f}")
def cpu_per_m(k, who):  # server CPU seconds per million operations
    d = R.get(k, {}).get(who)
    return d["server_cpu_s"] / (d["records"] / 1e6) if d and d.get("records") and "server_cpu_s" in d else None
def lat(k, who):
    a, b = g(k, who, "p50_ms"), g(k, who, "p99_ms")
    return "-" if a is None else f"{fmt(a)} / {fmt(b)}"
W = ["ours", "reference", "rocksdb", "redis"]
rows = [
  ("upsert rows/s", f"{keys} keys, 1 writer, 1 bucket (Redis: SET pipelined 100 deep; RocksDB: filluniquerandom, 1000 per batch, WAL off)",
   [g("upsert", w, "records_per_s") for w in W]),
  ("  request latency p50 / p99 ms (fluss: per PUT_KV; Redis: per SET)", "", [lat("upsert", w) for w in W[:2]] + ["-", lat("upsert", "redis")]),
  ("  server CPU s per million upserts", "", [cpu_per_m("upsert", w) for w in W[:2]] + ["-", cpu_per_m("upsert", "redis")]),
  ("upsert rows/s, one at a time (Redis SET, 1 client, no pipeline)", "", ["-", "-", "-", g("upsert_c1", "redis", "records_per_s")]),
  ("upsert rows/s, changelog not compressed", "as above into a second table, table.log.arrow.compression.type NONE (the default is ZSTD level 3), after the lookups, on the server already holding the first table (its compactions may run meanwhile: not a clean measure of ZSTD's cost)",
   [g("upsert_raw", w, "records_per_s") for w in W[:2]] + ["-", "-"]),
  ("  server CPU s per million upserts", "", [cpu_per_m("upsert_raw", w) for w in W[:2]] + ["-", "-"]),
  ("lookup latency p50 / p99 ms, 1 key per call", "1 thread, random keys", [lat("lookup1", w) for w in W]),
  ("  raw loopback round trip p50 / p99 ms", "bench_rtt: echo thread, 64 bytes, 1 connection",
   [(f"{g('rtt', 'loopback', 'p50_us') / 1000:.3f} / {g('rtt', 'loopback', 'p99_us') / 1000:.3f}" if g('rtt', 'loopback', 'p50_us') else "-")] + ["", "", ""]),
  ("  lookups/s", "", [g("lookup1", w, "records_per_s") for w in W]),
  ("  server CPU s per million lookups", "", [cpu_per_m("lookup1", w) for w in W[:2]] + ["-", cpu_per_m("lookup1", "redis")]),
  ("lookups/s, 128 keys per call", "1 thread (RocksDB: multireadrandom batch 128, 2 threads; Redis: GET pipelined 128)",
   [g("lookup_b128", w, "records_per_s") for w in W]),
  ("  call latency p50 / p99 ms", "", [lat("lookup_b128", w) for w in W]),
  ("  server CPU s per million lookups", "", [cpu_per_m("lookup_b128", w) for w in W[:2]] + ["-", cpu_per_m("lookup_b128", "redis")]),
  ("lookups/s, 4 threads, 1 key per call", "4 connections (Redis: 4 clients)", [g("lookup_t4", w, "records_per_s") for w in W]),
  ("  latency p50 / p99 ms", "", [lat("lookup_t4", w) for w in W]),
  ("  server CPU s per million lookups", "", [cpu_per_m("lookup_t4", w) for w in W[:2]] + ["-", cpu_per_m("lookup_t4", "redis")]),
]
errs = sum(g(k, w, "errors") or 0 for k in ("upsert", "lookup1", "lookup_b128", "lookup_t4", "upsert_raw") for w in ("ours", "reference"))
found = {w: (g("lookup1", w, "found"), g("lookup1", w, "records")) for w in ("ours", "reference")}
today = datetime.date.today()
sec = ["## kv: primary-key upsert and lookup against RocksDB, Redis and the reference", "",
       f"Command: `bench/run_kv.sh {keys}` ({today}, {os.cpu_count()} cores, value {value} bytes, "
       f"{lookups} lookups per 1-key run; everything on loopback in one run). fluss-c and the reference "
       f"(Apache Fluss 0.9.1-incubating, `REF_JVM_PROFILE=dist`, default heap) are driven by the same "
       f"`fluss-perf upsert` / `lookup` (libfluss) on a PK table `id BIGINT NOT NULL, v BYTES` of 1 bucket: "
       f"upsert of every key once (1 writer, 1 MiB batches, linger 100 ms, acks=all, idempotent), then "
       f"lookups of random keys. Every store gets a {cache} block cache (flussd's "
       f"`kv.rocksdb.shared-block-cache.size`, the reference's `kv.rocksdb.block.cache-size`). "
       f"RocksDB = Debian's `db_bench` (7.8) on the same disk with flussd's store options "
       f"(LZ4, XXH64 checksums, 10-bit bloom filters, partitioned index and filters cached, level 0's "
       f"pinned, whole-key memtable bloom; values incompressible): `filluniquerandom` (every key once, "
       f"1000 per write batch, WAL off as flussd runs RocksDB), `readrandom`, `multireadrandom`, "
       f"8-byte keys, in-process (no network, no changelog): the storage engine's limit. Redis = `redis-server` "
       f"(no persistence) + `redis-benchmark` SET/GET with `-r {keys} -d {value}`. Server CPU = "
       f"utime+stime from /proc/<pid>/stat over the run (reference: tablet server + coordinator).", "",
       "| metric | setup | fluss-c | reference | RocksDB (db_bench) | Redis |", "|---|---|---|---|---|---|"]
for name, setup, vals in rows:
    sec.append(f"| {name} | {setup} | " + " | ".join(fmt(v) for v in vals) + " |")
sec += ["", f"fluss-perf errors: {errs}; keys found by the 1-key lookups: fluss-c "
        f"{found['ours'][0]}/{found['ours'][1]}, reference {found['reference'][0]}/{found['reference'][1]} "
        f"(every key was upserted first, so all should be)."]
def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"
up, ref_up, db_up = (g("upsert", w, "records_per_s") for w in ("ours", "reference", "rocksdb"))
b128, ref_b128, db_b128 = (g("lookup_b128", w, "records_per_s") for w in ("ours", "reference", "rocksdb"))
p50, rtt = g("lookup1", "ours", "p50_ms"), g("rtt", "loopback", "p50_us")
sec += ["", "Against the targets (fluss-c / peer, same run): upserts "
        f"{ratio(up, ref_up)} the reference (target 2x) and {ratio(up, db_up)} RocksDB's batched "
        f"puts (target 0.5x); 1-key lookup p50 {ratio(p50, rtt / 1000 if rtt else None)} the raw "
        f"loopback round trip (target at most 2x); 128-key lookups {ratio(b128, db_b128)} RocksDB's "
        f"MultiGet (target 0.5x) and {ratio(b128, ref_b128)} the reference (target 2x)."]
if R.get("ref_skipped"):
    sec += ["", f"Reference rows skipped: {R['ref_skipped']['reference'].get('reason', '?')}."]
text = "\n".join(sec) + "\n"
print(text)
sys.path.insert(0, "bench")
from benchmarks_md import write_section
write_section("kv", text)
PYEOF
