#!/usr/bin/env bash
# Cluster benchmark: a fluss-c cluster (scripts/cluster: ZooKeeper, one
# coordinator and three tablet servers, each its own process) against the
# reference Fluss 0.9.1 cluster (tests/reference/start with REF_TABLETS=3:
# ZooKeeper, a coordinator and three tablet servers, each a JVM with
# fluss-dist's options) in the same run, both up side by side, and
# rewrites the "cluster" section of BENCHMARKS.md.
#
#   bench/run_cluster.sh [SCALE_MB] [ROUNDS] [KILLS] [PK_MB]
#   (defaults 200 MB per run, 3 rounds, 2 leader kills per cluster, a
#   200 MB primary-key bucket)
#
# Each round runs both clusters, in alternating order, on fresh
# three-bucket tables with replication factor 3:
#   client  fluss-perf produce (libfluss): 3 idempotent writers, acks=all,
#           1 KiB rows, SCALE_MB in all;
#   replay  fluss-perf --replay: 3 connections each sending one real 1 MiB
#           PRODUCE_LOG (acks=all) to its bucket's leader, 8 in flight:
#           what the servers sustain, the client doing next to nothing.
# Figures are the median of the rounds with their range; server CPU is
# utime + stime from /proc/<pid>/stat of the coordinator and the three
# tablet servers over each run (ZooKeeper apart), per GB written by the
# client. Every byte crosses loopback three times (client to leader,
# leader to two followers): the loopback limit (iperf3, same run) bounds
# the cluster at a third of it.
#
# Then failover (bench/cluster_failover.py): an idempotent acks=all writer
# per bucket while the leader of bucket 0 is killed with SIGKILL KILLS
# times (no restart: the last kill leaves one replica); unavailability =
# kill to the first acknowledgement of a batch sent after it. Both
# clusters run with the same ZooKeeper session timeout (6 s, our
# default; the reference's own default is 60 s), which bounds how soon a
# killed server is seen gone.
#
# Last, both clusters started anew, primary-key failover
# (bench/cluster_pk_failover.py): bucket 0 of a primary-key table loaded
# with PK_MB MB of 1 KiB rows, its leader killed with SIGKILL, and the
# time until the new leader answers a lookup with the values written.
#
# Two cores carry nine processes here (five JVMs for the reference):
# the reference is starved, which is why CPU-seconds per GB is shown.
set -euo pipefail
cd "$(dirname "$0")/.."
SCALE=${1:-200}
ROUNDS=${2:-3}
KILLS=${3:-2}
PK_MB=${4:-200}
make -s build >/dev/null
PERF=build/fluss-perf
RUN=bench/.run-cluster
HZ=$(getconf CLK_TCK)
REC=$((SCALE * 1000000 / 1024))
OURS_B=127.0.0.1:29123
REF_B=127.0.0.1:19123
SESSION=6s
export REF_TABLETS=3 REF_RF=3 REF_JVM_PROFILE=dist
export REF_EXTRA_CONFIG="zookeeper.client.session-timeout: $SESSION"

log() { echo "[run_cluster] $*" >&2; }
cleanup() {
  scripts/cluster stop "$RUN/ours" >/dev/null 2>&1 || true
  tests/reference/stop >/dev/null 2>&1 || true
}
trap cleanup EXIT
rm -rf "$RUN"
mkdir -p "$RUN"
RES=$RUN/results.txt
: >"$RES"

cpu_ticks() { # pids... -> utime+stime ticks summed
  local t=0 p
  for p in "$@"; do t=$((t + $(sed 's/^.*) //' "/proc/$p/stat" | awk '{print $12 + $13}'))); done
  echo "$t"
}

start_clusters() {
  CLUSTER_ZK_PORT=0 CLUSTER_CS_PORTS=29123,29200 CLUSTER_TS_PORTS=29124,29201 \
    CLUSTER_SESSION=$SESSION scripts/cluster start "$RUN/ours" >&2
  OURS_PIDS="$(cat "$RUN"/ours/coordinator.pid "$RUN"/ours/tablet-*.pid | tr '\n' ' ')"
  tests/reference/start >"$RUN/ref-start.log"
  REF_PIDS="$(cat tests/reference/.run/coordinator.pid tests/reference/.run/tablet*.pid | tr '\n' ' ')"
}

# measure KEY WHO perf-args...: one fluss-perf run; its JSON plus the
# servers' CPU seconds
measure() {
  local key=$1 who=$2 b pids c0 c1 out
  shift 2
  if [[ $who == ours ]]; then b=$OURS_B; pids=$OURS_PIDS; else b=$REF_B; pids=$REF_PIDS; fi
  c0=$(cpu_ticks $pids)
  out=$("$PERF" "$@" --bootstrap-server "$b" --json --quiet)
  c1=$(cpu_ticks $pids)
  python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["server_cpu_s"]=int(sys.argv[2])/int(sys.argv[3]); print(sys.argv[4], sys.argv[5], json.dumps(d))' \
    "$out" $((c1 - c0)) "$HZ" "$key" "$who" >>"$RES"
  log "$key $who: $(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("%(mb_per_s).1f MB/s, %(errors)s errors" % d)')"
}

P=(--records $REC --record-size 1024 --acks all --compression NONE --buckets 3 --threads 3)
client() { measure client "$1" produce --table "perf.c_$1_$2" "${P[@]}" --max-inflight 5; }
replay() { measure replay "$1" produce --table "perf.r_$1_$2" "${P[@]}" --replay --max-inflight 8 --no-idempotence; }

loopback() { # iperf3 over lo, Gbit/s
  iperf3 -s -1 -p 29399 >/dev/null 2>&1 &
  local s=$!
  sleep 0.3
  iperf3 -c 127.0.0.1 -p 29399 -t 3 -J 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9)'
  wait $s 2>/dev/null || true
}

start_clusters
log "ours: $OURS_PIDS; reference: $REF_PIDS"
echo "load start {\"avg1\": $(cut -d' ' -f1 /proc/loadavg)}" >>"$RES"
echo "loopback ours {\"gbit_s\": $(loopback)}" >>"$RES"
for r in $(seq "$ROUNDS"); do
  if ((r % 2)); then order="ours ref"; else order="ref ours"; fi
  for who in $order; do client "$who" "$r"; done
  for who in $order; do replay "$who" "$r"; done
done
echo "loopback ref {\"gbit_s\": $(loopback)}" >>"$RES"
echo "load end {\"avg1\": $(cut -d' ' -f1 /proc/loadavg)}" >>"$RES"

# each_cluster KEY SCRIPT ARGS...: SCRIPT run against ours, then the
# reference (each cluster's run directory tells it the pids); its JSON
# line into the results under KEY
each_cluster() {
  local key=$1 script=$2 who out
  shift 2
  for who in ours ref; do
    if [[ $who == ours ]]; then
      out=$(.venv/bin/python "$script" --bootstrap "$OURS_B" --tablet-port 29124 \
        --pid-file "$RUN/ours/tablet-{id}.pid" "$@")
    else
      out=$(.venv/bin/python "$script" --bootstrap "$REF_B" --tablet-port 19124 \
        --pid-file "tests/reference/.run/tablet{id}.pid" --first-id-empty "$@")
    fi
    echo "$key $who $out" >>"$RES"
    log "$key $who: $out"
  done
}

each_cluster failover bench/cluster_failover.py --kills "$KILLS"
# primary-key failover, on clusters started anew (the kills above left
# one replica)
cleanup
rm -rf "$RUN/ours"
start_clusters
each_cluster pkfailover bench/cluster_pk_failover.py --mb "$PK_MB"

python3 - "$RES" "$SCALE" "$ROUNDS" "$KILLS" "$SESSION" "$PK_MB" <<'PYEOF'
import datetime, json, os, statistics, sys
sys.path.insert(0, "bench")
from benchmarks_md import write_section
res, scale, rounds, kills, session, pk_mb = sys.argv[1:7]
runs = {}
for line in open(res):
    key, who, js = line.split(" ", 2)
    runs.setdefault((key, who), []).append(json.loads(js))

def med(key, who, f):
    v = [f(d) for d in runs.get((key, who), [])]
    if not v:
        return None, ""
    return statistics.median(v), f"{min(v):,.1f}–{max(v):,.1f}" if len(v) > 1 else ""

def cell(key, who, f):
    m, spread = med(key, who, f)
    return "-" if m is None else (f"{m:,.1f}" + (f" ({spread})" if spread else ""))

def ratio(key, f, higher_better):
    a, _ = med(key, "ours", f)
    b, _ = med(key, "ref", f)
    if not a or not b:
        return "-"
    return f"{(a / b if higher_better else b / a):.2f}x"

mbs = lambda d: d["mb_per_s"]
cpu_gb = lambda d: d["server_cpu_s"] / (d["bytes"] / 1e9)
lo = statistics.median([d["gbit_s"] for k, d in
                        [(k, d) for (k, w), ds in runs.items() if k == "loopback" for d in ds]])
rows = [
    ("produce through the client, MB/s (acks=all, RF 3)", "client", mbs, True),
    ("  server CPU-seconds per GB", "client", cpu_gb, False),
    ("**server-bound** produce (`--replay`), MB/s", "replay", mbs, True),
    ("  server CPU-seconds per GB", "replay", cpu_gb, False),
]
sec = [f"## cluster: three tablet servers, replication factor 3, acks=all", "",
       f"Command: `bench/run_cluster.sh {scale} {rounds} {kills} {pk_mb}` ({datetime.date.today()}, "
       f"{os.cpu_count()} cores). Both clusters up side by side on loopback: fluss-c = "
       "`scripts/cluster` (ZooKeeper, `flussd coordinator`, three `flussd tablet`); reference = "
       "Apache Fluss 0.9.1-incubating, ZooKeeper + coordinator + three tablet servers, JVMs with "
       "fluss-dist's options (G1) and -Xmx512m. Tables of three buckets, replication factor 3, "
       "NONE compression, 1 KiB rows; fluss-perf (libfluss) drives both. Median of "
       f"{rounds} interleaved rounds (range in brackets). Server CPU = coordinator + tablet "
       "servers from /proc over each run, per GB the client wrote (each GB is stored three "
       f"times). Loopback (iperf3, same run): {lo:.1f} Gbit/s, i.e. "
       f"{lo * 1e9 / 8 / 1e6 / 3:,.0f} MB/s of client data at most when every byte crosses it "
       "three times. Two cores carry all of it: the reference's five JVMs are starved, so the "
       "CPU-seconds per GB are the comparison that stands. The machine's 1-minute load average "
       f"was {runs[('load', 'start')][0]['avg1']} before the rounds and "
       f"{runs[('load', 'end')][0]['avg1']} after them (above 2: other work shared the cores).", "",
       "| metric | fluss-c | reference | fluss-c advantage |", "|---|---|---|---|"]
for name, key, f, hb in rows:
    sec.append(f"| {name} | {cell(key, 'ours', f)} | {cell(key, 'ref', f)} | {ratio(key, f, hb)} |")
fo = {w: runs.get(("failover", w), [{}])[0] for w in ("ours", "ref")}
def fcell(w, k):
    v = fo[w].get(k)
    return "-" if v is None else f"{v:.2f}"
sec.append(f"| failover: leader kill -9 → first acknowledged write, p50 s ({kills} kills, session {session}) | "
           f"{fcell('ours', 'p50_s')} | {fcell('ref', 'p50_s')} | - |")
sec.append(f"| failover: max s | {fcell('ours', 'max_s')} | {fcell('ref', 'max_s')} | - |")
sec.append(f"| failover: acknowledged ids lost | {fo['ours'].get('lost_acked', '-')} | "
           f"{fo['ref'].get('lost_acked', '-')} | - |")
pk = {w: runs.get(("pkfailover", w), [{}])[0] for w in ("ours", "ref")}
def pkcell(w, k):
    d = pk[w]
    if not d:
        return "-"
    if not d.get("recovered") and k == "first_lookup_s":
        return f"none within {d['timeout_s']:.0f}"
    v = d.get(k)
    return "-" if v is None else f"{v:.2f}"
sec.append(f"| PK failover: leader kill -9 → first right lookup, s ({pk_mb} MB bucket, session {session}) | "
           f"{pkcell('ours', 'first_lookup_s')} | {pkcell('ref', 'first_lookup_s')} | - |")
sec.append(f"|   of it, kill → a new leader named, s | "
           f"{pkcell('ours', 'leader_elected_s')} | {pkcell('ref', 'leader_elected_s')} | - |")
sec.append(f"|   lookups answered with other values | {pk['ours'].get('wrong_answers', '-')} | "
           f"{pk['ref'].get('wrong_answers', '-')} | - |")
text = "\n".join(sec) + "\n"
write_section("cluster", text)
print(text)
PYEOF
