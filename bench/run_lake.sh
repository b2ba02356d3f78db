#!/usr/bin/env bash
# Lake freshness: acknowledged -> visible in pyiceberg, p50/p99, at
# table.datalake.freshness 5 s and 30 s (bench/lake_freshness.py: one row
# every 100 ms through pyfluss, the Iceberg table read from its directory
# every 50 ms), tiered two ways against the same flussd build:
#   flussd       flussd tiers the table itself (lake.tiering.mode: internal)
#   Fluss's job  Fluss 0.9.1's own Flink tiering job (tests/flink/tiering-job:
#                fluss-flink 1.20 + fluss-lake-iceberg, a local Flink with
#                its default poll interval, 30 s) tiers a flussd started with
#                lake.tiering.mode: external — the reference's tiering path
# Runs interleave: flussd 5 s, job 5 s, flussd 30 s, job 30 s. The goal of
# the lake issue: p99 <= freshness + round time + 1 s. CPU: flussd's, and the
# job's JVM (a separate process in the job's case). Rewrites the
# "lake-freshness" section of BENCHMARKS.md (NO_WRITE=1: print only).
#   bench/run_lake.sh             (SECONDS_5=60 SECONDS_30=150 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build >/dev/null
tests/flink/build --lake >/dev/null
PY=.venv/bin/python
DATA=$(mktemp -d)
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill $p 2>/dev/null || true; done; rm -rf "$DATA"' EXIT
start() { # start NAME PORT MODE -> pid in $SRV
    build/flussd --data-dir "$DATA/$1" -D bind.listeners=FLUSS://127.0.0.1:$2 \
        -D tablet-server.bind.listeners=FLUSS://127.0.0.1:$(($2 + 1)) \
        -D datalake.format=iceberg -D datalake.iceberg.type=hadoop \
        -D "datalake.iceberg.warehouse=$DATA/wh-$1" -D "lake.tiering.mode=$3" 2>/dev/null &
    SRV=$!
    PIDS+=("$SRV")
    sleep 0.5
}
start ours 29733 internal
OURS=$SRV
start ext 29735 external
EXT=$SRV
# the job, with its default poll interval; stdin held open until the end
mkfifo "$DATA/job-in"
tests/flink/tiering-job 127.0.0.1:29735 "$DATA/wh-ext" 3600 default <"$DATA/job-in" >"$DATA/job.log" 2>&1 &
JOB=$!
PIDS+=("$JOB")
exec 3>"$DATA/job-in"
for _ in $(seq 120); do grep -q "tiering\] running" "$DATA/job.log" && break; sleep 1; done
grep -q "tiering\] running" "$DATA/job.log" || { tail -20 "$DATA/job.log" >&2; exit 1; }
o5=$($PY bench/lake_freshness.py 127.0.0.1:29733 "$DATA/wh-ours" $OURS 5s "${SECONDS_5:-60}")
j5=$($PY bench/lake_freshness.py 127.0.0.1:29735 "$DATA/wh-ext" $EXT 5s "${SECONDS_5:-60}" $JOB)
o30=$($PY bench/lake_freshness.py 127.0.0.1:29733 "$DATA/wh-ours" $OURS 30s "${SECONDS_30:-150}")
j30=$($PY bench/lake_freshness.py 127.0.0.1:29735 "$DATA/wh-ext" $EXT 30s "${SECONDS_30:-150}" $JOB)
exec 3>&-
$PY - "$o5" "$j5" "$o30" "$j30" <<'PYEOF'
import json, sys
sys.path.insert(0, "bench")
from benchmarks_md import write_section
rows = [json.loads(a) for a in sys.argv[1:5]]
who = ["flussd tiers itself", "Fluss 0.9.1's Flink tiering job (external mode)"] * 2
def row(w, x):
    return (f"| {x['freshness']} | {w} | {x['seconds']:.0f} | {x['rows']} | {x['missing']} | "
            f"{x['rounds']} | {x['p50_ms']:,} | {x['p90_ms']:,} | {x['p99_ms']:,} | "
            f"{x['max_ms']:,} | {x['server_cpu_s']} | {x['job_cpu_s'] if 'job' in w else '—'} |")
text = """## lake-freshness: acknowledged -> visible in pyiceberg, flussd's own tiering vs Fluss's Flink tiering job

`bench/run_lake.sh` — two flussd of the same build (`datalake.format: iceberg`, Hadoop
layout on local disk): one tiers its lake tables itself; the other runs with
`lake.tiering.mode: external` and Fluss 0.9.1's own Flink tiering job (fluss-flink 1.20 +
fluss-lake-iceberg, local Flink, the job's default `tiering.poll.table.interval` of 30 s)
tiers it — the path the reference tiers by. A writer appends one row every 100 ms through
pyfluss (acks=all) and notes when it was acknowledged; a reader opens the Iceberg table
from its directory with pyiceberg 0.12 every 50 ms and notes when each row first shows.
Latency = first seen - acknowledged. Runs interleaved (flussd 5 s, job 5 s, flussd 30 s,
job 30 s). Goal: p99 <= freshness + round time + 1 s. CPU: flussd's (/proc), and the
job's JVM. The reference server itself is not run: its tiering is this job.

| freshness | tiered by | run s | rows | not seen | snapshots seen | p50 ms | p90 ms | p99 ms | max ms | server CPU s | job CPU s |
|---|---|---|---|---|---|---|---|---|---|---|---|
""" + "\n".join(row(w, x) for w, x in zip(who, rows)) + """

The job asks the coordinator for a table once per poll interval (30 s by default), so its
rounds come at most every ~30 s whatever the table's freshness; "not seen" counts rows it
had not tiered when the reader stopped (3 freshness + 5 s after the writer). flussd
schedules a round per table at its freshness on its own thread. CPU: flussd's server
(/proc) and the job's JVM over the same rows, in the table.
"""
write_section("lake-freshness", text)
print(text)
PYEOF
