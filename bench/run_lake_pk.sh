#!/usr/bin/env bash
# Lake tiering of a primary-key table: what the lake index costs. Each
# round starts a fresh flussd (datalake.format: iceberg) and fills two
# tables with N rows through fluss-perf: a log table (produce, 120-byte
# rows) and a PK table "id BIGINT NOT NULL, v BYTES(100)" (upsert, keys
# 0..N-1). Then, each timed as one `fluss lake tier --now` (wall time and
# flussd's CPU seconds from /proc):
#   log      the log table's first round (N rows appended)
#   pk-first the PK table's first round (N inserts: every key put in the index)
#   pk-upd   U updates of existing keys (changelog -U/+U: U position deletes,
#            U new rows, the index kept in memory since the last round)
#   pk-rebuilt  flussd restarted, U updates again: the index rebuilt from the
#            lake (N keys read back from Parquet) before the round
# Each timed round starts 1 s after the writes (their flushes done).
# Rounds repeat R times (each kind once per round, interleaved); medians
# and spreads. No peer column: the reference tiers PK tables only through
# its Flink tiering job (equality deletes), which this machine does not
# run; the log table's round of the same row count is the baseline.
# Rewrites the "lake-pk" section of BENCHMARKS.md (NO_WRITE=1: print only).
#   bench/run_lake_pk.sh [N] [U] [R]      (default 200000 50000 5)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-200000}
U=${2:-50000}
R=${3:-5}
PY=${PY:-.venv/bin/python}
make -s build >/dev/null
B=127.0.0.1:29753
F="build/fluss --bootstrap-server $B"
P="build/fluss-perf"
OUT=$(mktemp)
DATA=""
PID=""
cleanup() { [[ -n "$PID" ]] && kill "$PID" 2>/dev/null; [[ -n "$DATA" ]] && rm -rf "$DATA"; rm -f "$OUT"; }
trap cleanup EXIT
start() {
    build/flussd --data-dir "$DATA/d" -D bind.listeners=FLUSS://$B \
        -D tablet-server.bind.listeners=FLUSS://127.0.0.1:29754 \
        -D datalake.format=iceberg -D datalake.iceberg.type=hadoop \
        -D "datalake.iceberg.warehouse=$DATA/wh" 2>>"$DATA/flussd.log" &
    PID=$!
    for _ in $(seq 100); do $F db list >/dev/null 2>&1 && return; sleep 0.1; done
    echo "flussd did not start" >&2; exit 1
}
cpu() { awk '{print $14 + $15}' /proc/$PID/stat; }
# tier KIND TABLE: one timed round, one JSON line into $OUT
tier() {
    local c0 c1 t0 t1 out
    sleep 1   # the writes' background work (flushes) settles first
    for _ in $(seq 50); do
        c0=$(cpu); t0=$(date +%s.%N)
        if out=$($F lake tier "bench.$2" --now 2>&1); then break; fi
        sleep 0.2   # leaders not back yet after a restart
    done
    t1=$(date +%s.%N); c1=$(cpu)
    local rows; rows=$(echo "$out" | awk '/^tiered/ {print $2}')
    awk -v k="$1" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v n="${rows:-0}" \
        'BEGIN { printf "{\"kind\": \"%s\", \"wall\": %.4f, \"cpu\": %.2f, \"rows\": %d}\n", k, t1 - t0, (c1 - c0) / 100, n }' >>"$OUT"
}
for r in $(seq "$R"); do
    DATA=$(mktemp -d)
    start
    $F db create bench >/dev/null
    $F table create bench.pk --schema "id BIGINT NOT NULL, v BYTES" --primary-key id --buckets 1 \
        --property table.datalake.enabled=true --property table.datalake.freshness=1h >/dev/null
    $F table create bench.lg --schema "id BIGINT, ts BIGINT, payload BYTES" --buckets 1 \
        --property table.datalake.enabled=true --property table.datalake.freshness=1h >/dev/null
    $P upsert --bootstrap-server $B --table bench.pk --keys "$N" --records "$N" --value-size 100 --quiet --json >/dev/null
    $P produce --bootstrap-server $B --table bench.lg --records "$N" --record-size 120 --quiet --json >/dev/null
    tier log lg
    tier pk-first pk
    $P upsert --bootstrap-server $B --table bench.pk --keys "$N" --records "$U" --value-size 100 --quiet --json >/dev/null
    tier pk-upd pk
    kill "$PID"; wait "$PID" 2>/dev/null || true
    start
    $P upsert --bootstrap-server $B --table bench.pk --keys "$N" --records "$U" --value-size 100 --quiet --json >/dev/null
    tier pk-rebuilt pk
    grep -h "index rebuilt" "$DATA/flussd.log" | tail -1 >&2 || true
    kill "$PID"; wait "$PID" 2>/dev/null || true
    PID=""
    rm -rf "$DATA"
    DATA=""
done
$PY - "$OUT" "$N" "$U" "$R" <<'PYEOF'
import json, os, statistics, sys
sys.path.insert(0, "bench")
from benchmarks_md import write_section
path, n, u, r = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
runs = [json.loads(l) for l in open(path)]
kinds = ["log", "pk-first", "pk-upd", "pk-rebuilt"]
what = {"log": f"log table, first round ({n:,} rows appended)",
        "pk-first": f"PK table, first round ({n:,} inserts)",
        "pk-upd": f"PK table, {u:,} updates (index in memory)",
        "pk-rebuilt": f"PK table, {u:,} updates after a restart (index rebuilt from the lake: {n:,} keys)"}
med = lambda xs: statistics.median(xs)
lines = []
for k in kinds:
    xs = [x for x in runs if x["kind"] == k]
    walls = [x["wall"] for x in xs]
    cpus = [x["cpu"] for x in xs]
    rows = xs[0]["rows"]
    lines.append(f"| {what[k]} | {rows:,} | {med(walls)*1000:,.0f} ({min(walls)*1000:,.0f}–{max(walls)*1000:,.0f}) "
                 f"| {med(cpus):.2f} | {rows / med(walls):,.0f} |")
def ratio(a, b):
    rs = [x["wall"] / y["wall"] for x, y in zip([x for x in runs if x["kind"] == a],
                                               [x for x in runs if x["kind"] == b])]
    return f"{med(rs):.2f}× ({min(rs):.2f}–{max(rs):.2f})"
text = f"""## lake-pk: tiering a primary-key table (position deletes through the lake index)

`bench/run_lake_pk.sh {n} {u} {r}` — {r} rounds, each on a fresh flussd (`datalake.format: iceberg`,
release build, 1 bucket per table): fluss-perf fills a log table (`id BIGINT, ts BIGINT, payload BYTES`,
120-byte rows) and a PK table (`id BIGINT NOT NULL, v BYTES`, 100-byte values) with {n:,} rows each; each
line is one `fluss lake tier --now` (wall time from the CLI, flussd's CPU seconds from /proc). No peer:
the reference tiers PK tables only through its Flink tiering job (with equality deletes); the log
table's round of as many rows is the baseline. Medians over the rounds (min–max).

| round | rows written to the lake | wall ms | server CPU s | rows/s |
|---|---|---|---|---|
""" + "\n".join(lines) + f"""

- PK first round ÷ log round, wall: {ratio('pk-first', 'log')}; rebuilt ÷ in-memory update round: {ratio('pk-rebuilt', 'pk-upd')}.
"""
if not os.environ.get("NO_WRITE"):
    write_section("lake-pk", text)
print(text)
PYEOF
