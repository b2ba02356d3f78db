#!/usr/bin/env bash
# Tablet-server core benchmark: flussd vs the reference Fluss server
# (0.9.1, tests/reference/start with REF_JVM_PROFILE=dist, i.e. the JVM
# options of Fluss's own distribution: G1, full tiered JIT) in the same
# run, both driven by fluss-perf (src/perf, libfluss), next to the
# machine's physical limits measured in the same run (loopback with
# iperf3, page-cache appends and 1 MiB fsyncs with dd). For context, a
# single-node Kafka 4.x broker (KRaft, bench/kafka/start) takes the same
# produce volume from Kafka's own ProducerPerformance, after the reference
# has stopped; its rows stand in a table of their own, as the client
# differs. Rewrites the "core" section of BENCHMARKS.md.
#
#   bench/run_core.sh [SCALE]
#     SCALE = MB written per produce run (default 1000; 20 is a smoke run).
#   Environment: REF_HEAP (default "default": no -Xmx, the JVM's own choice,
#   as fluss-dist's scripts run it) for the reference JVMs; KAFKA_HEAP
#   (default 1g, what Kafka's own scripts set); IDLE_TABLES
#   (default 100) consumers long-polling their own tables in the idle row;
#   NO_WRITE=1 prints the section without touching BENCHMARKS.md;
#   ONLY=kafka runs just the 1-connection produce on flussd and the Kafka
#   rows (implies NO_WRITE=1); KAFKA_VERSION (default bench/kafka/start's)
#   picks the Kafka release. If Kafka cannot be fetched or started, its rows
#   are skipped with the reason printed.
#
# Runs are interleaved: both servers stay up and every workload runs on
# flussd, then on the reference. Server CPU = utime + stime from
# /proc/<pid>/stat (reference: tablet server + coordinator JVMs) over each
# run; loopback bytes = /proc/net/dev "lo" over each fetch. Everything
# lives under bench/.run (same file system as the reference's data) and is
# removed at the end; every process started here is stopped by its PID.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-1000}
REF_HEAP=${REF_HEAP:-default}
KAFKA_HEAP=${KAFKA_HEAP:-1g}
IDLE_TABLES=${IDLE_TABLES:-100}
ONLY=${ONLY:-}
[[ -z $ONLY || $ONLY == kafka ]] || { echo "ONLY must be kafka or unset" >&2; exit 2; }
[[ $ONLY == kafka ]] && export NO_WRITE=1
[[ $SCALE =~ ^[0-9]+$ && $SCALE -ge 1 ]] || { echo "usage: bench/run_core.sh [SCALE_MB]" >&2; exit 2; }

make -s build >/dev/null
PERF=build/fluss-perf
CLI=build/fluss
RUN=bench/.run
rm -rf "$RUN"
mkdir -p "$RUN"
RES=$RUN/results.txt
: >"$RES"
OURS_B=127.0.0.1:29123
REF_B=127.0.0.1:19123
HZ=$(getconf CLK_TCK)
REC=$((SCALE * 1000000 / 1024))        # 1 KiB rows per produce run
WIDE_REC=$((REC / 2))                  # rows of the 12-column fetch table
DUR_REC=$((REC / 4))                   # rows of the durable run
LAT_N=$((SCALE < 200 ? 1000 : 10000))  # append->poll round trips at 1000 rows/s
OURS=""
STRACE=""
KAFKA_PID=""

log() { echo "[run_core] $*" >&2; }

cleanup() {
  [[ -n $OURS ]] && kill "$OURS" 2>/dev/null || true
  [[ -n $STRACE ]] && kill "$STRACE" 2>/dev/null || true
  REF_JVM_PROFILE=dist tests/reference/stop >/dev/null 2>&1 || true
  [[ -n $KAFKA_PID ]] && KAFKA_RUN_DIR="$RUN/kafka" bench/kafka/stop >/dev/null 2>&1 || true
  rm -rf "$RUN"/flussd-* "$RUN"/dd-* "$RUN"/warm
}
trap cleanup EXIT

# ---------------------------------------------------------------- probes

cpu_ticks() { # pids... -> utime+stime ticks summed
  local t=0 p
  for p in "$@"; do
    t=$((t + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13}')))
  done
  echo "$t"
}
lo_bytes() { awk '/^ *lo:/ {print $2}' /proc/net/dev; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# measure KEY SERVER "PIDS" perf-args... : one fluss-perf run, its JSON
# summary plus the server's CPU seconds and the loopback bytes over it.
measure() {
  local key=$1 who=$2 pids=$3 b c0 c1 l0 l1 out
  shift 3
  b=$([[ $who == ours ]] && echo $OURS_B || echo $REF_B)
  c0=$(cpu_ticks $pids); l0=$(lo_bytes)
  out=$("$PERF" "$@" --bootstrap-server "$b" --json --quiet)
  c1=$(cpu_ticks $pids); l1=$(lo_bytes)
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["server_cpu_s"]=int(sys.argv[2])/int(sys.argv[3]); d["lo_bytes"]=int(sys.argv[4]); print(sys.argv[5], sys.argv[6], json.dumps(d))' \
    "$out" $((c1 - c0)) "$HZ" $((l1 - l0)) "$key" "$who" >>"$RES"
  log "$key $who: $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%(records_per_s).0f rec/s %(mb_per_s).1f MB/s p50 %(p50_ms)s ms, fluss-perf cpu %(cpu_pct)s%%" % d)')"
}
note() { echo "$1 $2 ${3:-"{}"}" >>"$RES"; } # KEY SERVER JSON
calc() { python3 -c "print($1)"; }

# ---------------------------------------------------------------- servers

# start_ours NAME [-D k=v]...: a fresh flussd on its own data dir
start_ours() {
  local name=$1
  shift
  mkdir -p "$RUN/flussd-$name"
  build/flussd --data-dir "$RUN/flussd-$name" -D bind.listeners=FLUSS://$OURS_B \
    -D tablet-server.bind.listeners=FLUSS://127.0.0.1:29124 "$@" 2>"$RUN/flussd-$name.log" &
  OURS=$!
  for _ in $(seq 100); do port_open 29124 && return 0; sleep 0.05; done
  log "flussd did not start"; cat "$RUN/flussd-$name.log" >&2; exit 1
}

# the same under strace counting fsync/fdatasync (seccomp-bpf: only those
# syscalls stop the process, so the count is cheap)
start_ours_strace() {
  local name=$1
  shift
  mkdir -p "$RUN/flussd-$name"
  strace -f -c --seccomp-bpf -e trace=fsync,fdatasync -o "$RUN/strace-$name.txt" \
    build/flussd --data-dir "$RUN/flussd-$name" -D bind.listeners=FLUSS://$OURS_B \
    -D tablet-server.bind.listeners=FLUSS://127.0.0.1:29124 "$@" 2>"$RUN/flussd-$name.log" &
  STRACE=$!
  for _ in $(seq 100); do port_open 29124 && break; sleep 0.05; done
  OURS=$(pgrep -P "$STRACE" | head -1)
}

stop_ours() {
  kill "$OURS" 2>/dev/null || true
  if [[ -n $STRACE ]]; then wait "$STRACE" 2>/dev/null || true; STRACE=""
  else wait "$OURS" 2>/dev/null || true; fi
  OURS=""
  rm -rf "$RUN"/flussd-*/
}

fsyncs() { # strace -c summary -> fsync + fdatasync calls
  awk '$NF == "fsync" || $NF == "fdatasync" {s += $4} END {print s + 0}' "$1"
}

# ---------------------------------------------------------------- workloads

P1=(--records $REC --record-size 1024 --acks all --compression NONE --max-inflight 5)

produce_1k() { measure produce "$1" "$2" produce --table "perf.p1_$1" --buckets 1 --threads 1 "${P1[@]}"; }
produce_16() { measure produce16 "$1" "$2" produce --table "perf.p16_$1" --buckets 16 --threads 1 "${P1[@]}"; }
produce_c4() { measure "${3:-conn4}" "$1" "$2" produce --table "perf.c4_$1_${3:-x}" --buckets 4 --threads 4 "${P1[@]}"; }

# Server-bound produce: `fluss-perf --replay` builds one real PRODUCE_LOG
# request of 1 MiB (1 KiB rows, NONE, acks=all) per connection and resends
# it, 8 in flight, so the load generator costs little CPU.
PR=(--records $REC --record-size 1024 --acks all --compression NONE --replay --no-idempotence)
replay_1() { measure "${3:-replay1}" "$1" "$2" produce --table "perf.r1_$1_${3:-x}" --buckets 1 --threads 4 --max-inflight 8 "${PR[@]}"; }
replay_16() { measure replay16 "$1" "$2" produce --table "perf.r16_$1" --buckets 16 --threads 16 --max-inflight 2 "${PR[@]}"; }

fetch() { # server pids: the 12-column table, whole then 1 column
  "$PERF" produce --bootstrap-server "$([[ $1 == ours ]] && echo $OURS_B || echo $REF_B)" \
    --table "perf.wide_$1" --records $WIDE_REC --payload-columns 10 --compression NONE \
    --buckets 1 --quiet >/dev/null
  measure fetch_full "$1" "$2" consume --table "perf.wide_$1"
  measure fetch_proj "$1" "$2" consume --table "perf.wide_$1" --columns payload
}

latency() { measure latency "$1" "$2" latency --table "perf.lat_$1" --rate 1000 --records $LAT_N --record-size 1024; }

# IDLE_TABLES consumers (one thread and connection each) long-poll their
# own empty tables while the produce run repeats.
produce_idle() {
  local b i tables=""
  b=$([[ $1 == ours ]] && echo $OURS_B || echo $REF_B)
  for ((i = 0; i < IDLE_TABLES; i++)); do
    "$CLI" --bootstrap-server "$b" table create "perf.idle_$i" \
      --schema "id BIGINT, ts BIGINT, payload BYTES" --buckets 1 --if-not-exists >/dev/null
    tables+="${tables:+,}perf.idle_$i"
  done
  "$PERF" consume --bootstrap-server "$b" --table "$tables" --from latest --duration 36000 \
    --quiet --json >"$RUN/idle-$1.json" &
  local cons=$!
  sleep 3
  measure produce_idle "$1" "$2" produce --table "perf.pidle_$1" --buckets 1 --threads 1 "${P1[@]}"
  kill -INT "$cons"; wait "$cons" || true
  note idle_consumers "$1" "$(head -1 "$RUN/idle-$1.json")"
}

# Kafka context rows: a fresh single-node KRaft broker (bench/kafka/start,
# heap KAFKA_HEAP), one topic of 1 partition, and ProducerPerformance sending
# the produce row's volume with the writer settings fluss-perf uses (1 MiB
# batches, linger 100 ms, acks=all, no compression, max.in.flight default
# 5). Its summary line gives records/s and per-record send->ack latency;
# the client JVM's CPU comes from its rusage, the broker's from /proc.
kafka_produce() {
  local out bs pid ver c0 c1 js
  if ! out=$(KAFKA_RUN_DIR="$RUN/kafka" KAFKA_HEAP=$KAFKA_HEAP bench/kafka/start perf-p1 2>"$RUN/kafka-start.err"); then
    local why
    why=$(grep -h 'ERROR' "$RUN/kafka-start.err" | tail -1)
    log "skipping the Kafka rows: ${why:-bench/kafka/start failed}"
    note kafka_skipped kafka "$(python3 -c 'import json,sys; print(json.dumps({"reason": sys.argv[1]}))' "${why:-bench/kafka/start failed}")"
    return 0
  fi
  bs=$(sed -n 's/^bootstrap=//p' <<<"$out"); pid=$(sed -n 's/^pid=//p' <<<"$out"); ver=$(sed -n 's/^version=//p' <<<"$out")
  KAFKA_PID=$pid
  log "Kafka $ver broker up on $bs (pid $pid)"
  c0=$(cpu_ticks "$pid")
  if js=$(KAFKA_RUN_DIR="$RUN/kafka" python3 - "$RUN/kafka-perf.out" "$REC" "$bs" <<'PYEOF'
import json, re, resource, subprocess, sys
out, n, bs = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cmd = ["bench/kafka/perf", "--topic", "perf-p1", "--num-records", str(n), "--record-size", "1024",
       "--throughput", "-1", "--producer-props", "bootstrap.servers=" + bs, "acks=all", "linger.ms=100",
       "batch.size=1048576", "compression.type=none"]
with open(out, "w") as f:
    rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT).returncode
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
pat = re.compile(r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
                 r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99.9th")
m = [pat.search(l) for l in open(out)]
m = [x for x in m if x]
if rc or not m:
    sys.exit("ProducerPerformance failed (rc %d, no summary line); see %s" % (rc, out))
g = m[-1].groups()
rec, rps = int(g[0]), float(g[1])
cpu = ru.ru_utime + ru.ru_stime
print(json.dumps({"records": rec, "records_per_s": rps, "mb_per_s": rps * 1024 / 1e6, "mib_per_s_printed": float(g[2]),
                  "bytes": rec * 1024, "seconds": rec / rps, "avg_ms": float(g[3]), "max_ms": float(g[4]),
                  "p50_ms": float(g[5]), "p95_ms": float(g[6]), "p99_ms": float(g[7]), "p999_ms": float(g[8]),
                  "client_cpu_s": cpu, "cpu_pct": 100 * cpu / (rec / rps), "summary": m[-1].group(0)}))
PYEOF
  ); then
    c1=$(cpu_ticks "$pid")
    python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["server_cpu_s"]=int(sys.argv[2])/int(sys.argv[3]); d["version"]=sys.argv[4]; print("kafka_produce kafka", json.dumps(d))' \
      "$js" $((c1 - c0)) "$HZ" "$ver" >>"$RES"
    log "kafka produce: $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%(records_per_s).0f rec/s %(mb_per_s).1f MB/s p50 %(p50_ms)s ms (per record), client JVM cpu %(cpu_pct).0f%%" % d)' "$js")"
  else
    log "skipping the Kafka rows: ProducerPerformance failed (output in $RUN/kafka-perf.out)"
    tail -n 5 "$RUN/kafka-perf.out" >&2 || true
    note kafka_skipped kafka '{"reason": "ProducerPerformance failed"}'
  fi
  KAFKA_RUN_DIR="$RUN/kafka" bench/kafka/stop >/dev/null
  KAFKA_PID=""
}

# ---------------------------------------------------------------- physical limits

limits() {
  local avail warm
  avail=$(awk '/MemAvailable/ {print int($2 / 1024)}' /proc/meminfo)
  warm=$((SCALE * 10)); ((warm > avail * 8 / 10)) && warm=$((avail * 8 / 10))
  log "warming guest memory: writing and deleting $warm MB"
  dd if=/dev/zero of="$RUN/warm" bs=1M count=$warm status=none; rm -f "$RUN/warm"

  if command -v iperf3 >/dev/null; then
    iperf3 -s -1 -B 127.0.0.1 -p 25201 >/dev/null 2>&1 &
    local srv=$!
    sleep 0.5
    note loopback machine "$(iperf3 -c 127.0.0.1 -p 25201 -t 3 -l 1M -J | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps({"mb_per_s": d["end"]["sum_received"]["bits_per_second"] / 8e6, "tool": "iperf3 -l 1M"}))')"
    wait "$srv" || true
  else
    note loopback machine "$(python3 - <<'EOF'
import json, socket, threading, time
a, b = socket.socketpair(socket.AF_UNIX)
buf, total = b"\0" * (1 << 20), 2 << 30
def rd():
    n = 0
    while n < total: n += len(b.recv(1 << 20))
t = threading.Thread(target=rd); t.start(); t0 = time.time(); sent = 0
while sent < total: a.sendall(buf); sent += len(buf)
t.join(); print(json.dumps({"mb_per_s": total / (time.time() - t0) / 1e6, "tool": "socketpair 1 MiB writes"}))
EOF
)"
  fi
  local t0 t1
  t0=$(date +%s.%N)
  dd if=/dev/zero of="$RUN/dd-append" bs=1M count="$SCALE" status=none
  t1=$(date +%s.%N)
  note page_cache machine "{\"mb_per_s\": $(calc "$SCALE * 1.048576 / ($t1 - $t0)")}"
  rm -f "$RUN/dd-append"
  local n=$((SCALE / 10 < 20 ? 20 : SCALE / 10))
  t0=$(date +%s.%N)
  dd if=/dev/zero of="$RUN/dd-sync" bs=1M count=$n oflag=dsync status=none
  t1=$(date +%s.%N)
  note fsync_1m machine "{\"mb_per_s\": $(calc "$n * 1.048576 / ($t1 - $t0)"), \"fsyncs_per_s\": $(calc "$n / ($t1 - $t0)")}"
  rm -f "$RUN/dd-sync"
}

# ---------------------------------------------------------------- the run

if [[ $ONLY == kafka ]]; then
  start_ours default
  produce_1k ours "$OURS"
  stop_ours
  kafka_produce
else
limits
log "starting the reference (REF_JVM_PROFILE=dist, heap $REF_HEAP)"
REF_JVM_PROFILE=dist REF_HEAP=$REF_HEAP tests/reference/start >/dev/null
REF_PIDS="$(cat tests/reference/.run/tablet.pid) $(cat tests/reference/.run/coordinator.pid)"
start_ours default

for w in replay_1 produce_1k fetch latency produce_16 replay_16 produce_idle produce_c4; do
  $w ours "$OURS"
  $w reference "$REF_PIDS"
done
stop_ours

for n in 1 2 4; do
  start_ours "loops$n" -D netty.server.num-network-threads=$n
  produce_c4 ours "$OURS" "loops$n"
  replay_1 ours "$OURS" "rloops$n"
  stop_ours
done

start_ours_strace durable -D log.flush.mode=sync
t0=$(date +%s.%N)
measure durable ours "$OURS" produce --table perf.durable --buckets 1 --threads 1 \
  --records $DUR_REC --record-size 1024 --acks all --compression NONE --max-inflight 5
stop_ours
note durable_fsyncs ours "{\"fsyncs\": $(fsyncs "$RUN/strace-durable.txt")}"
REF_JVM_PROFILE=dist tests/reference/stop >/dev/null
kafka_produce
fi

# ---------------------------------------------------------------- report

python3 - "$RES" "$SCALE" "$REF_HEAP" "$IDLE_TABLES" "$REC" "$LAT_N" "$KAFKA_HEAP" <<'PYEOF'
import collections, datetime, json, os, pathlib, re, sys
res, scale, heap, idle, rec, lat_n, kheap = sys.argv[1:8]
R = collections.defaultdict(dict)
for line in pathlib.Path(res).read_text().splitlines():
    key, who, js = line.split(" ", 2)
    R[key][who] = json.loads(js)
o = lambda k, f: R.get(k, {}).get("ours", {}).get(f)
r = lambda k, f: R.get(k, {}).get("reference", {}).get(f)
m = lambda k, f: R.get(k, {}).get("machine", {}).get(f)
def per_gb(k, who, byte_field="bytes"):
    d = R.get(k, {}).get(who)
    return d["server_cpu_s"] / (d[byte_field] / 1e9) if d and d.get(byte_field) else None
def ratio(a, b, higher_better=True):
    if not a or not b: return "-"
    return f"{(a / b if higher_better else b / a):.2f}x"
def fmt(v):
    if v is None: return "-"
    if isinstance(v, str): return v
    return f"{v:,.0f}" if abs(v) >= 1000 else f"{v:,.2f}"
P1 = "NONE, 1 bucket, 1 conn, 5 in flight"
PR = "replay: 1 MiB requests, NONE, acks=all, 1 bucket, 4 conns, 8 in flight each"
low = min(x for x in (m("loopback", "mb_per_s"), m("page_cache", "mb_per_s")) if x) if m("page_cache", "mb_per_s") else None
rows = [
  ("**server-bound** produce MB/s, 1 KiB rows (fluss-perf --replay)", PR, o("replay1", "mb_per_s"), r("replay1", "mb_per_s"), True),
  ("  ÷ the lower physical limit (page cache or loopback, above)", "", ratio(o("replay1", "mb_per_s"), low), ratio(r("replay1", "mb_per_s"), low), None),
  ("  server CPU s per GB produced", "", per_gb("replay1", "ours"), per_gb("replay1", "reference"), False),
  ("  request latency p50 / p99 (ms)", "", f'{fmt(o("replay1", "p50_ms"))} / {fmt(o("replay1", "p99_ms"))}', f'{fmt(r("replay1", "p50_ms"))} / {fmt(r("replay1", "p99_ms"))}', None),
  ("  fluss-perf CPU (% of one core)", "", o("replay1", "cpu_pct"), r("replay1", "cpu_pct"), None),
  ("  16 buckets, 16 conns, 2 in flight each", "replay", o("replay16", "mb_per_s"), r("replay16", "mb_per_s"), True),
]
for n in (1, 2, 4):
    rows.append((f"  flussd with {n} network loop(s), replay", "as the first row",
                 o(f"rloops{n}", "mb_per_s"), r("replay1", "mb_per_s"), True))
rows += [
  ("produce MB/s, 1 KiB rows, acks=all", P1, o("produce", "mb_per_s"), r("produce", "mb_per_s"), True),
  ("produce records/s", P1, o("produce", "records_per_s"), r("produce", "records_per_s"), True),
  ("produce request latency p50 (ms)", P1, o("produce", "p50_ms"), r("produce", "p50_ms"), False),
  ("produce request latency p99 (ms)", P1, o("produce", "p99_ms"), r("produce", "p99_ms"), False),
  ("server CPU s per GB produced", P1, per_gb("produce", "ours"), per_gb("produce", "reference"), False),
  ("fluss-perf CPU during produce (% of one core)", P1, o("produce", "cpu_pct"), r("produce", "cpu_pct"), False),
  ("full fetch rows/s, 12 columns", "NONE, 1 bucket, 1 conn", o("fetch_full", "records_per_s"), r("fetch_full", "records_per_s"), True),
  ("full fetch loopback MB", "", (o("fetch_full", "lo_bytes") or 0) / 1e6, (r("fetch_full", "lo_bytes") or 0) / 1e6, False),
  ("server CPU s per GB fetched (full)", "", per_gb("fetch_full", "ours"), per_gb("fetch_full", "reference"), False),
  ("projected fetch rows/s, 1 of 12 columns (~10 % of bytes)", "NONE, 1 bucket, 1 conn", o("fetch_proj", "records_per_s"), r("fetch_proj", "records_per_s"), True),
  ("projected fetch loopback MB", "", (o("fetch_proj", "lo_bytes") or 0) / 1e6, (r("fetch_proj", "lo_bytes") or 0) / 1e6, False),
  ("server CPU s per GB fetched (projected, GB sent)", "", per_gb("fetch_proj", "ours"), per_gb("fetch_proj", "reference"), False),
  (f"produce MB/s with {idle} consumers long-polling other tables", P1 + f"; +{idle} conns", o("produce_idle", "mb_per_s"), r("produce_idle", "mb_per_s"), True),
  ("  ratio to produce without them", "", ratio(o("produce_idle", "mb_per_s"), o("produce", "mb_per_s")), ratio(r("produce_idle", "mb_per_s"), r("produce", "mb_per_s")), None),
  ("append→poll latency p50 (ms)", "1000 rows/s, linger 0, 1 bucket, NONE", o("latency", "p50_ms"), r("latency", "p50_ms"), False),
  ("append→poll latency p99 (ms)", "", o("latency", "p99_ms"), r("latency", "p99_ms"), False),
  ("produce MB/s, 16 buckets", "NONE, 16 buckets, 1 conn, 5 in flight", o("produce16", "mb_per_s"), r("produce16", "mb_per_s"), True),
  ("  ratio 16 buckets / 1 bucket", "", ratio(o("produce16", "mb_per_s"), o("produce", "mb_per_s")), ratio(r("produce16", "mb_per_s"), r("produce", "mb_per_s")), None),
  ("produce MB/s, 4 connections", "NONE, 4 buckets, 4 conns, 5 in flight each", o("conn4", "mb_per_s"), r("conn4", "mb_per_s"), True),
]
for n in (1, 2, 4):
    rows.append((f"  flussd with {n} network loop(s) (-D netty.server.num-network-threads={n})",
                 "same", o(f"loops{n}", "mb_per_s"), r("conn4", "mb_per_s"), True))
dur = R.get("durable", {}).get("ours")
fs = o("durable_fsyncs", "fsyncs")
rows += [
  ("durable produce, acknowledged MB/s (-D log.flush.mode=sync)", P1, o("durable", "mb_per_s"), "n/a", None),
  ("  fsyncs/s (strace -c, fsync + fdatasync)", "", fs / dur["seconds"] if dur and fs is not None else None, "n/a", None),
]
today = datetime.date.today()
sec = ["## core: tablet-server produce, fetch, latency against the machine's limits", "",
       f"Command: `bench/run_core.sh {scale}` ({today}, {os.cpu_count()} cores; both servers on loopback "
       f"in the same run, workloads interleaved (flussd, then the reference, per workload), driven by "
       f"`fluss-perf` (libfluss); reference = Apache Fluss 0.9.1-incubating with ZooKeeper, "
       f"`REF_JVM_PROFILE=dist` (the distribution's JVM options: G1, full tiered JIT), "
       f"{'no -Xmx (the JVM default, as the distribution)' if heap == 'default' else '-Xmx' + heap}; "
       f"{rec} rows of 1 KiB per produce run (`id BIGINT, ts BIGINT, payload BYTES`, payload random "
       f"letters), 1 MiB writer batches, linger 100 ms; server CPU = utime+stime of the server "
       f"process(es) over the run (reference: tablet server + coordinator); loopback bytes = "
       f"`/proc/net/dev` lo over the fetch; guest memory warmed first).", "",
       "Physical limits, same run:", "",
       "| limit | value |", "|---|---|",
       f"| loopback ({m('loopback', 'tool')}) MB/s | {fmt(m('loopback', 'mb_per_s'))} |",
       f"| page-cache append (dd, 1 MiB writes, {scale} MB to a new file) MB/s | {fmt(m('page_cache', 'mb_per_s'))} |",
       f"| disk, 1 MiB per fsync (dd oflag=dsync) MB/s | {fmt(m('fsync_1m', 'mb_per_s'))} |",
       f"| disk, fsyncs/s at 1 MiB each | {fmt(m('fsync_1m', 'fsyncs_per_s'))} |", "",
       "| metric | setup | fluss-c | reference | fluss-c advantage |", "|---|---|---|---|---|"]
for name, setup, a, b, hb in rows:
    adv = ratio(a, b, hb) if hb is not None and not isinstance(a, str) and not isinstance(b, str) else "-"
    sec.append(f"| {name} | {setup} | {fmt(a)} | {fmt(b)} | {adv} |")
sec += ["", f"The network-loop rows compare each flussd setting with the reference at its default "
        f"(3 network threads); the unlabelled flussd rows run its default (cores, at most 4). The "
        f"durable row has no reference value (Fluss acknowledges from the page cache and relies on "
        f"replicas); compare it with the disk's 1 MiB-per-fsync rate above.", ""]
k = R.get("kafka_produce", {}).get("kafka")
if k:
    kv = k.get("version", "4.x")
    KS = "1 KiB rows/records, acks=all, 1 bucket/partition, 1 conn, 5 in flight, 1 MiB batches, linger 100 ms, no compression"
    krows = [
      ("produce MB/s", KS, o("produce", "mb_per_s"), k["mb_per_s"], True),
      ("produce records/s", "", o("produce", "records_per_s"), k["records_per_s"], True),
      ("latency p50 (ms): fluss-perf per produce request; ProducerPerformance per record, send() to ack", "", o("produce", "p50_ms"), k["p50_ms"], None),
      ("latency p99 (ms), as above", "", o("produce", "p99_ms"), k["p99_ms"], None),
      ("server CPU s per GB produced", "", per_gb("produce", "ours"), k["server_cpu_s"] / (k["bytes"] / 1e9), False),
      ("client CPU (% of one core; Kafka: the client JVM, start-up included)", "", o("produce", "cpu_pct"), k["cpu_pct"], None),
    ]
    sec += [f"Context, with a different client: an Apache Kafka {kv} broker (KRaft, broker and controller in one "
            f"process, 1 node; `bench/kafka/start`: the JVM options of Kafka's own scripts, G1, -Xmx{kheap}; "
            f"`log.flush.*` at Kafka's defaults, i.e. acknowledged from the page cache like Fluss) loaded by Kafka's "
            f"`ProducerPerformance` (Java client: `--num-records {rec} --record-size 1024 --throughput -1`, "
            f"`acks=all linger.ms=100 batch.size=1048576 compression.type=none`, max.in.flight 5), run alone "
            f"after the reference has stopped. The fluss-c column repeats the 1-connection produce row above "
            f"(fluss-perf, libfluss). Both clients and both protocols differ, so these rows are context, not "
            f"a like-for-like comparison; MB/s = 10^6 bytes of 1 KiB records (ProducerPerformance itself prints "
            f"MiB/s); server CPU = utime+stime of the broker process over the run.", "",
            f"| metric | setup | fluss-c (fluss-perf) | Kafka {kv} (ProducerPerformance) | fluss-c advantage |",
            "|---|---|---|---|---|"]
    for name, setup, a, b, hb in krows:
        sec.append(f"| {name} | {setup} | {fmt(a)} | {fmt(b)} | {ratio(a, b, hb) if hb is not None else '-'} |")
    sec.append("")
elif R.get("kafka_skipped"):
    sec += [f"Kafka context rows skipped: {R['kafka_skipped']['kafka'].get('reason', '?')}.", ""]
text = "\n".join(sec) + "\n"
print(text)
sys.path.insert(0, "bench")
from benchmarks_md import write_section
write_section("core", text)
PYEOF
