#!/usr/bin/env bash
# Union read: rows/s of reading a whole lake table (a) from its lake
# snapshot through libfluss's lake scanner (the Iceberg table's Parquet
# files, read by the client), (b) from the log through the log scanner
# (FETCH_LOG), (c) as a union (the lake, then the log after it: here the
# log holds the last TAIL rows), and, as the physical reader of the same
# files, (d) pyarrow.parquet.read_table of the snapshot's data files
# (Arrow's C++ reader, one thread). Rounds interleave a-b-c-d; the report
# gives medians, the spread of per-round ratios, client CPU-seconds per
# million rows and the server's CPU-seconds (from /proc) during the log
# reads. The page cache is warm after the first round (the same files
# every round; this VM cannot drop caches). Rewrites the "union-read"
# section of BENCHMARKS.md (NO_WRITE=1: print only).
#   bench/run_union.sh [ROWS] [ROUNDS] [TAIL]     (default 1000000 7 50000)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
ROUNDS=${2:-7}
TAIL=${3:-50000}
PY=${PY:-.venv/bin/python}
make -s build >/dev/null
DATA=$(mktemp -d)
B=127.0.0.1:29743
build/flussd --data-dir "$DATA/d" -D bind.listeners=FLUSS://$B \
    -D tablet-server.bind.listeners=FLUSS://127.0.0.1:29744 \
    -D datalake.format=iceberg -D datalake.iceberg.type=hadoop \
    -D "datalake.iceberg.warehouse=$DATA/wh" 2>"$DATA/flussd.log" &
OURS=$!
trap 'kill $OURS 2>/dev/null || true; rm -rf "$DATA"' EXIT
sleep 0.5
F="build/fluss --bootstrap-server $B"
$F db create bench >/dev/null
$F table create bench.u --schema "id BIGINT, ts BIGINT, payload BYTES" --buckets 4 \
    --property table.datalake.enabled=true --property table.datalake.freshness=1h >/dev/null
build/fluss-perf produce --bootstrap-server $B --table bench.u --records $((ROWS - TAIL)) \
    --record-size 100 --quiet --json >/dev/null
$F lake tier bench.u --now >&2
build/fluss-perf produce --bootstrap-server $B --table bench.u --records "$TAIL" \
    --record-size 100 --quiet --json >/dev/null
server_cpu() { awk '{print $14 + $15}' /proc/$OURS/stat; }
OUT=$DATA/rounds.jsonl
TCK=$(getconf CLK_TCK)
for r in $(seq "$ROUNDS"); do
    for mode in lake log union; do
        s0=$(server_cpu)
        line=$(build/bench_union $B bench u $mode)
        s1=$(server_cpu)
        echo "${line%\}},\"round\":$r,\"server_cpu_s\":$(awk "BEGIN{print ($s1 - $s0) / $TCK}")}" >>"$OUT"
    done
    line=$($PY bench/union_pyarrow.py "$DATA/wh/bench/u")
    echo "${line%\}}, \"round\": $r}" >>"$OUT"
    echo "round $r done" >&2
done
kill $OURS; wait $OURS 2>/dev/null || true
$PY - "$OUT" "bench/run_union.sh $ROWS $ROUNDS $TAIL" <<'PYEOF'
import json, statistics, sys
sys.path.insert(0, "bench")
from benchmarks_md import write_section
rows = [json.loads(l) for l in open(sys.argv[1])]
cmd = sys.argv[2]
modes = ["lake", "log", "union", "pyarrow"]
by = {m: [r for r in rows if r["mode"] == m] for m in modes}
def rps(r): return r["rows"] / r["seconds"]
med = {m: statistics.median(rps(r) for r in by[m]) for m in modes}
cpu = {m: statistics.median(r["cpu_s"] / r["rows"] * 1e6 for r in by[m]) for m in modes}
srv = {m: statistics.median(r.get("server_cpu_s", 0) for r in by[m]) for m in modes}
def ratios(a, b):
    rs = sorted(rps(x) / rps(y) for x, y in zip(by[a], by[b]))
    return f"{statistics.median(rs):.2f}× ({rs[0]:.2f}–{rs[-1]:.2f})"
n = {m: by[m][0]["rows"] for m in modes}
sums = {m: {r["offset_sum"] for r in by[m]} for m in ("lake", "log", "union")}
label = {"lake": "lake scanner (libfluss, Parquet files)", "log": "log scanner (FETCH_LOG)",
         "union": "union: lake, then the log after it", "pyarrow": "pyarrow.parquet.read_table, same files"}
lines = [f"| {label[m]} | {n[m]:,} | {med[m]:,.0f} | {min(rps(r) for r in by[m]):,.0f}–{max(rps(r) for r in by[m]):,.0f} | {cpu[m]:.2f} | {srv[m]:.2f} |" for m in modes]
text = f"""## union-read: a lake table read whole, lake vs log vs union

`{cmd}` — one flussd (`datalake.format: iceberg`); table `id BIGINT, ts BIGINT,
payload BYTES` (100-byte rows, 4 buckets) written by fluss-perf, one tiering
round, then more rows that stay in the log only. bench/bench_union reads the
table whole with libfluss each way (every row decoded, its offset summed), and
pyarrow reads the snapshot's data files as the physical reader of the same
bytes. Rounds interleaved; page cache warm after the first. Client CPU is the
reader process's (getrusage), server CPU flussd's from /proc during that read.

| read | rows | rows/s (median) | rows/s (min–max) | client CPU s / M rows | server CPU s |
|---|---|---|---|---|---|
""" + "\n".join(lines) + f"""

- lake scanner ÷ log scanner, per round: {ratios("lake", "log")}; lake scanner ÷ pyarrow: {ratios("lake", "pyarrow")}; union ÷ log: {ratios("union", "log")}.
- Offset checksums agree: log and union read the same {n["log"]:,} (bucket, offset)s{"" if len(sums["log"] | sums["union"]) == 1 else " — NO: " + str(sums)}.
"""
write_section("union-read", text)
print(text)
PYEOF
