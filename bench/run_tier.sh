#!/usr/bin/env bash
# Lake tiering writer benchmark (src/tier): bench_tier tiers ROWS rows of
# ARROW log batches (1000 rows each, ZSTD-compressed Arrow as clients send)
# into a ZSTD Parquet file, column by column (the writer as built) and row
# by row (options.row_path: the path before the column path); in the same
# run, interleaved round by round, pyarrow.parquet.write_table of the same
# rows from a Table built before the timing (bench_tier_pyarrow.py), and
# the page-cache write of as many bytes as our file (1 MiB write(2)s),
# and the column path with neither codec (what ZSTD costs).
# BEFORE=path/to/bench_tier built at an older commit (bench/bench_tier.c
# copied into that tree; without options.row_path it tiers row by row)
# adds its rounds as "before" (BEFORE_COMMIT names the commit in the report). Rewrites the "Lake tiering writer" section
# of BENCHMARKS.md (NO_WRITE=1: print only).
#   [BEFORE=...] bench/run_tier.sh [ROWS] [ROUNDS]      (default 1000000 7)
set -euo pipefail
cd "$(dirname "$0")/.."
ROWS=${1:-1000000}
ROUNDS=${2:-7}
PY=${PY:-.venv/bin/python}
cmake --build build -j1 --target bench_tier >/dev/null
DIR=$(mktemp -d)
trap 'rm -rf "$DIR"' EXIT
OUT=$DIR/rounds.jsonl
for r in $(seq "$ROUNDS"); do
    line=$(build/bench_tier --mode col --rows "$ROWS" --dir "$DIR")
    echo "$line" >>"$OUT"
    in_bytes=$(echo "$line" | sed 's/.*"in_bytes":\([0-9]*\).*/\1/')
    out_bytes=$(echo "$line" | sed 's/.*"out_bytes":\([0-9]*\).*/\1/')
    $PY bench/bench_tier_pyarrow.py --rows "$ROWS" --dir "$DIR" --in-bytes "$in_bytes" >>"$OUT"
    build/bench_tier --mode row --rows "$ROWS" --dir "$DIR" >>"$OUT"
    # the same rows with no codec on either side: what ZSTD costs us
    build/bench_tier --mode col --label col_plain --arrow-codec none --parquet-codec none \
        --rows "$ROWS" --dir "$DIR" >>"$OUT"
    if [ -n "${BEFORE:-}" ]; then
        "$BEFORE" --mode row --label before --rows "$ROWS" --dir "$DIR" >>"$OUT"
    fi
    build/bench_tier --mode write --bytes "$out_bytes" --dir "$DIR" >>"$OUT"
    echo "round $r done" >&2
done
$PY bench/tier_report.py "$OUT" "${BEFORE_COMMIT:+BEFORE_COMMIT=$BEFORE_COMMIT }${BEFORE:+BEFORE=$BEFORE }bench/run_tier.sh $ROWS $ROUNDS"
