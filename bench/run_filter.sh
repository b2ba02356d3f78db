#!/usr/bin/env bash
# Filter pushdown benchmark: a scan whose filter selects 1 % of the batches
# vs the same table scanned whole, through pyfluss 1.0.0, on flussd (which
# skips batches by their statistics) and on the reference 0.9.1 (no filter
# pushdown: it refuses table.statistics.columns, so its filtered scan is the
# whole scan) in the same run. Bytes are what the server sent on its tablet
# port; CPU is the server processes' (/proc). Rewrites the "filter" section
# of BENCHMARKS.md.
#   bench/run_filter.sh            (BATCHES=2000 ROWS=200 by default)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s build >/dev/null
PY=.venv/bin/python
DATA=$(mktemp -d)
build/flussd --data-dir "$DATA" -D bind.listeners=FLUSS://127.0.0.1:29723 \
    -D tablet-server.bind.listeners=FLUSS://127.0.0.1:29724 2>/dev/null &
OURS=$!
trap 'kill $OURS 2>/dev/null || true; tests/reference/stop >/dev/null 2>&1 || true; rm -rf "$DATA"' EXIT
sleep 0.5
ours=$($PY bench/filter_bench.py 127.0.0.1:29723 29724 $OURS stats)
kill $OURS; wait $OURS 2>/dev/null || true
REF_JVM_PROFILE=dist tests/reference/start >/dev/null
RUN=tests/reference/.run
ref=$($PY bench/filter_bench.py 127.0.0.1:19123 19124 "$(cat $RUN/tablet.pid)" plain)
tests/reference/stop >/dev/null
$PY - "$ours" "$ref" "$*" <<'PYEOF'
import json, sys
sys.path.insert(0, "bench")
from benchmarks_md import write_section
o, r = json.loads(sys.argv[1]), json.loads(sys.argv[2])
def row(name, x):
    return (f"| {name} | {x['rows']:,} | {x['seconds']} | {x['rows_per_s']:,} | "
            f"{x['bytes_sent']/1e6:.2f} | {x['server_cpu_s']} |")
text = f"""## filter: a 1 % filter vs the whole scan (pyfluss 1.0.0)

`bench/run_filter.sh` — {o['batches']} batches of {o['rows_per_batch']} rows (id BIGINT,
v DOUBLE, a 200-byte string), one bucket, written by pyfluss; then scanned from the
earliest offset with pyfluss's record-batch scanner. The filter `id >= …` selects
the last 1 % of the batches. fluss-c's table has `table.statistics.columns = 'id'`,
so pyfluss writes per-batch min/max and the server skips the other 99 %; the
reference 0.9.1 (JVM with its production options) refuses that property and has no
filter pushdown, so a filtered scan there moves the whole table. Bytes: what the
server sent on its tablet port (TCP `bytes_sent`); CPU: server processes, from /proc.

| scan | rows delivered | seconds | rows/s | MB sent | server CPU s |
|---|---|---|---|---|---|
{row("fluss-c, whole table", o['full'])}
{row("fluss-c, 1 % filter", o['filtered'])}
{row("reference 0.9.1, whole table (= its filtered scan)", r['full'])}

The filtered scan on fluss-c sends {o['filtered']['bytes_sent'] / max(1, o['full']['bytes_sent']) * 100:.1f} %
of the whole-table bytes and finishes {o['full']['seconds'] / max(0.001, o['filtered']['seconds']):.1f}× sooner;
against the reference's scan (what a filtered read costs there) it sends
{o['filtered']['bytes_sent'] / max(1, r['full']['bytes_sent']) * 100:.1f} % of the bytes.
"""
write_section("filter", text)
print(text)
PYEOF
