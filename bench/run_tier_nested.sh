#!/usr/bin/env bash
# Lake tiering writer benchmark, nested columns (src/tier/tier_nested.c):
# bench_tier --schema nested tiers ROWS rows of ARRAY, MAP and ROW columns
# (bench_tier.c's header has them) from ARROW log batches of 1000 rows
# (ZSTD-compressed Arrow, as clients send) into a ZSTD Parquet file with
# Iceberg's list, map and struct layout, column by column (the writer as
# built) and row by row (options.row_path, the path a PK changelog takes);
# interleaved round by round with pyarrow.parquet.write_table of the same
# rows (bench_tier_pyarrow.py --schema nested, the Table built before the
# timing) and the page-cache write of as many bytes as our file.
# Rewrites the "Lake tiering writer, nested columns" section of
# BENCHMARKS.md (NO_WRITE=1: print only).
#   bench/run_tier_nested.sh [ROWS] [ROUNDS]      (default 300000 7)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-300000}
ROUNDS=${2:-7}
PY=${PY:-.venv/bin/python}
cmake --build build -j1 --target bench_tier >/dev/null
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
OUT=$DIR/rounds.jsonl
for r in $(seq "$ROUNDS"); do
    line=$(build/bench_tier --mode col --schema nested --rows "$ROWS" --dir "$DIR")
    echo "$line" >>"$OUT"
    in_bytes=$(echo "$line" | sed 's/.*"in_bytes":\([0-9]*\).*/\1/')
    out_bytes=$(echo "$line" | sed 's/.*"out_bytes":\([0-9]*\).*/\1/')
    $PY bench/bench_tier_pyarrow.py --schema nested --rows "$ROWS" --dir "$DIR" \
        --in-bytes "$in_bytes" >>"$OUT"
    build/bench_tier --mode row --schema nested --rows "$ROWS" --dir "$DIR" >>"$OUT"
    build/bench_tier --mode write --bytes "$out_bytes" --dir "$DIR" >>"$OUT"
    echo "round $r done" >&2
done
$PY bench/tier_nested_report.py "$OUT" "bench/run_tier_nested.sh $ROWS $ROUNDS"
