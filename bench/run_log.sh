#!/usr/bin/env bash
# Log-table benchmark: flussd vs the reference Fluss server (0.9.1,
# tests/reference/start) in the same run, both driven by the official Java
# client (bench/java LogBench), and rewrites the "log" section of
# BENCHMARKS.md.
#   bench/run_log.sh [PRODUCE_ROWS] [SCAN_ROWS] [LATENCY_N]
#   (defaults 100000 1 KiB rows, 50000 rows x 50 columns, 500 round trips)
set -euo pipefail
cd "$(dirname "$0")/.."
PRODUCE=${1:-100000}
SCAN=${2:-50000}
LAT=${3:-500}
make -s build >/dev/null
J=bench/java
if [[ ! -f $J/target/.built || -n "$(find $J/pom.xml $J/src -newer $J/target/.built -type f | head -1)" ]]; then
  (mvn -B -q -o -f $J/pom.xml package -DskipTests || mvn -B -q -f $J/pom.xml package -DskipTests) >/dev/null
  touch $J/target/.built
fi
bench() { java -Xmx1g -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    --add-opens=java.base/java.nio=ALL-UNNAMED --add-opens=java.base/sun.nio.ch=ALL-UNNAMED -cp "$J/target/classes:$J/target/lib/*" \
    flussc.bench.LogBench "$@"; }

# Bytes carried by the loopback interface (both directions count once as
# "received" on lo); during a scan that is the fetch traffic.
lo_bytes() { awk '/^ *lo:/ {print $2}' /proc/net/dev; }

run_all() { # bootstrap tablet_pid -> lines "key json"
  local b=$1 pid=$2
  echo "produce $(bench $b produce $PRODUCE)"
  bench $b wide-load $SCAN >/dev/null
  local l0 l1 out
  l0=$(lo_bytes); out=$(bench $b scan-all $SCAN); l1=$(lo_bytes)
  echo "scan_all $out"; echo "scan_all_bytes {\"bytes\":$((l1 - l0))}"
  l0=$(lo_bytes); out=$(bench $b scan-5 $SCAN); l1=$(lo_bytes)
  echo "scan_5 $out"; echo "scan_5_bytes {\"bytes\":$((l1 - l0))}"
  echo "latency $(bench $b latency $LAT)"
}

DATA=$(mktemp -d)
build/flussd --data-dir "$DATA" -D bind.listeners=FLUSS://127.0.0.1:29123 \
  -D tablet-server.bind.listeners=FLUSS://127.0.0.1:29124 2>/dev/null &
OURS=$!
trap 'kill $OURS 2>/dev/null || true; tests/reference/stop >/dev/null 2>&1 || true; rm -rf "$DATA"' EXIT
sleep 0.3
ours=$(run_all 127.0.0.1:29123 $OURS)
kill $OURS; wait $OURS 2>/dev/null || true

tests/reference/start >/dev/null
ref=$(run_all 127.0.0.1:19123 "$(cat tests/reference/.run/tablet.pid)")
tests/reference/stop >/dev/null

python3 - "$ours" "$ref" "$PRODUCE" "$SCAN" "$LAT" <<'PYEOF'
import json, re, sys, pathlib, datetime, os
def parse(text):
    return {l.split(" ", 1)[0]: json.loads(l.split(" ", 1)[1]) for l in text.strip().splitlines()}
o, r = parse(sys.argv[1]), parse(sys.argv[2])
produce, scan, lat = sys.argv[3:6]
def ratio(a, b, higher_better=True):
    if not a or not b: return "-"
    return f"{(a / b if higher_better else b / a):.2f}x"
rows = [
  ("produce MB/s (1 KiB rows)", o["produce"]["mb_per_s"], r["produce"]["mb_per_s"], True),
  ("produce records/s", o["produce"]["records_per_s"], r["produce"]["records_per_s"], True),
  ("scan rows/s, 50 columns", o["scan_all"]["rows_per_s"], r["scan_all"]["rows_per_s"], True),
  ("scan rows/s, 5 of 50 columns", o["scan_5"]["rows_per_s"], r["scan_5"]["rows_per_s"], True),
  ("loopback bytes during the scan, 50 columns (MB)", o["scan_all_bytes"]["bytes"] / 1e6, r["scan_all_bytes"]["bytes"] / 1e6, False),
  ("loopback bytes during the scan, 5 columns (MB)", o["scan_5_bytes"]["bytes"] / 1e6, r["scan_5_bytes"]["bytes"] / 1e6, False),
  ("append→poll latency p50 (ms)", o["latency"]["p50_ms"], r["latency"]["p50_ms"], False),
  ("append→poll latency p99 (ms)", o["latency"]["p99_ms"], r["latency"]["p99_ms"], False),
]
sec = [f"## log: produce, projected scan, append→poll latency", "",
       f"Command: `bench/run_log.sh {produce} {scan} {lat}` ({datetime.date.today()}, {os.cpu_count()} cores; "
       "both servers on loopback in the same run, driven by the official Java client 0.9.1 "
       "(`bench/java`, one JVM per workload); reference = Apache Fluss 0.9.1-incubating with "
       "ZooKeeper, JVMs -Xmx512m; one bucket; default ZSTD Arrow compression; loopback bytes = "
       "`/proc/net/dev` lo counter over the scan JVM's run, i.e. fetch traffic plus JVM start-up chatter).", "",
       "| metric | fluss-c | reference | fluss-c advantage |", "|---|---|---|---|"]
for name, a, b, hb in rows:
    sec.append(f"| {name} | {a:,.2f} | {b:,.2f} | {ratio(a, b, hb)} |")
text = "\n".join(sec) + "\n"
p = pathlib.Path("BENCHMARKS.md")
cur = p.read_text() if p.exists() else "# Benchmarks\n"
pat = re.compile(r"^## log:.*?(?=^## |\Z)", re.S | re.M)
cur = pat.sub(text + "\n", cur) if pat.search(cur) else cur.rstrip() + "\n\n" + text
p.write_text(cur)
print(text)
PYEOF
