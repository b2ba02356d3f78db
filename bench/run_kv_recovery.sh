#!/usr/bin/env bash
# How long a primary-key bucket with ~1 GB of state takes to serve lookups
# again after kill -9 (Fluss users report slow KV rebuilds, apache/fluss#1478).
#
# One flussd, one PK table "id BIGINT NOT NULL, v BYTES" of 1 bucket,
# KEYS upserts of VALUE-byte values (default 1,000,000 x 1 KiB = ~1 GB),
# a KV snapshot taken after the load (kv.snapshot.interval), then three
# crashes, each timed from the restart to the first lookup answered
# (`fluss lookup` polled every 20 ms; flussd opens its buckets before it
# listens, so this is the whole recovery):
#   local:    kill -9, restart: RocksDB's own files are there, the changelog
#             after its applied offset is replayed (memtables lost with the
#             process: RocksDB's WAL is off, the log is the WAL);
#   snapshot: kill -9, the bucket's kv directory deleted: restored from the
#             newest snapshot in remote.data.dir, then the changelog after it;
#   log:      kill -9, the kv directory and the snapshots deleted: rebuilt
#             from the whole changelog.
# The lookups after each recovery are checked against the keys written.
# Writes the "kv recovery" section of BENCHMARKS.md (NO_WRITE=1: print only).
#
#   bench/run_kv_recovery.sh [KEYS]
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${1:-1000000}
VALUE=${VALUE:-1024}
[[ $KEYS =~ ^[0-9]+$ && $KEYS -ge 1000 ]] || { echo "usage: bench/run_kv_recovery.sh [KEYS >= 1000]" >&2; exit 2; }
cmake --build build -j2 >/dev/null
RUN=bench/.run-kvrec
rm -rf "$RUN"; mkdir -p "$RUN"
PORT_C=39331 PORT_T=39332
B=127.0.0.1:$PORT_C
FLUSSD_PID=""
cleanup() {
  [[ -f $RUN/flussd.pid ]] && kill -9 "$(cat "$RUN/flussd.pid")" 2>/dev/null || true
  rm -rf "$RUN"
}
trap cleanup EXIT
log() { echo "[run_kv_recovery] $*" >&2; }
now_ms() { date +%s%3N; }

start() {
  build/flussd --data-dir "$RUN/data" -D bind.listeners=FLUSS://$B \
    -D tablet-server.bind.listeners=FLUSS://127.0.0.1:$PORT_T \
    -D kv.snapshot.interval=${SNAP_INTERVAL:-15s} -D kv.snapshot.num-retained=1 \
    >>"$RUN/flussd.log" 2>&1 &
  FLUSSD_PID=$!
  echo "$FLUSSD_PID" >"$RUN/flussd.pid"
}

# Time from start to the first lookup answered, in ms; checks some keys.
timed_recovery() {
  local t0 t1
  t0=$(now_ms)
  start
  until build/fluss --bootstrap-server $B lookup perf.kv --format json 7 >"$RUN/lookup.out" 2>/dev/null \
      && grep -q '"id"' "$RUN/lookup.out"; do
    kill -0 "$FLUSSD_PID" 2>/dev/null || { tail -20 "$RUN/flussd.log" >&2; exit 1; }
    sleep 0.02
  done
  t1=$(now_ms)
  echo $((t1 - t0))
}

check_keys() {
  local k out
  for k in 0 1 $((KEYS / 3)) $((KEYS / 2)) $((KEYS - 1)); do
    out=$(build/fluss --bootstrap-server $B lookup perf.kv --format json "$k")
    grep -q "\"id\": *$k\b\|\"id\":$k\b" <<<"$out" || { echo "key $k missing after recovery: $out" >&2; exit 1; }
  done
}

# (timed_recovery starts flussd in a command substitution: the pid comes from the file)
crash() {
  FLUSSD_PID=$(cat "$RUN/flussd.pid")
  kill -9 "$FLUSSD_PID"
  while kill -0 "$FLUSSD_PID" 2>/dev/null; do sleep 0.02; done
  FLUSSD_PID=""
}
replayed() { grep -o 'replayed [0-9]* changelog records in [0-9]* ms' "$RUN/flussd.log" | tail -1 || true; }

start
for _ in $(seq 200); do (exec 3<>/dev/tcp/127.0.0.1/$PORT_T) 2>/dev/null && break; sleep 0.05; done
sleep 0.2
kill -0 "$FLUSSD_PID" 2>/dev/null || { echo "flussd did not start (ports $PORT_C/$PORT_T taken?)" >&2; tail -5 "$RUN/flussd.log" >&2; exit 1; }
log "loading $KEYS keys x $VALUE bytes"
t0=$(now_ms)
build/fluss-perf upsert --bootstrap-server $B --table perf.kv --keys "$KEYS" --value-size "$VALUE" \
  --buckets 1 --records "$KEYS" --threads 1 --json --quiet >"$RUN/load.json"
load_ms=$(( $(now_ms) - t0 ))
log "loaded in $load_ms ms: $(cat "$RUN/load.json" | head -c 200)"
# wait for a snapshot taken after the load
snap_meta() { ls "$RUN"/data/remote/kv/perf/kv-*/0/snap-*/_METADATA 2>/dev/null | tail -1; }
until [[ -n $(snap_meta) ]] && [[ $(stat -c %Y "$(snap_meta)") -ge $(( t0 / 1000 + load_ms / 1000 )) ]]; do sleep 0.5; done
sleep 1
kv_mb=$(du -sm "$RUN"/data/tablet-server-0/perf/kv-*/kv-0 | awk '{print $1}')
log_mb=$(du -sm "$RUN"/data/tablet-server-0/perf/kv-*/log-0 | awk '{print $1}')
snap_mb=$(du -sm "$RUN"/data/remote/kv/perf/kv-*/0 | awk '{print $1}')
log "state: RocksDB $kv_mb MB, changelog $log_mb MB, snapshot $snap_mb MB"
# a few writes after the snapshot, so each recovery replays a tail
build/fluss-perf upsert --bootstrap-server $B --table perf.kv --keys 20000 --value-size "$VALUE" \
  --buckets 1 --records 20000 --threads 1 --json --quiet >/dev/null

crash
local_ms=$(timed_recovery); check_keys; local_replay=$(replayed)
log "local: $local_ms ms ($local_replay)"
crash
rm -rf "$RUN"/data/tablet-server-0/perf/kv-*/kv-0
snap_ms=$(timed_recovery); check_keys; snap_replay=$(replayed)
log "snapshot: $snap_ms ms ($snap_replay)"
crash
rm -rf "$RUN"/data/tablet-server-0/perf/kv-*/kv-0 "$RUN"/data/remote/kv
full_ms=$(timed_recovery); check_keys; full_replay=$(replayed)
log "log: $full_ms ms ($full_replay)"
crash

python3 - "$KEYS" "$VALUE" "$load_ms" "$kv_mb" "$log_mb" "$snap_mb" "$local_ms" "$local_replay" \
  "$snap_ms" "$snap_replay" "$full_ms" "$full_replay" <<'PYEOF'
import datetime, os, pathlib, re, sys
(keys, value, load_ms, kv_mb, log_mb, snap_mb, local_ms, local_r, snap_ms, snap_r, full_ms,
 full_r) = sys.argv[1:]
sec = ["## kv recovery: a 1-bucket primary-key table of ~1 GB back after kill -9", "",
       f"Command: `bench/run_kv_recovery.sh {keys}` ({datetime.date.today()}, 2 cores; {keys} keys x "
       f"{value}-byte values upserted in {int(load_ms)/1000:.1f} s, then 20000 more after the snapshot). "
       f"State on disk: RocksDB {kv_mb} MB, changelog {log_mb} MB, snapshot {snap_mb} MB. Time from the "
       "restart to the first lookup answered (flussd recovers its buckets before it listens); five keys "
       "checked after each.", "",
       "| crash | what recovery does | first lookup after | server's own replay log |", "|---|---|---|---|",
       f"| kill -9 | RocksDB files kept; changelog after its applied offset replayed | {local_ms} ms | {local_r} |",
       f"| kill -9, kv directory lost | newest snapshot restored (copied) from `remote.data.dir`, changelog after it | {snap_ms} ms | {snap_r} |",
       f"| kill -9, kv directory and snapshots lost | rebuilt from the whole changelog | {full_ms} ms | {full_r} |",
       ""]
text = "\n".join(sec)
print(text)
sys.path.insert(0, "bench")
from benchmarks_md import write_section
write_section("kv recovery", text)
PYEOF
